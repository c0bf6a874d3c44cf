import Foundation

/// A JSON value with the line and column where it starts, so that rule errors can point at
/// the exact place in the user's file. (Foundation's parsers lose positions and blur
/// booleans with numbers.)
public struct JSONNode: Sendable, Equatable {
    public indirect enum Value: Sendable, Equatable {
        case null
        case bool(Bool)
        /// The number as written, so 64-bit integers and masks stay exact.
        case number(String)
        case string(String)
        case array([JSONNode])
        /// Members in file order (duplicates are rejected by the parser).
        case object([(key: String, value: JSONNode)])

        public static func == (a: Value, b: Value) -> Bool {
            switch (a, b) {
            case (.null, .null): return true
            case (.bool(let x), .bool(let y)): return x == y
            case (.number(let x), .number(let y)): return x == y
            case (.string(let x), .string(let y)): return x == y
            case (.array(let x), .array(let y)): return x == y
            case (.object(let x), .object(let y)):
                return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
            default: return false
            }
        }
    }

    public var value: Value
    public var line: Int
    public var column: Int

    package init(value: Value, line: Int, column: Int) {
        self.value = value
        self.line = line
        self.column = column
    }

    /// A short name of the value's JSON type, for error messages.
    public var typeName: String {
        switch value {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    public subscript(key: String) -> JSONNode? {
        if case .object(let members) = value { return members.first { $0.key == key }?.value }
        return nil
    }
}

/// A strict RFC 8259 parser that reports the line and column of the first problem.
package struct JSONParser {
    package struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        package var message: String
        package var line: Int
        package var column: Int
        package var description: String { "line \(line), column \(column): \(message)" }
    }

    private let bytes: [UInt8]
    private var i = 0
    private var line = 1
    private var lineStart = 0
    private var depth = 0

    package static func parse(_ text: String) throws(Failure) -> JSONNode {
        try parseCountingWork(text).value
    }

    /// Parses, and says how many bytes the column counting visited (the test that keeps
    /// parsing linear: at most once per byte).
    package static func parseCountingWork(_ text: String) throws(Failure) -> (value: JSONNode, columnWork: Int) {
        var p = JSONParser(bytes: Array(text.utf8))
        p.skipSpace()
        let v = try p.parseValue()
        p.skipSpace()
        if p.i < p.bytes.count { throw p.failure("unexpected text after the JSON value") }
        return (v, p.columnWork)
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    /// Where the column was last counted: the parse position only moves forward, so each byte
    /// is counted once (counting from the line's start at every value made a long line —
    /// a minified rules file — quadratic).
    private var columnLine = 0, columnAt = 0, columnChars = 0, columnWork = 0

    private var column: Int {
        mutating get {
            if columnLine != line || columnAt < lineStart { columnLine = line; columnAt = lineStart; columnChars = 0 }
            let end = min(i, bytes.count)
            // Columns count characters, not bytes: every byte but a UTF-8 continuation byte.
            while columnAt < end {
                if bytes[columnAt] & 0xC0 != 0x80 { columnChars += 1 }
                columnAt += 1
                columnWork += 1
            }
            return columnChars + 1
        }
    }

    private mutating func failure(_ message: String) -> Failure { Failure(message: message, line: line, column: column) }

    private mutating func skipSpace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0D: i += 1
            case 0x0A: i += 1; line += 1; lineStart = i
            default: return
            }
        }
    }

    private mutating func parseValue() throws(Failure) -> JSONNode {
        guard i < bytes.count else { throw failure("unexpected end of input; a value was expected") }
        let (l, c) = (line, column)
        switch bytes[i] {
        case UInt8(ascii: "{"): return JSONNode(value: try parseObject(), line: l, column: c)
        case UInt8(ascii: "["): return JSONNode(value: try parseArray(), line: l, column: c)
        case UInt8(ascii: "\""): return JSONNode(value: .string(try parseString()), line: l, column: c)
        case UInt8(ascii: "t"): try literal("true"); return JSONNode(value: .bool(true), line: l, column: c)
        case UInt8(ascii: "f"): try literal("false"); return JSONNode(value: .bool(false), line: l, column: c)
        case UInt8(ascii: "n"): try literal("null"); return JSONNode(value: .null, line: l, column: c)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSONNode(value: .number(try parseNumber()), line: l, column: c)
        case UInt8(ascii: "'"): throw failure("strings are written with double quotes in JSON")
        default: throw failure("unexpected character '\(Character(Unicode.Scalar(bytes[i])))'; a value was expected")
        }
    }

    private mutating func literal(_ word: String) throws(Failure) {
        let w = Array(word.utf8)
        guard i + w.count <= bytes.count, Array(bytes[i..<i + w.count]) == w else {
            throw failure("invalid literal; did you mean \(word)?")
        }
        i += w.count
    }

    private mutating func parseObject() throws(Failure) -> JSONNode.Value {
        depth += 1
        defer { depth -= 1 }
        if depth > 64 { throw failure("nesting deeper than 64 levels") }
        i += 1
        var members: [(key: String, value: JSONNode)] = []
        var seen = Set<String>()  // a scan of `members` per key made a wide object quadratic
        skipSpace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else {
                if i < bytes.count && bytes[i] == UInt8(ascii: "}") { throw failure("trailing comma before '}'") }
                throw failure("expected a field name in double quotes")
            }
            let keyLine = line, keyColumn = column
            let key = try parseString()
            if !seen.insert(key).inserted {
                throw Failure(message: "duplicate field \"\(key)\"", line: keyLine, column: keyColumn)
            }
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw failure("expected ':' after \"\(key)\"") }
            i += 1
            skipSpace()
            members.append((key, try parseValue()))
            skipSpace()
            guard i < bytes.count else { throw failure("unexpected end of input; expected ',' or '}'") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
            throw failure("expected ',' or '}' after the value of \"\(key)\"")
        }
    }

    private mutating func parseArray() throws(Failure) -> JSONNode.Value {
        depth += 1
        defer { depth -= 1 }
        if depth > 64 { throw failure("nesting deeper than 64 levels") }
        i += 1
        var items: [JSONNode] = []
        skipSpace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
        while true {
            skipSpace()
            if i < bytes.count && bytes[i] == UInt8(ascii: "]") { throw failure("trailing comma before ']'") }
            items.append(try parseValue())
            skipSpace()
            guard i < bytes.count else { throw failure("unexpected end of input; expected ',' or ']'") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            throw failure("expected ',' or ']' in the array")
        }
    }

    private mutating func parseString() throws(Failure) -> String {
        i += 1
        var out: [UInt8] = []
        while true {
            guard i < bytes.count else { throw failure("unterminated string") }
            let b = bytes[i]
            if b == UInt8(ascii: "\"") { i += 1; break }
            if b < 0x20 { throw failure(b == 0x0A ? "unterminated string (a newline inside a string must be written \\n)" : "control character in a string") }
            if b == UInt8(ascii: "\\") {
                i += 1
                guard i < bytes.count else { throw failure("unterminated string") }
                switch bytes[i] {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard i + 2 < bytes.count, bytes[i + 1] == UInt8(ascii: "\\"), bytes[i + 2] == UInt8(ascii: "u") else {
                            throw failure("unpaired surrogate in \\u escape")
                        }
                        i += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw failure("unpaired surrogate in \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let u = Unicode.Scalar(scalar) else { throw failure("invalid \\u escape") }
                    out.append(contentsOf: Array(String(Character(u)).utf8))
                default: throw failure("invalid escape '\\\(Character(Unicode.Scalar(bytes[i])))'")
                }
                i += 1
                continue
            }
            out.append(b)
            i += 1
        }
        guard let s = String(validating: out, as: UTF8.self) else { throw failure("invalid UTF-8 in a string") }
        return s
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard i + 4 < bytes.count else { throw failure("truncated \\u escape") }
        var v: UInt32 = 0
        for k in 1...4 {
            let b = bytes[i + k]
            let d: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw failure("invalid hex digit in \\u escape")
            }
            v = v * 16 + d
        }
        i += 4
        return v
    }

    private mutating func parseNumber() throws(Failure) -> String {
        let start = i
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) else { throw failure("invalid number") }
        if bytes[i] == UInt8(ascii: "0"), i + 1 < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i + 1]) {
            throw failure("numbers cannot have leading zeros (write hexadecimal masks as strings: \"0x1ff\")")
        }
        func digits() { while i < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) { i += 1 } }
        digits()
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard i < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) else { throw failure("invalid number: a digit must follow '.'") }
            digits()
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard i < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) else { throw failure("invalid number exponent") }
            digits()
        }
        return String(decoding: bytes[start..<i], as: UTF8.self)
    }
}

