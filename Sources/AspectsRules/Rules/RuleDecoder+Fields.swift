import CAspectsABI
import Foundation
import AspectsCore

/// The field readers every part of a rule uses: one type check and one message each.
extension RuleDecoder {
    func checkFields(_ members: [(key: String, value: JSONNode)], allowed: [String], path: String?, rule: String, what: String) throws(AspectsError) {
        for m in members where !allowed.contains(m.key) {
            let field = path.map { "\($0).\(m.key)" } ?? m.key
            let close = allowed.filter { ErrorNames.editDistance($0.lowercased(), m.key.lowercased()) <= 2 }
            var fix = "the fields of a \(what) are \(allowed.map { "\"\($0)\"" }.joined(separator: ", "))"
            if let best = close.first { fix = "did you mean \"\(best)\"?" }
            // A field that belongs one level up or down is a common slip: say where it goes.
            if path == nil && Self.actionFields.contains(m.key) { fix = "\"\(m.key)\" belongs inside \"action\"" }
            if path == nil && Self.whenFields.contains(m.key) { fix = "\"\(m.key)\" belongs inside \"when\"" }
            throw AspectsError(.unknownField, rule: rule, field: field, location: loc(m.value), "unknown field \"\(m.key)\"", fix: fix)
        }
    }

    func string(_ node: JSONNode, _ key: String, path: String, rule: String) throws(AspectsError) -> String? {
        guard let v = node[key] else { return nil }
        guard case .string(let s) = v.value else {
            throw AspectsError(.wrongType, rule: rule, field: path, location: loc(v), "\"\(key)\" must be a string, not \(v.typeName)")
        }
        return s
    }

    func bool(_ node: JSONNode, _ key: String, path: String, rule: String) throws(AspectsError) -> Bool? {
        guard let v = node[key] else { return nil }
        guard case .bool(let b) = v.value else {
            throw AspectsError(.wrongType, rule: rule, field: path, location: loc(v), "\"\(key)\" must be true or false, not \(v.typeName)")
        }
        return b
    }

    /// A result as written: a JSON number (any: the return type decides), or true/false.
    func resultLiteral(_ v: JSONNode, path: String, rule: String) throws(AspectsError) -> String {
        switch v.value {
        case .number(let text): return text
        case .bool(let b): return b ? "1" : "0"
        default:
            throw AspectsError(.wrongType, rule: rule, field: path, location: loc(v), "expected a number, not \(v.typeName)",
                               fix: "write the value the caller gets, e.g. -1, 0, 42.5")
        }
    }

    /// The 64 bits of an integer literal (unsigned ones above Int64.max as their bits).
    static func integerBits(_ text: String) -> Int64? {
        if let i = Int64(text) { return i }
        if let u = UInt64(text) { return Int64(bitPattern: u) }
        return nil
    }

    /// Why a whole number written in decimal fits no 64-bit integer ("is below the smallest
    /// 64-bit integer, …"), or nil when `text` is not a whole number or fits: out of range is a
    /// different mistake from "not an integer" and gets its own words.
    static func outOfRange(_ text: String) -> String? {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), Int64(text) == nil, UInt64(text) == nil else { return nil }
        return text.hasPrefix("-") ? "is below the smallest 64-bit integer, \(Int64.min)" : "is above the largest 64-bit integer, \(UInt64.max)"
    }

    /// A JSON integer that fits 64 bits (signed, or unsigned written as such: kept as bits).
    func integer(_ v: JSONNode, path: String, rule: String) throws(AspectsError) -> Int64 {
        guard case .number(let text) = v.value else {
            throw AspectsError(.wrongType, rule: rule, field: path, location: loc(v), "expected an integer, not \(v.typeName)")
        }
        if let i = Int64(text) { return i }
        if let u = UInt64(text) { return Int64(bitPattern: u) }
        throw AspectsError(.invalidValue, rule: rule, field: path, location: loc(v), "\(text) \(Self.outOfRange(text) ?? "is not a 64-bit integer")")
    }

    /// A matcher's integer: a number, a string with one ("0x40", "0640"), or flag names
    /// ("O_CREAT|O_EXCL") for the catalog to resolve.
    func matchValue(_ v: JSONNode, path: String, rule: String) throws(AspectsError) -> ArgMatcher.Value {
        if case .string(let s) = v.value, let first = s.trimmingCharacters(in: .whitespaces).first, first.isLetter || first == "_" {
            let names = s.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard names.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } }) else {
                throw AspectsError(.invalidValue, rule: rule, field: path, location: loc(v), "\"\(s)\" is not a flag list", fix: "write flag names joined by '|', e.g. \"O_CREAT|O_EXCL\"")
            }
            return .flags(names)
        }
        return .number(UInt64(bitPattern: try integerOrHex(v, path: path, rule: rule)))
    }

    /// An integer, or a string with a hexadecimal/octal number ("0x1ff", "0640") for masks and flags.
    func integerOrHex(_ v: JSONNode, path: String, rule: String) throws(AspectsError) -> Int64 {
        if case .string(let s) = v.value {
            let t = s.lowercased()
            var parsed: UInt64?
            if t.hasPrefix("0x") { parsed = UInt64(t.dropFirst(2), radix: 16) }
            else if t.hasPrefix("0") && t.count > 1 { parsed = UInt64(t.dropFirst(), radix: 8) }
            else if let i = Int64(t) { return i }
            guard let p = parsed else {
                throw AspectsError(.invalidValue, rule: rule, field: path, location: loc(v), "\"\(s)\" is not a number",
                                   fix: "write a decimal number, or a string with a hexadecimal (\"0x40\") or octal (\"0640\") one")
            }
            return Int64(bitPattern: p)
        }
        return try integer(v, path: path, rule: rule)
    }

    func positive(_ node: JSONNode, _ key: String, rule: String) throws(AspectsError) -> UInt64? {
        guard let v = node[key] else { return nil }
        if case .number(let text) = v.value, let u = UInt64(text), u > UInt64(Int64.max) {
            throw AspectsError(.invalidValue, rule: rule, field: "when.\(key)", location: loc(v),
                               "\"\(key)\": \(text) is too large: calls are counted up to \(Int64.max)")
        }
        let i = try integer(v, path: "when.\(key)", rule: rule)
        guard i >= 1 else {
            throw AspectsError(.invalidValue, rule: rule, field: "when.\(key)", location: loc(v), "\"\(key)\" must be 1 or more (calls are counted from 1)")
        }
        return UInt64(i)
    }

    func natural(_ node: JSONNode, _ key: String, rule: String) throws(AspectsError) -> UInt64? {
        guard let v = node[key] else { return nil }
        guard case .number(let text) = v.value, let u = UInt64(text) else {
            throw AspectsError(.invalidValue, rule: rule, field: "when.\(key)", location: loc(v), "\"\(key)\" must be a whole number of 0 or more")
        }
        return u
    }

    /// "50ms", "2s", "1.5s", "250us", "100ns", "1m". Bare numbers are refused: units matter.
    func duration(_ v: JSONNode, path: String, rule: String) throws(AspectsError) -> UInt64 {
        guard case .string(let s) = v.value else {
            throw AspectsError(.wrongType, rule: rule, field: path, location: loc(v), "a duration is a string with a unit, not \(v.typeName)",
                               fix: "write e.g. \"200ms\", \"2s\" or \"150us\"")
        }
        guard let ns = Self.parseDuration(s) else {
            throw AspectsError(.invalidValue, rule: rule, field: path, location: loc(v), "\"\(s)\" is not a duration",
                               fix: "write a number and a unit: ns, us, ms, s or m (e.g. \"200ms\")")
        }
        guard ns <= 3_600_000_000_000 else {
            throw AspectsError(.invalidValue, rule: rule, field: path, location: loc(v), "\"\(s)\" is longer than an hour", fix: "use a delay of at most \"60m\"")
        }
        return ns
    }

    package static func parseDuration(_ s: String) -> UInt64? {
        let units: [(String, Double)] = [("ns", 1), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9)]
        for (unit, scale) in units where s.hasSuffix(unit) {
            let number = s.dropLast(unit.count).trimmingCharacters(in: .whitespaces)
            guard !number.isEmpty, number.allSatisfy({ $0.isNumber || $0 == "." }), let v = Double(number), v.isFinite, v >= 0 else { return nil }
            let ns = (v * scale).rounded()
            // Too long for 64 bits of nanoseconds is still a duration: the caller's limit says
            // "longer than an hour" rather than "not a duration".
            return ns < 1.8e19 ? UInt64(ns) : UInt64.max
        }
        return nil
    }
}
