import Foundation
import CAspectsABI
import AspectsCore
import AspectsRules

/// The ways a campaign is shown: a table for the terminal, JSON for tools (config/
/// explore.schema.json), one self-contained HTML page with the function × site matrix.
extension ExploreReport {
    /// The shell line that reproduces a finding: in a fresh directory prepared by --setup,
    /// `aspectctl run` with the finding's rules file.
    package func reproduceCommand(_ r: ExploreResult) -> String? {
        guard let file = r.reproducer else { return nil }
        let run = "aspectctl run --rules \(Self.shellQuoted(file)) -- " + command.map(Self.shellQuoted).joined(separator: " ")
        guard let setup else { return run }
        return "cd \"$(mktemp -d)\" && sh -c \(Self.shellQuoted(setup)) && " + run
    }

    /// A word as a shell reads it back: as it is when plain, else in single quotes.
    package static func shellQuoted(_ s: String) -> String {
        let plain = s.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || "0123456789-_./=:+,@%".unicodeScalars.contains($0) }
        return plain && !s.isEmpty ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// A site with its source location when known: `ledger+0x1a2b (ledger.c:57 (ledger_write))`.
    package func describe(_ site: CallSite) -> String {
        SiteSymbolizer.describe(site, at: locations[site])
    }

    /// A fault point as the report says it, its site with the source location.
    /// Where the baseline's calls came from several images, it starts with the point's.
    package func describe(_ point: FaultPoint) -> String {
        let what: String
        if let context = point.context {
            what = "\(point.function) via \(describe(context)), call \(point.nth) \(point.effect)"
        } else {
            what = point.site.map { "\(point.function) from \(describe($0)), call \(point.nth) \(point.effect)" } ?? point.description
        }
        return imagePrefix(point) + what
    }

    /// "git: " before a fault point, where the baseline's calls came from several images.
    func imagePrefix(_ point: FaultPoint) -> String {
        point.imageName.isEmpty || !hasSeveralImages ? "" : point.imageName + ": "
    }

    var hasSeveralImages: Bool { Set(profiles.flatMap { $0.images.filter { $0.value.calls > 0 }.keys }).count > 1 }

    /// A calling context as reports say it: "app+0x1a2b (app.c:57 (xmalloc)) ← app+0x3c4d (...)".
    package func describe(_ context: [CallSite]) -> String {
        context.map { describe($0) }.joined(separator: " ← ")
    }

    /// Where a point's call comes from, as the other runs' lines group them.
    func place(of point: FaultPoint) -> String {
        if let context = point.context { return "via " + describe(context) }
        return point.site.map { "from " + describe($0) } ?? "any site"
    }

    /// Counts per outcome, in report order.
    package var outcomeCounts: [(ExploreOutcome, Int)] {
        ExploreOutcome.allCases.sorted().map { o in (o, results.filter { $0.outcome == o }.count) }
    }

    static func what(_ r: ExploreResult, baseline: RunRecord? = nil) -> String {
        switch r.outcome {
        case .crash:
            // The crash recorder names the process; the command's own signal says less (a
            // shell script's child shows as the script's exit status 139).
            let crashes = baseline.map { r.record.newCrashes(against: $0) } ?? r.record.crashes
            let head = crashes.first.map { c in
                c.description + (crashes.count > 1 ? " (and \(crashes.count - 1) more process(es))" : "")
            } ?? "signal \(r.record.signal ?? 0)" + (ErrorNames.signalName(r.record.signal ?? 0).map { " (\($0))" } ?? "")
            return head + (r.record.stderr.isEmpty ? "" : ": " + firstLine(r.record.stderr))
        case .hang: return "still running after the timeout"
        case .handled: return "exit \(r.record.exitStatus ?? 0)" + (r.record.stderr.isEmpty ? "" : ": " + firstLine(r.record.stderr))
        case .checkFailed: return "exit \(r.record.exitStatus ?? 0); the check failed"
        case .silentDifference:
            let said = BaselineFiles.said(r.record.differingFiles)
            return "exit \(r.record.exitStatus ?? 0) as the baseline, " + (said ? "though it wrote \"\(firstLine(r.record.stderr))\"" : "nothing said")
                + ", but it differs: " + r.record.differingFiles.filter { $0 != BaselineFiles.stderrName }.joined(separator: ", ")
        case .absorbed: return "same status and output"
        case .notReached: return "the fault never fired"
        case .failFast: return "stopped for want of memory: " + FailFast.summary(r, baseline: baseline ?? r.record).message
        }
    }

