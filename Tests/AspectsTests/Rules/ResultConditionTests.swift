import Foundation
import Testing
import AspectsRules

/// Conditions on the result (`after` rules): "fail only if the original succeeded", "only
/// when it failed with ENOENT" — Aspects' after blocks could test the invocation's return
/// value. The condition decides before the call is counted, so nth counts matching calls.
@Suite struct ResultConditionTests {
    @Test func theSecondSuccessfulWriteFails() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"w","symbol":"write","position":"after","action":{"fail":"ENOSPC"},"when":{"result":{"min":1},"nth":2}}"#)
        let bin = try Fixture.build("family_writes")
        let r = try Proc.run(bin, [t.directory + "/out.img"], environment: Proc.preload(table: t.name))
        #expect(r.stdout == "write: 1\npwrite: 1\nwritev: 1\nwrite: No space left on device\n", "\(r)")
        let rule = try #require(t.table.rules().first)
        #expect(rule.matched == 2 && rule.fired == 1 && rule.conditions.contains("result >= 1"), "\(rule.conditions)")
        // the data was written (a, then c over pwrite's b, then d): the failure is reported
        // after the fact
        let data = try String(contentsOfFile: t.directory + "/out.img", encoding: .utf8)
        #expect(data == "acd", "\(data)")
    }

    @Test(.tags(.realPrograms)) func onlyTheCallsThatFailedWithAnError() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"e","symbol":"open","position":"after","action":{"fail":"EACCES"},"when":{"errno":"ENOENT"}}"#)
        let r = try Proc.run("/bin/cat", ["/nonexistent-\(getpid())", "/etc/hostname"], environment: Proc.preload(table: t.name))
        #expect(r.status == 1 && r.stderr.contains("Permission denied") && !r.stdout.isEmpty, "the missing file's error changed, the other file read: \(r)")
        let rule = try #require(t.table.rules().first)
        #expect(rule.matched == 1 && rule.fired == 1 && rule.conditions.contains("failed with ENOENT"), "\(rule.conditions)")
    }

    /// dd writes 4 KiB under a file-size limit of 512 bytes: the kernel returns 512, a short
    /// write, and only that call fails. `run` is the rule set; a second rule on write sends
    /// the group down the full path, which reads the arguments before the call.
    func shortWrite(_ rules: [String], limit: Bool = true) throws -> (Outcome, ScratchTable) {
        let t = try ScratchTable()
        for rule in rules { try t.add(rule) }
        let file = t.directory + "/out.img"
        let dd = "exec dd if=/dev/zero of=\(file) bs=4096 count=1 status=none"
        let r = try Proc.run("/bin/sh", ["-c", (limit ? "ulimit -f 1; " : "") + dd], environment: Proc.preload(table: t.name))
        return (r, t)
    }

    static let shortOnly = #"{"id":"short","symbol":"write","position":"after","action":{"fail":"EIO"},"when":{"result":{"min":0,"lt_arg":2}}}"#

    @Test(arguments: [false, true]) func onlyTheWriteThatReturnedShortFails(fullPath: Bool) throws {
        let log = #"{"id":"log","symbol":"write","position":"before","action":{"log":true}}"#
        let (r, t) = try shortWrite([Self.shortOnly] + (fullPath ? [log] : []))
        #expect(r.status == 1 && r.stderr.contains("Input/output error"), "\(r)")
        let rule = try #require(t.table.rules().first { $0.id == "short" })
        // dd's message on stderr is a whole write: it does not match
        #expect(rule.matched == 1 && rule.fired == 1, "\(rule.matched) \(rule.fired)")
        #expect(rule.conditions.contains("result < arg 2 (count)") && rule.conditions.contains("result >= 0"), "\(rule.conditions)")
        let size = try FileManager.default.attributesOfItem(atPath: t.directory + "/out.img")[.size] as? Int
        #expect(size == 512, "the short write happened; its result was replaced after the fact")
    }

    @Test func aWholeWriteDoesNotMatch() throws {
        let (r, t) = try shortWrite([Self.shortOnly], limit: false)
        #expect(r.status == 0, "\(r)")
        let rule = try #require(t.table.rules().first)
        #expect(rule.matched == 0 && rule.fired == 0)
    }

    @Test(.tags(.fast)) func ltArgIsChecked() throws {
        func error(_ json: String) -> String {
            do { _ = try RuleCompiler().compile(try RuleDecoder(source: "t").decode(json)); return "" } catch { return "\(error)" }
        }
        let head = #"{"symbol":"write","position":"after","action":{"log":true},"when":{"result":"#
        #expect(error(head + #"{"lt_arg":1}}}"#).contains("argument 1 of write (const void * buf) is not an integer"))
        #expect(error(head + #"{"lt_arg":3}}}"#).contains("index 3 is past them"))
        #expect(error(head + #"{"lt_arg":-1}}}"#).contains("when.result.lt_arg: argument index -1"))
        #expect(error(#"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"result":{"lt_arg":2}}}"#).contains("needs an \"after\" rule"))
        #expect(error(#"{"symbol":"fopen","position":"after","action":{"log":true},"when":{"result":{"lt_arg":0}}}"#).contains("not an integer"))
        // pwrite's count is argument 2 as well: one rule on both means the same
        #expect(error(#"{"symbol":["write","pwrite"],"position":"after","action":{"log":true},"when":{"result":{"min":0,"lt_arg":2}}}"#) == "")
        #expect(error(head + #"{"lt_arg":2}}}"#) == "")
    }

    @Test(.tags(.fast)) func theyAreChecked() throws {
        func error(_ json: String) -> String {
            do { _ = try RuleCompiler().compile(try RuleDecoder(source: "t").decode(json)); return "" } catch { return "\(error)" }
        }
        #expect(error(#"{"symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{"errno":"ENOENT"}}"#).contains("needs an \"after\" rule"))
        #expect(error(#"{"symbol":"open","position":"after","action":{"log":true},"when":{"errno":"ENOENT","result":{"min":0}}}"#).contains("excludes -1"))
        #expect(error(#"{"symbol":"open","position":"after","action":{"log":true},"when":{"errno":"ENOEXEC"}}"#).contains("cannot fail with ENOEXEC"))
        #expect(error(#"{"symbol":"open","position":"after","action":{"log":true},"when":{"result":{"min":5,"max":1}}}"#).contains("above \"max\""))
        #expect(error(#"{"symbol":"open","position":"after","action":{"log":true},"when":{"result":{"eq":0,"min":1}}}"#).contains("\"eq\" takes no"))
        #expect(error(#"{"symbol":"open","position":"after","action":{"log":true},"when":{"result":{"least":1}}}"#).contains("least"))
        #expect(error(#"{"symbol":"open","position":"after","action":{"log":true},"when":{"result":{"eq":3}}}"#) == "")
    }
}
