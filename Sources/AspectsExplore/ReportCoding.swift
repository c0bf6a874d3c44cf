import Foundation
import AspectsCore
import AspectsRules

/// A campaign's JSON (`explore --json`, config/explore.schema.json) read back into the report
/// it was written from, so that `explore merge` and `--resume` make every other form (text,
/// HTML, JUnit, JSON again) from it. The JSON keeps what the renderers read: each run's
/// record (its stderr's start and tail, its crashes with their stacks), the baseline's, the
/// plan's id and shard. Writing and reading of each part sit side by side here: a field added
/// to one is added to the other.
extension FaultPoint {
    /// The point's fields as reports and journals write them; `init(json:)` reads them back.
    /// (`imageName` only where it is not the image's file name: two images shared that.)
    var jsonFields: [(String, JSONNode.Value?)] {
        [("name", .string(name)), ("image", .string(image)),
         ("imageName", imageName == Self.fileName(image) ? nil : .string(imageName)),
         ("function", .string(function)), ("site", site.map { .string($0.description) }),
         ("context", context.map { JSONOut.array($0.map { .string($0.description) }) }), ("nth", JSONOut.int(nth)),
         ("errno", errno.isEmpty ? nil : .string(errno)), ("fault", .string(kind.rawValue))]
    }

    init(json n: JSONNode, _ read: ReportReader, at path: String) throws(AspectsError) {
        let kindName = try read.optString(n, "fault", path) ?? FaultKind.error.rawValue
        guard let kind = FaultKind(rawValue: kindName) else { throw read.fail(path + ".fault", "\(kindName) is not a fault kind") }
        self.init(function: try read.string(n, "function", path), site: try read.optSite(n, "site", path),
                  nth: try read.int(n, "nth", path), errno: try read.optString(n, "errno", path) ?? "", kind: kind,
                  image: try read.optString(n, "image", path) ?? "", imageName: try read.optString(n, "imageName", path))
        var frames: [CallSite] = []
        for (k, f) in try read.optArray(n, "context", path).enumerated() {
            let text: String = try read.value(f, "\(path).context[\(k)]")
            guard let site = CallSite(text) else { throw read.fail("\(path).context[\(k)]", "\(text) is not a call site (object+0xOFFSET)") }
            frames.append(site)
        }
        context = frames.isEmpty ? nil : frames
    }
}

extension ExploreReport {
    /// A duration as the JSON gives it: exactly (the shortest decimal that reads back as the
    /// same number), so a report read back shows the same rounded times.
    static func secondsJSON(_ t: Double) -> JSONNode.Value { .number(t.isFinite ? "\(t)" : "0") }

    /// How many characters of stderr a report keeps at each end (`stderrTail`, `stderrStart`).
    static let stderrKept = 2000

    static func recordJSON(_ r: RunRecord) -> JSONNode.Value {
        let length = r.stderrLength ?? r.stderr.count, long = length > stderrKept
        return JSONOut.object([
            ("exitStatus", r.exitStatus.map { JSONOut.int($0) }), ("signal", r.signal.map { JSONOut.int($0) }),
            ("timedOut", .bool(r.timedOut)), ("seconds", secondsJSON(r.seconds)),
            ("stdoutBytes", JSONOut.int(r.stdoutBytes)), ("stderrBytes", JSONOut.int(r.stderrBytes)),
            ("stderrTail", .string(Self.stderrTail(r.stderr))),
            ("truncatedAt", r.truncatedStreams.isEmpty ? nil : JSONOut.int(r.outputCap)),
            ("survivors", r.survivors.isEmpty ? nil : JSONOut.array(r.survivors.map { .string($0) })),
            ("differingFiles", r.differingFiles.isEmpty ? nil : JSONOut.array(r.differingFiles.map { .string($0) })),
            // The first lines are what reports quote (a crash's message); the middle of a long
            // stderr is not kept.
            ("stderrStart", long ? .string(String(r.stderr.prefix(stderrKept))) : nil),
            ("stderrLength", long ? JSONOut.int(length) : nil),
            ("crashes", r.crashes.isEmpty ? nil : JSONOut.array(r.crashes.map { c in
                JSONOut.object([("pid", JSONOut.int(c.pid)), ("program", .string(c.program)), ("signal", JSONOut.int(c.signal)),
                                ("caughtByHandler", c.caughtByHandler ? .bool(true) : nil),
                                ("stack", c.stack.isEmpty ? nil : JSONOut.array(c.stack.map(Self.frameJSON)))])
            })),
        ])
    }

