import Foundation
import Testing
import AspectsCore
import AspectsExplore

/// explore's oracle, coverage and reproducers (issue 21, items 5–7): the check sees the run's
/// exit status and output; a baseline that differs between two runs is said, and `--strict`
/// stops; a function never called is named with what the program calls instead, and a campaign
/// that tests nothing exits 2; each finding's repro-N.sh exits 0 exactly when it reproduces.
@Suite(.serialized) struct ExploreOracleTests {
    /// A temp directory of the test's own, removed at the end.
    final class Scratch {
        let path = NSTemporaryDirectory() + "aspects-oracle-\(UUID().uuidString)"
        init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        deinit { TableSegments.removeScratch(path) }
    }

    func explore(_ options: [String], _ command: [String], in s: Scratch, directory: String? = nil,
                 environment: [String: String?] = [:]) throws -> (Outcome, JSONNode?) {
        try ExploreCLI.run(options, command, out: s.path + "/explore", json: s.path + "/explore.json", directory: directory ?? s.path,
                           environment: environment)
    }


    // MARK: - item 5: an honest oracle

    /// The program reports every fault and exits 1 with out.db removed: correct. A check that
    /// accepts that when the status says so (and insists on the data otherwise) finds nothing;
    /// without ASPECTS_EXPLORE_STATUS it could not tell, and every fault was "check-failed".
    @Test func theCheckSeesTheStatusAndTheOutputFiles() throws {
        let s = try Scratch()
        let bin = try Fixture.build("explore_oracle")
        let check = #"case "$ASPECTS_EXPLORE_STATUS" in 0) grep -q "total 42" out.db && grep -q saved "$ASPECTS_EXPLORE_STDOUT";; "#
            + #"[1-9]*) test ! -e out.db && grep -q explore_oracle: "$ASPECTS_EXPLORE_STDERR";; *) false;; esac"#
        let (r, report) = try explore(["--function", "open", "--function", "pwrite", "--strategy", "sites", "--check", check], [bin], in: s)
        #expect(r.status == 0, "\(r)")
        let runs = ReportJSON.array(report, "runs")
        #expect(!runs.isEmpty && runs.allSatisfy { ReportJSON.str($0, "outcome") == "handled" }, "\(r.stdout)")
    }

    /// Another stderr is another outcome: a program that says something new on stderr and
    /// otherwise ends as before has not coped silently.
    @Test(.tags(.fast)) func absorbedMeansTheSameStderrToo() {
        let base = RunRecord(exitStatus: 0, signal: nil, timedOut: false, stdout: "ok\n", stderr: "", seconds: 0.1)
        let warned = RunRecord(exitStatus: 0, signal: nil, timedOut: false, stdout: "ok\n", stderr: "warning: cache not saved\n", seconds: 0.1)
        #expect(warned.outcome(against: base, fired: true, checkPassed: nil) == .handled)
        #expect(base.outcome(against: base, fired: true, checkPassed: nil) == .absorbed)
    }

    /// A command that keeps state at an absolute path (outside the fresh working directory)
    /// does something else on its second run: explore says so before it starts, and with
    /// --strict stops there.
    @Test func aBaselineThatDiffersBetweenRunsIsReportedAndStrictStops() throws {
        let s = try Scratch()
        let state = s.path + "/state"
        let command = ["/bin/sh", "-c", "echo run >> \(state) && wc -l < \(state)"]
        let (r, report) = try explore(["--function", "write"], command, in: s)
        #expect(r.stderr.contains("did not do the same each time") && r.stderr.contains("run 2's stdout differs")
                && r.stderr.contains("not independent"), "\(r)")
        let differences = ReportJSON.array(report?["baselines"], "differences")
        #expect(differences.count > 0, "\(r)")
        #expect(ReportJSON.int(report?["baselines"], "runs") == 2)

