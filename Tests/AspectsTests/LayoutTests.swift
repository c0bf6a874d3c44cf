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

    @Test func ruleOffsets() {
        let o = { (k: PartialKeyPath<aspects_rule>) in MemoryLayout<aspects_rule>.offset(of: k) }
        #expect(o(\.seq) == 0)
        #expect(o(\.state) == 4)
        #expect(o(\.group) == 8)
        #expect(o(\.position) == 12)
        #expect(o(\.id) == 16)
        #expect(o(\.actions) == 48)
        #expect(o(\.errno_value) == 52)
        #expect(o(\.return_value) == 56)
        #expect(o(\.delay_ns) == 64)
        #expect(o(\.nth) == 80)
        #expect(o(\.times) == 104)
        #expect(o(\.matchers) == 136)
        #expect(o(\.arg_set_value) == 240)
        #expect(o(\.serial) == 272)
        #expect(o(\.named_export) == 304)
        #expect(o(\.site_off) == 308)
        #expect(o(\.site_len) == 310)
        #expect(o(\.batch) == 368)
        #expect(o(\.site_offset) == 376)
        #expect(o(\.matched) == 384)
        #expect(o(\.fired) == 392)
        #expect(o(\.table_calls) == 400)
        #expect(o(\.claim) == 416)
        #expect(o(\.result_min) == 680)
        #expect(o(\.result_checks) == 700)
        #expect(o(\.result_arg) == 704)
        #expect(o(\.call_off) == 708)
        #expect(o(\.call_fn_off) == 712)
        #expect(o(\.data_buf) == 716)
        #expect(o(\.data_count) == 717)
        #expect(o(\.data_size) == 718)
        #expect(o(\.corrupt_bits) == 720)
        #expect(o(\.context_depth) == 724)
        #expect(o(\.context_hash) == 728)
        #expect(o(\.reserved1) == 736)
        #expect(o(\.strings) == 768)
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
        #expect(a(\.protos_applied) == 144)
        #expect(a(\.reserved) == 152)
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