extension JSONNode.Value {
    /// JSON text: compact on one line (for JSON lines output) or indented by two spaces.
    package func rendered(pretty: Bool = false, indent: Int = 0) -> String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return n
        case .string(let s): return Self.quote(s)
        case .array(let items):
            if items.isEmpty { return "[]" }
            if !pretty { return "[" + items.map { $0.value.rendered() }.joined(separator: ",") + "]" }
            let pad = String(repeating: "  ", count: indent + 1)
            return "[\n" + items.map { pad + $0.value.rendered(pretty: true, indent: indent + 1) }.joined(separator: ",\n")
                + "\n" + String(repeating: "  ", count: indent) + "]"
        case .object(let members):
            if members.isEmpty { return "{}" }
            if !pretty { return "{" + members.map { Self.quote($0.key) + ":" + $0.value.value.rendered() }.joined(separator: ",") + "}" }
            let pad = String(repeating: "  ", count: indent + 1)
            return "{\n" + members.map { pad + Self.quote($0.key) + ": " + $0.value.value.rendered(pretty: true, indent: indent + 1) }
                .joined(separator: ",\n") + "\n" + String(repeating: "  ", count: indent) + "}"
        }
    }

    package static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 { out += String(format: "\\u%04x", u.value) } else { out.unicodeScalars.append(u) }
            }
        }
        return out + "\""
    }
}

/// Building JSON output without Foundation's unordered dictionaries.
package enum JSONOut {
    package static func object(_ members: [(String, JSONNode.Value?)]) -> JSONNode.Value {
        .object(members.compactMap { k, v in v.map { (key: k, value: JSONNode(value: $0, line: 0, column: 0)) } })
    }
    package static func array(_ items: [JSONNode.Value]) -> JSONNode.Value {
        .array(items.map { JSONNode(value: $0, line: 0, column: 0) })
    }
    package static func int<T: BinaryInteger>(_ v: T) -> JSONNode.Value { .number(String(v)) }
    package static func string(_ s: String) -> JSONNode.Value { .string(s) }
    package static func bool(_ b: Bool) -> JSONNode.Value { .bool(b) }
}