    static func record(json n: JSONNode, _ read: ReportReader, at path: String) throws(AspectsError) -> RunRecord {
        let tail = try read.string(n, "stderrTail", path)
        var stderr = tail, length: Int?
        if let start = try read.optString(n, "stderrStart", path) {
            length = try read.optInt(n, "stderrLength", path) ?? start.count + tail.count
            stderr = start + String(tail.suffix(max(0, min(tail.count, length! - start.count))))
        }
        var r = RunRecord(exitStatus: try read.optInt(n, "exitStatus", path), signal: try read.optInt(n, "signal", path),
                          timedOut: try read.bool(n, "timedOut", path), stdout: "", stderr: stderr,
                          seconds: try read.double(n, "seconds", path))
        r.stderrLength = length
        r.stdoutBytes = try read.int(n, "stdoutBytes", path)
        r.stderrBytes = try read.optInt(n, "stderrBytes", path) ?? UInt64(stderr.utf8.count)
        r.outputCap = try read.optInt(n, "truncatedAt", path) ?? 0
        r.survivors = try read.optArray(n, "survivors", path).enumerated().map { k, v throws(AspectsError) in
            try read.value(v, "\(path).survivors[\(k)]") }
        r.differingFiles = try read.optArray(n, "differingFiles", path).enumerated().map { k, v throws(AspectsError) in
            try read.value(v, "\(path).differingFiles[\(k)]") }
        for (k, c) in try read.optArray(n, "crashes", path).enumerated() {
            let at = "\(path).crashes[\(k)]"
            var stack: [StackFrame] = []
            for (j, f) in try read.optArray(c, "stack", at).enumerated() {
                let fat = "\(at).stack[\(j)]"
                let offset = try read.string(f, "offset", fat)
                guard offset.hasPrefix("0x"), let value = UInt64(offset.dropFirst(2), radix: 16) else {
                    throw read.fail(fat + ".offset", "\(offset) is not a hexadecimal offset (0x...)")
                }
                stack.append(StackFrame(object: try read.string(f, "object", fat), offset: value,
                                        isReturnAddress: try read.optBool(f, "returnAddress", fat) ?? (j > 0),
                                        symbol: try read.optString(f, "symbol", fat), file: try read.optString(f, "file", fat),
                                        line: try read.optInt(f, "line", fat)))
            }
            r.crashes.append(ProcessCrash(pid: try read.int(c, "pid", at), program: try read.string(c, "program", at),
                                          signal: try read.int(c, "signal", at), stack: stack,
                                          caughtByHandler: try read.optBool(c, "caughtByHandler", at) ?? false))
        }
        return r
    }

    /// One run as the report's `runs` and the journal's lines give it. `reproduce` and
    /// `location` are said for a reader; reading back makes them again from the report.
    static func runJSON(_ r: ExploreResult, reproduce: String?, location: String?, contextLocations: [(CallSite, String)] = []) -> JSONNode.Value {
        JSONOut.object([("index", JSONOut.int(r.index))] + r.point.jsonFields + [
            ("location", location.map { .string($0) }),
            ("contextLocations", contextLocations.isEmpty ? nil : JSONOut.array(contextLocations.map { site, at in
                JSONOut.object([("site", .string(site.description)), ("location", .string(at))]) })),
            ("outcome", .string(r.outcome.rawValue)),
            ("finding", .bool(r.outcome.isFinding)), ("run", recordJSON(r.record)),
            ("crashes", r.record.crashes.isEmpty ? nil : JSONOut.array(r.record.crashes.map { c in
                JSONOut.object([("pid", JSONOut.int(c.pid)), ("program", .string(c.program)), ("signal", JSONOut.int(c.signal)),
                                ("caughtByHandler", c.caughtByHandler ? .bool(true) : nil)])
            })),
            ("stderrHead", r.outcome == .crash ? JSONOut.array(Self.firstLines(r.record.stderr).map { .string($0) }) : nil),
            ("reproducer", r.reproducer.map { .string($0) }),
            ("reproducerSite", r.reproducerPoint?.site.map { .string($0.description) }),
            ("reproducerNth", r.reproducerPoint.map { JSONOut.int($0.nth) }),
            ("reproduce", reproduce.map { .string($0) }),
            ("reproducerScript", r.reproducerScript.map { .string($0) }),
            ("reproduced", r.reproduced.map { .bool($0) }),
        ])
    }

