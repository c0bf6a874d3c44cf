import CAspectsABI
import Testing
@testable import AspectConfig

/// The Swift view of the table layout must equal the C one (abi_asserts.c pins the same numbers).
@Suite struct LayoutTests {
    @Test func headerAndSlotSizes() {
        #expect(MemoryLayout<aspects_table_header>.size == 256)
        #expect(MemoryLayout<aspects_group_list>.size == 64)
        #expect(MemoryLayout<aspects_matcher>.size == 24)
        #expect(MemoryLayout<aspects_rule>.size == 1280)
        #expect(MemoryLayout<aspects_event>.size == 576)
    }

    /// Every field of the rule slot sits where config/rule-slot.spec says (RuleSlotLayout is
    /// generated from it; abi_asserts.c pins the same numbers for C).
    @Test func ruleOffsetsAreTheSpecs() {
        #expect(MemoryLayout<aspects_rule>.size == RuleSlotLayout.size)
        #expect(RuleSlotLayout.fields.count > 60)
        for f in RuleSlotLayout.fields {
            #expect(MemoryLayout<aspects_rule>.offset(of: f.path) == f.offset, "aspects_rule.\(f.name)")
        }
        // The ABI as it was when the spec took over (version 10): a change here is an ABI change.
        let o = { (name: String) in RuleSlotLayout.fields.first { $0.name == name }?.offset }
        #expect(o("matchers") == 136 && o("serial") == 272 && o("batch") == 368 && o("matched") == 384)
        #expect(o("result_min") == 680 && o("context_hash") == 728 && o("reserved1") == 736 && o("strings") == 768)
        #expect(ASPECTS_ABI_VERSION == 10)
    }

    @Test func headerAndEventOffsets() {
        let h = { (k: PartialKeyPath<aspects_table_header>) in MemoryLayout<aspects_table_header>.offset(of: k) }
        #expect(h(\.catalog_hash) == 24)
        #expect(h(\.armed_offset) == 56)
        #expect(h(\.generation) == 88)
        #expect(h(\.event_head) == 112)
        #expect(h(\.created_ns) == 128)
        let e = { (k: PartialKeyPath<aspects_event>) in MemoryLayout<aspects_event>.offset(of: k) }
        #expect(e(\.ret) == 56)
        #expect(e(\.rule_id) == 96)
        #expect(e(\.args) == 128)
        #expect(e(\.string) == 176)
        #expect(e(\.caller_offset) == 256)
        #expect(e(\.caller_object) == 264)
        #expect(e(\.context_hash) == 320)
        #expect(e(\.context_depth) == 328)
        #expect(e(\.context_offsets) == 336)
        #expect(e(\.context_objects) == 360)
    }

    @Test func attachmentOffsets() {
        #expect(MemoryLayout<aspects_attachment>.size == 192)
        let a = { (k: PartialKeyPath<aspects_attachment>) in MemoryLayout<aspects_attachment>.offset(of: k) }
        #expect(a(\.hierarchy) == 16)
        #expect(a(\.start_ticks) == 32)
        #expect(a(\.program) == 40)
        #expect(a(\.crash_signal) == 128)
        #expect(a(\.crash_pid) == 132)
        #expect(a(\.stub_failures) == 136)
        #expect(a(\.stub_failed_export) == 140)
        #expect(a(\.reserved) == 144)
    }

    @Test func errorCodesMirrorTheHeader() {
        for (i, code) in AspectsError.Code.allCases.enumerated() {
            #expect(code.rawValue == code.abiValue, "\(code)")
            #expect(code.rawValue == UInt32(i + 1))
        }
    }

    @Test func typesMirrorTheHeader() {
        #expect(ABIType.string.rawValue == UInt8(ASPECTS_T_STR.rawValue))
        #expect(ABIType.f64.rawValue == UInt8(ASPECTS_T_F64.rawValue))
        #expect(ABIType.allCases.count == Int(ASPECTS_T_COUNT.rawValue))
    }
}
