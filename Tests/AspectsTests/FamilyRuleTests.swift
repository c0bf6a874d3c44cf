import Foundation
import Testing
@testable import AspectConfig

/// One rule on several functions — `"symbol": [...]` or a catalog `"family"` — with one
/// counter: "the 3rd write, whichever function makes it". A write rule once missed sqlite3's
/// pwrite64, and an open rule fired on cp while cp went on through openat.
@Suite struct FamilyRuleTests {
    func program() throws -> String { try Fixture.build("family_writes") }

    func run(_ rule: String, _ t: ScratchTable) throws -> [String] {
        let r = try Proc.run(try program(), [t.directory + "/out.img"], environment: Proc.preload(table: t.name))
        #expect(r.status == 0, "\(r)")
        return r.stdout.split(separator: "\n").map(String.init)
    }

    @Test func aListOfFunctionsCountsTheirCallsAsOne() throws {
        let t = try ScratchTable()
        let rule = #"{"id":"third","symbol":["write","pwrite","writev"],"position":"instead","action":{"fail":"ENOSPC"},"when":{"nth":3}}"#
        try t.add(rule)
        #expect(try run(rule, t) == ["write: 1", "pwrite: 1", "writev: No space left on device", "write: 1"])
        let r = try #require(t.table.rules().first)
        #expect(r.symbol == "write|pwrite|writev" && r.matched == 4 && r.fired == 1, "\(r.symbol) \(r.matched) \(r.fired)")
        #expect(r.names.contains("pwrite64") && r.names.contains("writev"), "aliases too: \(r.names)")
        // remove --symbol of any member takes it
        #expect(try Proc.aspectctl(["remove", "--table", t.name, "--symbol", "pwrite64"]).stdout == "third\n")
        #expect(try run(rule, t) == ["write: 1", "pwrite: 1", "writev: 1", "write: 1"])
    }

    @Test func aCatalogFamilyWithAConditionTheyShare() throws {
        let t = try ScratchTable()
        try t.add(#"{"family":"write","position":"instead","action":{"fail":"EIO"},"when":{"every":2,"args":[{"arg":0,"fdpath":"*.img"}]}}"#)
        #expect(try run("", t) == ["write: 1", "pwrite: Input/output error", "writev: 1", "write: Input/output error"])
        // list --rules gives it back as written, and add takes it again
        let saved = try Proc.aspectctl(["list", "--table", t.name, "--rules"]).stdout
        #expect(saved.contains(#""family": "write""#), "\(saved)")
        let u = try ScratchTable()
        #expect(try Proc.run(Paths.aspectctl, ["add", "--table", u.name, "--rules", "-"], stdin: saved).status == 0)
        #expect(u.table.rules().first?.symbol == "write|pwrite|writev|pwritev|pwritev2")
    }

    @Test func aRuleMustMeanTheSameForEveryMember() throws {
        func error(_ json: String) -> String {
            do { _ = try RuleCompiler().compile(try RuleDecoder(source: "t").decode(json)); return "" } catch { return "\(error)" }
        }
        // argument 2 is a size_t count for write, an int iovcnt for writev
        #expect(error(#"{"family":"write","position":"instead","action":{"fail":"EIO"},"when":{"args":[{"arg":2,"min":1}]}}"#)
            .contains("family: the rule does not mean the same for writev as for write: \"when.args\""))
        #expect(error(#"{"symbol":["write","malloc"],"position":"instead","action":{"fail":true}}"#).contains("its failure"))
        #expect(error(#"{"family":"nope","position":"instead","action":{"fail":"EIO"}}"#).contains("there is no family \"nope\"; families: open, read, recv, send, sync, write"))
        #expect(error(#"{"symbol":["write","wirte"],"position":"instead","action":{"fail":"EIO"}}"#).contains("wirte is not in the catalog"))
        #expect(error(#"{"symbol":"write","family":"write","position":"instead","action":{"fail":"EIO"}}"#).contains("not both"))
        #expect(error(#"{"symbol":[],"position":"instead","action":{"fail":"EIO"}}"#).contains("lists no function"))
        // an errno one member cannot produce is refused for that member, by name
        #expect(error(#"{"family":"open","position":"instead","action":{"fail":"EBADF"}}"#).contains("for open: "), "open cannot fail with EBADF, openat can")
        // aliases of one function are one member: open and open64 make no family
        let one = try RuleCompiler().compile(try RuleDecoder(source: "t").decode(#"{"symbol":["open","open64"],"position":"instead","action":{"fail":"EACCES"}}"#))
        #expect(one[0].familyGroups.isEmpty)
    }

    /// The case the issue saw: a write rule on sqlite3, whose writes are pwrite64.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs sqlite3"))
    func theWriteFamilyReachesSqlite3() throws {
        let dir = NSTemporaryDirectory() + "aspects-family-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = dir + "/t.db"
        #expect(try Proc.run("/usr/bin/sqlite3", [db, "create table t(x);"]).status == 0)
        let plain = #"{"symbol":"write","position":"instead","action":{"fail":"ENOSPC"},"when":{"args":[{"arg":0,"fdpath":"*.db"}]}}"#
        let missed = try Proc.aspectctl(["run", "--rule", plain, "--", "/usr/bin/sqlite3", db, "insert into t values(1);"])
        #expect(missed.status == 0 && missed.stderr.contains("never matched a call"), "write alone misses it: \(missed)")
        let family = #"{"family":"write","position":"instead","action":{"fail":"ENOSPC"},"when":{"args":[{"arg":0,"fdpath":"*.db"}]}}"#
        let hit = try Proc.aspectctl(["run", "--rule", family, "--", "/usr/bin/sqlite3", db, "insert into t values(2);"])
        #expect(hit.status == 13 && hit.stderr.contains("database or disk is full"), "\(hit)")
    }
}
