import Foundation
import Testing
import AspectsCore
import AspectsExplore
import AspectsRules

/// explore's verdicts (issue 31): a program that stops on purpose for want of memory is
/// fail-fast, not a bug; a SIGSEGV or an assertion after a failed allocation is one.
@Suite(.serialized) struct ExploreVerdictTests {
    final class Scratch {
        let path = NSTemporaryDirectory() + "aspects-verdict-\(UUID().uuidString)"
        init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        deinit { TableSegments.removeScratch(path) }
    }

    func explore(_ options: [String], _ command: [String], in s: Scratch, extra: [String] = []) throws -> (Outcome, JSONNode?) {
        try ExploreCLI.run(["--function", "malloc", "--strategy", "both"] + options + extra, command, out: s.path + "/explore",
                           json: s.path + "/explore.json", directory: s.path)
    }

    static func outcomes(_ report: JSONNode?) -> [String] { ReportJSON.array(report, "runs").compactMap { ReportJSON.str($0, "outcome") } }

    /// An allocation wrapper that says "out of memory" and aborts, or "memory exhausted" and
    /// exits 1: fail-fast, reached from four fault points, shown once with its message, no
    /// bug, exit 0. `--fail-fast-is-bug` makes the abort a crash bug again.
    @Test(arguments: [("abort", "explore_oom: out of memory (N bytes) (abort)"), ("exit", "explore_oom: memory exhausted (exit 1)")])
    func aDeliberateStopForWantOfMemoryIsFailFast(_ mode: String, _ message: String) throws {
        let s = try Scratch()
        let bin = try Fixture.build("explore_oom", flags: ["-g", "-O0"])
        let (r, report) = try explore([], [bin, mode], in: s)
        #expect(r.status == 0, "\(r)")
        #expect(ReportJSON.array(report, "bugs").isEmpty, "\(r.stdout)")
        #expect(Self.outcomes(report).filter { $0 == "fail-fast" }.count == 4, "\(r.stdout)")
        let stops = ReportJSON.array(report, "failFast")
        #expect(stops.count == 1 && ReportJSON.str(stops.first, "message") == message, "\(r.stdout)")
        #expect(ReportJSON.array(stops.first, "runs").count == 4)
        #expect(r.stdout.contains("fail-fast (by design, not bugs; --fail-fast-is-bug counts them):\n  "), "\(r.stdout)")
        guard mode == "abort" else { return }
        let counted = try Scratch()
        let (again, asBug) = try explore(["--fail-fast-is-bug"], [bin, mode], in: counted)
        #expect(again.status == 1, "\(again)")
        let bugs = ReportJSON.array(asBug, "bugs")
        #expect(bugs.count == 1 && ReportJSON.str(bugs.first, "signature") == "SIGABRT in xmalloc (explore_oom.c:25)", "\(again.stdout)")
    }

    /// After the same failed allocations, a SIGSEGV (the NULL handed to memset) and an
    /// assertion are bugs — one each, however many points reach them — never fail-fast.
    @Test(arguments: [("segv", "SIGSEGV in "), ("assert", "SIGABRT in xmalloc (explore_oom.c:19)")])
    func aCrashAfterAFailedAllocationIsABug(_ mode: String, _ signature: String) throws {
        let s = try Scratch()
        let bin = try Fixture.build("explore_oom", flags: ["-g", "-O0"])
        let (r, report) = try explore([], [bin, mode], in: s)
        #expect(r.status == 1, "\(r)")
        #expect(!Self.outcomes(report).contains("fail-fast") && ReportJSON.array(report, "failFast").isEmpty, "\(r.stdout)")
        let bugs = ReportJSON.array(report, "bugs")
        #expect(bugs.count == 1 && ReportJSON.str(bugs.first, "signature")?.hasPrefix(signature) == true, "\(r.stdout)")
        #expect(ReportJSON.array(bugs.first, "faultPoints").count == 4, "\(r.stdout)")
    }

    /// A program whose normal status is 1 (files that differ, as diff says) is explored as it
    /// is: its baseline exits 1 both times, every run is compared with that — no findings,
    /// exit 0. `--expect-status 0` refuses it, saying what the baseline did.
    @Test func aBaselineThatExitsNonZeroEveryTimeIsTheNormalStatus() throws {
        let s = try Scratch()
        let bin = try Fixture.build("explore_status", flags: ["-g"])
        let setup = #"printf 'a\nb\n' > one && printf 'a\nc\n' > two"#
        let (r, report) = try ExploreCLI.run(["--function", "malloc", "--function", "fopen", "--strategy", "sites", "--setup", setup],
                                             [bin, "one", "two"], out: s.path + "/explore", json: s.path + "/explore.json", directory: s.path)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("baseline: exit 1 in "), "\(r.stdout)")
        #expect(ReportJSON.int(report?["baseline"], "exitStatus") == 1)
        let outcomes = Self.outcomes(report)
        #expect(outcomes.count >= 3, "\(r.stdout)")
        #expect(outcomes.allSatisfy { ["handled", "fail-fast", "absorbed"].contains($0) }, "\(r.stdout)")
        #expect(outcomes.contains("handled"), "an fopen that fails says so and exits 2: \(r.stdout)")

