import Foundation
import Testing
@testable import AspectConfig

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
        defer { try? FileManager.default.removeItem(atPath: out); try? FileManager.default.removeItem(atPath: out + ".json") }
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

        // Each reproducer, given to `aspectctl run` by hand in a fresh directory, does it again.
        let crash = try #require(findings.first { str($0, "function") == "malloc" })
        let dir = NSTemporaryDirectory() + "aspects-repro-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "total 42\n".write(toFile: dir + "/ledger.db", atomically: true, encoding: .utf8)
        let again = try Proc.run(Paths.aspectctl, ["run", "--rules", str(crash, "reproducer")!, "--", bin], directory: dir)
        #expect(again.status == 128 + 11, "\(again)")
        #expect(str(crash, "reproduce")?.contains("sh -c 'echo \"total 42\" > ledger.db' && aspectctl run --rules ") == true)
    }

    @Test func theBudgetBoundsTheCampaignAndTheReportSaysItWasSpread() throws {
        let bin = try Fixture.build("explore_ledger")
        let (r, out) = try campaign(["--strategy", "nth", "--max-runs", "3"], program: bin)
        defer { try? FileManager.default.removeItem(atPath: out); try? FileManager.default.removeItem(atPath: out + ".json") }
        #expect(r.status == 0 || r.status == 1, "\(r)")
        #expect(r.stdout.contains("plan: 3 run(s) of "), "\(r.stdout)")
    }

    @Test func aBaselineThatFailsIsAnErrorNotAReport() throws {
        // Without --setup there is no ledger.db: the program exits 1 on its own.
        let bin = try Fixture.build("explore_ledger")
        let out = NSTemporaryDirectory() + "aspects-explore-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try Proc.aspectctl(["explore", "--function", "write", "--out", out, "--", bin])
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("the baseline run (no fault) exited with status 1") && r.stderr.contains("--setup"), "\(r)")
        let missing = try Proc.aspectctl(["explore", "--function", "write", "--out", out, "--", "/nonexistent/program"])
        #expect(missing.status == 66, "\(missing)")
        #expect(missing.stderr.contains("cannot run /nonexistent/program"), "\(missing)")
    }

    @Test func aProgramWithSoundErrorHandlingHasNoFindings() throws {
        // cat reports every read, write and close error and exits 1.
        let out = NSTemporaryDirectory() + "aspects-explore-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try Proc.aspectctl(["explore", "--function", "read", "--function", "write", "--function", "close", "--function", "open",
                                    "--strategy", "sites", "--setup", "echo hello > f", "--out", out, "--", "/bin/cat", "f"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("no findings") && r.stdout.contains("handled"), "\(r.stdout)")
    }

    /// --html: a real browser opens the page without a console message, and the matrix holds
    /// one cell per (function, site) that had runs, coloured by its most severe outcome — the
    /// same as the JSON of the same campaign says. A fixture with debug information gets its
    /// sites symbolized to file:line.
    @Test(.enabled(if: HeadlessBrowser.chromium != nil, "needs chromium (.ci/run installs it)"))
    func theHTMLReportOpensInABrowserWithTheExpectedMatrix() throws {
        let bin = try Fixture.build("explore_ledger", flags: ["-g"])
        let (r, out) = try campaign(["--strategy", "both", "--max-runs", "20", "--html", NSTemporaryDirectory() + "explore-\(getpid()).html"], program: bin)
        let html = NSTemporaryDirectory() + "explore-\(getpid()).html"
        defer { try? FileManager.default.removeItem(atPath: out); try? FileManager.default.removeItem(atPath: out + ".json"); try? FileManager.default.removeItem(atPath: html) }
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
}