    static func firstLine(_ s: String) -> String {
        let line = s.split(separator: "\n").first.map(String.init) ?? ""
        return line.count > 100 ? String(line.prefix(100)) + "…" : line
    }

    /// The first lines of a run's stderr (a crash's message: glibc's "double free detected",
    /// a sanitizer's report header), each cut at 200 characters.
    static func firstLines(_ s: String, _ count: Int = 5) -> [String] {
        s.split(separator: "\n", omittingEmptySubsequences: true).prefix(count).map { line in
            line.count > 200 ? String(line.prefix(200)) + "…" : String(line)
        }
    }

    /// A k-th call finding's reproducer names the call by its site: say which.
    func reproducerNote(_ r: ExploreResult) -> String {
        guard r.point.site == nil, r.point.context == nil else { return "" }
        guard let p = r.reproducerPoint, let site = p.site else { return " (reproducer: call \(r.point.nth), the site could not be told)" }
        return " (reproducer: from \(describe(site)), call \(p.nth))"
    }

    /// What the plan line says of the budget: where it cut buckets short.
    var planCuts: String {
        (plan.sitesSampled ? " (more sites than --max-runs: sites taken round-robin)" : "")
            + (plan.spread ? " (call numbers drawn by the seed to fit --max-runs)" : "")
    }

