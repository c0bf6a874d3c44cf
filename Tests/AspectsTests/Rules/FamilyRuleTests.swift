import Foundation
import Testing
import AspectsRules

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

    @Test(.tags(.fast)) func aRuleMustMeanTheSameForEveryMember() throws {
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
    @Test(.tags(.realPrograms), .requires(FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs sqlite3 (.ci/run installs it)"))
    func theWriteFamilyReachesSqlite3() throws {
        let dir = NSTemporaryDirectory() + "aspects-family-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let db = dir + "/t.db"
        #expect(try Proc.run("/usr/bin/sqlite3", [db, "create table t(x);"]).status == 0)
        let plain = #"{"symbol":"write","position":"instead","action":{"fail":"ENOSPC"},"when":{"args":[{"arg":0,"fdpath":"*.db"}]}}"#
        let missed = try Proc.aspectctl(["run", "--rule", plain, "--", "/usr/bin/sqlite3", db, "insert into t values(1);"])
        #expect(missed.status == 0 && missed.stderr.contains("never matched a call"), "write alone misses it: \(missed)")
        let family = #"{"family":"write","position":"instead","action":{"fail":"ENOSPC"},"when":{"args":[{"arg":0,"fdpath":"*.db"}]}}"#
        let hit = try Proc.aspectctl(["run", "--rule", family, "--", "/usr/bin/sqlite3", db, "insert into t values(2);"])
        #expect(hit.status == 13 && hit.stderr.contains("database or disk is full"), "\(hit)")
    }

    /// The other case the issue saw: an open rule on cp, which opens through openat, where the
    /// path is argument 1. A condition that names its argument ("path") tests each member's
    /// own: open's argument 0, openat's 1, creat's 0.
    @Test func aNamedArgumentIsEachMembersOwn() throws {
        let dir = NSTemporaryDirectory() + "aspects-family-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        try "data\n".write(toFile: dir + "/a.txt", atomically: true, encoding: .utf8)
        let rule = #"{"id":"no-db","family":"open","position":"instead","action":{"fail":"EACCES"},"when":{"args":[{"arg":"path","glob":"*.db"}]}}"#
        let t = try ScratchTable()
        let added = try Proc.aspectctl(["add", "--table", t.name, "--rule", rule])
        #expect(added.status == 0, "\(added)")
        let env = Proc.preload(table: t.name)
        let denied = try Proc.run("/bin/cp", [dir + "/a.txt", dir + "/b.db"], environment: env)
        #expect(denied.status == 1 && denied.stderr.contains("b.db") && denied.stderr.contains("Permission denied"), "\(denied)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/b.db"))
        let firedOnDB = try #require(t.table.rules().first).fired
        #expect(firedOnDB >= 1)
        // another path: cp's openat calls go through, the rule matches none of them
        let copied = try Proc.run("/bin/cp", [dir + "/a.txt", dir + "/b.txt"], environment: env)
        #expect(copied.status == 0 && FileManager.default.fileExists(atPath: dir + "/b.txt"), "\(copied)")
        #expect(t.table.rules().first?.fired == firedOnDB)
        // list says where the argument is in the members whose number differs
        let listed = try Proc.aspectctl(["list", "--table", t.name])
        #expect(listed.stdout.contains(#"when arg 0 (path; openat: arg 1) glob "*.db""#), "\(listed)")
        // The same rule with the number: argument 0 is openat's dirfd, an int.
        func error(_ json: String) -> String {
            do { _ = try RuleCompiler().compile(try RuleDecoder(source: "t").decode(json)); return "" } catch { return "\(error)" }
        }
        let numbered = error(#"{"family":"open","position":"instead","action":{"fail":"EACCES"},"when":{"args":[{"arg":0,"glob":"*.db"}]}}"#)
        #expect(numbered.contains("for openat: ") && numbered.contains("is not a string"), "\(numbered)")
        let unknown = error(#"{"family":"open","position":"instead","action":{"fail":"EACCES"},"when":{"args":[{"arg":"file","glob":"*.db"}]}}"#)
        #expect(unknown.contains("when.args[0].arg: for open: open has no argument named \"file\" (its arguments: 0: const char * path, 1: int flags, 2: mode_t mode)"), "\(unknown)")
        let bad = error(#"{"symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{"args":[{"arg":"the path","glob":"*.db"}]}}"#)
        #expect(bad.contains("\"the path\" is not an argument name"), "\(bad)")
        // a name of one type in some members, another in others: fd is an int in each of write's
        let fd = try RuleCompiler().compile(try RuleDecoder(source: "t").decode(#"{"family":"write","position":"instead","action":{"fail":"EIO"},"when":{"args":[{"arg":"fd","eq":1}]}}"#))
        #expect(fd[0].familyArgs.count == 4 && fd[0].familyArgs.allSatisfy { $0 == [0] }, "\(fd[0].familyArgs)")
    }

    /// Two named conditions, each at another place in each member (open: flags 1, path 0;
    /// openat: flags 2, path 1): the preload's copy of the rule for each group (rulecache.c)
    /// takes that group's numbers from the rule's strings.
    @Test func twoNamedArgumentsAreRemappedPerMember() throws {
        let dir = NSTemporaryDirectory() + "aspects-family-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        try "data\n".write(toFile: dir + "/a.txt", atomically: true, encoding: .utf8)
        let t = try ScratchTable()
        try t.add(#"{"id":"create-db","symbol":["open","openat"],"position":"instead","action":{"fail":"EACCES"},"when":{"args":[{"arg":"flags","mask":"O_CREAT"},{"arg":"path","glob":"*.db"}]}}"#)
        let env = Proc.preload(table: t.name)
        let opens = try Fixture.build("open_calls")
        // open: creating x.db is refused; opening it without O_CREAT is not (it does not exist)
        #expect(try Proc.run(opens, [dir + "/x.db", "1", "64"], environment: env).stdout == "open 1: -1 EACCES\n")
        #expect(try Proc.run(opens, [dir + "/x.db", "1", "0"], environment: env).stdout == "open 1: -1 ENOENT\n")
        #expect(try Proc.run(opens, [dir + "/x.txt", "1", "64"], environment: env).stdout == "open 1: ok\n")
        // openat (cp): reading a.txt passes, creating b.db does not
        let cp = try Proc.run("/bin/cp", [dir + "/a.txt", dir + "/b.db"], environment: env)
        #expect(cp.status == 1 && cp.stderr.contains("Permission denied"), "\(cp)")
        #expect((t.table.rules().first?.fired ?? 0) >= 2, "open's and cp's openat's")
        // creat has no flags: the family with it is refused, naming creat
        do {
            _ = try RuleCompiler().compile(try RuleDecoder(source: "t").decode(#"{"family":"open","position":"instead","action":{"fail":"EACCES"},"when":{"args":[{"arg":"flags","mask":"O_CREAT"}]}}"#))
            Issue.record("accepted a condition on an argument creat does not have")
        } catch {
            #expect("\(error)".contains("when.args[0].arg: for creat: creat has no argument named \"flags\""), "\(error)")
        }
    }
}