    func runJSON(_ r: ExploreResult) -> JSONNode.Value {
        Self.runJSON(r, reproduce: reproduceCommand(r), location: r.point.site.flatMap { locations[$0] },
                     contextLocations: (r.point.context ?? []).compactMap { frame in locations[frame].map { (frame, $0) } })
    }

    static func result(json n: JSONNode, _ read: ReportReader, at path: String) throws(AspectsError) -> ExploreResult {
        let point = try FaultPoint(json: n, read, at: path)
        let outcomeName = try read.string(n, "outcome", path)
        guard let outcome = ExploreOutcome(rawValue: outcomeName) else {
            throw read.fail(path + ".outcome", "\(outcomeName) is not an outcome (\(ExploreOutcome.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        guard let run = n["run"] else { throw read.fail(path + ".run", "is missing") }
        var r = ExploreResult(index: try read.int(n, "index", path), point: point, outcome: outcome,
                              record: try record(json: run, read, at: path + ".run"),
                              reproducer: try read.optString(n, "reproducer", path), reproduced: try read.optBool(n, "reproduced", path))
        if let nth: UInt64 = try read.optInt(n, "reproducerNth", path) {
            var p = point
            (p.site, p.nth) = (try read.optSite(n, "reproducerSite", path), nth)
            r.reproducerPoint = p
        }
        r.reproducerScript = try read.optString(n, "reproducerScript", path)
        return r
    }

    /// Reads a campaign's JSON back; `source` names it in errors.
    package static func decode(_ text: String, source: String) throws(AspectsError) -> ExploreReport {
        let root: JSONNode
        do { root = try JSONParser.parse(text) } catch {
            throw AspectsError(.malformedJSON, location: source, "not JSON (\(error))", fix: ReportReader(source: source).fix)
        }
        return try decode(root, source: source)
    }

    /// Reads a campaign's JSON back from its parsed form (a suite's test's `report`, `SuiteReport`).
    package static func decode(_ root: JSONNode, source: String) throws(AspectsError) -> ExploreReport {
        let read = ReportReader(source: source)
        let version: Int = try read.int(root, "version", "$")
        guard version == 1 else { throw read.fail("$.version", "version \(version) is not one this aspectctl reads (1)") }
        var locations: [CallSite: String] = [:]
        var profiles: [FunctionProfile] = []
        for (k, f) in try read.array(root, "functions", "$").enumerated() {
            let at = "$.functions[\(k)]"
            var sites: [CallSite: UInt64] = [:]
            for (j, s) in try read.array(f, "sites", at).enumerated() {
                guard let site = try read.optSite(s, "site", "\(at).sites[\(j)]") else { throw read.fail("\(at).sites[\(j)].site", "is missing") }
                sites[site] = try read.int(s, "calls", "\(at).sites[\(j)]")
                locations[site] = try read.optString(s, "location", "\(at).sites[\(j)]")
            }
            var images: [String: ImageCalls] = [:]
            for (j, i) in try read.optArray(f, "images", at).enumerated() {
                let iat = "\(at).images[\(j)]"
                var calls = ImageCalls(calls: try read.int(i, "calls", iat))
                for (m, s) in try read.optArray(i, "sites", iat).enumerated() {
                    guard let site = try read.optSite(s, "site", "\(iat).sites[\(m)]") else { throw read.fail("\(iat).sites[\(m)].site", "is missing") }
                    calls.sites[site] = try read.int(s, "calls", "\(iat).sites[\(m)]")
                }
                images[try read.string(i, "image", iat)] = calls
            }
            let function = try read.string(f, "function", at)
            // (the reports' matrices and merges key by function and by run: a report that
            // lists one twice was not written by explore, and is refused here, by name)
            if let k0 = profiles.firstIndex(where: { $0.function == function }) {
                throw read.fail("\(at).function", "\(function) is listed twice (also $.functions[\(k0)])")
            }
            profiles.append(FunctionProfile(function: function, calls: try read.int(f, "calls", at), sites: sites, images: images))
        }
        var results: [ExploreResult] = []
        var runAt: [Int: Int] = [:]
        for (k, r) in try read.array(root, "runs", "$").enumerated() {
            let run = try result(json: r, read, at: "$.runs[\(k)]")
            if let k0 = runAt[run.index] { throw read.fail("$.runs[\(k)].index", "run \(run.index) is listed twice (also $.runs[\(k0)])") }
            runAt[run.index] = k
            results.append(run)
            // the places of a context's frames, which no function's sites name
            for (j, c) in try read.optArray(r, "contextLocations", "$.runs[\(k)]").enumerated() {
                let at = "$.runs[\(k)].contextLocations[\(j)]"
                guard let site = try read.optSite(c, "site", at) else { throw read.fail(at + ".site", "is missing") }
                locations[site] = try read.string(c, "location", at)
            }
        }
        guard let planNode = root["plan"] else { throw read.fail("$.plan", "is missing") }
        let plan = ExplorePlan(points: results.map(\.point), candidates: try read.int(planNode, "candidates", "$.plan"),
                               spread: try read.bool(planNode, "spread", "$.plan"), sitesSampled: try read.bool(planNode, "sitesSampled", "$.plan"))
        guard let baselineNode = root["baseline"] else { throw read.fail("$.baseline", "is missing") }
        var report = ExploreReport(command: try read.array(root, "command", "$").enumerated().map { k, c throws(AspectsError) in
                                       try read.value(c, "$.command[\(k)]") },
                                   baseline: try record(json: baselineNode, read, at: "$.baseline"), profiles: profiles, plan: plan,
                                   results: results, timeout: try read.double(root, "timeoutSeconds", "$"),
                                   seed: try read.int(root, "seed", "$"), seconds: try read.double(root, "seconds", "$"),
                                   setup: try read.optString(root, "setup", "$"))
        report.locations = locations
        for (k, c) in try read.array(root, "coverage", "$").enumerated() {
            let at = "$.coverage[\(k)]"
            var f = ExploreCoverage.Function(function: try read.string(c, "function", at), calls: try read.int(c, "calls", at),
                                             sites: try read.int(c, "sites", at))
            f.family = try read.optString(c, "family", at)
            f.contexts = try read.optInt(c, "contexts", at)
            for (j, m) in try read.optArray(c, "familyCalls", at).enumerated() {
                f.familyCalls.append((try read.string(m, "function", "\(at).familyCalls[\(j)]"), try read.int(m, "calls", "\(at).familyCalls[\(j)]")))
            }
            report.coverage.functions.append(f)
        }
        report.coverage.notes = try read.array(root, "coverageNotes", "$").enumerated().map { k, n throws(AspectsError) in
            try read.value(n, "$.coverageNotes[\(k)]") }
        if let b = root["baselines"], b.value != .null {
            report.baselines = BaselineComparison(runs: try read.int(b, "runs", "$.baselines"),
                                                  differences: try read.array(b, "differences", "$.baselines").enumerated().map { k, d throws(AspectsError) in
                                                      try read.value(d, "$.baselines.differences[\(k)]") })
        }
        for (k, i) in try read.optArray(root, "images", "$").enumerated() {
            let at = "$.images[\(k)]"
            report.coverage.images.append(ExploreCoverage.Image(path: try read.string(i, "path", at), processes: try read.int(i, "processes", at),
                                                                calls: try read.int(i, "calls", at), planned: try read.bool(i, "planned", at)))
        }
        report.planID = try read.optString(root, "planId", "$") ?? ""
        report.plannedPoints = try read.optInt(planNode, "points", "$.plan") ?? results.count
        guard report.plannedPoints >= 0 else { throw read.fail("$.plan.points", "\(report.plannedPoints) is not a number of points") }
        for (k, r) in results.enumerated() where r.index < 0 || r.point.nth < 1 {
            throw read.fail("$.runs[\(k)]", "run \(r.index), call \(r.point.nth): runs count from 0, calls from 1")
        }
        if let shard = try read.optString(planNode, "shard", "$.plan") {
            do { report.shard = try ExploreShard(parsing: shard, option: "\(source): $.plan.shard") } catch { throw error }
            report.shard?.offset = try read.optInt(planNode, "shardOffset", "$.plan") ?? 0
        }
        return report
    }
}

/// Reads the members of a report's JSON, each error naming the file and the member's path.
struct ReportReader {
    let source: String
    let fix = "give a JSON report that `aspectctl explore --json` wrote (config/explore.schema.json), as it wrote it"

    func fail(_ path: String, _ what: String) -> AspectsError {
        AspectsError(.invalidValue, field: path, location: source, what, fix: fix)
    }

    /// The member, nil when it is missing or null.
    func member(_ n: JSONNode, _ key: String) -> JSONNode? {
        guard let m = n[key], m.value != .null else { return nil }
        return m
    }

    func value(_ n: JSONNode, _ path: String) throws(AspectsError) -> String {
        guard case .string(let s) = n.value else { throw fail(path, "is \(n.typeName), not a string") }
        return s
    }

    func optString(_ n: JSONNode, _ key: String, _ path: String) throws(AspectsError) -> String? {
        guard let m = member(n, key) else { return nil }
        return try value(m, path + "." + key)
    }

    func string(_ n: JSONNode, _ key: String, _ path: String) throws(AspectsError) -> String {
        guard let s = try optString(n, key, path) else { throw fail(path + "." + key, "is missing") }
        return s
    }

    func optInt<T: FixedWidthInteger>(_ n: JSONNode, _ key: String, _ path: String) throws(AspectsError) -> T? {
        guard let m = member(n, key) else { return nil }
        guard case .number(let text) = m.value, let v = T(text) else { throw fail(path + "." + key, "is not an integer of its range") }
        return v
    }

    func int<T: FixedWidthInteger>(_ n: JSONNode, _ key: String, _ path: String) throws(AspectsError) -> T {
        guard let v: T = try optInt(n, key, path) else { throw fail(path + "." + key, "is missing") }
        return v
    }

    func double(_ n: JSONNode, _ key: String, _ path: String) throws(AspectsError) -> Double {
        guard let m = member(n, key) else { throw fail(path + "." + key, "is missing") }
        guard case .number(let text) = m.value, let v = Double(text) else { throw fail(path + "." + key, "is \(m.typeName), not a number") }
        return v
    }

    func optBool(_ n: JSONNode, _ key: String, _ path: String) throws(AspectsError) -> Bool? {
        guard let m = member(n, key) else { return nil }
        guard case .bool(let b) = m.value else { throw fail(path + "." + key, "is \(m.typeName), not true or false") }
        return b
    }

    func bool(_ n: JSONNode, _ key: String, _ path: String) throws(AspectsError) -> Bool {
        guard let b = try optBool(n, key, path) else { throw fail(path + "." + key, "is missing") }
        return b
    }

    func optArray(_ n: JSONNode, _ key: String, _ path: String) throws(AspectsError) -> [JSONNode] {
        guard let m = member(n, key) else { return [] }
        guard case .array(let items) = m.value else { throw fail(path + "." + key, "is \(m.typeName), not an array") }
        return items
    }

    func array(_ n: JSONNode, _ key: String, _ path: String) throws(AspectsError) -> [JSONNode] {
        guard member(n, key) != nil else { throw fail(path + "." + key, "is missing") }
        return try optArray(n, key, path)
    }

    func optSite(_ n: JSONNode, _ key: String, _ path: String) throws(AspectsError) -> CallSite? {
        guard let text = try optString(n, key, path) else { return nil }
        guard let site = CallSite(text) else { throw fail(path + "." + key, "\(text) is not a call site (object+0xOFFSET)") }
        return site
    }
}
