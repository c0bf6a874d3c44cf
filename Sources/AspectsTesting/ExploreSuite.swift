import Foundation
import AspectsCore
import AspectsRules

/// A fault campaign over a test suite from a Swift test: each test command explored as its
/// own campaign (`aspectctl explore --tests`), the bugs grouped across the tests:
///
///     let s = try Aspects.explore(tests: [["./app", "--load"], ["./app", "--save"]], functions: ["malloc"])
///     #expect(s.bugs.isEmpty, "\(s.bugs.map { "\($0.signature) from \($0.tests)" })")
///
/// Like `explore(_:)`, it drives the aspectctl binary and reads its `--json`
/// (config/explore-suite.schema.json).
extension Aspects {
    /// What a suite's campaigns found.
    public struct SuiteCampaign: Sendable {
        /// 0 no findings, 1 findings.
        public var status: Int32
        /// Each test in list order.
        public var tests: [SuiteTest]
        /// The bugs across the tests, one per cause: crashes first.
        public var bugs: [SuiteBug]
        /// aspectctl's summary, as a terminal shows it.
        public var text: String
        /// The suite as explore's `--json` wrote it.
        public var json: JSONNode
    }

    /// One test of a suite.
    public struct SuiteTest: Sendable {
        public var name: String
        /// explored, failing (it fails without any fault, so it was not explored) or untested.
        public var status: String
        /// Why it was not explored.
        public var reason: String?
        /// Its campaign's bugs.
        public var bugs: [Bug]
        /// Its campaign's runs.
        public var runs: Int
    }

    /// One bug of a suite: the tests that reach it, each with its campaign's bug.
    public struct SuiteBug: Sendable {
        public var outcome: ExploreOutcome
        public var signature: String
        /// The names of the tests that reach it, in list order.
        public var tests: [String]
    }

    /// Explores each command of `tests` as its own campaign (explore's options as in
    /// `explore(_:)`); a test that fails without faults is reported (`status` failing), not
    /// explored. Reproducers go to `out`, by default a new temporary directory.
    public static func explore(
        tests: [[String]], functions: [String] = [], families: [String] = [],
        maxRuns: Int? = nil, jobs: Int? = nil, hangTimeout: Double? = nil, out: String? = nil,
        junit: String? = nil, environment: [String: String] = [:]
    ) throws -> SuiteCampaign {
        let ownOut = out == nil
        let out = out ?? NSTemporaryDirectory() + "\(defaultOutPrefix)\(UUID().uuidString)"
        let scratch = NSTemporaryDirectory() + "aspects-explore-suite-\(UUID().uuidString)"
        defer { for suffix in [".json", ".list"] { try? FileManager.default.removeItem(atPath: scratch + suffix) } }
        // one line per test, each word quoted as `explore --tests` splits it back
        let list = tests.map { $0.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ") }
        try (list.joined(separator: "\n") + "\n").write(toFile: scratch + ".list", atomically: false, encoding: .utf8)
        var args = ["explore", "--tests", scratch + ".list", "--out", out, "--json", scratch + ".json", "--progress", "never"]
        for (flag, values) in [("--function", functions), ("--family", families)] {
            for v in values { args += [flag, v] }
        }
        let options: [(String, String?)] = [
            ("--max-runs", maxRuns.map(String.init)), ("-j", jobs.map(String.init)),
            ("--timeout", hangTimeout.map { String($0) }), ("--junit", junit),
        ]
        for case (let flag, let value?) in options { args += [flag, value] }
        let r = try runAspectctl(args, environment: environment)
        guard r.status == 0 || r.status == 1 else {
            if ownOut { try? FileManager.default.removeItem(atPath: out) }
            let said = r.stderr.split(separator: "\n").filter { $0.hasPrefix("aspectctl") }.joined(separator: "\n")
            throw ExploreError(status: r.status, message: said.isEmpty ? r.stderr : said)
        }
        let root = try JSONParser.parse(try String(contentsOfFile: scratch + ".json", encoding: .utf8))
        let suiteTests = array(root["tests"]).map { t in
            SuiteTest(
                name: string(t["name"]) ?? "", status: string(t["status"]) ?? "", reason: string(t["reason"]),
                bugs: array(t["report"]?["bugs"]).compactMap(bug), runs: array(t["report"]?["runs"]).count)
        }
        let bugs = array(root["bugs"]).compactMap { b -> SuiteBug? in
            guard let outcome = string(b["outcome"]).flatMap(ExploreOutcome.init(rawValue:)), let signature = string(b["signature"]) else {
                return nil
            }
            return SuiteBug(outcome: outcome, signature: signature, tests: array(b["tests"]).compactMap { string($0["name"]) })
        }
        return SuiteCampaign(status: r.status, tests: suiteTests, bugs: bugs, text: r.stdout, json: root)
    }
}