        let refused = try Scratch()
        let (no, _) = try ExploreCLI.run(["--function", "malloc", "--expect-status", "0", "--setup", setup], [bin, "one", "two"],
                                         out: refused.path + "/explore", json: refused.path + "/explore.json", directory: refused.path)
        #expect(no.status != 0 && no.status != 1, "\(no)")
        #expect(no.stderr.contains("the baseline run (no fault) exited with status 1, not 0 as --expect-status says"), "\(no.stderr)")
    }

    /// A baseline that exits 1 once and 0 the next time has no normal status: refused.
    @Test func aBaselineWhoseStatusVariesIsRefused() throws {
        let s = try Scratch()
        // the first run leaves a mark outside its working directory: the next exits 0
        let mark = s.path + "/mark"
        let (r, _) = try ExploreCLI.run(["--function", "malloc"], ["/bin/sh", "-c", "if [ -e \(mark) ]; then exit 0; fi; touch \(mark); exit 1"],
                                        out: s.path + "/explore", json: s.path + "/explore.json", directory: s.path)
        #expect(r.status != 0 && r.status != 1, "\(r)")
        #expect(r.stderr.contains("the baseline exited with status 1 and then otherwise with no fault injected"), "\(r.stderr)")
    }

    /// A run past `--timeout` that ends within the longer limit was slow, not a hang: it is
    /// run again with 3 × the limit and takes that run's outcome (here handled: exit 1 with a
    /// message) — no hang finding, no bug.
    @Test func aSlowRunIsNotAHang() throws {
        let s = try Scratch()
        let bin = try Fixture.build("explore_slow", flags: ["-g"])
        let (r, report) = try ExploreCLI.run(["--function", "malloc", "--strategy", "sites", "--timeout", "1"], [bin, "0"],
                                             out: s.path + "/explore", json: s.path + "/explore.json", directory: s.path)
        #expect(r.status == 0, "\(r)")
        let mine = ReportJSON.array(report, "runs").filter { ReportJSON.str($0, "site")?.hasPrefix("explore_slow") == true }
        #expect(mine.count == 1 && ReportJSON.str(mine.first, "outcome") == "handled", "\(r.stdout)")
        #expect(ReportJSON.array(report, "bugs").isEmpty, "\(r.stdout)")
        #expect(!FileManager.default.fileExists(atPath: s.path + "/explore/work/run-00000"), "the hang's files went with it")
    }

    /// A run's limit is at least 10 × its baseline's time, whatever `--timeout` says: a
    /// baseline of 0.3 s gives 3 s, not the 1 s asked for.
    @Test func theTimeoutIsAtLeastTenTimesTheBaseline() throws {
        let s = try Scratch()
        let bin = try Fixture.build("explore_slow", flags: ["-g"])
        let (r, report) = try ExploreCLI.run(["--function", "malloc", "--strategy", "sites", "--timeout", "1", "--max-runs", "1"], [bin, "0.3"],
                                             out: s.path + "/explore", json: s.path + "/explore.json", directory: s.path)
        #expect(r.status == 0, "\(r)")
        let seconds = try #require(report?["timeoutSeconds"]).value
        guard case .number(let text) = seconds, let limit = Double(text) else { Issue.record("\(seconds)"); return }
        #expect(limit >= 3, "\(r.stdout)")
        #expect(RunTimeouts.run(user: 1, baseline: 0.3) == 3 && RunTimeouts.run(user: 5, baseline: 0.1) == 5)
    }

    /// A crash below the command — the child of a pipeline, whose status is the last
    /// program's — is reproduced by its repro-N.sh from the crash recorder's files, as explore
    /// saw it; the script says "not reproduced" when that program no longer crashes.
    @Test func aReproducerScriptFindsACrashBelowTheCommand() throws {
        let s = try Scratch()
        let bin = try Fixture.build("explore_bugs", flags: ["-g", "-O0"])
        let (r, report) = try ExploreCLI.run(["--function", "malloc", "--strategy", "sites", "--process", (bin as NSString).lastPathComponent],
                                             ["/bin/sh", "-c", "\(bin) same | cat"], out: s.path + "/explore", json: s.path + "/explore.json",
                                             directory: s.path)
        #expect(r.status == 1, "\(r)")
        let crash = try #require(ReportJSON.array(report, "runs").first { ReportJSON.str($0, "outcome") == "crash" }, "\(r.stdout)")
        #expect(ReportJSON.int(crash["run"], "exitStatus") == 0, "the pipeline's status is cat's: \(crash.value.rendered())")
        let script = try #require(ReportJSON.str(crash, "reproducerScript"))
        let source = try String(contentsOfFile: script, encoding: .utf8)
        let again = try Proc.run("/bin/sh", [script], directory: s.path)
        #expect(again.status == 0 && again.stderr.contains("repro: reproduced"), "\(again)\n\(source)")
        // the same script against a program that no longer crashes there
        let fixed = try Fixture.build("explore_status")
        let text = source.replacingOccurrences(of: bin, with: fixed)
        try text.write(toFile: s.path + "/fixed.sh", atomically: true, encoding: .utf8)
        let not = try Proc.run("/bin/sh", [s.path + "/fixed.sh"], directory: s.path)
        #expect(not.status == 1 && not.stderr.contains("repro: not reproduced"), "\(not)")
    }

    /// Without a check, a run that exits 0 as the baseline did and says nothing, but leaves
    /// out.txt short or loses a line of stdout (a write error swallowed), is a silent
    /// difference: a finding, one bug per image and file — out.txt's, stdout's — each
    /// reproduced by its script against a run with no fault. The stamp file, which differs
    /// between the baselines, is never a difference; the open that fails is reported (handled).
    @Test func silentDataLossIsFoundWithoutACheck() throws {
        let s = try Scratch()
        let bin = try Fixture.build("explore_silent", flags: ["-g"])
        let (r, report) = try ExploreCLI.run(["--function", "write", "--function", "open", "--strategy", "both"], [bin],
                                             out: s.path + "/explore", json: s.path + "/explore.json", directory: s.path)
        #expect(r.status == 1, "\(r)")
        let runs = ReportJSON.array(report, "runs")
        let silent = runs.filter { ReportJSON.str($0, "outcome") == "silent-difference" }
        #expect(silent.count == 8, "two sites, writes 1-6: \(r.stdout)")
        let differing = Set(silent.map { run in ReportJSON.array(run["run"], "differingFiles").compactMap { n -> String? in
            if case .string(let t) = n.value { return t }
            return nil
        } })
        #expect(differing == [["out.txt (changed)"], ["(stdout)"]], "\(differing)")
        #expect(runs.contains { ReportJSON.str($0, "function") == "open" && ReportJSON.str($0, "outcome") == "handled" }, "\(r.stdout)")
        let bugs = ReportJSON.array(report, "bugs")
        #expect(bugs.count == 2 && bugs.allSatisfy { ReportJSON.str($0, "outcome") == "silent-difference" }, "\(r.stdout)")
        #expect(bugs.contains { ReportJSON.str($0, "signature")?.hasSuffix(": exit 0 as the baseline, nothing said; differs: out.txt (changed)") == true }, "\(r.stdout)")
        for script in silent.filter({ $0["reproduced"]?.value == .bool(true) }).compactMap({ ReportJSON.str($0, "reproducerScript") }) {
            let again = try Proc.run("/bin/sh", [script], directory: s.path)
            #expect(again.status == 0 && again.stderr.contains("repro: reproduced"), "\(again)")
        }
        // with a check, the check is the oracle: no silent difference is looked for
        let checked = try Scratch()
        let (c, withCheck) = try ExploreCLI.run(["--function", "write", "--strategy", "sites", "--check", "true"], [bin],
                                                out: checked.path + "/explore", json: checked.path + "/explore.json", directory: checked.path)
        #expect(c.status == 0 && !Self.outcomes(withCheck).contains("silent-difference"), "\(c.stdout)")
    }

    /// What became of a file: two bugs on one file end it differently.
    @Test(.tags(.fast)) func aDifferenceSaysWhatBecameOfTheFile() {
        let base = WorkingFiles(entries: ["f.txt": "file 12 aa", "gone": "file 1 bb"])
        let run = WorkingFiles(entries: ["f.txt": "file 0 cc", "new": "file 3 dd"])
        #expect(base.differences(from: run) == ["f.txt", "gone", "new"])
        #expect(run.change(of: "f.txt", from: base) == "emptied" && run.change(of: "gone", from: base) == "removed"
                && run.change(of: "new", from: base) == "created")
        #expect(WorkingFiles.path(ofEntry: "f.txt (emptied)") == "f.txt" && WorkingFiles.path(ofEntry: "(stdout)") == "(stdout)")
    }

    /// The messages: what programs print when memory runs out, not what a broken heap prints.
    @Test(.tags(.fast)) func theMessagesOfMemoryExhaustion() {
        #expect(FailFast.message(in: "jq: error: cannot allocate memory\n") == "jq: error: cannot allocate memory")
        #expect(FailFast.message(in: "memory allocation of 1024 bytes failed\n") != nil, "Rust")
        #expect(FailFast.message(in: "sort: memory exhausted\n") != nil, "gnulib's xalloc_die")
        #expect(FailFast.message(in: "cc1: Virtual memory exhausted\n") != nil)
        #expect(FailFast.message(in: "out of memory\nmalloc(): corrupted top size\n") == nil, "heap corruption")
        #expect(FailFast.message(in: "x: x.c:3: f: Assertion `p' failed.\nout of memory\n") == nil, "an assertion")
        #expect(FailFast.message(in: "open: No such file or directory\n") == nil)
        // an exit is fail-fast only right after saying it: m4 went on after its regex failed
        #expect(FailFast.lastWordsSayIt("m4: memory exhausted\n\n"))
        #expect(!FailFast.lastWordsSayIt("m4:yacc.c:420: bad regular expression `x': Memory exhausted\ncalc.y: fatal error: undefined variable\n"))
    }
}
