import Foundation
import Testing
import AspectsCore

/// `explore --tests`: a suite of our own (suite_tool.c: two tests reaching one bug, one that
/// copes, one failing without faults) explored test by test, its bugs grouped across the
/// tests; sharded and merged, resumed, and written as JUnit.
@Suite(.serialized) struct SuiteExploreTests {
    /// Each test's plan: malloc's sites, at most 3 runs (the program's own site and libc's).
    static let options = ["--function", "malloc", "--strategy", "sites", "--max-runs", "3", "-j", "2", "--progress", "never"]

    struct Suite {
        var result: Outcome
        var root: JSONNode
        var tests: [JSONNode] { ReportJSON.array(root, "tests") }
        var bugs: [JSONNode] { ReportJSON.array(root, "bugs") }
    }

    /// The suite's list: parse, format, clean, broken (comments and a blank line between).
    static func list(in dir: String) throws -> String {
        let bin = try Fixture.build("suite_tool", flags: ["-g", "-O0"])
        let path = dir + "/tests.list"
        let text = "# suite_tool's tests\n\(bin) parse\n'\(bin)' format\n\n\(bin) clean\n\(bin) broken   # fails as it is\n"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    /// Runs `explore` with `args`, writing --json to `json`, and checks the report against
    /// config/explore-suite.schema.json (each test's campaign against explore.schema.json).
    static func explore(_ args: [String], json: String) throws -> Suite {
        TableSegments.removeScratch(json)
        let r = try Proc.aspectctl(["explore", "--json", json] + options + args)
        let root = try JSONParser.parse(try String(contentsOfFile: json, encoding: .utf8))
        try checkSchema(root)
        return Suite(result: r, root: root)
    }

    static func checkSchema(_ root: JSONNode) throws {
        let suiteSchema = try JSONParser.parse(
            try String(contentsOfFile: Paths.root + "/config/explore-suite.schema.json", encoding: .utf8))
        let campaignSchema = try JSONParser.parse(try String(contentsOfFile: Paths.root + "/config/explore.schema.json", encoding: .utf8))
        #expect(SchemaValidator(root: suiteSchema).validate(root).isEmpty, "\(SchemaValidator(root: suiteSchema).validate(root))")
        for t in ReportJSON.array(root, "tests") {
            guard let report = t["report"] else { continue }
            let problems = SchemaValidator(root: campaignSchema).validate(report)
            #expect(problems.isEmpty, "\(ReportJSON.str(t, "name") ?? ""): \(problems)")
        }
    }

    static func scratch() throws -> String {
        let dir = NSTemporaryDirectory() + "aspects-suite-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    static func runs(_ t: JSONNode) -> Int { ReportJSON.array(t["report"], "runs").count }

    /// One bug reached from two tests is one bug listing both; the test that copes has none;
    /// the test failing without faults is reported as such and not explored; one JUnit
    /// <testsuite> per test.
    @Test func eachTestIsItsOwnCampaignAndABugFromTwoTestsIsOneBug() throws {
        let dir = try Self.scratch()
        defer { TableSegments.removeScratch(dir) }
        let s = try Self.explore(
            ["--tests", try Self.list(in: dir), "--out", dir + "/out", "--junit", dir + "/suite.xml", "--html", dir + "/suite.html"],
            json: dir + "/suite.json")
        #expect(s.result.status == 1, "\(s.result)")
        #expect(s.tests.map { ReportJSON.str($0, "status") } == ["explored", "explored", "explored", "failing"], "\(s.result)")
        #expect(
            s.tests.map {
                ReportJSON.array($0, "command").last.flatMap { n -> String? in
                    if case .string(let w) = n.value { return w }
                    return nil
                }
            }
                == ["parse", "format", "clean", "broken"])
        #expect(ReportJSON.str(s.tests[3], "reason")?.contains("exited with status 3") == true, "\(s.tests[3])")
        for t in s.tests.prefix(3) {
            #expect(Self.runs(t) >= 1, "\(ReportJSON.str(t, "name") ?? "")")
            let out = try #require(ReportJSON.str(t, "out"))
            #expect(FileManager.default.fileExists(atPath: out + "/journal.jsonl"), "each test journals in its own directory")
        }
        #expect(ReportJSON.array(s.tests[2]["report"], "bugs").isEmpty, "clean copes with its failed malloc: \(s.result.stdout)")
        let crashes = s.bugs.filter { ReportJSON.str($0, "outcome") == "crash" }
        #expect(crashes.count == 1, "\(s.result.stdout)")
        let bug = try #require(crashes.first)
        #expect(ReportJSON.str(bug, "signature")?.contains("store_record (suite_tool.c:") == true, "\(bug)")
        #expect(ReportJSON.array(bug, "tests").compactMap { ReportJSON.int($0, "test") } == [0, 1], "\(bug)")
        #expect(s.result.stdout.contains("reached from 2 test(s)"), "\(s.result.stdout)")
        #expect(s.result.stdout.contains("failing without faults"), "\(s.result.stdout)")
        // JUnit: one suite per test, the failing test a skipped `baseline` case
        let xml = try String(contentsOfFile: dir + "/suite.xml", encoding: .utf8)
        #expect(xml.components(separatedBy: "<testsuite ").count - 1 == 4, "\(xml)")
        #expect(xml.contains("name=\"baseline\""), "\(xml)")
        let cases = s.tests.prefix(3).map(Self.runs).reduce(0, +) + 1
        #expect(xml.contains("<testsuites name=\"aspectctl explore\" tests=\"\(cases)\""), "\(xml)")
        // HTML: an index linking each explored test's campaign page, written beside it
        let index = try String(contentsOfFile: dir + "/suite.html", encoding: .utf8)
        for k in 1...3 {
            #expect(index.contains("href=\"suite.00\(k).html\""), "\(index)")
            #expect(FileManager.default.fileExists(atPath: dir + "/suite.00\(k).html"))
        }
        #expect(!FileManager.default.fileExists(atPath: dir + "/suite.004.html"), "the failing test has no campaign page")
        #expect(index.contains("failing without faults") && index.contains("reached from 2 test(s)"), "\(index)")
        if let python = ExploreJUnitTests.python {
            let parsed = try Proc.run(
                python,
                [
                    "-c", "import sys, xml.etree.ElementTree as E; print(len(E.parse(sys.argv[1]).getroot().findall('testsuite')))",
                    dir + "/suite.xml",
                ])
            #expect(parsed.stdout == "4\n", "\(parsed)")
        }
    }

    /// Two shards each plan every test and run their share of the (test, point) pairs; merged
    /// they hold the unsharded suite's runs, the bug across tests grouped again. A resumed
    /// suite runs nothing its journals already hold.
    @Test(.tags(.slow)) func shardsMergeAndAResumedSuiteRunsOnlyWhatIsMissing() throws {
        let dir = try Self.scratch()
        defer { TableSegments.removeScratch(dir) }
        let list = try Self.list(in: dir)
        var shardRuns: [Int] = []
        for i in 1...2 {
            let s = try Self.explore(["--tests", list, "--out", dir + "/out-\(i)", "--shard", "\(i)/2"], json: dir + "/shard-\(i).json")
            #expect(s.result.status == 0 || s.result.status == 1, "\(s.result)")
            shardRuns.append(s.tests.map(Self.runs).reduce(0, +))
        }
        #expect(abs(shardRuns[0] - shardRuns[1]) <= 1, "pairs dealt evenly: \(shardRuns)")
        let merged = try Proc.aspectctl([
            "explore", "merge", dir + "/shard-1.json", dir + "/shard-2.json", "--json", dir + "/merged.json",
            "--junit", dir + "/merged.xml",
        ])
        #expect(merged.status == 1, "\(merged)")
        let root = try JSONParser.parse(try String(contentsOfFile: dir + "/merged.json", encoding: .utf8))
        try Self.checkSchema(root)
        let tests = ReportJSON.array(root, "tests")
        #expect(tests.map(Self.runs).reduce(0, +) == shardRuns.reduce(0, +))
        #expect(root["shard"] == nil)
        let crash = ReportJSON.array(root, "bugs").first { ReportJSON.str($0, "outcome") == "crash" }
        #expect(ReportJSON.array(crash, "tests").compactMap { ReportJSON.int($0, "test") } == [0, 1], "\(merged.stdout)")

        // --resume of a finished shard: every run is in its test's journal, none is made again
        let journals = tests.prefix(3).compactMap { ReportJSON.str($0, "out") }.map { $0 + "/journal.jsonl" }
        let before = try journals.map { try String(contentsOfFile: $0, encoding: .utf8) }
        let again = try Self.explore(["--tests", list, "--out", dir + "/out-1", "--shard", "1/2", "--resume"], json: dir + "/again.json")
        #expect(again.result.status == 0 || again.result.status == 1, "\(again.result)")
        #expect(again.tests.map(Self.runs).reduce(0, +) == shardRuns[0])
        #expect(try journals.map { try String(contentsOfFile: $0, encoding: .utf8) } == before, "a resumed suite appends no run")
        // without --resume or --force, a suite's directory is not written over
        let refused = try Proc.aspectctl(["explore", "--tests", list, "--out", dir + "/out-1"] + Self.options)
        #expect(refused.status != 0 && refused.stderr.contains("--resume"), "\(refused)")
    }

    /// A suite none of whose tests could be explored tested nothing: exit 2, never a pass.
    /// (Its list comes from a command's output, `--tests-from`.)
    @Test func aSuiteOfFailingTestsTestedNothing() throws {
        let dir = try Self.scratch()
        defer { TableSegments.removeScratch(dir) }
        let bin = try Fixture.build("suite_tool", flags: ["-g", "-O0"])
        try "\(bin) broken\n".write(toFile: dir + "/tests.list", atomically: false, encoding: .utf8)
        // (the list as a command prints it: --tests-from)
        let s = try Self.explore(["--tests-from", "cat '\(dir)/tests.list'", "--out", dir + "/out"], json: dir + "/suite.json")
        #expect(s.result.status == 2, "\(s.result)")
        #expect(s.result.stderr.contains("no test of the suite was explored"), "\(s.result)")
        #expect(s.tests.map { ReportJSON.str($0, "status") } == ["failing"])
    }

    /// Bad input is said with the option and the fix.
    @Test func aSuiteRefusesACommandBesideItsListAndAnUnreadableList() throws {
        let both = try Proc.aspectctl(["explore", "--tests", "/nonexistent/list", "--", "/bin/true"])
        #expect(both.status == 64 && both.stderr.contains("give it or a command, not both"), "\(both)")
        let missing = try Proc.aspectctl([
            "explore", "--tests", "/nonexistent/list", "--out", NSTemporaryDirectory() + "aspects-suite-none-\(UUID().uuidString)",
        ])
        #expect(missing.status != 0 && missing.stderr.contains("--tests: cannot read /nonexistent/list"), "\(missing)")
    }
}
