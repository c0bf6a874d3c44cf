import Foundation
import Testing
import CAspectsABI
import AspectsCore
import AspectsRules

/// The `fdpath` matcher (ASPECTS_MATCH_FDPATH): a condition on the file an fd argument refers
/// to, read from /proc/self/fd at the call, so "writes to *.log" can be said of a program that
/// opened the file long before.
@Suite struct FdPathTests {
    @Test func theRuleLanguageSaysItAndChecksTheArgument() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"db","symbol":"write","position":"instead","action":{"fail":"ENOSPC"},"when":{"nth":3,"args":[{"arg":0,"fdpath":"*.db"}]}}"#)
        let dir = t.directory
        let r = try Proc.run("/bin/sh", ["-c", "for i in 1 2 3 4; do echo $i >> \(dir)/x.db; echo $i >> \(dir)/x.txt; done"],
                             environment: Proc.preload(table: t.name))
        // the 3rd write to *.db fails; writes to x.txt are neither failed nor counted
        #expect(try String(contentsOfFile: dir + "/x.db", encoding: .utf8) == "1\n2\n4\n", "\(r)")
        #expect(try String(contentsOfFile: dir + "/x.txt", encoding: .utf8) == "1\n2\n3\n4\n")
        let rule = try #require(t.table.rules().first { $0.id == "db" })
        #expect(rule.matched == 4 && rule.fired == 1 && rule.conditions.contains("arg 0 (fd) fdpath \"*.db\""), "\(rule)")
        // Only on a file descriptor.
        let e = #"{"symbol":"open","position":"instead","action":{"fail":"EIO"},"when":{"args":[{"arg":0,"fdpath":"*.db"}]}}"#
        #expect(throws: AspectsError.self) { try RuleCompiler().compile(try RuleDecoder(source: "t").decode(e)) }
    }

    /// A compiled rule whose first matcher is `fdpath` on argument 0 with `pattern`.
    func fdpathRule(_ json: String, pattern: String) throws -> CompiledRule {
        var c = try RuleCompiler().compile(try RuleDecoder(source: "test").decode(json))[0]
        c.matchers[0].kind = UInt8(ASPECTS_MATCH_FDPATH.rawValue)
        c.matchers[0].pattern = pattern
        return c
    }

    @Test func aWriteToAMatchingFileFailsAndOthersDoNot() throws {
        let t = try ScratchTable()
        try t.table.add([try fdpathRule(#"{"id":"log","symbol":"write","position":"instead","action":{"fail":"ENOSPC"},"when":{"args":[{"arg":0,"eq":0}]}}"#,
                                        pattern: "*.log")])
        let dir = t.directory
        // The shell opens both files itself (redirections) and its builtin echo writes to fd 1.
        let r = try Proc.run("/bin/sh", ["-c", "echo a > \(dir)/x.log; echo b > \(dir)/y.txt; echo c > \(dir)/z.log.txt"],
                             environment: Proc.preload(table: t.name))
        #expect(try String(contentsOfFile: dir + "/x.log", encoding: .utf8) == "", "\(r)")
        #expect(try String(contentsOfFile: dir + "/y.txt", encoding: .utf8) == "b\n")
        #expect(try String(contentsOfFile: dir + "/z.log.txt", encoding: .utf8) == "c\n")
        #expect(r.stderr.contains("echo"), "the shell reports the failed echo: \(r)")
        let rule = try #require(t.table.rules().first { $0.id == "log" })
        #expect(rule.fired == 1, "\(rule)")
    }

    @Test func aReusedDescriptorNumberIsJudgedByItsFileNow() throws {
        // fd 3 names a.db, is closed, then names b.txt: only the first write fails.
        let t = try ScratchTable()
        try t.table.add([try fdpathRule(#"{"id":"db","symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"args":[{"arg":0,"eq":0}]}}"#,
                                        pattern: "*.db")])
        let dir = t.directory
        // dash: its echo calls write(2) itself (bash's goes through stdio, inside libc).
        let r = try Proc.run("/bin/sh", ["-c", "exec 3>\(dir)/a.db; echo one >&3; exec 3>&-; exec 3>\(dir)/b.txt; echo two >&3"],
                             environment: Proc.preload(table: t.name))
        #expect(try String(contentsOfFile: dir + "/a.db", encoding: .utf8) == "", "\(r)")
        #expect(try String(contentsOfFile: dir + "/b.txt", encoding: .utf8) == "two\n", "\(r)")
    }

    /// docs/rules.md's disk-full example, as the demo runs it: dd writes its output through fd
    /// 1, so only the file the descriptor names can pick its writes out.
    @Test func theDiskFullExampleOnDd() throws {
        let dir = NSTemporaryDirectory() + "aspects-fdpath-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let rules = try String(contentsOfFile: Paths.root + "/config/examples/flaky-disk.json", encoding: .utf8)
        try rules.write(toFile: dir + "/rules.json", atomically: true, encoding: .utf8)
        let r = try Proc.aspectctl(["run", "--report-json", dir + "/run.json", "--rules", dir + "/rules.json", "--",
                                    "dd", "if=/dev/zero", "of=\(dir)/disk.img", "bs=4k", "count=8", "status=none"])
        #expect(r.status == 1 && r.stderr.contains("No space left on device"), "\(r)")
        let size = (try FileManager.default.attributesOfItem(atPath: dir + "/disk.img")[.size] as? NSNumber)?.intValue
        #expect(size == 8192, "two 4 KB writes got through before the 3rd failed")
        let doc = try JSONParser.parse(try String(contentsOfFile: dir + "/run.json", encoding: .utf8))
        guard case .array(let rs)? = doc["rules"]?.value, let disk = rs.first(where: { $0["id"]?.value == .string("disk-full") }) else {
            Issue.record("no disk-full rule"); return
        }
        #expect(disk["matched"]?.value == .number("3") && disk["fired"]?.value == .number("1"), "\(disk.value.rendered())")
    }

    /// sqlite3 writes its journal and its database with pwrite64 through descriptors: a rule
    /// per file, and the database stays whole (the insert is rolled back).
    @Test(.tags(.realPrograms), .requires(FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs sqlite3 (.ci/run installs it)"))
    func journalAndDatabaseOfSqlite3() throws {
        let dir = NSTemporaryDirectory() + "aspects-fdpath-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let db = dir + "/t.db"
        #expect(try Proc.run("/usr/bin/sqlite3", [db, "create table t(x); insert into t values(1);"]).status == 0)
        let journal = try Proc.aspectctl(["run", "--rule", #"{"symbol":"pwrite64","position":"instead","action":{"fail":"EIO"},"when":{"args":[{"arg":0,"fdpath":"*-journal"}]}}"#,
                                          "--", "/usr/bin/sqlite3", db, "insert into t values(2);"])
        #expect(journal.status == 10 && journal.stderr.contains("disk I/O error"), "\(journal)")
        let full = try Proc.aspectctl(["run", "--rule", #"{"symbol":"pwrite64","position":"instead","action":{"fail":"ENOSPC"},"when":{"args":[{"arg":0,"fdpath":"*.db"}]}}"#,
                                       "--", "/usr/bin/sqlite3", db, "insert into t values(3);"])
        #expect(full.status == 13 && full.stderr.contains("database or disk is full"), "\(full)")
        let rows = try Proc.run("/usr/bin/sqlite3", [db, "select count(*) from t;"])
        #expect(rows.stdout == "1\n", "\(rows)")
    }
}
