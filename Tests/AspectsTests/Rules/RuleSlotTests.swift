import CAspectsABI
import Foundation
import Testing
import AspectsCore
@testable import AspectsTable

/// A rule written into a slot (AdviceTable.fill: the spec's `<-` fields, then the arrays by
/// index) reads back as the same rule (TableSnapshot.describe), every array element in place.
@Suite(.tags(.fast)) struct RuleSlotTests {
    @Test func everyArrayAndCopiedFieldReadsBack() throws {
        let t = try ScratchTable()
        defer { try? FileManager.default.removeItem(atPath: t.directory) }
        try t.add(#"""
        [{"id": "slot", "symbol": "read", "position": "instead", "action": {"fail": ["EIO", "EINTR", "EAGAIN"]},
          "when": {"first": 3, "every": 2, "times": 5, "seed": 11, "args": [{"arg": 0, "eq": 3}, {"arg": 2, "min": 1, "max": 64}]}},
         {"id": "args", "symbol": "write", "position": "before", "action": {"args": [{"arg": 2, "value": 1}, {"arg": 0, "value": -1}]}}]
        """#)
        let rules = t.table.rules()
        let slot = try #require(rules.first { $0.id == "slot" })
        #expect(slot.actions == ["fail with one of EIO EINTR EAGAIN (seed 11)"], "\(slot.actions)")
        #expect(slot.conditions.prefix(4) == ["first 3", "every 2", "times 5", "arg 0 (fd) == 3"], "\(slot.conditions)")
        #expect(slot.conditions.contains("1 <= arg 2 (count) <= 64"), "\(slot.conditions)")
        let args = try #require(rules.first { $0.id == "args" })
        #expect(args.actions == ["set arg 2 = 1", "set arg 0 = -1"], "\(args.actions)")
        // the raw slot: the copied fields and the counts beside the arrays
        let r = t.table.rule(slot.slot).pointee
        #expect(r.after == 2 && r.every == 2 && r.times == 5 && r.errno_choice_count == 3 && r.matcher_count == 2)
        #expect(r.errno_choices(at: 2) == ErrorNames.errno("EAGAIN") && r.errno_choices(at: 3) == 0)
    }
}
