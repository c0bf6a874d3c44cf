import Foundation

/// The campaign as JUnit XML (`explore --junit`), the test-result format CI systems show, in
/// the common Jenkins/Surefire shape: one `<testsuite>` for the command, one `<testcase>` per
/// fault point, a `<failure>` for each finding (crash, hang, check-failed) carrying its bug's
/// signature, and `<skipped>` for a fault that never fired (the point was not tested). The
/// other outcomes (absorbed, handled, fail-fast) pass: the program coped with the fault, or
/// stopped for want of memory by design (its `<system-out>` says so).
extension ExploreReport {
    package var junit: String {
        let skipped = results.filter { $0.outcome == .notReached }.count
        let counts = Self.junitCounts(tests: results.count, failures: findings.count, skipped: skipped, seconds: seconds)
        return Self.junitDocument(counts: counts, suites: junitSuite(name: "explore." + Self.junitProgram(command)))
    }

    /// The attributes of a `<testsuite>` or `<testsuites>` that count its cases.
    static func junitCounts(tests: Int, failures: Int, skipped: Int, seconds: Double) -> String {
        "tests=\"\(tests)\" failures=\"\(failures)\" errors=\"0\" skipped=\"\(skipped)\" time=\"\(junitTime(seconds))\""
    }

    /// A JUnit document of `<testsuite>` elements (`suites`), counted by `counts`.
    static func junitDocument(counts: String, suites: String) -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"aspectctl explore\" \(counts)>\n" + suites + "</testsuites>\n"
    }

    /// The campaign as one `<testsuite>` named `name`: a test case per fault point; a suite's
    /// report has one per test (`SuiteReport.junit`). `classPrefix` starts its cases' class names.
    func junitSuite(name: String, classPrefix: String? = nil) -> String {
        let program = Self.junitProgram(command)
        var bugOf: [Int: ExploreBug] = [:]
        for b in bugs { for r in b.findings { bugOf[r.index] = b } }
        let skipped = results.filter { $0.outcome == .notReached }.count
        let counts = Self.junitCounts(tests: results.count, failures: findings.count, skipped: skipped, seconds: seconds)
        var s = "  <testsuite name=\"\(Self.xml(name))\" \(counts)>\n"
        s += "    <properties>\n"
        s += "      <property name=\"command\" value=\"\(Self.xml(command.map(Self.shellQuoted).joined(separator: " ")))\"/>\n"
        s += "      <property name=\"seed\" value=\"\(seed)\"/>\n"
        s += "      <property name=\"planId\" value=\"\(Self.xml(plan.id))\"/>\n"
        s += "    </properties>\n"
        let prefix = classPrefix ?? "explore.\(program)"
        for r in results {
            s +=
                "    <testcase classname=\"\(Self.xml(prefix)).\(Self.xml(r.point.function))\" "
                + "name=\"\(Self.xml(r.point.name))\" time=\"\(Self.junitTime(r.record.seconds))\""
            if r.outcome == .notReached {
                s += ">\n      <skipped message=\"\(Self.xml(Self.what(r, baseline: baseline)))\"/>\n    </testcase>\n"
            } else if r.outcome.isFinding {
                let bug = bugOf[r.index]
                let message = r.outcome.rawValue.uppercased() + " " + (bug?.title ?? Self.what(r, baseline: baseline))
                s += ">\n      <failure message=\"\(Self.xml(message))\" type=\"\(r.outcome.rawValue)\">"
                s += Self.xml(junitFailureText(r, bug: bug), attribute: false) + "</failure>\n"
                if !r.record.stderr.isEmpty { s += "      <system-err>\(Self.xml(Self.stderrTail(r.record.stderr), attribute: false))</system-err>\n" }
                s += "    </testcase>\n"
            } else if r.outcome == .failFast {
                // passes (by design, not a bug), saying why the program stopped
                s += ">\n      <system-out>\(Self.xml("fail-fast: " + Self.what(r, baseline: baseline), attribute: false))</system-out>\n    </testcase>\n"
            } else {
                s += "/>\n"
            }
        }
        return s + "  </testsuite>\n"
    }

    /// What a failure says: the outcome, the bug, its top frames, the fault point, whether
    /// the re-run reproduced it, and how to run it again.
    func junitFailureText(_ r: ExploreResult, bug: ExploreBug?) -> String {
        var lines = ["\(r.outcome.rawValue): \(Self.what(r, baseline: baseline))"]
        if let bug {
            lines.append("bug: \(bug.title) (hit by \(bug.findings.count) fault point(s))")
            lines += bug.stack.prefix(Self.bugStackLines).map { "  at \($0.description)" }
        }
        lines.append("fault point: \(describe(r.point))\(reproducerNote(r))")
        if let reproduced = r.reproduced {
            lines.append(reproduced ? "reproduced by a second run" : "flaky: a second run did not reproduce it")
        } else {
            lines.append("not run again: \(Self.confirmation(r, bug: bug))")
        }
        if let script = r.reproducerScript { lines.append("reproducer script: \(Self.shellQuoted(script))  (exits 0 when it happens again)") }
        if let cmd = reproduceCommand(r) { lines.append("reproduce: \(cmd)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The program's name as a class name's part: its file name, dots made underscores (a dot
    /// separates packages in the class names CI systems show as a tree).
    static func junitProgram(_ command: [String]) -> String {
        let name = command.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "command"
        return name.replacingOccurrences(of: ".", with: "_")
    }

    static func junitTime(_ t: Double) -> String { String(format: "%.3f", t) }

    /// Text as an XML 1.0 attribute value (or, `attribute` false, character data): the
    /// markup characters as entities; carriage return as a character reference (a parser
    /// turns a literal one into a newline), and in an attribute tab and newline too (a
    /// parser would turn them into spaces); the characters XML 1.0 cannot hold at all (the
    /// other C0 controls, U+FFFE, U+FFFF: a terminal's escape sequences in stderr) written
    /// visibly as `\x1b`, since no reference may name them.
    package static func xml(_ s: String, attribute: Bool = true) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for u in s.unicodeScalars {
            switch u {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t": out += attribute ? "&#9;" : "\t"
            case "\n": out += attribute ? "&#10;" : "\n"
            case "\r": out += "&#13;"
            default:
                if u.value < 0x20 {
                    out += String(format: "\\x%02x", u.value)
                } else if u.value == 0xFFFE || u.value == 0xFFFF {
                    out += String(format: "\\u%04x", u.value)
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out
    }
}