    /// The terminal report: a summary, then the findings (with reproducers), then the other
    /// outcomes grouped by function and site.
    package var text: String {
        var s = "explore: \(command.joined(separator: " "))\n"
        s += "baseline: exit \(baseline.exitStatus ?? 0) in \(Self.seconds(baseline.seconds)); "
        let called = profiles.filter { $0.calls > 0 }
        s += called.isEmpty ? "no call to any function explored\n"
            : called.map { "\($0.function) \($0.calls) call(s) from \($0.sites.count) site(s)" + (contextsSeen($0).map { " through \($0) context(s)" } ?? "") }.joined(separator: ", ") + "\n"
        for note in baseline.truncationNotes { s += "baseline: \(note) in its file\n" }
        if !baseline.survivors.isEmpty { s += "baseline: \(Self.leftRunning(baseline.survivors))\n" }
        if let warning = baselines?.warning { s += "warning: \(warning)\n" }
        for note in coverage.notes { s += "coverage: \(note)\n" }
        s += "plan: \(results.count) run(s) of \(plan.candidates) fault point(s)"
        s += planCuts
        if !plan.id.isEmpty { s += "; plan id \(plan.id)" }
        s += "; timeout \(Self.seconds(timeout))"
        if results.contains(where: { $0.outcome == .hang }) { s += " (hangs confirmed at \(Self.seconds(RunTimeouts.confirmation(timeout))))" }
        s += "; \(Self.seconds(seconds)) in all\n"
        if let shard { s += "shard: \(shard) of plan \(planID) (\(plannedPoints) point(s) in all; merge the shards with `aspectctl explore merge`)\n" }
        s += "outcomes: " + outcomeCounts.filter { $0.1 > 0 }.map { "\($0.0.rawValue) \($0.1)" }.joined(separator: ", ") + "\n"
        let found = findings.sorted { ($0.outcome, $0.index) < ($1.outcome, $1.index) }
        s += bugsText
        if results.isEmpty {
            s += "\nnothing tested: no run was planned\n"
        } else if found.isEmpty {
            s += "\nno findings\n"
        } else {
            s += "\nfindings:\n"
            let bugOf = Dictionary(bugs.flatMap { b in b.findings.map { ($0.index, b) } }, uniquingKeysWith: { a, _ in a })
            for r in found {
                s += "  \(r.outcome.rawValue.uppercased()) \(describe(r.point))\(reproducerNote(r)): \(Self.what(r, baseline: baseline)) [\(Self.confirmation(r, bug: bugOf[r.index]))]\n"
                if r.outcome == .crash {
                    for line in Self.firstLines(r.record.stderr).dropFirst() { s += "    | \(line)\n" }
                }
                for note in r.record.truncationNotes { s += "    \(note) in its file\n" }
                if let script = r.reproducerScript { s += "    \(Self.shellQuoted(script))  (exits 0 when it happens again)\n" }
                if let cmd = reproduceCommand(r) { s += "    \(cmd)\n" }
            }
        }
        let leaving = results.filter { !$0.record.newSurvivors(against: baseline).isEmpty }
        if !leaving.isEmpty {
            s += "\nleft running (beyond the baseline's), killed after the run:\n"
            for r in leaving {
                s += "  run \(r.index) \(describe(r.point)) (\(r.outcome.rawValue)): \(Self.leftRunning(r.record.newSurvivors(against: baseline)))\n"
            }
        }
        let stops = failFastStops
        if !stops.isEmpty {
            s += "\nfail-fast (by design, not bugs; --fail-fast-is-bug counts them):\n"
            for f in stops { s += "  \(f.program): \(f.message), \(f.runs.count) run(s)\n" }
        }
        let others = results.filter { !$0.outcome.isFinding }
        if !others.isEmpty {
            s += "\nother runs:\n"
            let rows = Dictionary(grouping: others) {
                "\(imagePrefix($0.point))\($0.point.function)\t\(place(of: $0.point))\t\($0.point.effect)\t\($0.outcome.rawValue)"
            }
            for key in rows.keys.sorted() {
                let parts = key.split(separator: "\t").map(String.init)
                let runs = rows[key]!
                let calls = runs.map(\.point.nth)
                let range = calls.count == 1 ? "call \(calls[0])" : "calls \(calls.min()!)–\(calls.max()!) (\(calls.count) runs)"
                s += "  \(parts[0]) \(parts[1]) \(range) \(parts[2]): \(parts[3])\n"
            }
        }
        return s
    }

    /// The bugs, first in the report: each with its signature, its stack (at most
    /// `bugStackLines` frames), the fault points that hit it and a reproducer.
    var bugsText: String {
        let all = bugs
        guard !all.isEmpty else { return "" }
        var s = "\nbugs: \(all.count) (from \(findings.count) finding(s))\n"
        for (n, b) in all.enumerated() {
            s += "  \(n + 1). \(b.outcome.rawValue.uppercased()) \(b.title)\n"
            for f in b.stack.prefix(Self.bugStackLines) { s += "       at \(f.description)\n" }
            if b.stack.count > Self.bugStackLines { s += "       … \(b.stack.count - Self.bugStackLines) more frame(s)\n" }
            let shown = b.findings.prefix(Self.bugPointsShown).map { describe($0.point) }
            let more = b.findings.count > Self.bugPointsShown ? "; … and \(b.findings.count - Self.bugPointsShown) more" : ""
            s += "     hit by \(b.findings.count) fault point(s): " + shown.joined(separator: "; ") + more + "\n"
            if let witness = b.witness, let cmd = reproduceCommand(witness) { s += "     reproduce: \(cmd)\n" }
        }
        return s
    }

    static let bugStackLines = 12

