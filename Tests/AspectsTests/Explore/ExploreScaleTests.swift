import Foundation
import Testing
import AspectsCore
@testable import AspectsExplore
import AspectsRules

/// A campaign at scale: its JSON report read back renders the same, shards of one plan merge
/// into the unsharded campaign, and an interrupted campaign resumed from its journal ends with
/// the uninterrupted one's report.
@Suite(.serialized) struct ExploreScaleTests {
    /// A scratch directory, removed at the end.
    static func scratch() -> (dir: String, cleanup: () -> Void) {
        let dir = NSTemporaryDirectory() + "aspects-scale-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return (dir, { try? FileManager.default.removeItem(atPath: dir) })
    }

    static func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    /// What config/explore.schema.json finds wrong with the report at `path`.
    static func schemaProblems(_ path: String) throws -> [String] {
        let schema = try JSONParser.parse(try text(Paths.root + "/config/explore.schema.json"))
        return SchemaValidator(root: schema).validate(try JSONParser.parse(try text(path))).map { "\($0)" }
    }

    /// What a campaign found, without its timings and paths: each run's point, outcome and
    /// re-run, the bugs and their points, the counts and the plan.
    static func verdict(_ path: String) throws -> [String] {
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        let runs = (root["runs"] as? [[String: Any]] ?? []).map { r in
            let run = r["run"] as? [String: Any] ?? [:]
            // whether a run was run again is its bug's choice (each shard confirms the bugs it
            // found): the bugs below say whether each was reproduced
            return ["index", "point", "outcome"].map { "\(r[$0] ?? "-")" }.joined(separator: " ")
                + " exit \(run["exitStatus"] ?? "-") signal \(run["signal"] ?? "-") timedOut \(run["timedOut"] ?? "-")"
        }
        let bugs = (root["bugs"] as? [[String: Any]] ?? []).map { b in
            "bug \(b["outcome"] ?? "") \(b["signature"] ?? ""): " + (b["faultPoints"] as? [[String: Any]] ?? []).map { "\($0["run"] ?? "") \($0["point"] ?? "")" }.joined(separator: ", ")
                + ((b["faultPoints"] as? [[String: Any]] ?? []).contains { p in
                    (root["runs"] as? [[String: Any]] ?? []).contains { $0["index"] as? Int == p["run"] as? Int && $0["reproduced"] as? Bool == true }
                } ? " reproduced" : " not reproduced")
        }
        var plan = root["plan"] as? [String: Any] ?? [:]
        plan["shard"] = nil
        let counts = ["outcomes \((root["outcomes"] as? [String: Any] ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })",
                      "plan \(plan.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })"]
        return counts + bugs + runs
    }

    // MARK: - reports that round-trip

    /// A campaign with crashes (stacks, bugs), reproducers and re-runs: its JSON read back gives
    /// the same text, JSON, HTML and JUnit as the campaign wrote.
    @Test func aCampaignReadBackFromItsJSONRendersTheSame() throws {
        let bin = try Fixture.build("explore_bugs", flags: ["-g", "-O0"])
        let (dir, cleanup) = Self.scratch()
        defer { cleanup() }
        let r = try Proc.aspectctl(["explore", "--function", "malloc", "--strategy", "both", "--max-runs", "6", "--out", dir + "/out",
                                    "--json", dir + "/c.json", "--html", dir + "/c.html", "--junit", dir + "/c.xml", "--", bin, "same"])
        #expect(r.status == 1, "\(r)")
        let json = try Self.text(dir + "/c.json")
        let problems = try Self.schemaProblems(dir + "/c.json")
        #expect(problems.isEmpty, "\(problems)")
        let report = try ExploreReport.decode(json, source: dir + "/c.json")
        #expect(!report.bugs.isEmpty && report.bugs.allSatisfy { $0.outcome != .crash || !$0.stack.isEmpty }, "\(r.stdout)")
        #expect(report.text == r.stdout)
        #expect(report.json.rendered(pretty: true) + "\n" == json)
        #expect(report.html == (try Self.text(dir + "/c.html")))
        #expect(report.junit == (try Self.text(dir + "/c.xml")))
    }

