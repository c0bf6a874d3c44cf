import Foundation
import Testing
import AspectsCore
import AspectsRules

/// Call sites: events say where each advised call came from (object file name + offset of the
/// return address), and the `site` condition picks the calls from one place, counting `nth`
/// among them only.
@Suite struct CallSiteTests {
    @Test func eventsNameTheCallSiteAndASiteRuleFailsOnlyThere() throws {
        let bin = try Fixture.build("two_sites")
        let object = (bin as NSString).lastPathComponent
        let log = try ScratchTable()
        try log.add(#"{"id":"w","symbol":"write","position":"before","action":{"log":true}}"#)
        let plain = try Proc.run(bin, [], environment: Proc.preload(table: log.name))
        #expect(plain.stdout == "a 1 b 1 a 1 b 1\n", "\(plain)")
        let sites = log.table.events(from: 0).events.compactMap(\.site)
        #expect(sites.count == 4, "\(sites)")
        #expect(sites.allSatisfy { $0.object == object }, "\(sites)")
        // a, b, a, b: two places, each used twice
        #expect(sites[0] == sites[2] && sites[1] == sites[3] && sites[0] != sites[1], "\(sites)")
        // The tally explore uses agrees.
        #expect(log.table.callSites().sites["w"] == [sites[0]: 2, sites[1]: 2])

        // The 2nd call from b's site, whatever a does in between.
        let t = try ScratchTable()
        try t.add(#"{"id":"b2","symbol":"write","position":"instead","action":{"fail":"ENOSPC"},"when":{"site":"\#(sites[1])","nth":2}}"#)
        let r = try Proc.run(bin, [], environment: Proc.preload(table: t.name))
        #expect(r.stdout == "a 1 b 1 a 1 b -1 ENOSPC\n", "\(r)")
        let rule = try #require(t.table.rules().first { $0.id == "b2" })
        #expect(rule.matched == 2 && rule.fired == 1, "\(rule)")
        #expect(rule.conditions.contains("site \(sites[1])"), "\(rule.conditions)")
        let fired = try #require(t.table.events(from: 0).events.first)
        #expect(fired.site == sites[1])
    }

    @Test(.tags(.fast)) func aSiteMustBeObjectPlusHexOffset() throws {
        for bad in ["ledger", "/usr/bin/ledger+0x10", "ledger+16"] {
            let json = #"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"site":"\#(bad)"}}"#
            #expect(throws: AspectsError.self) { try RuleCompiler().compile(try RuleDecoder(source: "t").decode(json)) }
            do { _ = try RuleCompiler().compile(try RuleDecoder(source: "t").decode(json)) } catch let e {
                #expect("\(e)".contains("when.site") && "\(e)".contains("ledger+0x1a2b"), "\(e)")
            }
        }
    }
}