    /// The fail-fast runs, once per program and message: which runs stopped so.
    package var failFastStops: [(program: String, message: String, runs: [Int])] {
        var order: [String] = [], runs: [String: (String, String, [Int])] = [:]
        for r in results where r.outcome == .failFast {
            let (program, message) = FailFast.summary(r, baseline: baseline)
            let key = program + "\t" + message
            if runs[key] == nil { order.append(key); runs[key] = (program, message, []) }
            runs[key]!.2.append(r.index)
        }
        return order.map { runs[$0]! }.map { (program: $0.0, message: $0.1, runs: $0.2) }
    }
    /// The fault points a bug lists in the text (the JSON has them all).
    static let bugPointsShown = 5

    /// How a finding was made sure of: its own re-run, or its bug's witness (the other points
    /// of a bug are not run again, `FindingConfirmation`).
    static func confirmation(_ r: ExploreResult, bug: ExploreBug?) -> String {
        if let again = r.reproduced { return again ? "reproduced" : "flaky" }
        guard let witness = bug?.witness, witness.index != r.index else { return "not run again" }
        return "the bug of run \(witness.index), " + (witness.reproduced == true ? "reproduced" : witness.reproduced == false ? "flaky" : "not run again")
    }

    /// `left 3 process(es) running: sleep ×2, sh (killed)`: each program once, with its
    /// count, the most frequent first (a fork tree of 258 is a line, not 258 names).
    package static func leftRunning(_ programs: [String]) -> String {
        let counts = Dictionary(programs.map { ($0, 1) }, uniquingKeysWith: +).sorted { ($1.value, $0.key) < ($0.value, $1.key) }
        let shown = counts.prefix(leftRunningShown).map { $0.value > 1 ? "\($0.key) ×\($0.value)" : $0.key }
        let more = counts.count > leftRunningShown ? ", \(counts.count - leftRunningShown) other program(s)" : ""
        return "left \(programs.count) process(es) running: \(shown.joined(separator: ", "))\(more) (killed)"
    }

    /// The programs a report names of what a run left running.
    static let leftRunningShown = 8

    /// The end of a run's stderr that reports carry (where a crash's or sanitizer's last
    /// words are).
    static func stderrTail(_ s: String) -> String { String(s.suffix(stderrKept)) }

    /// A frame as the JSON gives it.
    /// The contexts a function was called through, at the campaign's depth (that of its
    /// points); nil for a survey that recorded none. A report read back keeps the count alone,
    /// in its coverage.
    func contextsSeen(_ p: FunctionProfile) -> Int? {
        if p.contexts.isEmpty { return coverage.functions.first { $0.function == p.function }?.contexts }
        let depth = results.compactMap { $0.point.context?.count }.max() ?? Int(ASPECTS_MAX_CONTEXT_DEPTH)
        return p.contexts(depth: depth).count
    }

    static func frameJSON(_ f: StackFrame) -> JSONNode.Value {
        JSONOut.object([("object", .string(f.object)), ("offset", .string("0x" + String(f.offset, radix: 16))),
                        ("returnAddress", .bool(f.isReturnAddress)),
                        ("symbol", f.symbol.map { .string($0) }), ("file", f.file.map { .string($0) }),
                        ("line", f.line.map { JSONOut.int($0) })])
    }

    static func seconds(_ t: Double) -> String { t < 10 ? String(format: "%.2f s", t) : String(format: "%.0f s", t) }

