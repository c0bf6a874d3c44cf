import Foundation
import Testing
import AspectsCore

/// `aspectctl explore` on a program with planted error-handling bugs (explore_ledger.c): it
/// must find each of them with a reproducer that reproduces it, and report none of the
/// correctly handled errors as a finding.
@Suite(.serialized) struct ExploreTests {
    static let setup = #"echo "total 42" > ledger.db"#
    static let check = #"grep -q "total 42" ledger.db"#

    func campaign(_ extra: [String], program: String) throws -> (Outcome, String) {
        let out = NSTemporaryDirectory() + "aspects-explore-\(UUID().uuidString)"
        let args = ["explore", "--function", "open", "--function", "malloc", "--function", "write", "--function", "close",
                    "--setup", Self.setup, "--check", Self.check, "-j", "2", "--out", out, "--json", out + ".json"] + extra + ["--", program]
        return (try Proc.aspectctl(args), out)
    }

    @Test func findsEveryPlantedBugAndNoHandledError() throws {
        let bin = try Fixture.build("explore_ledger")
        let (r, out) = try campaign(["--strategy", "sites"], program: bin)
        defer { TableSegments.removeScratch(out); TableSegments.removeScratch(out + ".json") }
        #expect(r.status == 1, "findings make exit status 1: \(r)")
        // stderr is not a terminal here: no progress bar.
        #expect(r.stderr.isEmpty, "\(r)")
        let report = try JSONParser.parse(try String(contentsOfFile: out + ".json", encoding: .utf8))
        let schema = try JSONParser.parse(try String(contentsOfFile: Paths.root + "/config/explore.schema.json", encoding: .utf8))
        #expect(SchemaValidator(root: schema).validate(report).isEmpty, "\(SchemaValidator(root: schema).validate(report))")
        guard case .array(let runs)? = report["runs"]?.value else { Issue.record("no runs"); return }
        func str(_ n: JSONNode, _ k: String) -> String? { if case .string(let s)? = n[k]?.value { return s }; return nil }
        func bool(_ n: JSONNode, _ k: String) -> Bool? { if case .bool(let b)? = n[k]?.value { return b }; return nil }
        func int(_ n: JSONNode?, _ k: String) -> Int? { if case .number(let t)? = n?[k]?.value { return Int(t) }; return nil }
        let findings = runs.filter { bool($0, "finding") == true }
        let found = Set(findings.map { "\(str($0, "function")!) \(str($0, "outcome")!) \(int($0["run"], "signal") ?? 0)" })
        // (a hang's signal is the SIGKILL that ended it at the timeout)
        #expect(found == ["malloc crash 11", "close crash 6", "write hang 9", "write check-failed 0"], "\(found)\n\(r.stdout)")
        #expect(findings.allSatisfy { bool($0, "reproduced") == true }, "\(r.stdout)")
        // The correct error path: both opens are handled, not findings.
        let opens = runs.filter { str($0, "function") == "open" }
        #expect(opens.count == 2 && opens.allSatisfy { str($0, "outcome") == "handled" }, "\(r.stdout)")
        #expect(r.stdout.contains("findings:") && r.stdout.contains("CRASH malloc from \((bin as NSString).lastPathComponent)+0x"), "\(r.stdout)")
        // A crash names the process and the signal and gives its first lines of stderr (glibc's
        // words for the double free), in the text and in the JSON.
        let doubleFree = try #require(findings.first { str($0, "function") == "close" })
        guard case .array(let head)? = doubleFree["stderrHead"]?.value, case .string(let first)? = head.first?.value else {
            Issue.record("no stderrHead: \(doubleFree.value.rendered())"); return
        }
        #expect(first.contains("double free"), "\(first)")
        #expect(r.stdout.contains("signal 6 (SIGABRT) in \((bin as NSString).lastPathComponent) (pid ") && r.stdout.contains(first), "\(r.stdout)")
        // The other runs say which error they were given.
        #expect(r.stdout.contains("call 1 fails with ENOENT: handled"), "\(r.stdout)")

        // Each reproducer, given to `aspectctl run` by hand in a fresh directory, does it again.
        let crash = try #require(findings.first { str($0, "function") == "malloc" })
        let dir = NSTemporaryDirectory() + "aspects-repro-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        try "total 42\n".write(toFile: dir + "/ledger.db", atomically: true, encoding: .utf8)
        let again = try Proc.run(Paths.aspectctl, ["run", "--rules", str(crash, "reproducer")!, "--", bin], directory: dir)
        #expect(again.status == 128 + 11, "\(again)")
        #expect(str(crash, "reproduce")?.contains("sh -c 'echo \"total 42\" > ledger.db' && aspectctl run --rules ") == true)
    }

