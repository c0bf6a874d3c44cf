import Foundation
import Testing
import AspectsRules

/// The widths of the integer types are stated once, in `ABIType.bits`; what a type accepts
/// follows from its width and signedness.
@Suite(.tags(.fast)) struct IntegerWidthTests {
    /// ABIType's source names no width constant (`Int8.min`, `UInt16.max`, ...): a second
    /// statement of the widths could disagree with `bits`.
    @Test func theWidthsAreStatedOnce() throws {
        let text = try String(contentsOfFile: Paths.root + "/Sources/AspectsRules/Prototype/CSignature.swift", encoding: .utf8)
        let copies = text.matches(of: #/U?Int(8|16|32|64)\.(min|max)/#).map { String($0.0) }
        #expect(copies.isEmpty, "ABIType states widths besides `bits`: \(copies)")
    }

    /// Each integer type accepts exactly the values of the C type of its width, at both ends.
    @Test(arguments: ABIType.allCases.filter(\.isInteger))
    func acceptsTheValuesOfItsWidth(type: ABIType) {
        let (lo, hi): (Int64, Int64)
        switch type.cName {
        case "int8_t": (lo, hi) = (Int64(Int8.min), Int64(Int8.max))
        case "uint8_t": (lo, hi) = (0, Int64(UInt8.max))
        case "int16_t": (lo, hi) = (Int64(Int16.min), Int64(Int16.max))
        case "uint16_t": (lo, hi) = (0, Int64(UInt16.max))
        case "int32_t": (lo, hi) = (Int64(Int32.min), Int64(Int32.max))
        case "uint32_t": (lo, hi) = (0, Int64(UInt32.max))
        case "int64_t": (lo, hi) = (.min, .max)
        default: (lo, hi) = (0, .max) // uint64_t, as an Int64 the rule language writes
        }
        #expect(type.accepts(lo) && type.accepts(hi))
        if lo > .min { #expect(!type.accepts(lo - 1)) }
        if hi < .max { #expect(!type.accepts(hi + 1)) }
    }

    @Test(.tags(.fast)) func nonIntegersAcceptAsBefore() {
        for t in [ABIType.pointer, .string] { #expect(t.accepts(.min) && t.accepts(.max)) }
        for t in [ABIType.void, .f32, .f64, .structure] { #expect(!t.accepts(0)) }
    }
}