    /// The whole campaign as JSON (config/explore.schema.json); `ReportCoding` reads it back.
    package var json: JSONNode.Value {
        JSONOut.object([
            ("version", JSONOut.int(1)),
            ("command", JSONOut.array(command.map { .string($0) })),
            ("setup", setup.map { .string($0) }),
            ("seed", JSONOut.int(seed)),
            ("planId", .string(plan.id)),
            ("timeoutSeconds", Self.secondsJSON(timeout)),
            ("seconds", Self.secondsJSON(seconds)),
            ("baseline", Self.recordJSON(baseline)),
            ("functions", JSONOut.array(profiles.map { p in
                JSONOut.object([("function", .string(p.function)), ("calls", JSONOut.int(p.calls)),
                                ("sites", JSONOut.array(p.sites.sorted { $0.key < $1.key }.map { site, n in
                                    JSONOut.object([("site", .string(site.description)), ("calls", JSONOut.int(n)),
                                                    ("location", locations[site].map { .string($0) })]) })),
                                ("images", JSONOut.array(p.images.sorted { $0.key < $1.key }.map { image, c in
                                    JSONOut.object([("image", .string(image)), ("calls", JSONOut.int(c.calls)),
                                                    ("sites", JSONOut.array(c.sites.sorted { $0.key < $1.key }.map { site, n in
                                                        JSONOut.object([("site", .string(site.description)), ("calls", JSONOut.int(n))]) }))]) }))])
            })),
            ("baselines", baselines.map { b in
                JSONOut.object([("runs", JSONOut.int(b.runs)), ("differences", JSONOut.array(b.differences.map { .string($0) }))])
            }),
            ("coverage", JSONOut.array(coverage.functions.map { f in
                JSONOut.object([("function", .string(f.function)), ("calls", JSONOut.int(f.calls)), ("sites", JSONOut.int(f.sites)),
                                ("contexts", profiles.first { $0.function == f.function }.flatMap { contextsSeen($0).map { JSONOut.int($0) } }),
                                ("runs", JSONOut.int(results.filter { $0.point.function == f.function }.count)),
                                ("family", f.family.map { .string($0) }),
                                ("familyCalls", f.familyCalls.isEmpty ? nil : JSONOut.array(f.familyCalls.map { c in
                                    JSONOut.object([("function", .string(c.name)), ("calls", JSONOut.int(c.calls))]) }))])
            })),
            ("coverageNotes", JSONOut.array(coverage.notes.map { .string($0) })),
            (
                "images",
                JSONOut.array(
                    coverage.images.map { i in
                        JSONOut.object([
                            ("path", .string(i.path)), ("processes", JSONOut.int(i.processes)), ("calls", JSONOut.int(i.calls)),
                            ("planned", .bool(i.planned)),
                        ])
                    })
            ),
            (
                "plan",
                JSONOut.object([
                    ("runs", JSONOut.int(results.count)), ("candidates", JSONOut.int(plan.candidates)),
                    ("spread", .bool(plan.spread)), ("sitesSampled", .bool(plan.sitesSampled)),
                    ("points", JSONOut.int(plannedPoints)),
                    ("shard", shard.map { .string($0.description) }),
                    ("shardOffset", shard.flatMap { $0.offset == 0 ? nil : JSONOut.int($0.offset) }),
                ])
            ),
            ("outcomes", JSONOut.object(outcomeCounts.map { ($0.0.rawValue, JSONOut.int($0.1)) })),
            ("bugs", JSONOut.array(bugs.map { b in
                JSONOut.object([
                    ("outcome", .string(b.outcome.rawValue)), ("signature", .string(b.signature)),
                    ("caughtByHandler", b.caughtByHandler ? .bool(true) : nil),
                    ("stack", JSONOut.array(b.stack.map(Self.frameJSON))),
                    ("faultPoints", JSONOut.array(b.findings.map { r in JSONOut.object([("run", JSONOut.int(r.index))] + r.point.jsonFields) })),
                    ("reproducer", b.reproducer.map { .string($0) }),
                    ("reproduce", b.witness.flatMap { reproduceCommand($0) }.map { .string($0) }),
                ])
            })),
            ("failFast", JSONOut.array(failFastStops.map { f in
                JSONOut.object([("program", .string(f.program)), ("message", .string(f.message)),
                                ("runs", JSONOut.array(f.runs.map { JSONOut.int($0) }))])
            })),
            ("runs", JSONOut.array(results.map(runJSON))),
        ])
    }
}
