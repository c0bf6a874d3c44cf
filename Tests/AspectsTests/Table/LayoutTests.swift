import CAspectsABI
import Testing
import AspectsCore
import AspectsRules
@testable import AspectsTable

/// The Swift view of the table layout must equal the C one (abi_asserts.c pins the same numbers).
@Suite(.tags(.fast)) struct LayoutTests {
    @Test(.tags(.fast)) func headerAndSlotSizes() {
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

    /// The slot's arrays by index (RuleSlot.swift): what a writer stores in place a reader of a
    /// copy finds, and an index past an array's capacity is nil, never a neighbour's bytes.
    @Test func slotArraysAreBoundedByTheirCapacities() {
        let r = UnsafeMutablePointer<aspects_rule>.allocate(capacity: 1)
        defer { r.deallocate() }
        UnsafeMutableRawPointer(r).initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<aspects_rule>.size)
        let n = Int(ASPECTS_MAX_ERRNO_CHOICES)
        for i in 0..<n { r.errno_choices(at: i)?.pointee = Int32(100 + i) }
        r.arg_set_value(at: Int(ASPECTS_MAX_ARG_SETS) - 1)?.pointee = -7
        r.matchers(at: 1)?.pointee.a = 42
        #expect(r.errno_choices(at: n) == nil && r.errno_choices(at: -1) == nil)
        #expect(r.matchers(at: Int(ASPECTS_MAX_MATCHERS)) == nil)
        let copy = r.pointee
        #expect((0..<n).map { copy.errno_choices(at: $0) } == (0..<n).map { Int32(100 + $0) })
        #expect(copy.errno_choices(at: n) == nil)
        #expect(copy.arg_set_value(at: Int(ASPECTS_MAX_ARG_SETS) - 1) == -7 && copy.arg_set_value(at: Int(ASPECTS_MAX_ARG_SETS)) == nil)
        #expect(copy.matchers(at: 1)?.a == 42 && copy.matchers(at: 0)?.a == 0)
        // the bytes after the arrays are untouched: matcher_count and arg_set_count stay 0
        #expect(copy.errno_choice_count == 0 && copy.arg_set_count == 0 && copy.serial == 0)
        // an element type that does not tile the array is refused, not misread
        let wrong: Int64? = SlotArray.element(copy.errno_choices, 0, count: n)
        #expect(wrong == nil)
    }

    @Test(.tags(.fast)) func headerAndEventOffsets() {
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
        #expect(a(\.protos_applied) == 144)
        #expect(a(\.crash_caught) == 152)
        #expect(a(\.reserved) == 160)
    }

    @Test(.tags(.fast)) func errorCodesMirrorTheHeader() {
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
