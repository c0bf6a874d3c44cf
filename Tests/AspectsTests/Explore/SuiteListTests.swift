import Foundation
import Testing
import AspectsCore
import AspectsExplore

/// A suite's list of tests read as `explore --tests` reads it (TestSuite): words split as a
/// shell splits them, pytest's collection and ctest's JSON turned into commands; and a
/// suite's shards dealing (test, point) pairs, not whole tests.
@Suite struct SuiteListTests {
    @Test(.tags(.fast))
    func aLineIsSplitAsAShellSplitsItWithoutRunningOne() throws {
        #expect(try TestSuite.words(of: #"./t --name 'a b' "c \"d\" $e" f\ g"#, at: "x") == ["./t", "--name", "a b", #"c "d" $e"#, "f g"])
        #expect(try TestSuite.words(of: "  sh -c 'ls | wc -l'  ", at: "x") == ["sh", "-c", "ls | wc -l"])
        #expect(try TestSuite.words(of: "t ''", at: "x") == ["t", ""])
        #expect(try TestSuite.words(of: "t a # the rest is a comment", at: "x") == ["t", "a"])
        #expect(try TestSuite.words(of: "t a#b '#c'", at: "x") == ["t", "a#b", "#c"])
        let e = #expect(throws: AspectsError.self) { try TestSuite.words(of: "t 'open", at: "list:3") }
        #expect(e?.location == "list:3" && e?.message.contains("quote is not closed") == true, "\(String(describing: e))")
    }

    @Test(.tags(.fast))
    func aListSkipsCommentsAndBlankLines() throws {
        let tests = try TestSuite.parse("# the suite\n\n./a one\n   \n  # indented comment\n./b 'two words'\n", source: "list")
        #expect(tests.map(\.argv) == [["./a", "one"], ["./b", "two words"]])
        #expect(tests.map(\.name) == ["./a one", "./b 'two words'"])
        #expect(throws: AspectsError.self) { try TestSuite.parse("# only a comment\n", source: "list") }
    }

    /// pytest's ids become `pytest -q -p no:cacheprovider ID`, the id made absolute from the
    /// rootdir it is named from; its summary line and blank lines are not tests.
    @Test(.tags(.fast))
    func pytestsCollectionBecomesOneCommandPerTestID() throws {
        let dir = NSTemporaryDirectory() + "aspects-suite-py-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir + "/tests", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        FileManager.default.createFile(atPath: dir + "/tests/test_x.py", contents: Data())
        let command = ["python3", "-m", "pytest", "--collect-only", "-q", dir + "/tests/test_x.py"]
        #expect(TestSuite.isPytestCollection(command))
        #expect(!TestSuite.isPytestCollection(["cat", "list"]))
        let output = "test_x.py::test_a\ntest_x.py::Case::test_b[1 2]\n\n2 tests collected in 0.01s\n"
        let tests = try TestSuite.pytest(collected: output, command: command, source: "collect")
        #expect(tests.map(\.name) == ["test_x.py::test_a", "test_x.py::Case::test_b[1 2]"])
        #expect(tests.first?.argv == ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", dir + "/tests/test_x.py::test_a"])
        #expect(throws: AspectsError.self) {
            try TestSuite.pytest(collected: "no tests ran in 0.01s\n", command: command, source: "collect")
        }
    }

    /// ctest's JSON: each test's command and WORKING_DIRECTORY; a disabled test left out.
    @Test(.tags(.fast))
    func ctestsJSONGivesCommandsAndWorkingDirectories() throws {
        let json = """
            {"kind": "ctestInfo", "version": {"major": 1, "minor": 0}, "tests": [
              {"name": "parse", "command": ["/b/tool", "parse"], "properties": [{"name": "WORKING_DIRECTORY", "value": "/b/data"}]},
              {"name": "off", "command": ["/b/tool", "off"], "properties": [{"name": "DISABLED", "value": true}]},
              {"name": "plain", "command": ["/b/tool", "plain"]}]}
            """
        let tests = try TestSuite.ctest(json: json, source: "ctest")
        #expect(
            tests == [
                SuiteTest(name: "parse", argv: ["/b/tool", "parse"], directory: "/b/data"),
                SuiteTest(name: "plain", argv: ["/b/tool", "plain"]),
            ])
        #expect(throws: AspectsError.self) { try TestSuite.ctest(json: #"{"tests": []}"#, source: "ctest") }
    }

    /// Three tests of 7, 1 and 4 points over 3 shards: each pair in exactly one shard, shard
    /// sizes within one of each other (whole tests dealt would give 7, 1, 4).
    @Test(.tags(.fast))
    func shardsDealTestPointPairsNotWholeTests() {
        let plans = [7, 1, 4]
        var sizes = [0, 0, 0]
        var offset = 0
        for points in plans {
            for k in 0..<points {
                let owners = (1...3).filter { ExploreShard(index: $0, count: 3, offset: offset).owns(k) }
                #expect(owners.count == 1)
                sizes[owners[0] - 1] += 1
            }
            for i in 1...3 {
                let shard = ExploreShard(index: i, count: 3, offset: offset)
                #expect(shard.size(of: points) == shard.indices(of: points).count)
            }
            offset += points
        }
        #expect(sizes.max()! - sizes.min()! <= 1, "\(sizes)")
    }
}