    /// A campaign by calling context reads back the same too: its summary says how many
    /// contexts each function was called through, which the report keeps as a count, and its
    /// runs where each frame of their context is. Before, read back or merged, "through N
    /// context(s)" was gone (the profiles keep no contexts) and a context's callers lost their
    /// file and line (only sites kept theirs).
    @Test func aCampaignByContextReadBackSaysItsContexts() throws {
        let bin = try CallContextTests.fixture()
        let (dir, cleanup) = Self.scratch()
        defer { cleanup() }
        let r = try Proc.aspectctl(["explore", "--function", "malloc", "--strategy", "context", "--max-runs", "6", "--out", dir + "/out",
                                    "--json", dir + "/c.json", "--", bin])
        #expect(r.status == 1 && r.stdout.contains(" through 4 context(s)"), "\(r)") // tidy, careful, careless and stdio's own
        let json = try Self.text(dir + "/c.json")
        #expect(try Self.schemaProblems(dir + "/c.json").isEmpty)
        let report = try ExploreReport.decode(json, source: dir + "/c.json")
        #expect(report.text == r.stdout)
        #expect(report.json.rendered(pretty: true) + "\n" == json)
    }

    /// A run's long stderr keeps its start and its tail (what reports quote), its crash stacks
    /// and the baseline's crashes: read back, every form renders the same.
    @Test(.tags(.fast)) func aLongStderrAndCrashStacksRoundTrip() throws {
        let frames = [StackFrame(object: "/usr/lib/libc.so.6", offset: 0x8a1b3, isReturnAddress: false, symbol: "abort"),
                      StackFrame(object: "/bin/prog", offset: 0x1189, isReturnAddress: true, symbol: "fill", file: "prog.c", line: 24),
                      StackFrame(object: "/bin/prog", offset: 0x11f0, isReturnAddress: true)]
        var crashed = RunRecord(exitStatus: nil, signal: 6, timedOut: false, stdout: "out\n",
                                stderr: "double free detected\n" + String(repeating: "a line of noise\n", count: 400) + "the end\n", seconds: 0.1255)
        crashed.crashes = [ProcessCrash(pid: 42, program: "/bin/prog", signal: 6, stack: frames),
                           ProcessCrash(pid: 43, program: "/usr/bin/m4", signal: 11, stack: frames, caughtByHandler: true)]
        var baseline = RunRecord(exitStatus: 0, signal: nil, timedOut: false, stdout: "out\n", stderr: "", seconds: 1.0 / 3)
        baseline.crashes = [ProcessCrash(pid: 7, program: "/bin/helper", signal: 11)]
        let site = try #require(CallSite("prog+0x1189"))
        let point = FaultPoint(function: "malloc", site: nil, nth: 3, errno: "ENOMEM")
        var finding = ExploreResult(index: 0, point: point, outcome: .crash, record: crashed, reproducer: "/tmp/out/repro-00000.json", reproduced: true)
        finding.reproducerPoint = FaultPoint(function: "malloc", site: site, nth: 1, errno: "ENOMEM")
        finding.reproducerScript = "/tmp/out/repro-00000.sh"
        let handled = ExploreResult(index: 1, point: FaultPoint(function: "read", site: site, nth: 1, errno: "", kind: .short), outcome: .handled,
                                    record: RunRecord(exitStatus: 1, signal: nil, timedOut: false, stdout: "", stderr: "short\n", seconds: 0.02),
                                    reproducer: nil, reproduced: nil)
        var report = ExploreReport(command: ["/bin/prog", "a b"], baseline: baseline,
                                   profiles: [FunctionProfile(function: "malloc", calls: 9, sites: [site: 4])],
                                   plan: ExplorePlan(points: [point, handled.point], candidates: 12, spread: true),
                                   results: [finding, handled], timeout: 2.5, seed: 7, seconds: 12.3456, setup: "echo x > f")
        report.locations = [site: "prog.c:24 (fill)"]
        report.baselines = BaselineComparison(runs: 2, differences: ["run 2's stdout differs"])
        report.coverage.notes = ["a note"]
        report.coverage.functions = [ExploreCoverage.Function(function: "malloc", calls: 9, sites: 1)]
        (report.planID, report.plannedPoints, report.shard) = (report.plan.id, 4, ExploreShard(index: 1, count: 2))
        let json = report.json.rendered(pretty: true)
        let back = try ExploreReport.decode(json, source: "test")
        #expect(back.results[0].record.stderr.hasPrefix("double free detected\n"))
        #expect(back.results[0].record.crashes.map(\.caughtByHandler) == [false, true])
        #expect(back.json.rendered(pretty: true) == json)
        #expect(back.text == report.text)
        #expect(back.html == report.html)
        #expect(back.junit == report.junit)
    }

