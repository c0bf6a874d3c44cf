/// config/rule-slot.spec, parsed: the rule slot's capacities, its fields at their offsets and
/// what each means. The spec's own top says what a line is; this parser refuses a field whose
/// offset is not the one C gives it, so the spec's offsets are the slot's real ones.
package struct RuleSlotSpec: Sendable, Equatable {
    package struct Failure: Error, Equatable, CustomStringConvertible {
        package var line: Int
        package var message: String
        package var description: String { "config/rule-slot.spec line \(line): \(message)" }
    }

    /// A capacity: `#define name valueu`, and the numbers of rule.schema.json that state it.
    package struct Limit: Sendable, Equatable {
        package var name: String
        package var value: Int
        package var schemaPointers: [String]
        package var text: [String]
    }

    /// A struct type that fields may have, declared in aspects_abi.h.
    package struct StructType: Sendable, Equatable {
        package var name: String
        package var size: Int
        package var alignment: Int
    }

    package struct Field: Sendable, Equatable {
        package var offset: Int
        package var type: String
        package var name: String
        /// The array length as written (a number or a limit's name); nil: not an array.
        package var count: String?
        /// The CompiledRule property stored in the field as it is.
        package var swift: String?
        package var text: [String]
        /// A `note` to print before the field, a `section` that starts at it.
        package var note: [String] = []
        package var section: Section?
        package var size: Int
        /// Its line in the spec, for errors about it.
        package var line = 0
    }

    package struct Section: Sendable, Equatable {
        package var offset: Int
        package var text: String
    }

    package var name = ""
    package var size = 0
    /// The `slot` line, for errors about the slot as a whole.
    var slotLine = 1
    package var text: [String] = []
    package var types: [StructType] = []
    package var limits: [Limit] = []
    package var fields: [Field] = []

    /// The sections in order, each with where it ends: the slot's byte map.
    package var byteMap: [(start: Int, end: Int, text: String)] {
        let sections = fields.compactMap(\.section)
        return sections.enumerated().map { i, s in (s.offset, i + 1 < sections.count ? sections[i + 1].offset : size, s.text) }
    }

    /// Size and alignment of the C scalar types a field may have (LP64).
    static let scalars: [String: Int] = ["char": 1, "uint8_t": 1, "int8_t": 1, "uint16_t": 2, "int16_t": 2,
                                         "uint32_t": 4, "int32_t": 4, "uint64_t": 8, "int64_t": 8]

    package init(parsing spec: String) throws(Failure) {
        // Items in order: what a continuation line continues is the last one.
        enum Last { case none, slot, limit, note, field }
        var last = Last.none
        var note: [String] = []
        var section: Section?
        var end = 0
        for (n, raw) in spec.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = n + 1
            let line = String(raw)
            if line.hasPrefix("#") || line.allSatisfy(\.isWhitespace) { continue }
            if line.first!.isWhitespace {
                let more = line.trimmingLeadingWhitespace
                switch last {
                case .slot: text.append(more)
                case .limit: limits[limits.count - 1].text.append(more)
                case .note: note.append(more)
                case .field: fields[fields.count - 1].text.append(more)
                case .none: throw Failure(line: number, message: "a continuation line (it starts with white space) with nothing above to continue")
                }
                continue
            }
            let (head, words) = Self.split(line)
            func fail(_ message: String) -> Failure { Failure(line: number, message: message) }
            func integer(_ word: String, _ what: String) throws(Failure) -> Int {
                guard let v = Int(word), v >= 0 else { throw fail("\(what) '\(word)' is not a number") }
                return v
            }
            switch words.first {
            case "slot":
                guard words.count == 3 else { throw fail("write `slot NAME SIZE : TEXT`") }
                name = words[1]
                size = try integer(words[2], "the slot's size")
                slotLine = number
                text = head.map { [$0] } ?? []
                last = .slot
            case "type":
                guard words.count == 4 else { throw fail("write `type NAME SIZE ALIGN`") }
                types.append(StructType(name: words[1], size: try integer(words[2], "the size"), alignment: try integer(words[3], "the alignment")))
                last = .none
            case "limit":
                guard words.count >= 3, words.count == 3 || (words[3] == "schema" && words.count > 4) else {
                    throw fail("write `limit NAME VALUE [schema POINTER ...] : TEXT`")
                }
                limits.append(Limit(name: words[1], value: try integer(words[2], "the value"),
                                    schemaPointers: Array(words.dropFirst(4)), text: head.map { [$0] } ?? []))
                last = .limit
            case "section":
                guard words.count == 2, let text = head else { throw fail("write `section OFFSET : TEXT`") }
                section = Section(offset: try integer(words[1], "the section's offset"), text: text)
                last = .none
            case "note":
                guard words.count == 1, let text = head else { throw fail("write `note : TEXT`") }
                note = [text]
                last = .note
            default:
                var field = try Self.field(words, text: head, fail: fail)
                field.size = try self.size(of: field, fail: fail)
                let align = try alignment(of: field.type, fail: fail)
                let natural = (end + align - 1) / align * align
                guard field.offset == natural else {
                    let after = fields.last.map { "`\($0.name)` ends at \(end)" } ?? "the slot starts at 0"
                    throw fail("C puts `\(field.name)` at offset \(natural) (\(after), aligned to \(align)), not \(field.offset): write \(natural), or a padding field before it")
                }
                if let s = section {
                    guard s.offset == field.offset else { throw fail("the section above starts at \(s.offset), but its first field `\(field.name)` is at \(field.offset)") }
                    field.section = s
                    section = nil
                }
                field.note = note
                field.line = number
                note = []
                end = field.offset + field.size
                fields.append(field)
                last = .field
            }
        }
        guard !name.isEmpty else { throw Failure(line: 1, message: "no `slot NAME SIZE : TITLE` line") }
        guard end == size else {
            throw Failure(line: slotLine, message: "the fields end at \(end), but the slot is \(size) bytes: make them add up (grow or shrink `reserved1`)")
        }
        if let first = fields.first, first.section == nil {
            throw Failure(line: first.line, message: "the first field needs a `section 0 : TEXT` line above it (the byte map starts there)")
        }
        var seen = Set<String>()
        for f in fields where !seen.insert(f.name).inserted { throw Failure(line: f.line, message: "a second field called `\(f.name)`: give it a name of its own") }
    }

    /// A line's words before ` : `, and the text after it.
    static func split(_ line: String) -> (text: String?, words: [String]) {
        guard let colon = line.range(of: " :") else { return (nil, line.split(separator: " ").map(String.init)) }
        var text = String(line[colon.upperBound...])
        if text.hasPrefix(" ") { text.removeFirst() }
        return (text, line[..<colon.lowerBound].split(separator: " ").map(String.init))
    }

    /// `OFFSET TYPE NAME[COUNT] [<- SWIFT]`.
    static func field(_ words: [String], text: String?, fail: (String) -> Failure) throws(Failure) -> Field {
        guard words.count == 3 || (words.count == 5 && words[3] == "<-"), let offset = Int(words[0]) else {
            throw fail("a field is `OFFSET TYPE NAME[COUNT] [<- SWIFT] : TEXT`, not `\(words.joined(separator: " "))`")
        }
        var name = words[2], count: String?
        if let open = name.firstIndex(of: "[") {
            guard name.hasSuffix("]") else { throw fail("`\(name)`: an array is NAME[COUNT]") }
            count = String(name[name.index(after: open)..<name.index(before: name.endIndex)])
            name = String(name[..<open])
        }
        let swift = words.count == 5 ? words[4] : nil
        if swift != nil && (count != nil || scalars[words[1]] == nil || words[1] == "char") {
            throw fail("`\(name)`: only a scalar integer field is stored from a CompiledRule property as it is")
        }
        return Field(offset: offset, type: words[1], name: name, count: count, swift: swift, text: text.map { [$0] } ?? [], size: 0)
    }

    func alignment(of type: String, fail: (String) -> Failure) throws(Failure) -> Int {
        if let s = Self.scalars[type] { return s }
        if let t = types.first(where: { $0.name == type }) { return t.alignment }
        throw fail("unknown type `\(type)`: a C integer type, char, or a `type` line's struct")
    }

    func size(of field: Field, fail: (String) -> Failure) throws(Failure) -> Int {
        let one = Self.scalars[field.type] ?? types.first { $0.name == field.type }?.size
        guard let one else { _ = try alignment(of: field.type, fail: fail); return 0 }
        guard let count = field.count else { return one }
        if let n = Int(count) { return one * n }
        guard let limit = limits.first(where: { $0.name == count }) else {
            throw fail("`\(field.name)[\(count)]`: \(count) is neither a number nor a `limit` above")
        }
        return one * limit.value
    }
}

extension String {
    var trimmingLeadingWhitespace: String { String(drop { $0.isWhitespace }) }
}
