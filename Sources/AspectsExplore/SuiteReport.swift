import Foundation
import AspectsCore
import AspectsRules

/// A suite's campaigns (`SuiteCampaign`): per test its status and campaign report, and the
/// bugs across the tests, grouped by cause as one campaign groups its findings (`ExploreBug`):
/// a bug reached from five tests is one bug listing its five tests.
package struct SuiteReport: Sendable {
    /// How a test went.
    package enum Status: Sendable, Equatable {
        case explored
        /// Its baseline (no fault) failed: reported, not explored.
        case failing(String)
        /// Not explored for another reason (nothing to plan, a program not found, --strict).
        case untested(String)

        package var name: String {
            switch self {
            case .explored: return "explored"
            case .failing: return "failing"
            case .untested: return "untested"
            }
        }

        package var reason: String? {
            switch self {
            case .explored: return nil
            case .failing(let why), .untested(let why): return why
            }
        }
    }

    /// One test's part.
    package struct Test: Sendable {
        /// Its place in the list, from 0.
        package var index: Int
        package var test: SuiteTest
        /// Its campaign's --out.
        package var directory: String
        package var status: Status
        /// The campaign's report (explored tests).
        package var report: ExploreReport?
    }

    /// One bug of the suite: the bugs of its tests of one cause.
    package struct Bug: Sendable {
        package var outcome: ExploreOutcome
        package var signature: String
        package var title: String
        package var stack: [StackFrame]
        /// Each test that reaches it (list order), with its campaign's bug.
        package var tests: [(test: Int, bug: ExploreBug)]
    }

    package var tests: [Test]
    package var seconds: Double
    /// The shard of the suite's (test, point) pairs this report ran (nil: all).
    package var shard: ExploreShard?

    package init(tests: [Test], seconds: Double) {
        (self.tests, self.seconds) = (tests, seconds)
    }

    package var reports: [ExploreReport] { tests.compactMap(\.report) }

    /// The bugs across the tests: one per cause (outcome and signature, as `ExploreBug` keys
    /// them), crashes first, then in order of first appearance.
    package var bugs: [Bug] {
        var order: [String] = []
        var groups: [String: Bug] = [:]
        for t in tests {
            for b in t.report?.bugs ?? [] {
                let key = b.outcome.rawValue + "\t" + b.signature
                if groups[key] == nil {
                    order.append(key)
                    groups[key] = Bug(outcome: b.outcome, signature: b.signature, title: b.title, stack: b.stack, tests: [])
                }
                groups[key]!.tests.append((t.index, b))
            }
        }
        return order.map { groups[$0]! }.enumerated().sorted { ($0.element.outcome, $0.offset) < ($1.element.outcome, $1.offset) }.map(
            \.element)
    }

    package var findings: Int { reports.map { $0.findings.count }.reduce(0, +) }
    package var runs: Int { reports.map { $0.results.count }.reduce(0, +) }

    /// Runs per outcome over every test, in report order.
    package var outcomeCounts: [(ExploreOutcome, Int)] {
        ExploreOutcome.allCases.sorted().map { o in (o, reports.map { $0.results.filter { $0.outcome == o }.count }.reduce(0, +)) }
    }

    func count(_ status: String) -> Int { tests.filter { $0.status.name == status }.count }

    // MARK: - text

    /// The terminal's summary: a line per test, then the suite's bugs with the tests that reach
    /// each and a reproducer.
    package var text: String {
        var s =
            "explore suite: \(tests.count) test(s): \(count("explored")) explored, \(count("failing")) failing without faults, "
            + "\(count("untested")) not explored; \(runs) run(s) in \(ExploreReport.seconds(seconds))\n"
        if let shard { s += "shard: \(shard) of the suite's (test, fault point) pairs (merge the shards with `aspectctl explore merge`)\n" }
        for t in tests {
            s += "  \(t.index + 1). \(t.test.name): "
            switch t.status {
            case .explored:
                let r = t.report!
                let outcomes = r.outcomeCounts.filter { $0.1 > 0 }.map { "\($0.0.rawValue) \($0.1)" }.joined(separator: ", ")
                s += "\(r.results.count) run(s) of \(r.plannedPoints) fault point(s)" + (outcomes.isEmpty ? "" : ": " + outcomes)
                s += r.bugs.isEmpty ? "\n" : "; \(r.bugs.count) bug(s)\n"
            case .failing(let why): s += "failing without faults, not explored: \(why)\n"
            case .untested(let why): s += "not explored: \(why)\n"
            }
        }
        s += "outcomes: " + outcomeCounts.filter { $0.1 > 0 }.map { "\($0.0.rawValue) \($0.1)" }.joined(separator: ", ") + "\n"
        let all = bugs
        if all.isEmpty {
            s += runs == 0 ? "\nnothing tested: no test's campaign planned a run\n" : "\nno findings\n"
            return s
        }
        s += "\nbugs: \(all.count) across the suite (from \(findings) finding(s))\n"
        for (n, b) in all.enumerated() {
            s += "  \(n + 1). \(b.outcome.rawValue.uppercased()) \(b.title)\n"
            for f in b.stack.prefix(ExploreReport.bugStackLines) { s += "       at \(f.description)\n" }
            let names = b.tests.map { "\(tests[$0.test].test.name) (\($0.bug.findings.count) fault point(s))" }
            s += "     reached from \(b.tests.count) test(s): " + names.joined(separator: "; ") + "\n"
            if let first = b.tests.first, let report = tests[first.test].report, let witness = first.bug.witness,
                let cmd = report.reproduceCommand(witness)
            {
                s += "     reproduce: \(cmd)\n"
            }
        }
        s += "\neach test's campaign: its directory under --out, and the suite's --json\n"
        return s
    }

    // MARK: - JSON

    /// The suite as JSON (config/explore-suite.schema.json): each test with its campaign's
    /// report as `explore --json` writes it, and the bugs across the tests.
    package var json: JSONNode.Value {
        JSONOut.object([
            ("version", JSONOut.int(1)),
            ("suite", .bool(true)),
            ("seconds", ExploreReport.secondsJSON(seconds)),
            ("shard", shard.map { .string($0.description) }),
            (
                "tests",
                JSONOut.array(
                    tests.map { t in
                        JSONOut.object([
                            ("index", JSONOut.int(t.index)), ("name", .string(t.test.name)),
                            ("command", JSONOut.array(t.test.argv.map { .string($0) })),
                            ("workingDirectory", t.test.directory.map { .string($0) }),
                            ("out", .string(t.directory)), ("status", .string(t.status.name)),
                            ("reason", t.status.reason.map { .string($0) }),
                            ("report", t.report?.json),
                        ])
                    })
            ),
            ("outcomes", JSONOut.object(outcomeCounts.map { ($0.0.rawValue, JSONOut.int($0.1)) })),
            (
                "bugs",
                JSONOut.array(
                    bugs.map { b in
                        JSONOut.object([
                            ("outcome", .string(b.outcome.rawValue)), ("signature", .string(b.signature)),
                            ("stack", JSONOut.array(b.stack.map(ExploreReport.frameJSON))),
                            (
                                "tests",
                                JSONOut.array(
                                    b.tests.map { entry in
                                        let report = tests[entry.test].report!
                                        return JSONOut.object([
                                            ("test", JSONOut.int(entry.test)), ("name", .string(tests[entry.test].test.name)),
                                            (
                                                "faultPoints",
                                                JSONOut.array(
                                                    entry.bug.findings.map { r in
                                                        JSONOut.object([("run", JSONOut.int(r.index))] + r.point.jsonFields)
                                                    })
                                            ),
                                            ("reproducer", entry.bug.reproducer.map { .string($0) }),
                                            ("reproduce", entry.bug.witness.flatMap { report.reproduceCommand($0) }.map { .string($0) }),
                                        ])
                                    })
                            ),
                        ])
                    })
            ),
        ])
    }

    /// Whether a JSON report is a suite's (else a campaign's).
    package static func isSuite(_ root: JSONNode) -> Bool { root["suite"]?.value == .bool(true) }

    /// Reads a suite's JSON back; `source` names it in errors.
    package static func decode(_ root: JSONNode, source: String) throws(AspectsError) -> SuiteReport {
        let read = ReportReader(source: source)
        let version: Int = try read.int(root, "version", "$")
        guard version == 1 else { throw read.fail("$.version", "version \(version) is not one this aspectctl reads (1)") }
        var tests: [Test] = []
        for (k, n) in try read.array(root, "tests", "$").enumerated() {
            let at = "$.tests[\(k)]"
            let argv = try read.array(n, "command", at).enumerated().map { j, w throws(AspectsError) in
                try read.value(w, "\(at).command[\(j)]")
            }
            let test = SuiteTest(name: try read.string(n, "name", at), argv: argv, directory: try read.optString(n, "workingDirectory", at))
            let reason = try read.optString(n, "reason", at) ?? ""
            let status: Status
            switch try read.string(n, "status", at) {
            case "explored": status = .explored
            case "failing": status = .failing(reason)
            case "untested": status = .untested(reason)
            case let other: throw read.fail(at + ".status", "\(other) is not explored, failing or untested")
            }
            var entry = Test(index: try read.int(n, "index", at), test: test, directory: try read.string(n, "out", at), status: status)
            if let r = read.member(n, "report") { entry.report = try ExploreReport.decode(r, source: "\(source) (\(at).report)") }
            if status == .explored, entry.report == nil { throw read.fail(at + ".report", "is missing: the test was explored") }
            tests.append(entry)
        }
        var report = SuiteReport(tests: tests, seconds: try read.double(root, "seconds", "$"))
        if let shard = try read.optString(root, "shard", "$") {
            report.shard = try ExploreShard(parsing: shard, option: "\(source): $.shard")
        }
        return report
    }

    // MARK: - JUnit

    /// The suite as JUnit XML: one `<testsuite>` per test, a `<testcase>` per fault point (as a
    /// campaign's, `ExploreReport.junitSuite`); a test not explored is a suite of one skipped
    /// case, `baseline`, saying why.
    package var junit: String {
        var suites = ""
        var cases = 0
        var skipped = 0
        for t in tests {
            let name = "explore." + Self.junitName(t.test.name)
            if let r = t.report {
                suites += r.junitSuite(name: name, classPrefix: name)
                cases += r.results.count
                skipped += r.results.filter { $0.outcome == .notReached }.count
            } else {
                let why =
                    (t.status == .explored ? "" : t.status.name == "failing" ? "failing without faults: " : "not explored: ")
                    + (t.status.reason ?? "")
                suites +=
                    "  <testsuite name=\"\(ExploreReport.xml(name))\" \(ExploreReport.junitCounts(tests: 1, failures: 0, skipped: 1, seconds: 0))>\n"
                suites += "    <testcase classname=\"\(ExploreReport.xml(name))\" name=\"baseline\" time=\"0.000\">\n"
                suites += "      <skipped message=\"\(ExploreReport.xml(why))\"/>\n    </testcase>\n  </testsuite>\n"
                cases += 1
                skipped += 1
            }
        }
        let counts = ExploreReport.junitCounts(tests: cases, failures: findings, skipped: skipped, seconds: seconds)
        return ExploreReport.junitDocument(counts: counts, suites: suites)
    }

    /// A test's name as a class name's part: from its first letter or digit (`./t` is `t`),
    /// dots, which CI systems read as packages, and blanks made underscores.
    static func junitName(_ name: String) -> String {
        String(name.drop { !$0.isLetter && !$0.isNumber }.map { $0 == "." || $0 == " " ? "_" : $0 })
    }
}
