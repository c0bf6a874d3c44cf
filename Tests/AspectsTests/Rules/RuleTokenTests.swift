import Foundation
import Testing
import AspectsCore
import AspectsRules
import AspectsTable

/// Tokens (`id@serial`): a removed rule's id can be reused, and a stale remove must not take
/// the newer rule (ABA). The Swift API returns a token whose remove() removes exactly its rule.
@Suite struct RuleTokenTests {
    static let rule = #"{"id":"x","symbol":"close","position":"before","action":{"log":true}}"#

    @Test(.tags(.fast)) func tokensParseAndPrint() {
        #expect(RuleToken("disk-full@17") == RuleToken(id: "disk-full", serial: 17))
        #expect(RuleToken("disk-full@17")?.description == "disk-full@17")
        for bad in ["disk-full", "@17", "x@", "x@0", "x@-1", "x@1a", "x@@1"] { #expect(RuleToken(bad) == nil, "\(bad)") }
    }

    @Test func aStaleTokenDoesNotRemoveANewerRuleWithTheSameId() throws {
        let t = try ScratchTable()
        let first = try Proc.aspectctl(["add", "--table", t.name, "--rule", Self.rule])
        let old = first.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(RuleToken(old)?.id == "x", "\(first)")
        #expect(try Proc.aspectctl(["remove", "--table", t.name, old]).status == 0)
        let second = try Proc.aspectctl(["add", "--table", t.name, "--rule", Self.rule])
        let new = second.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(new != old && RuleToken(new)?.id == "x")
        // the stale token: refused, and the newer rule stays
        let stale = try Proc.aspectctl(["remove", "--table", t.name, old])
        #expect(stale.status == 65 && stale.stderr.contains("rule \(old) is gone; the active rule \"x\" is a newer one (\(new))"), "\(stale)")
        #expect(t.table.rules().map(\.id) == ["x"])
        // its own token removes it; then the plain id finds nothing
        #expect(try Proc.aspectctl(["remove", "--table", t.name, new]).stdout == "\(new)\n")
        let none = try Proc.aspectctl(["remove", "--table", t.name, new])
        #expect(none.status == 65 && none.stderr.contains("(\(new) was removed)"), "\(none)")
    }

    @Test(.tags(.fast)) func theSwiftAPIReturnsTokensThatRemoveExactlyTheirRule() throws {
        let t = try ScratchTable()
        let compile = { () throws -> [CompiledRule] in try RuleCompiler().compile(try RuleDecoder(source: "t").decode(Self.rule)) }
        let first = try #require(try t.table.addReturningTokens(try compile()).first)
        try first.remove()
        let second = try #require(try t.table.addReturningTokens(try compile()).first)
        #expect(second.token.id == "x" && second.token.serial > first.token.serial)
        #expect(throws: AspectsError.self) { try first.remove() }
        #expect(t.table.rules().count == 1)
        try second.remove()
        #expect(t.table.rules().isEmpty)
    }
}
