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
}
