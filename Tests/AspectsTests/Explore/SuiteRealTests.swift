import Foundation
import Testing
import AspectsCore

/// `explore --tests-from` on a real suite nobody here wrote: lazr.uri's tests, which Debian's
/// python3-lazr.uri ships inside the installed package, collected and run by Debian's pytest
/// (.ci/run installs both).
@Suite(.serialized) struct SuiteRealTests {
    static let python = "/usr/bin/python3"
    static let tests = "/usr/lib/python3/dist-packages/lazr/uri/tests/test_uri.py"
    static let available: Bool = {
        guard FileManager.default.isExecutableFile(atPath: python), FileManager.default.fileExists(atPath: tests) else { return false }
        return (try? Proc.run(python, ["-c", "import pytest"]).status) == 0
    }()

    /// Two of its collected tests (pytest's own ids), each explored as its own campaign over
    /// Python's getrandom (a handful of calls at its start), at most 2 runs each: each test
    /// runs as `python3 -m pytest -q -p no:cacheprovider /abs/path::id`, its baseline passes,
    /// and its runs are judged.
    @Test(.tags(.realPrograms, .slow), .requires(available, "needs Debian's python3-pytest and python3-lazr.uri (.ci/run installs them)"))
    func pytestsCollectionOfAnInstalledPackageIsExploredTestByTest() throws {
        let dir = NSTemporaryDirectory() + "aspects-suite-real-\(UUID().uuidString)"
        defer {
            TableSegments.removeScratch(dir)
            TableSegments.removeScratch(dir + ".json")
        }
        let ids = ["URITestCase::test_normalisation", "URITestCase::test_merge"].map { Self.tests + "::" + $0 }
        let collect = ([Self.python, "-m", "pytest", "--collect-only", "-q"] + ids).joined(separator: " ")
        let r = try Proc.aspectctl([
            "explore", "--tests-from", collect, "--out", dir, "--json", dir + ".json", "--function", "getrandom",
            "--max-runs", "2", "-j", "2", "--progress", "never",
        ])
        #expect(r.status == 0 || r.status == 1, "\(r)")
        let root = try JSONParser.parse(try String(contentsOfFile: dir + ".json", encoding: .utf8))
        try SuiteExploreTests.checkSchema(root)
        let tests = ReportJSON.array(root, "tests")
        #expect(
            tests.map { ReportJSON.str($0, "name") } == [
                "test_uri.py::URITestCase::test_normalisation", "test_uri.py::URITestCase::test_merge",
            ], "\(r)")
        for t in tests {
            #expect(ReportJSON.str(t, "status") == "explored", "\(ReportJSON.str(t, "reason") ?? "")\n\(r)")
            let argv = ReportJSON.array(t, "command").compactMap { n -> String? in
                if case .string(let w) = n.value { return w }
                return nil
            }
            #expect(
                argv.prefix(4) == [Self.python, "-m", "pytest", "-q"] && argv.last?.hasPrefix(Self.tests + "::URITestCase::") == true,
                "\(argv)")
            #expect(!argv.contains("--collect-only"))
            #expect(SuiteExploreTests.runs(t) >= 1, "\(r.stdout)")
        }
        #expect(r.stdout.contains("explore suite: 2 test(s): 2 explored"), "\(r.stdout)")
    }
}
