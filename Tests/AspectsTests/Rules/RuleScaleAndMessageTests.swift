import Foundation
import Testing
@testable import AspectsCore
import AspectsRules

/// `check` and `add` stay linear in the number of rules and in the
/// keys of one object, a full table is refused before anything costly, and values that are
/// out of range, too long or never firing are named for what they are.
@Suite struct RuleScaleAndMessageTests {
    /// `count` rules spread over the catalog's functions that fail with -1 and errno (at most
    /// 28 rules fit one function), each on its own call number: no conflicts among them.
    static func spreadRules(_ count: Int) -> String {
        let catalog = Catalog.builtIn
        let names = catalog.groups.filter { !$0.isNoReturn }.map { catalog.primary(of: $0).name }
        let rules = (0..<count).map { i in
            #"{"id":"x\#(i)","symbol":"\#(names[i % names.count])","position":"after","action":{"log":true},"when":{"nth":\#(i + 1)}}"#
        }
        return "{\"rules\":[\(rules.joined(separator: ","))]}"
    }

    /// Finding the rules that can never fire compares each rule with a bounded number of
    /// earlier ones (it compared every rule with every earlier one: 2,000 rules took 18 s).
    @Test(.tags(.fast)) func conflictsAreFoundInLinearWork() throws {
        let compiled = try RuleCompiler().compile(try RuleDecoder(source: "t").decode(Self.spreadRules(2_000)))
        let labels = compiled.indices.map { "rule \($0 + 1)" }
        let (findings, comparisons) = RuleConflicts.findCountingWork(compiled, labels: labels)
        #expect(findings.isEmpty, "\(findings.prefix(3))")
        #expect(comparisons <= 2 * compiled.count, "\(comparisons) comparisons for \(compiled.count) rules")
        // And with as many table rules before them: still one lookup each.
        let (_, after) = RuleConflicts.findCountingWork(Array(compiled.prefix(1_000)), labels: labels, after: Array(compiled.suffix(1_000)))
        #expect(after <= 2 * 1_000, "\(after)")
        // The findings themselves are those of a pairwise comparison: the second copy of a
        // rule repeats the first, an instead after a rule taking every call cannot fire.
        let twice = try RuleCompiler().compile(try RuleDecoder(source: "t").decode("""
            [{"symbol":"read","position":"before","action":{"log":true}},
             {"symbol":"write","position":"instead","action":{"fail":"EIO"}},
             {"symbol":"read","position":"before","action":{"log":true}},
             {"symbol":"write","position":"instead","action":{"fail":"ENOSPC"},"when":{"nth":2}}]
            """))
        let found = RuleConflicts.find(twice, labels: ["a", "b", "c", "d"])
        #expect(found.map(\.rule) == ["c", "d"], "\(found)")
        #expect(found[0].message.contains("repeats a exactly") && found[1].message.contains("can never fire: b"), "\(found)")
    }

    /// A duplicate field is found by a set, not a scan of the fields before it (a 0.5 MB
    /// object took 113 s), and still named where it stands.
    @Test(.tags(.fast)) func aWideObjectIsParsedAndItsDuplicateNamed() throws {
        let keys = (0..<30_000).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        let wide = try JSONParser.parse("{\(keys)}")
        guard case .object(let members) = wide.value else { Issue.record("not an object"); return }
        #expect(members.count == 30_000 && members.last?.key == "k29999")
        let text = "{\(keys),\"k17\":1}"
        #expect(throws: JSONParser.Failure(message: "duplicate field \"k17\"", line: 1, column: text.utf8.count - 7)) { try JSONParser.parse(text) }
    }

    /// `check` of 1,000 rules and of an object with 20,000 unknown fields answers (the whole
    /// command, as a user runs it); `add` of them into a table that has room adds them all.
    @Test func checkAndAddOfAThousandRules() throws {
        let file = NSTemporaryDirectory() + "scale-rules-\(UUID().uuidString).json"
        defer { unlink(file) }
        try Self.spreadRules(1_000).write(toFile: file, atomically: false, encoding: .utf8)
        let checked = try Proc.aspectctl(["check", file])
        #expect(checked.status == 0 && checked.stdout.hasSuffix("1000 rule(s) valid\n"), "\(checked.stderr.prefix(500))")
        let name = "test-scale-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { _ = try? Proc.aspectctl(["destroy", "--table", name]) }
        #expect(try Proc.aspectctl(["create", "--table", name, "--rules", "1024"]).status == 0)
        let added = try Proc.aspectctl(["add", "--table", name, file])
        #expect(added.status == 0 && added.stdout.split(separator: "\n").count == 1_000, "\(added.stderr.prefix(500))")
    }