    /// What is not a campaign's JSON is refused naming the file and the member.
    @Test(.tags(.fast)) func aReportMissingAMemberIsRefusedNamingIt() throws {
        #expect(throws: AspectsError.self) { try ExploreReport.decode("[]", source: "x.json") }
        do {
            _ = try ExploreReport.decode(#"{"version":1,"command":["a"],"functions":[],"runs":[{"index":0}]}"#, source: "x.json")
            Issue.record("decoded")
        } catch {
            #expect(error.description.contains("x.json") && error.description.contains("$.runs[0]"), "\(error)")
        }
    }

    // MARK: - shards and merge

    static let bugsOptions = ["--function", "malloc", "--strategy", "both", "--max-runs", "6", "--timeout", "5", "-j", "2"]

    /// The plan split in two shards, merged: exactly the unsharded campaign's points, outcomes,
    /// bugs and exit status.
    @Test func twoShardsMergedAreTheUnshardedCampaign() throws {
        let bin = try Fixture.build("explore_bugs", flags: ["-g", "-O0"])
        let (dir, cleanup) = Self.scratch()
        defer { cleanup() }
        let whole = try Proc.aspectctl(["explore"] + Self.bugsOptions + ["--out", dir + "/u", "--json", dir + "/u.json", "--", bin, "same"])
        #expect(whole.status == 1, "\(whole)")
        var sizes: [Int] = []
        for i in 1...2 {
            let s = try Proc.aspectctl(["explore"] + Self.bugsOptions + ["--shard", "\(i)/2", "--out", dir + "/s\(i)", "--json", dir + "/s\(i).json", "--", bin, "same"])
            #expect(s.status <= 1, "\(s)")
            #expect(s.stdout.contains("shard: \(i)/2 of plan "), "\(s.stdout)")
            #expect(try Self.schemaProblems(dir + "/s\(i).json").isEmpty)
            let shard = try ExploreReport.decode(try Self.text(dir + "/s\(i).json"), source: "s\(i)")
            #expect(shard.shard == ExploreShard(index: i, count: 2))
            #expect(shard.results.allSatisfy { $0.index % 2 == i - 1 })
            #expect(!shard.profiles.isEmpty && shard.baseline.exitStatus == 0, "every shard runs its own baseline")
            sizes.append(shard.results.count)
        }
        #expect(abs(sizes[0] - sizes[1]) <= 1, "\(sizes)")
        let merged = try Proc.aspectctl(["explore", "merge", dir + "/s2.json", dir + "/s1.json", "--json", dir + "/m.json",
                                         "--junit", dir + "/m.xml", "--html", dir + "/m.html"])
        #expect(merged.status == whole.status, "\(merged)")
        #expect(try Self.verdict(dir + "/m.json") == (try Self.verdict(dir + "/u.json")))
        #expect(try Self.schemaProblems(dir + "/m.json").isEmpty)
        #expect(merged.stdout.contains("bugs: ") && !merged.stdout.contains("shard:"), "\(merged.stdout)")
        #expect(FileManager.default.fileExists(atPath: dir + "/m.xml") && FileManager.default.fileExists(atPath: dir + "/m.html"))
    }

    @Test(arguments: ["0/2", "3/2", "2", "a/2", "1/0"])
    func aShardOutsideItsRangeIsRefused(_ shard: String) throws {
        let r = try Proc.aspectctl(["explore", "--shard", shard, "--function", "write", "--", "/bin/true"])
        #expect(r.status == 64, "\(r)")
        #expect(r.stderr.contains("--shard") && r.stderr.contains(shard), "\(r)")
    }

    /// The plan dealt round-robin: every point in exactly one shard, sizes within one.
    @Test(.tags(.fast)) func shardsPartitionThePlanInBalancedParts() {
        for points in [0, 1, 5, 17] {
            for n in 1...5 {
                let parts = (1...n).map { ExploreShard(index: $0, count: n).indices(of: points) }
                #expect(parts.flatMap { $0 }.sorted() == Array(0..<points))
                #expect((parts.map(\.count).max() ?? 0) - (parts.map(\.count).min() ?? 0) <= 1)
                #expect(parts.map(\.count) == (1...n).map { ExploreShard(index: $0, count: n).size(of: points) })
            }
        }
    }

    /// A shard report of `shard` holding `indices` of a plan of `points` points.
    static func shardReport(_ shard: ExploreShard, plan: String = "p1", points: Int = 4, indices: [Int]? = nil) -> ExploreReport {
        let results = (indices ?? shard.indices(of: points)).map { i in
            ExploreResult(index: i, point: FaultPoint(function: "write", site: nil, nth: UInt64(i + 1), errno: "EIO"), outcome: .handled,
                          record: RunRecord(exitStatus: 1, signal: nil, timedOut: false, stdout: "", stderr: "", seconds: 0), reproducer: nil, reproduced: nil)
        }
        var r = ExploreReport(command: ["prog"], baseline: RunRecord(exitStatus: 0, signal: nil, timedOut: false, stdout: "", stderr: "", seconds: 0),
                              profiles: [], plan: ExplorePlan(points: results.map(\.point), candidates: points, spread: false),
                              results: results, timeout: 1, seed: 0, seconds: 1, setup: nil)
        (r.planID, r.plannedPoints, r.shard) = (plan, points, shard)
        return r
    }

    /// merge refuses shards of two plans, a shard twice, a missing shard (named), and shards
    /// whose runs overlap.
    @Test func mergeRefusesShardsThatAreNotOneWholePlan() throws {
        func refusal(_ shards: [(String, ExploreReport)]) -> String {
            do { _ = try ExploreReport.merge(shards.map { (source: $0.0, report: $0.1) }); return "merged" } catch { return error.description }
        }
        let one = Self.shardReport(ExploreShard(index: 1, count: 3)), two = Self.shardReport(ExploreShard(index: 2, count: 3))
        let three = Self.shardReport(ExploreShard(index: 3, count: 3))
        #expect(refusal([("a", one), ("b", two), ("c", three)]) == "merged")
        #expect(refusal([("a", one), ("b", two)]).contains("shard(s) 3/3 missing"))
        #expect(refusal([("a", one), ("b", one), ("c", three)]).contains("shard 1/3 twice"))
        #expect(refusal([("a", one), ("b", Self.shardReport(ExploreShard(index: 2, count: 3), plan: "p2")), ("c", three)]).contains("another plan"))
        #expect(refusal([("a", one), ("b", Self.shardReport(ExploreShard(index: 2, count: 3), indices: [1, 3])), ("c", three)]).contains("overlap"))
        // a report claiming a plan of 10^12 points, or of -5, is refused without listing them
        var huge = [one, two, three]
        for k in huge.indices { huge[k].plannedPoints = 1_000_000_000_000 }
        #expect(refusal(zip(["a", "b", "c"], huge).map { ($0, $1) }).contains("did not run all of theirs"))
        var negative = Self.shardReport(ExploreShard(index: 1, count: 1))
        negative.plannedPoints = -5
        #expect(throws: AspectsError.self) { try ExploreReport.decode(negative.json.rendered(), source: "n") }
        var whole = one
        whole.shard = nil
        #expect(refusal([("a", whole)]).contains("not a shard's report"))
        // the command line: no report, a report that is not one
        let none = try Proc.aspectctl(["explore", "merge"])
        #expect(none.status == 64 && none.stderr.contains("Usage: aspectctl explore merge <report>"), "\(none)")
        let (dir, cleanup) = Self.scratch()
        defer { cleanup() }
        try #"{"version":1}"#.write(toFile: dir + "/x.json", atomically: false, encoding: .utf8)
        let bad = try Proc.aspectctl(["explore", "merge", dir + "/x.json"])
        #expect(bad.status == 65 && bad.stderr.contains(dir + "/x.json") && bad.stderr.contains("$.functions"), "\(bad)")
    }

    // MARK: - resume

    /// A slow campaign (each run 0.6 s: six writes, a pause after each) to interrupt mid-way.
    static let slowScript = "for i in 1 2 3 4 5 6; do echo $i > f$i; sleep 0.1; done"
    static func slowCampaign(_ dir: String, _ name: String, _ extra: [String] = []) -> [String] {
        ["explore", "--function", "write", "--strategy", "both", "-j", "1", "--timeout", "30", "--out", dir + "/" + name,
         "--json", dir + "/" + name + ".json"] + extra + ["--", "/bin/sh", "-c", slowScript]
    }

    static func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Interrupted by SIGINT once the journal holds a run, then run again with --resume: the
    /// missing runs only, and the same report as an uninterrupted campaign's. A journal line
    /// cut short is ignored and said; the used --out is refused without --resume.
    @Test(.tags(.slow)) func anInterruptedCampaignResumedEndsWithTheUninterruptedReport() throws {
        let (dir, cleanup) = Self.scratch()
        defer { cleanup() }
        let whole = try Proc.aspectctl(Self.slowCampaign(dir, "whole"))
        let planned = Self.lines(dir + "/whole/journal.jsonl").count - 1
        #expect(planned >= 3, "\(whole)")
        let (pid, watch) = try Proc.spawnAspectctl(
            Self.slowCampaign(dir, "cut"),
            environment: ProcessInfo.processInfo.environment.filter { $0.key != "LD_PRELOAD" })
        let journal = dir + "/cut/journal.jsonl"
        for _ in 0..<6000 where Self.lines(journal).count < 2 { usleep(20_000) }
        kill(pid, SIGINT)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        watch.finish()
        #expect((status >> 8) & 0xff == 128 + SIGINT, "explore exits 130: wait status \(status)")
        let before = Self.lines(journal).count - 1
        try #require(before >= 1 && before < planned, "interrupted mid-way: \(before) of \(planned) runs journaled")
        #expect(!FileManager.default.fileExists(atPath: dir + "/cut.json"))
        let again = try Proc.aspectctl(Self.slowCampaign(dir, "cut"))
        #expect(again.status == 65 && again.stderr.contains("--resume") && again.stderr.contains("--force"), "\(again)")
        // a run line cut short by a kill
        let h = try #require(FileHandle(forWritingAtPath: journal))
        try h.seekToEnd()
        h.write(Data(#"{"index":99,"function":"wr"#.utf8))
        try h.close()
        let resumed = try Proc.aspectctl(Self.slowCampaign(dir, "cut", ["--resume"]))
        #expect(resumed.status == whole.status, "\(resumed)")
        #expect(resumed.stderr.contains("cut short"), "\(resumed.stderr)")
        #expect(Self.lines(journal).count - 1 == planned, "each run journaled once, the cut line gone")
        #expect(try Self.verdict(dir + "/cut.json") == (try Self.verdict(dir + "/whole.json")))
    }

    /// A run that ends while a signal ends the campaign is not journaled: the interruption
    /// kills it, so its outcome (not-reached, or a crash by SIGKILL) is not the fault's, and
    /// --resume must run it again. (Found by interrupting campaigns at random moments and
    /// resuming them: a run killed by the interruption came back as not-reached.)
    @Test func aRunEndedDuringAnInterruptionIsNotJournaled() throws {
        let (dir, cleanup) = Self.scratch()
        defer { cleanup() }
        var options = ExploreOptions(command: ["/bin/sh", "-c", "echo a > f"], library: Paths.library)
        (options.functions, options.outDirectory, options.jobs, options.timeout) = (["write"], dir + "/o", 1, 10)
        let campaign = try ExploreCampaign(options: options)
        let (baseline, profiles) = try campaign.baseline(functions: ["write"])
        let plan = ExplorePlan.make(profiles: profiles, strategy: .sites, errnos: campaign.errnos(for:), maxRuns: 10, seed: 0)
        try #require(!plan.points.isEmpty)
        let journal = try CampaignJournal.create(in: dir + "/o", header: .init(planID: plan.id, points: plan.points.count, settings: [:]))
        ExploreInterruption.ending = SIGINT
        defer { ExploreInterruption.ending = 0 }
        #expect(throws: AspectsError.self, "a run ended during the interruption is no outcome") {
            _ = try campaign.execute(plan: plan, baseline: baseline, profiles: profiles, journal: journal) { _, _, _ in }
        }
        let left = ((try? FileManager.default.contentsOfDirectory(atPath: dir + "/o/work")) ?? []).filter { $0.hasSuffix(".table") }
        #expect(left.isEmpty, "the run's table is destroyed, its segment too: \(left)")
        #expect(Self.lines(journal.path).count == 1, "the header only: \(Self.lines(journal.path))")
    }

    /// --resume with other options is refused, saying what changed (those that make another
    /// plan, and those that judge runs otherwise); --resume where no plan was made starts the
    /// campaign, saying so.
    @Test func aResumeOfAnotherPlanIsRefusedSayingWhatChanged() throws {
        let (dir, cleanup) = Self.scratch()
        defer { cleanup() }
        let cmd = ["--", "/bin/sh", "-c", "echo a; echo b; echo c"]
        _ = try Proc.aspectctl(["explore", "--function", "write", "--out", dir + "/o"] + cmd)
        let r = try Proc.aspectctl(["explore", "--function", "write", "--strategy", "nth", "--resume", "--out", dir + "/o"] + cmd)
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("the campaign changed") && r.stderr.contains("--strategy was both, now nth"), "\(r.stderr)")
        let check = try Proc.aspectctl(["explore", "--function", "write", "--check", "true", "--resume", "--out", dir + "/o"] + cmd)
        #expect(check.status == 65 && check.stderr.contains("--check was not given, now true"), "runs judged otherwise: \(check.stderr)")
        // interrupted before its plan, a campaign has no journal: resuming it starts it
        let none = try Proc.aspectctl(["explore", "--function", "write", "--resume", "--out", dir + "/none"] + cmd)
        #expect(none.status == 0 && none.stderr.contains("holds no journal") && none.stderr.contains("starts from the beginning"), "\(none)")
        #expect(Self.lines(dir + "/none/journal.jsonl").count > 1)
    }

    /// --force clears the journal, reproducers and work directory of a previous campaign, and
    /// nothing else: not another file, not what a link among them points to.
    @Test func forceClearsOnlyWhatACampaignWrote() throws {
        let (dir, cleanup) = Self.scratch()
        defer { cleanup() }
        let out = dir + "/o", fm = FileManager.default
        try fm.createDirectory(atPath: out + "/work/run-00001", withIntermediateDirectories: true)
        for name in ["journal.jsonl", "repro-00001.json", "repro-00001.sh", "notes.txt", "repro-mine.json", "work/run-00001/f"] {
            try "x".write(toFile: out + "/" + name, atomically: false, encoding: .utf8)
        }
        try "keep".write(toFile: dir + "/outside", atomically: false, encoding: .utf8)
        try fm.createSymbolicLink(atPath: out + "/repro-00002.json", withDestinationPath: dir + "/outside")
        try fm.createDirectory(atPath: dir + "/outdir", withIntermediateDirectories: true)
        try "keep".write(toFile: dir + "/outdir/f", atomically: false, encoding: .utf8)
        try fm.createSymbolicLink(atPath: out + "/work/link", withDestinationPath: dir + "/outdir")
        // a run's table a killed campaign left: destroyed with its segment, not only unlinked
        #expect(try Proc.aspectctl(["create", "--table", out + "/work/run-00009.table"]).status == 0)
        let left = try #require(TableSegments.anchor(out + "/work/run-00009.table"))
        let r = try Proc.aspectctl(["explore", "--function", "write", "--force", "--out", out, "--", "/bin/sh", "-c", "echo a"])
        #expect(TableSegments.status(left.shmid) == nil, "the left table's segment is gone")
        #expect(r.status <= 1, "\(r)")
        #expect(!fm.fileExists(atPath: out + "/repro-00001.json") && !fm.fileExists(atPath: out + "/repro-00001.sh"))
        #expect((try? fm.destinationOfSymbolicLink(atPath: out + "/repro-00002.json")) == nil)
        #expect(!fm.fileExists(atPath: out + "/work/run-00001/f"))
        #expect(fm.fileExists(atPath: out + "/notes.txt") && fm.fileExists(atPath: out + "/repro-mine.json"))
        #expect(fm.fileExists(atPath: dir + "/outside") && fm.fileExists(atPath: dir + "/outdir/f"))
        #expect(Self.lines(out + "/journal.jsonl").count >= 1)
    }
}
