import Foundation
import Testing
import AspectsCore

/// `aspectctl explore` on programs nobody wrote for it, and on a large number of calls. Each
/// test prints the campaign's counts (points, runs, outcomes) so the log shows what was done.
@Suite(.serialized) struct ExploreRealProgramsTests {
    struct Campaign {
        var result: Outcome
        var runs: [JSONNode]
        var outcomes: [String: Int]
        var candidates: Int

        func str(_ n: JSONNode, _ k: String) -> String? { if case .string(let s)? = n[k]?.value { return s }; return nil }
        func bool(_ n: JSONNode, _ k: String) -> Bool? { if case .bool(let b)? = n[k]?.value { return b }; return nil }
        var findings: [JSONNode] { runs.filter { bool($0, "finding") == true } }
        var summary: String {
            "\(candidates) point(s), \(runs.count) run(s): " + outcomes.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
    }

    func explore(_ options: [String], _ command: [String]) throws -> Campaign {
        let out = NSTemporaryDirectory() + "aspects-explore-\(UUID().uuidString)"
        defer { TableSegments.removeScratch(out); TableSegments.removeScratch(out + ".json") }
        let r = try Proc.aspectctl(["explore", "--out", out, "--json", out + ".json"] + options + ["--"] + command)
        let json = try JSONParser.parse(try String(contentsOfFile: out + ".json", encoding: .utf8))
        let schema = try JSONParser.parse(try String(contentsOfFile: Paths.root + "/config/explore.schema.json", encoding: .utf8))
        #expect(SchemaValidator(root: schema).validate(json).isEmpty)
        guard case .array(let runs)? = json["runs"]?.value, case .object(let o)? = json["outcomes"]?.value,
              case .number(let c)? = json["plan"]?["candidates"]?.value else {
            throw Fixture.FixtureError(message: "no campaign: \(r)")
        }
        var outcomes: [String: Int] = [:]
        for (k, v) in o { if case .number(let n) = v.value { outcomes[k] = Int(n) } }
        let campaign = Campaign(result: r, runs: runs, outcomes: outcomes, candidates: Int(c) ?? 0)
        #expect(outcomes.values.reduce(0, +) == runs.count, "every run has one outcome")
        print("explore \(command.joined(separator: " ")): \(campaign.summary)")
        return campaign
    }