        TableSegments.removeScratch(state)
        let strict = try Proc.aspectctl(["explore", "--out", s.path + "/strict", "--strict", "--baselines", "3", "--function", "write", "--"] + command)
        #expect(strict.status == 2, "\(strict)")
        #expect(strict.stderr.contains("--strict") && !strict.stdout.contains("plan:"), "\(strict)")
    }

    // MARK: - item 6: loud coverage

    /// `--function write` on a program that writes with pwrite: no run, and explore names
    /// what to fail instead and exits 2, since nothing was tested; `--family write` tests it.
    @Test func aFunctionNeverCalledIsNamedWithItsFamilysCalledMembersAndZeroRunsExit2() throws {
        let s = try Scratch()
        let bin = try Fixture.build("explore_oracle")
        let (r, report) = try explore(["--function", "write"], [bin], in: s)
        #expect(r.status == 2, "\(r)")
        #expect(r.stdout.contains("write: never called; it calls pwrite") && r.stdout.contains("--family write"), "\(r)")
        #expect(r.stderr.contains("no run was planned") && r.stderr.contains("never called write"), "\(r)")
        let write = ReportJSON.array(report, "coverage").first { ReportJSON.str($0, "function") == "write" }
        #expect(ReportJSON.int(write, "calls") == 0 && ReportJSON.int(write, "runs") == 0, "\(String(describing: write))")
        let instead = ReportJSON.array(write, "familyCalls").map { "\(ReportJSON.str($0, "function") ?? "") \(ReportJSON.int($0, "calls") ?? 0)" }
        #expect(instead == ["pwrite 1"] || instead == ["pwrite64 1"], "\(instead)")
        // The program imports printf (stdio): a line says its writes inside libc cannot be failed.
        #expect(r.stdout.contains("the program uses stdio (") && r.stdout.contains("cannot be failed"), "\(r.stdout)")

        // The same --out again: --force clears the first campaign's journal.
        let (family, familyReport) = try explore(["--family", "write", "--strategy", "sites", "--force"], [bin], in: s)
        #expect(family.status == 0, "\(family)")
        let pwrite = ReportJSON.array(familyReport, "coverage").first { ReportJSON.str($0, "function")?.hasPrefix("pwrite") == true }
        #expect(ReportJSON.int(pwrite, "calls") == 1 && ReportJSON.int(pwrite, "runs") == 1, "\(family.stdout)")
    }

    /// A function named and never called gets its own line; those --imported brought in and
    /// never called share one (a program imports far more than one run calls).
    @Test(.tags(.fast)) func onlyNamedFunctionsGetALineEach() {
        let profiles = [FunctionProfile(function: "write", calls: 0, sites: [:]), FunctionProfile(function: "fsync", calls: 0, sites: [:]),
                        FunctionProfile(function: "pwrite", calls: 3, sites: [:]), FunctionProfile(function: "fdatasync", calls: 2, sites: [:])]
        let c = ExploreCoverage.make(chosen: ["fsync", "write"], named: ["write"], profiles: profiles,
                                     names: ["pwrite": ["pwrite64": 3], "fdatasync": ["fdatasync": 2]], imports: nil, catalog: .builtIn)
        #expect(c.notes == ["write: never called; it calls pwrite64 ×3 — try --function pwrite64 or --family write",
                            "never called in the baseline, so not tested: fsync"], "\(c.notes)")
        #expect(ExploreCoverage.familyCompanions(of: ["write"], catalog: .builtIn).contains("pwrite"))
    }

    /// The issue's case: sqlite3 on an in-memory database reads no file.
    @Test(.tags(.realPrograms), .requires(FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs sqlite3 (.ci/run installs it)"))
    func aCampaignOfNoRunIsNotAPass() throws {
        let s = try Scratch()
        let (r, _) = try explore(["--function", "read"], ["/usr/bin/sqlite3", ":memory:", "select 1;"], in: s)
        #expect(r.status == 2, "\(r)")
        #expect(r.stdout.contains("read: never called") && r.stderr.contains("no run was planned"), "\(r)")
    }

    // MARK: - item 7: reproducers to paste

    /// Debian's gunzip is a dash script: when dash's read of the script fails with EIO, dash
    /// takes it for the end of the file and exits 0 with nothing decompressed. explore finds
    /// it with a check on the status and the output; its repro-N.sh does it again (exit 0),
    /// and says "not reproduced" (exit 1) once gunzip is a program without the bug.
    @Test(.tags(.realPrograms), .requires((try? String(contentsOfFile: "/usr/bin/gunzip", encoding: .utf8))?.hasPrefix("#!/bin/sh") == true, "needs Debian's gunzip script"))
    func theGunzipReadFaultIsFoundAndItsScriptReproducesIt() throws {
        let s = try Scratch()
        let check = #"seq 1 2000 | cmp -s - "$ASPECTS_EXPLORE_STDOUT" || [ "$ASPECTS_EXPLORE_STATUS" != 0 ]"#
        let (r, report) = try explore(["--function", "read", "--strategy", "sites", "--timeout", "30",
                                       "--setup", "seq 1 2000 > data && gzip data", "--check", check], ["gunzip", "-c", "data.gz"], in: s)
        #expect(r.status == 1, "\(r)")
        let finding = ReportJSON.array(report, "runs").first { ReportJSON.str($0, "outcome") == "check-failed" && ReportJSON.str($0, "site")?.hasPrefix("dash+") == true }
        let script = try #require(ReportJSON.str(finding, "reproducerScript"), "\(r.stdout)")
        #expect(script.hasSuffix(".sh") && FileManager.default.fileExists(atPath: String(script.dropLast(3)) + ".json"))
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: script)[.posixPermissions] as? Int)
        #expect(mode == 0o755)
        let text = try String(contentsOfFile: script, encoding: .utf8)
        let ours = URL(fileURLWithPath: Paths.aspectctl).resolvingSymlinksInPath().path
        #expect(text.contains(ours + " run --rules"), "the aspectctl that found it, by its absolute path:\n\(text)")

        let again = try Proc.run("/bin/sh", [script], environment: ["TMPDIR": s.path], directory: s.path)
        #expect(again.status == 0 && again.stderr.contains("repro: reproduced"), "\(again)\n\(text)")

        // A gunzip without the bug (bash reads the script, not dash): the fault at dash's
        // read never fires, the data comes out whole, the check passes.
        let bin = s.path + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try "#!/bin/bash\nexec gzip -d \"$@\"\n".write(toFile: bin + "/gunzip", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: bin + "/gunzip")
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let fixed = try Proc.run("/bin/sh", [script], environment: ["TMPDIR": s.path, "PATH": bin + ":" + path], directory: s.path)
        #expect(fixed.status == 1 && fixed.stderr.contains("repro: not reproduced"), "\(fixed)")
    }

    /// Each kind of finding's script looks for the same outcome and finds it: the ledger's
    /// double free on a failed close (SIGABRT, 134), its write retried forever (a hang: 124
    /// from timeout(1)), its unchecked write (the check fails).
    @Test func everyKindOfFindingsScriptReproducesIt() throws {
        let s = try Scratch()
        let bin = try Fixture.build("explore_ledger")
        let (r, report) = try explore(["--function", "write", "--function", "close", "--strategy", "sites",
                                       "--setup", #"echo "total 42" > ledger.db"#, "--check", #"grep -q "total 42" ledger.db"#], [bin], in: s)
        #expect(r.status == 1, "\(r)")
        let findings = ReportJSON.array(report, "runs").filter { ReportJSON.str($0, "reproducerScript") != nil }
        #expect(Set(findings.compactMap { ReportJSON.str($0, "outcome") }) == ["crash", "hang", "check-failed"], "\(r.stdout)")
        for f in findings {
            let script = ReportJSON.str(f, "reproducerScript")!
            let text = try String(contentsOfFile: script, encoding: .utf8)
            if ReportJSON.str(f, "outcome") == "crash" { #expect(text.contains("-eq 134"), "\(text)") }
            let again = try Proc.run("/bin/sh", [script], environment: ["TMPDIR": s.path], directory: s.path)
            #expect(again.status == 0 && again.stderr.contains("repro: reproduced"), "\(ReportJSON.str(f, "outcome")!): \(again)\n\(text)")
        }
    }

    /// A run's output is bytes: one byte that is not UTF-8 must not empty the whole output (it
    /// then compared equal to a baseline's and a changed run passed for "absorbed").
    @Test func outputThatIsNotUTF8IsKept() throws {
        let dir = NSTemporaryDirectory() + "explore-bytes-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let r = try ProgramRun(argv: ["/bin/sh", "-c", #"printf 'a\377b'; printf 'err\376' >&2"#], environment: ProcessInfo.processInfo.environment,
                               directory: dir, timeout: 30).run(outputPrefix: dir + "/run")
        #expect(r.stdout == "a\u{FFFD}b", "\(r.stdout.unicodeScalars.map { $0.value })")
        #expect(r.stderr == "err\u{FFFD}", "\(r.stderr.unicodeScalars.map { $0.value })")
    }
}
