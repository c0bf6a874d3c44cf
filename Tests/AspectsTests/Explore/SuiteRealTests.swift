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

    static let jsonC = Paths.root + "/.build/real-suites/json-c"
    static let cmake = SuiteCTestTests.cmake

    /// `explore --ctest` on a real C library's suite: json-c's, from Debian's source package
    /// (.ci/run fetches it), built here by cmake and listed by its own ctest. Each of its tests
    /// is a shell script that runs one test program: `--process` points the faults at the test
    /// programs (not the shell), USE_VALGRIND=0 keeps its scripts from running them under
    /// valgrind. Every test is explored in ctest's working directory with its own baseline,
    /// and each bug, one per cause, lists the tests that reach it.
    @Test(
        .tags(.realPrograms, .slow),
        .requires(
            cmake != nil && FileManager.default.fileExists(atPath: jsonC + "/CMakeLists.txt"),
            "needs cmake and json-c's source in .build/real-suites (.ci/run fetches it)"))
    func aCLibrarysCTestSuiteIsExploredTestByTest() throws {
        let dir = NSTemporaryDirectory() + "aspects-suite-jsonc-\(UUID().uuidString)"
        defer { TableSegments.removeScratch(dir) }
        let cmake = try #require(Self.cmake)
        let configure = try Proc.run(
            cmake, ["-S", Self.jsonC, "-B", dir + "/build", "-DBUILD_STATIC_LIBS=OFF", "-DCMAKE_BUILD_TYPE=Debug"])
        #expect(configure.status == 0, "\(configure)")
        let build = try Proc.run(cmake, ["--build", dir + "/build", "-j", "2"])
        #expect(build.status == 0, "\(build)")
        let r = try Proc.aspectctl(
            [
                "explore", "--ctest", dir + "/build", "--out", dir + "/out", "--json", dir + "/suite.json", "--function", "malloc",
                "--process", "*/tests/test*", "--max-runs", "2", "-j", "2", "--progress", "never",
            ], environment: ["USE_VALGRIND": "0"])
        #expect(r.status == 1, "\(r)")
        let root = try JSONParser.parse(try String(contentsOfFile: dir + "/suite.json", encoding: .utf8))
        try SuiteExploreTests.checkSchema(root)
        let tests = ReportJSON.array(root, "tests")
        #expect(tests.count >= 20 && tests.contains { ReportJSON.str($0, "name") == "test_parse" }, "\(r.stdout)")
        for t in tests {
            #expect(ReportJSON.str(t, "status") == "explored", "\(ReportJSON.str(t, "name") ?? ""): \(ReportJSON.str(t, "reason") ?? "")")
            #expect(ReportJSON.str(t, "workingDirectory") == dir + "/build/tests")
            #expect(SuiteExploreTests.runs(t) >= 1)
        }
        // Which two points of each test's plan run depends on its survey, so which bugs are
        // found varies from machine to machine; what holds: the suite's crashes are found (its
        // tests use results they never check), each bug is one cause, and each names the
        // explored tests that reach it.
        let bugs = ReportJSON.array(root, "bugs")
        #expect(!bugs.isEmpty && bugs.allSatisfy { ReportJSON.str($0, "outcome") == "crash" }, "\(r.stdout)")
        let signatures = bugs.compactMap { ReportJSON.str($0, "signature") }
        #expect(Set(signatures).count == signatures.count, "one bug per cause: \(signatures)")
        let names = Set(tests.compactMap { ReportJSON.str($0, "name") })
        for bug in bugs {
            let reached = ReportJSON.array(bug, "tests").compactMap { ReportJSON.str($0, "name") }
            #expect(!reached.isEmpty && Set(reached).isSubset(of: names), "\(reached)")
        }
    }
}