    /// sort and gzip check every error they can get: only handled and absorbed — but for one
    /// call sort does not check: it ignores dup2's result (sort.c's move_fd: "These should
    /// never fail for our usage"), so a failed dup2 leaves the sorted lines on stdout and
    /// out.txt empty, exit 0, nothing said — a silent difference, true of the code, though
    /// dup2(fd, 1) of an open fd cannot fail on Linux (issue 31 item 9: faults that cannot
    /// happen there are the catalog's to leave out).
    @Test(.tags(.realPrograms)) func controlProgramsWithSoundErrorHandlingHaveNoFindings() throws {
        let sort = try explore(["--imported", "--max-runs", "60", "--setup", #"printf "b\na\nc\n" > in.txt"#], ["sort", "-o", "out.txt", "in.txt"])
        #expect(sort.findings.allSatisfy { sort.str($0, "function") == "dup2" && sort.str($0, "outcome") == "silent-difference" },
                "\(sort.result.stdout)")
        #expect(sort.result.status == (sort.findings.isEmpty ? 0 : 1), "\(sort.result)")
        #expect(sort.runs.count == 60 && sort.candidates > 60 && sort.result.stdout.contains("(call numbers drawn by the seed to fit --max-runs)"))
        let gzip = try explore(["--imported", "--max-runs", "60", "--setup", "seq 1 2000 > data"], ["gzip", "-k", "data"])
        #expect(gzip.result.status == 0 && gzip.findings.isEmpty, "\(gzip.result.stdout)")
        #expect(gzip.runs.count > 10 && gzip.outcomes["handled", default: 0] > 0)
    }

    /// sqlite3 itself handles every failure it was given here. What explore finds is in glibc:
    /// when the user-database lookup that sqlite3's shell makes at start-up (getpwuid, for the
    /// home directory) gets a failing malloc, glibc 2.36's NSS code dies — an assertion
    /// (`nss_database.c:291: nss_database_reload_1: Assertion 'ret > 0' failed`) or a NULL
    /// dereference after `global_state_allocate`. Each finding must reproduce from its rules
    /// file, and be one of these or in sqlite3's own code (which would be news).
    @Test(.tags(.realPrograms), .requires(FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs sqlite3 (.ci/run installs it)"))
    func sqlite3() throws {
        let c = try explore(["--imported", "--max-runs", "80"],
                            ["/usr/bin/sqlite3", "db.sqlite", "create table t(x); insert into t values(1),(2); select sum(x) from t;"])
        #expect(c.result.status == (c.findings.isEmpty ? 0 : 1), "\(c.result)")
        #expect(c.runs.count == 80 && c.outcomes["handled", default: 0] > 0)
        for f in c.findings {
            // each bug is run again by one of its points; the others are not run again (nil)
            #expect(c.bool(f, "reproduced") != false, "\(f)")
            print("  finding: \(c.str(f, "function")!) from \(c.str(f, "site") ?? "any site") \(c.str(f, "location") ?? "") -> \(c.str(f, "outcome")!)")
        }
    }

    /// CPython aborts on purpose ("Fatal Python error: … PyExc_MemoryError is not initialized
    /// yet") when an allocation fails before its exceptions exist: such findings are expected
    /// and labelled. Python 3.11 also dies of SIGSEGV when the calloc of its first thread
    /// state fails (python3.11+0x22cd2e, in PyThreadState_New's code: the NULL is used at
    /// start-up); the findings are printed for a look.
    @Test(.tags(.realPrograms), .requires(FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs python3"))
    func python3() throws {
        let c = try explore(["--imported", "--max-runs", "60"], ["/usr/bin/python3", "-c", #"import json; print(json.dumps({"a": 1}))"#])
        #expect(c.result.status == (c.findings.isEmpty ? 0 : 1), "\(c.result)")
        #expect(c.runs.count == 60)
        for f in c.findings {
            let tail: String = { if case .string(let s)? = f["run"]?["stderrTail"]?.value { return s }; return "" }()
            let known = tail.contains("Fatal Python error")
            print("  finding: \(c.str(f, "function")!) from \(c.str(f, "site") ?? "any site") -> \(c.str(f, "outcome")!)\(known ? " (CPython's deliberate abort at start-up)" : "")")
        }
    }

    /// 100,000 mallocs: the plan keeps to --max-runs (call numbers drawn from all of them),
    /// and the progress bar moves from 0 to the total.
    @Test func aHundredThousandMallocsStayWithinTheBudgetAndTheBarMoves() throws {
        let bin = try Fixture.build("malloc_nth")
        let c = try explore(["--function", "malloc", "--strategy", "nth", "--max-runs", "40", "-j", "2", "--progress", "always"], [bin, "100000"])
        #expect(c.result.status == 0, "\(c.result)")
        #expect(c.runs.count == 40 && c.candidates > 100_000)
        #expect(c.result.stdout.contains("plan: 40 run(s) of \(c.candidates) fault point(s) (call numbers drawn by the seed to fit --max-runs)"), "\(c.result.stdout)")
        // call 1, then calls drawn by the seed from all of them
        let calls = c.runs.compactMap { r -> Int? in if case .number(let n)? = r["nth"]?.value { return Int(n) }; return nil }.sorted()
        #expect(calls.first == 1 && calls.last! > 75_000 && calls.filter { $0 < 50_000 }.count > 5 && Set(calls).count == 40, "\(calls)")
        let done = c.result.stderr.matches(of: #/\] (\d+)/40 runs/#).map { Int($0.1)! }
        #expect(done.first == 0 && done.last == 40 && done == done.sorted() && Set(done).count >= 3, "\(c.result.stderr)")
        #expect(!c.result.stderr.contains("\u{1b}["), "not a terminal: plain lines")
    }
}
