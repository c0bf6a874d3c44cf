import Foundation
import Testing
@testable import AspectConfig

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

    @Test func onlyTheCallsThatFailedWithAnError() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"e","symbol":"open","position":"after","action":{"fail":"EACCES"},"when":{"errno":"ENOENT"}}"#)
        let r = try Proc.run("/bin/cat", ["/nonexistent-\(getpid())", "/etc/hostname"], environment: Proc.preload(table: t.name))
        #expect(r.status == 1 && r.stderr.contains("Permission denied") && !r.stdout.isEmpty, "the missing file's error changed, the other file read: \(r)")
        let rule = try #require(t.table.rules().first)
        #expect(rule.matched == 1 && rule.fired == 1 && rule.conditions.contains("failed with ENOENT"), "\(rule.conditions)")
    }

    @Test func theyAreChecked() throws {
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