    /// A batch that cannot fit is refused before the table's rules are compiled again to look
    /// for conflicts: no warning about rules that will never be added, only "full".
    @Test func aFullTableIsRefusedFirst() throws {
        let name = "test-full-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { _ = try? Proc.aspectctl(["destroy", "--table", name]) }
        #expect(try Proc.aspectctl(["create", "--table", name, "--rules", "2"]).status == 0)
        #expect(try Proc.aspectctl(["add", "--table", name, "--rule", #"{"id":"all","symbol":"write","position":"instead","action":{"fail":"EIO"}}"#]).status == 0)
        let shadowed = #"{"symbol":"write","position":"instead","action":{"fail":"ENOSPC"},"when":{"nth":%d}}"#
        let r = try Proc.aspectctl(["add", "--table", name, "--rule", String(format: shadowed, 2), "--rule", String(format: shadowed, 3)])
        #expect(r.status == 75, "\(r)")
        #expect(r.stderr.contains("table \"\(name)\" has room for 2 rules, 1 are active and 2 more were asked for"), "\(r)")
        #expect(!r.stderr.contains("warning"), "\(r)")
    }

    @Test func outOfRangeIsNotCalledNotAnInteger() throws {
        let below = try Proc.aspectctl(["check", "--rule", #"{"symbol":"write","position":"instead","action":{"return":-9223372036854775809}}"#])
        #expect(below.status == 65 && below.stderr.contains("-9223372036854775809 is below the smallest 64-bit integer, -9223372036854775808"), "\(below)")
        let above = try Proc.aspectctl(["check", "--rule", #"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"nth":18446744073709551616}}"#])
        #expect(above.status == 65 && above.stderr.contains("is above the largest 64-bit integer, 18446744073709551615"), "\(above)")
        let retval = try Proc.aspectctl(["run", "--inject", "write:retval=-9223372036854775809", "--", "true"])
        #expect(retval.status == 125 && retval.stderr.contains("retval -9223372036854775809 is below the smallest 64-bit integer"), "\(retval)")
        let word = try Proc.aspectctl(["check", "--rule", #"{"symbol":"write","position":"instead","action":{"return":"many"}}"#])
        #expect(word.status == 65 && !word.stderr.contains("64-bit"), "\(word)")
    }

    @Test func aDurationTooLongIsSaidToBeTooLong() throws {
        let rule = try Proc.aspectctl(["check", "--rule", #"{"symbol":"write","position":"before","action":{"delay":"300000000m"}}"#])
        #expect(rule.status == 65 && rule.stderr.contains("\"300000000m\" is longer than an hour"), "\(rule)")
        let inject = try Proc.aspectctl(["run", "--inject", "write:delay_enter=300000000000000000000000ms", "--", "true"])
        #expect(inject.status == 125 && inject.stderr.contains("is longer than an hour"), "\(inject)")
        let fine = try Proc.aspectctl(["run", "--inject", "getppid:delay_enter=5ms", "--", "true"])
        #expect(fine.status == 0, "\(fine)")
        let notOne = try Proc.aspectctl(["check", "--rule", #"{"symbol":"write","position":"before","action":{"delay":"soon"}}"#])
        #expect(notOne.status == 65 && notOne.stderr.contains("is not a duration"), "\(notOne)")
    }

    @Test func probabilityZeroIsWarnedAbout() throws {
        let zero = #"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"probability":0}}"#
        let r = try Proc.aspectctl(["check", "--rule", zero])
        #expect(r.status == 0 && r.stderr.contains("warning: rule: can never fire: its probability is 0"), "\(r)")
        let strict = try Proc.aspectctl(["check", "--strict", "--rule", zero])
        #expect(strict.status != 0 && strict.stderr.contains("give a probability above 0"), "\(strict)")
    }

    @Test func anIdThatReadsAsAnOptionIsRefused() throws {
        let r = try Proc.aspectctl(["check", "--rule", #"{"id":"--all","symbol":"write","position":"instead","action":{"fail":"EIO"}}"#])
        #expect(r.status == 65 && r.stderr.contains("starts with '-'"), "\(r)")
        let ok = try Proc.aspectctl(["check", "--rule", #"{"id":"a-b","symbol":"write","position":"instead","action":{"fail":"EIO"}}"#])
        #expect(ok.status == 0, "\(ok)")
    }
}
