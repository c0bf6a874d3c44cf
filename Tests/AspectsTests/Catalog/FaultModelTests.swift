import CAspectsABI
import Foundation
import Testing
import AspectsCodegen
import AspectsCore
import AspectsExplore
import AspectsRules

/// A fault model true to the kernel (issue 21, item 1): the catalog says where each function's
/// real failure happens — close, fclose, closedir and the write-back calls act and then report
/// the error (`after`), the rest fail without acting (`instead`). A `"fail"` rule without
/// "position" and explore use it; `check` warns about a failure the kernel never gives. Explore
/// also injects short transfers and persistent failures (`--fault`).
@Suite(.serialized) struct FaultModelTests {
    func compile(_ json: String) throws -> [CompiledRule] {
        try RuleCompiler(catalog: .builtIn).compile(try RuleDecoder(source: "test").decode(json))
    }

    @Test func catalogSaysWhereEachFailureHappens() throws {
        let catalog = Catalog.builtIn
        func position(_ name: String) -> Rule.Position? { catalog.function(named: name).map { catalog.group(of: $0).failurePosition } }
        for name in ["close", "fclose", "closedir", "fsync", "fdatasync", "msync", "sync_file_range", "syncfs"] {
            #expect(position(name) == .after, "\(name)")
        }
        // munmap's ENOMEM and EINVAL come before anything is unmapped; a write fails without
        // writing: those fail instead of the call.
        for name in ["munmap", "write", "open", "read", "malloc", "rename", "fflush"] {
            #expect(position(name) == .instead, "\(name)")
        }
        let shown = try Proc.aspectctl(["catalog", "--search", "fsync"])
        #expect(shown.stdout.contains("fails after its work"), "`catalog` says so: \(shown)")
        #expect(throws: CatalogParser.Failure.self) {
            try CatalogParser().parse("[x]\nint f(int a)\n    header: x.h\n    failure: -1 errno\n    errnos: EIO\n    fails: later\n")
        }
    }

    @Test(.tags(.fast)) func failWithoutPositionTakesTheCatalogs() throws {
        let close = try compile(#"{"symbol":"close","action":{"fail":true}}"#)[0]
        #expect(close.position == ASPECTS_POSITION_AFTER.rawValue)
        let write = try compile(#"{"symbol":"write","action":{"fail":"ENOSPC"}}"#)[0]
        #expect(write.position == ASPECTS_POSITION_INSTEAD.rawValue)
        let sync = try compile(#"{"family":"sync","action":{"fail":true}}"#)[0]
        #expect(sync.position == ASPECTS_POSITION_AFTER.rawValue)
        // A written position is kept, and only a failure may leave it out.
        #expect(try compile(#"{"symbol":"close","position":"instead","action":{"fail":true}}"#)[0].position == ASPECTS_POSITION_INSTEAD.rawValue)
        let e = #expect(throws: AspectsError.self) { try compile(#"{"symbol":"write","action":{"log":true}}"#) }
        #expect(e?.field == "position")
    }

    @Test func checkWarnsAboutAFailureTheKernelNeverGives() throws {
        let instead = #"{"id":"c","symbol":"close","position":"instead","action":{"fail":"EIO"}}"#
        let warn = try Proc.aspectctl(["check", "--rule", instead])
        #expect(warn.status == 0 && warn.stderr.contains("warning: rule \"c\": can never happen this way"), "\(warn)")
        #expect(warn.stderr.contains(#""position": "after""#), "says what to write: \(warn)")
        let strict = try Proc.aspectctl(["check", "--strict", "--rule", instead])
        #expect(strict.status == 65, "\(strict)")
        for fine in [#"{"symbol":"close","position":"after","action":{"fail":"EIO"}}"#, #"{"symbol":"close","action":{"fail":true}}"#,
                     #"{"symbol":"close","position":"instead","action":{"return":0}}"#, #"{"symbol":"write","position":"instead","action":{"fail":true}}"#] {
            let r = try Proc.aspectctl(["check", "--strict", "--rule", fine])
            #expect(r.status == 0 && !r.stderr.contains("can never happen"), "\(fine): \(r)")
        }
    }

    /// A failed close under the fault model leaves the descriptor closed: the fixture's pipe
    /// reader sees the end of the pipe, as it does on Linux.
    @Test func aFailedCloseReleasesTheDescriptor() throws {
        let dir = NSTemporaryDirectory() + "aspects-faultmodel-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let rules = dir + "/rules.json"
        try #"[{"symbol":"close","action":{"fail":true},"when":{"args":[{"arg":0,"eq":3}]}}]"#.write(toFile: rules, atomically: true, encoding: .utf8)
        // `exec 3>&-` closes fd 3 with close(3), which fails: fd 3 is gone all the same
        // (failed instead of the call, it stayed open and the echo went to f).
        let r = try Proc.aspectctl(["run", "--rules", rules, "--", "/bin/sh", "-c", "cd \"$1\" && exec 3>f; exec 3>&-; echo x >&3 && echo open || echo closed", "sh", dir])
        #expect(r.stdout.contains("closed"), "\(r)")
    }

    // MARK: - explore

    struct Campaign {
        var result: Outcome
        var runs: [JSONNode]
        func str(_ n: JSONNode, _ k: String) -> String? { if case .string(let s)? = n[k]?.value { return s }; return nil }
        func bool(_ n: JSONNode, _ k: String) -> Bool? { if case .bool(let b)? = n[k]?.value { return b }; return nil }
        var findings: [JSONNode] { runs.filter { bool($0, "finding") == true } }
        func count(_ outcome: String) -> Int { runs.filter { str($0, "outcome") == outcome }.count }
        var kinds: Set<String> { Set(runs.compactMap { str($0, "fault") }) }
    }

    func explore(_ options: [String], _ command: [String]) throws -> Campaign {
        let out = NSTemporaryDirectory() + "aspects-explore-\(UUID().uuidString)"
        defer { TableSegments.removeScratch(out); TableSegments.removeScratch(out + ".json") }
        let r = try Proc.aspectctl(["explore", "-j", "2", "--out", out, "--json", out + ".json"] + options + ["--"] + command)
        let json = try JSONParser.parse(try String(contentsOfFile: out + ".json", encoding: .utf8))
        let schema = try JSONParser.parse(try String(contentsOfFile: Paths.root + "/config/explore.schema.json", encoding: .utf8))
        #expect(SchemaValidator(root: schema).validate(json).isEmpty, "\(SchemaValidator(root: schema).validate(json))")
        guard case .array(let runs)? = json["runs"]?.value else { throw Fixture.FixtureError(message: "no campaign: \(r)") }
        print("explore \(options.joined(separator: " ")) -- \(command.joined(separator: " ")): \(r.stdout.split(separator: "\n").prefix(4).joined(separator: " | "))")
        return Campaign(result: r, runs: runs)
    }

    /// Failing close instead of the call kept tar's pipe to gzip open: tar waited for ever
    /// (false hangs). Failed after it ran, as Linux does, tar says "Cannot close" and exits 2.
    @Test(.tags(.realPrograms), .requires(FileManager.default.isExecutableFile(atPath: "/bin/tar") && FileManager.default.isExecutableFile(atPath: "/bin/gzip"), "needs tar and gzip"))
    func tarWithCloseFaultsHasNoHang() throws {
        let c = try explore(["--function", "close", "--function", "fclose", "--setup", "mkdir dir; seq 1 3000 > dir/a; seq 1 500 > dir/b"],
                            ["tar", "czf", "out.tgz", "dir"])
        #expect(c.runs.count > 10)
        #expect(c.count("hang") == 0, "\(c.result.stdout)")
        #expect(c.findings.isEmpty && c.result.status == 0, "\(c.result.stdout)")
        #expect(c.count("handled") > 0)
    }

    @Test(.tags(.fast)) func planHasEachKindWhereItApplies() throws {
        let site = try #require(CallSite("prog+0x10"))
        let profiles = [FunctionProfile(function: "close", calls: 3, sites: [site: 3], images: ["/bin/prog": ImageCalls(calls: 3, sites: [site: 3])]),
                        FunctionProfile(function: "write", calls: 2, sites: [site: 2], images: ["/bin/prog": ImageCalls(calls: 2, sites: [site: 2])])]
        let kinds: [FaultKind] = [.error, .short, .persistent]
        let plan = ExplorePlan.make(profiles: profiles, strategy: .both, errnos: { $0 == "close" ? ["EIO"] : ["ENOSPC"] },
                                    kinds: { f in kinds.filter { $0.applies(to: f, in: .builtIn) } }, maxRuns: 100, seed: 0)
        // close: no short (no count to cut); write: all three.
        #expect(!plan.points.contains { $0.function == "close" && $0.kind == .short })
        #expect(Set(plan.points.filter { $0.function == "write" }.map(\.kind)) == Set(kinds))
        #expect(plan.points.count == (1 + 3) * 2 + (1 + 2) * 3)
        // Every point's rule compiles, each where its kind says.
        for p in plan.points {
            let c = try compile("[" + p.ruleJSON + "]")[0]
            switch p.kind {
            case .short: #expect(c.position == ASPECTS_POSITION_BEFORE.rawValue && c.rule.action.short && c.rule.when.seed != nil)
            case .error: #expect(c.position == (p.function == "close" ? ASPECTS_POSITION_AFTER : ASPECTS_POSITION_INSTEAD).rawValue && c.rule.when.nth == p.nth)
            case .persistent: #expect(c.rule.when.nth == nil && c.rule.when.times == nil && c.rule.when.after == (p.nth > 1 ? p.nth - 1 : nil))
            }
        }
        // Without --fault: the plan of before (the same points, errors only).
        let plain = ExplorePlan.make(profiles: profiles, strategy: .both, errnos: { _ in ["EIO"] }, maxRuns: 100, seed: 7)
        #expect(plain.points.allSatisfy { $0.kind == .error } && plain.points.count == 2 + 5)
    }

    /// The ledger fixture ignores a failed write of its new ledger: a short transfer loses data
    /// (check-failed), and a full disk from the first write on also fails its pipe (a hang).
    @Test func shortAndPersistentFaultsOnAFixture() throws {
        let bin = try Fixture.build("explore_ledger")
        let setup = ["--setup", #"echo "total 42" > ledger.db"#, "--check", #"grep -q "total 42" ledger.db"#, "--function", "write", "--timeout", "3"]
        let short = try explore(setup + ["--fault", "short"], [bin])
        #expect(short.kinds == ["short"] && short.runs.allSatisfy { short.str($0, "errno") == nil }, "\(short.result.stdout)")
        #expect(short.findings.contains { short.str($0, "outcome") == "check-failed" && short.bool($0, "reproduced") == true }, "\(short.result.stdout)")
        #expect(short.result.stdout.contains("transfers short"), "\(short.result.stdout)")
        let persistent = try explore(setup + ["--fault", "persistent", "--strategy", "nth"], [bin])
        #expect(persistent.kinds == ["persistent"], "\(persistent.result.stdout)")
        #expect(persistent.findings.contains { persistent.str($0, "outcome") == "hang" }, "\(persistent.result.stdout)")
        let none = try explore(["--setup", #"echo "total 42" > ledger.db"#, "--function", "close", "--fault", "short"], [bin])
        #expect(none.runs.isEmpty && none.result.stderr.contains("--fault short: none of the functions explored"), "\(none.result)")
        let bad = try Proc.aspectctl(["explore", "--fault", "slow", "--", bin])
        #expect(bad.status == 64 && bad.stderr.contains("--fault is error, short, persistent, not slow"), "\(bad)")
    }

    /// gzip continues a short write and stops at a persistent failure with its message: no findings.
    @Test(.tags(.realPrograms), .requires(FileManager.default.isExecutableFile(atPath: "/bin/gzip"), "needs gzip"))
    func shortAndPersistentFaultsOnGzip() throws {
        let c = try explore(["--function", "write", "--fault", "short", "--fault", "persistent", "--max-runs", "40",
                             "--setup", "head -c 1000000 /dev/urandom > data", "--check", "test ! -e data.gz || gunzip -c data.gz | cmp -s - data"], ["gzip", "-k", "data"])
        #expect(c.kinds == ["short", "persistent"], "\(c.result.stdout)")
        #expect(c.findings.isEmpty, "\(c.result.stdout)")
        #expect(c.count("handled") > 0 && c.count("absorbed") > 0, "\(c.result.stdout)")
        // Every short transfer was continued: the same output as without a fault.
        #expect(c.runs.filter { c.str($0, "fault") == "short" && c.str($0, "outcome") != "not-reached" }.allSatisfy { c.str($0, "outcome") == "absorbed" }, "\(c.result.stdout)")
    }
}