    @Test func theBudgetBoundsTheCampaignAndTheReportSaysItWasSpread() throws {
        let bin = try Fixture.build("explore_ledger")
        let (r, out) = try campaign(["--strategy", "nth", "--max-runs", "3"], program: bin)
        defer { TableSegments.removeScratch(out); TableSegments.removeScratch(out + ".json") }
        #expect(r.status == 0 || r.status == 1, "\(r)")
        #expect(r.stdout.contains("plan: 3 run(s) of "), "\(r.stdout)")
    }

    @Test func aBaselineThatFailsIsAnErrorNotAReport() throws {
        // Without --setup there is no ledger.db: the program exits 1 on its own, which
        // --expect-status 0 says is not its normal status.
        let bin = try Fixture.build("explore_ledger")
        let out = NSTemporaryDirectory() + "aspects-explore-\(UUID().uuidString)"
        defer { TableSegments.removeScratch(out) }
        let r = try Proc.aspectctl(["explore", "--function", "write", "--expect-status", "0", "--out", out, "--", bin])
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("the baseline run (no fault) exited with status 1, not 0") && r.stderr.contains("--setup"), "\(r)")
        let missing = try Proc.aspectctl(["explore", "--function", "write", "--out", out, "--", "/nonexistent/program"])
        #expect(missing.status == 66, "\(missing)")
        #expect(missing.stderr.contains("cannot run /nonexistent/program"), "\(missing)")
    }

    @Test(.tags(.realPrograms)) func aProgramWithSoundErrorHandlingHasNoFindings() throws {
        // cat reports every read, write and close error and exits 1.
        let out = NSTemporaryDirectory() + "aspects-explore-\(UUID().uuidString)"
        defer { TableSegments.removeScratch(out) }
        let r = try Proc.aspectctl(["explore", "--function", "read", "--function", "write", "--function", "close", "--function", "open",
                                    "--strategy", "sites", "--setup", "echo hello > f", "--out", out, "--", "/bin/cat", "f"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("no findings") && r.stdout.contains("handled"), "\(r.stdout)")
    }

    /// --html: a real browser opens the page without a console message, and the matrix holds
    /// one cell per (function, site) that had runs, coloured by its most severe outcome — the
    /// same as the JSON of the same campaign says. A fixture with debug information gets its
    /// sites symbolized to file:line.
    @Test(.tags(.realPrograms), .requires(HeadlessBrowser.chromium != nil, "needs chromium (.ci/run installs it)"))
    func theHTMLReportOpensInABrowserWithTheExpectedMatrix() throws {
        let bin = try Fixture.build("explore_ledger", flags: ["-g"])
        let (r, out) = try campaign(["--strategy", "both", "--max-runs", "20", "--html", NSTemporaryDirectory() + "explore-\(getpid()).html"], program: bin)
        let html = NSTemporaryDirectory() + "explore-\(getpid()).html"
        defer { TableSegments.removeScratch(out); TableSegments.removeScratch(out + ".json"); TableSegments.removeScratch(html) }
        #expect(r.status == 1, "\(r)")
        // file:line for the program's own sites (the planted malloc crash is in ledger_open)
        #expect(r.stdout.contains("(explore_ledger.c:"), "\(r.stdout)")

        let report = try JSONParser.parse(try String(contentsOfFile: out + ".json", encoding: .utf8))
        guard case .array(let runs)? = report["runs"]?.value else { Issue.record("no runs"); return }
        func str(_ n: JSONNode, _ k: String) -> String? { if case .string(let s)? = n[k]?.value { return s }; return nil }
        let rank = ["crash", "hang", "check-failed", "handled", "absorbed", "not-reached"]
        var expected: [String: String] = [:]  // "function site" -> worst outcome
        for run in runs {
            let key = "\(str(run, "function")!) \(str(run, "site") ?? "")"
            let o = str(run, "outcome")!
            if let old = expected[key], rank.firstIndex(of: old)! <= rank.firstIndex(of: o)! { continue }
            expected[key] = o
        }
        #expect(runs.contains { str($0, "location")?.hasPrefix("explore_ledger.c:") == true }, "locations in the JSON")

        // Opened at the malloc crash's cell: that section is shown, every other one hidden.
        let crash = try #require(runs.first { str($0, "function") == "malloc" && str($0, "outcome") == "crash" && str($0, "site") != nil })
        let page0 = try HeadlessBrowser.load(html)
        let cellPattern = #/<td class="cell ([a-z-]+)" data-function="([^"]*)" data-site="([^"]*)" data-outcomes="[^"]*"><a href="#([^"]+)"/#
        var seen: [String: String] = [:]
        var crashCell: String?
        for m in page0.dom.matches(of: cellPattern) {
            seen["\(m.2) \(m.3)"] = String(m.1)
            if m.2 == "malloc" && m.3 == str(crash, "site")! { crashCell = String(m.4) }
        }
        #expect(seen == expected, "matrix \(seen) vs JSON \(expected)")
        #expect(page0.dom.contains("data-ready=\"1\""), "the page's script ran to its end")
        #expect(page0.console.isEmpty, "\(page0.console)")
        let cell = try #require(crashCell)
        let page = try HeadlessBrowser.load(html, fragment: cell)
        #expect(page.console.isEmpty, "\(page.console)")
        let sections = page.dom.matches(of: #/<section class="detail" id="([^"]+)"( hidden="")?>/#).map { (String($0.1), $0.2 != nil) }
        #expect(sections.count == seen.count)
        #expect(sections.filter { !$0.1 }.map(\.0) == [cell], "only the opened cell's runs are shown: \(sections.filter { !$0.1 })")
        // The opened section says what happened and how to reproduce it.
        let start = try #require(page.dom.range(of: "id=\"\(cell)\""))
        let shown = page.dom[start.lowerBound...].prefix(3000)
        #expect(shown.contains("crash") && shown.contains("signal 11") && shown.contains("aspectctl run --rules ") && shown.contains("reproduced"), "\(shown)")
    }

    // MARK: - hangs, shells, reproducibility, flakiness and the check's environment

    static func report(_ path: String) throws -> (runs: [JSONNode], root: JSONNode) {
        let root = try JSONParser.parse(try String(contentsOfFile: path, encoding: .utf8))
        let schema = try JSONParser.parse(try String(contentsOfFile: Paths.root + "/config/explore.schema.json", encoding: .utf8))
        let problems = SchemaValidator(root: schema).validate(root)
        #expect(problems.isEmpty, "\(problems)")
        guard case .array(let runs)? = root["runs"]?.value else { return ([], root) }
        return (runs, root)
    }
    static func num(_ n: JSONNode?, _ k: String) -> Double? { if case .number(let t)? = n?[k]?.value { return Double(t) }; return nil }
    static func bool(_ n: JSONNode, _ k: String) -> Bool? { if case .bool(let b)? = n[k]?.value { return b }; return nil }

    func scratch() -> (out: String, cleanup: () -> Void) {
        let out = NSTemporaryDirectory() + "aspects-explore-\(UUID().uuidString)"
        return (out, { TableSegments.removeScratch(out); TableSegments.removeScratch(out + ".json") })
    }

    /// The planted hang on a retried EINTR (explore_retry.c): with `--errno EINTR` every fault is
    /// an EINTR, the three correct retries are absorbed, the one that waits again instead of
    /// sending again hangs — killed at `--timeout`, and its reproducer hangs again.
    @Test func aHangOnARetriedEINTRIsFoundWithTheErrnoAndTimeoutAskedFor() throws {
        let bin = try Fixture.build("explore_retry")
        let (out, cleanup) = scratch()
        defer { cleanup() }
        let r = try Proc.aspectctl(["explore", "--function", "read", "--function", "write", "--errno", "EINTR", "--strategy", "sites",
                                    "--timeout", "1", "-j", "2", "--out", out, "--json", out + ".json", "--", bin])
        #expect(r.status == 1, "\(r)")
        let (runs, root) = try Self.report(out + ".json")
        #expect(Self.num(root, "timeoutSeconds") == 1, "\(root.value.rendered())")
        #expect(runs.count == 4 && runs.allSatisfy { ReportJSON.str($0, "errno") == "EINTR" }, "\(r.stdout)")
        let findings = runs.filter { Self.bool($0, "finding") == true }
        #expect(findings.map { "\(ReportJSON.str($0, "function")!) \(ReportJSON.str($0, "outcome")!)" } == ["write hang"], "\(r.stdout)")
        #expect(runs.filter { Self.bool($0, "finding") == false }.allSatisfy { ReportJSON.str($0, "outcome") == "absorbed" }, "\(r.stdout)")
        let hang = try #require(findings.first)
        #expect(Self.bool(hang, "reproduced") == true, "\(r.stdout)")
        // killed at the timeout asked for, not the 2 s default
        let seconds = try #require(Self.num(hang["run"], "seconds"))
        #expect(seconds >= 1 && seconds < 1.9, "\(seconds)")
        #expect(r.stdout.contains("HANG write from \((bin as NSString).lastPathComponent)+0x") && r.stdout.contains("fails with EINTR"), "\(r.stdout)")
        // By hand: the reproducer under `aspectctl run` is still waiting when we stop it.
        let again = try BoundedRun.run(Paths.aspectctl, ["run", "--rules", ReportJSON.str(hang, "reproducer")!, "--", bin], timeout: 1.5)
        #expect(again.timedOut && again.stdout.isEmpty, "\(again)")
        // killed, the run left its table (anchor and segment): gc takes it
        _ = try Proc.aspectctl(["gc", "run-\(again.pid)-*"])
        // An errno a function cannot produce gives way to its own: malloc fails with ENOMEM.
        let (out2, cleanup2) = scratch()
        defer { cleanup2() }
        let m = try Proc.aspectctl(["explore", "--function", "malloc", "--errno", "EINTR", "--strategy", "sites", "--out", out2, "--json", out2 + ".json", "--", bin])
        #expect(m.status == 0 || m.status == 1, "\(m)")
        let (mallocs, _) = try Self.report(out2 + ".json")
        #expect(!mallocs.isEmpty && mallocs.allSatisfy { ReportJSON.str($0, "errno") == "ENOMEM" }, "\(m.stdout)")
    }

    /// A crash in a child process is a crash: the fixture's unchecked malloc, run by a shell
    /// script that turns its SIGSEGV into exit status 139. The crash recorder names the process.
    @Test func aCrashBelowAShellScriptIsACrash() throws {
        let bin = try Fixture.build("explore_ledger")
        let (out, cleanup) = scratch()
        defer { cleanup() }
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let script = out + "/ledger.sh"
        try "#!/bin/sh\n\(bin)\nstatus=$?\necho \"ledger.sh: ledger exited $status\" >&2\nexit $status\n".write(toFile: script, atomically: true, encoding: .utf8)
        #expect(chmod(script, 0o755) == 0)
        let r = try Proc.aspectctl(["explore", "--function", "malloc", "--strategy", "sites", "--setup", Self.setup,
                                    "--out", out, "--json", out + ".json", "--", script])
        #expect(r.status == 1, "\(r)")
        let (runs, _) = try Self.report(out + ".json")
        let name = (bin as NSString).lastPathComponent
        let ledger = runs.filter { ReportJSON.str($0, "site")?.hasPrefix(name + "+0x") == true }
        #expect(ledger.count == 1, "\(r.stdout)")
        let crash = try #require(ledger.first)
        #expect(ReportJSON.str(crash, "outcome") == "crash" && Self.bool(crash, "reproduced") == true, "\(r.stdout)")
        // the script itself exited 139: no signal of its own
        #expect(Self.num(crash["run"], "exitStatus") == 139 && crash["run"]?["signal"] == nil, "\(crash.value.rendered())")
        guard case .array(let crashes)? = crash["crashes"]?.value, let c = crashes.first else { Issue.record("no crashes: \(crash.value.rendered())"); return }
        // (the program's path as recorded: its start is cut off when long)
        #expect(crashes.count == 1 && ReportJSON.str(c, "program")?.hasSuffix("/" + name) == true && Self.num(c, "signal") == 11, "\(crash.value.rendered())")
        // two images called malloc (the shell and the ledger): the finding names its own
        #expect(r.stdout.contains("CRASH \(name): malloc from \(name)+0x") && r.stdout.contains("signal 11 (SIGSEGV) in \(name) (pid "), "\(r.stdout)")
        #expect(r.stdout.contains("| ledger.sh: ledger exited 139"), "the first lines of stderr: \(r.stdout)")
        // The reproducer by hand: the script's status says what the child did.
        let dir = out + "/by-hand"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try "total 42\n".write(toFile: dir + "/ledger.db", atomically: true, encoding: .utf8)
        let again = try Proc.run(Paths.aspectctl, ["run", "--rules", ReportJSON.str(crash, "reproducer")!, "--", script], directory: dir)
        #expect(again.status == 139, "\(again)")
        // No run of the shell's own mallocs is called a crash: dash reports them.
        #expect(runs.filter { ReportJSON.str($0, "outcome") == "crash" }.count == 1, "\(r.stdout)")
    }

    /// A k-th call finding's reproducer names the call by its site and its number there: the
    /// ledger's 2nd write is the 1st from the pipe's site.
    @Test func kthCallFindingsAreReproducedBySiteAndCall() throws {
        let bin = try Fixture.build("explore_ledger")
        let (out, cleanup) = scratch()
        defer { cleanup() }
        let sites = try Proc.aspectctl(["explore", "--function", "write", "--strategy", "sites", "--timeout", "1", "--setup", Self.setup,
                                        "--check", Self.check, "--out", out, "--json", out + ".json", "--", bin])
        #expect(sites.status == 1, "\(sites)")
        let (siteRuns, _) = try Self.report(out + ".json")
        let siteOf = Dictionary(uniqueKeysWithValues: siteRuns.map { (ReportJSON.str($0, "outcome")!, ReportJSON.str($0, "site")!) })
        let r = try Proc.aspectctl(["explore", "--function", "write", "--strategy", "nth", "--timeout", "1", "--setup", Self.setup,
                                    "--check", Self.check, "--force", "--out", out, "--json", out + ".json", "--", bin])
        #expect(r.status == 1, "\(r)")
        let (runs, _) = try Self.report(out + ".json")
        #expect(runs.map { "\(Self.num($0, "nth")!) \(ReportJSON.str($0, "outcome")!)" } == ["1.0 check-failed", "2.0 hang"], "\(r.stdout)")
        for run in runs {
            #expect(run["site"] == nil)
            let outcome = ReportJSON.str(run, "outcome")!
            #expect(ReportJSON.str(run, "reproducerSite") == siteOf[outcome] && Self.num(run, "reproducerNth") == 1, "\(run.value.rendered())")
            #expect(Self.bool(run, "reproduced") == true, "\(r.stdout)")
            let rules = try String(contentsOfFile: ReportJSON.str(run, "reproducer")!, encoding: .utf8)
            #expect(rules.contains("\"site\":\"\(siteOf[outcome]!)\",\"nth\":1}"), "\(rules)")
        }
        #expect(r.stdout.contains("HANG write call 2 fails with ENOSPC (reproducer: from \(siteOf["hang"]!)"), "\(r.stdout)")
    }

    /// The same program, options and seed: the same plan, order and outcomes, run for run.
    @Test func twoCampaignsWithTheSameSeedAreTheSame() throws {
        let bin = try Fixture.build("explore_ledger")
        func campaign() throws -> [String] {
            let (out, cleanup) = scratch()
            defer { cleanup() }
            let r = try Proc.aspectctl(["explore", "--function", "malloc", "--function", "close", "--function", "open", "--strategy", "both",
                                        "--max-runs", "7", "--seed", "7", "-j", "2", "--setup", Self.setup, "--out", out, "--json", out + ".json", "--", bin])
            #expect(r.status == 1, "\(r)")
            #expect(r.stdout.contains("call numbers drawn by the seed"), "a spread plan, where the seed matters: \(r.stdout)")
            return try Self.report(out + ".json").runs.map { run in
                ["function", "site", "errno", "outcome"].map { ReportJSON.str(run, $0) ?? "-" }.joined(separator: " ") + " \(Self.num(run, "nth")!)"
            }
        }
        let first = try campaign(), second = try campaign()
        #expect(first.count == 7, "\(first)")
        #expect(first == second, "\(first)\n\(second)")
    }

    /// A finding whose reproduction ends otherwise is marked flaky: explore_flaky.c crashes the
    /// first time its write fails, and reports the error once its journal (kept outside the
    /// run's directory) exists.
    @Test func aFindingThatDoesNotRecurIsFlaky() throws {
        let bin = try Fixture.build("explore_flaky")
        let (out, cleanup) = scratch()
        defer { cleanup() }
        let journal = out + ".journal"
        defer { TableSegments.removeScratch(journal) }
        let r = try Proc.aspectctl(["explore", "--function", "write", "--strategy", "sites", "--out", out, "--json", out + ".json", "--", bin, journal])
        #expect(r.status == 1, "\(r)")
        let (runs, _) = try Self.report(out + ".json")
        #expect(runs.count == 1 && ReportJSON.str(runs[0], "outcome") == "crash" && Self.bool(runs[0], "reproduced") == false, "\(r.stdout)")
        #expect(r.stdout.contains("CRASH write from ") && r.stdout.contains("[flaky]"), "\(r.stdout)")
    }

    /// --check runs with ASPECTS_EXPLORE_* describing the fault of the run it checks (and
    /// "baseline" with no fault).
    @Test func theCheckSeesTheFaultInItsEnvironment() throws {
        let bin = try Fixture.build("explore_ledger")
        let (out, cleanup) = scratch()
        defer { cleanup() }
        let log = out + ".log"
        defer { TableSegments.removeScratch(log) }
        let check = "printf '%s|%s|%s|%s|%s\\n' \"$ASPECTS_EXPLORE_FUNCTION\" \"$ASPECTS_EXPLORE_SITE\" \"$ASPECTS_EXPLORE_NTH\" \"$ASPECTS_EXPLORE_ERRNO\" \"$ASPECTS_EXPLORE_RUN\" >> \(log); " + Self.check
        let r = try Proc.aspectctl(["explore", "--function", "open", "--function", "close", "--errno", "EACCES", "--strategy", "sites",
                                    "--setup", Self.setup, "--check", check, "--out", out, "--json", out + ".json", "--", bin])
        #expect(r.status == 1, "\(r)")
        let (runs, _) = try Self.report(out + ".json")
        let lines = Set(try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init))
        // the runs the check followed: those that fired and ended by themselves
        var expected: Set<String> = ["||||baseline"]
        for run in runs where ReportJSON.str(run, "outcome") != "crash" && ReportJSON.str(run, "outcome") != "not-reached" {
            expected.insert("\(ReportJSON.str(run, "function")!)|\(ReportJSON.str(run, "site")!)|1|\(ReportJSON.str(run, "errno")!)|fault")
        }
        #expect(expected.count == 4, "the baseline, two opens and one close: \(runs.map { $0.value.rendered() })")
        #expect(lines == expected, "\(lines)")
        #expect(runs.contains { ReportJSON.str($0, "function") == "open" && ReportJSON.str($0, "errno") == "EACCES" })
    }

    /// A baseline that does not end within --timeout is an error with a clear message, and no
    /// report is written.
    @Test func aBaselineThatTimesOutIsAnErrorNotAReport() throws {
        let (out, cleanup) = scratch()
        defer { cleanup() }
        let started = Date()
        let r = try Proc.aspectctl(["explore", "--function", "write", "--timeout", "1", "--out", out, "--json", out + ".json", "--", "/bin/sleep", "30"])
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("the baseline run (no fault) did not end within 1 s") && r.stderr.contains("--timeout"), "\(r)")
        #expect(r.stdout.isEmpty && !FileManager.default.fileExists(atPath: out + ".json"), "\(r)")
    }
}
