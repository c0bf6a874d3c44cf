import AspectsCore
import Foundation

/// aspects-rules(5): every field of config/rule.schema.json — the one definition of the
/// fields — with its type from the schema and its meaning from the schema's description and
/// docs/man/aspects-rules.fields, in the hand-written frame of docs/man/aspects-rules.5.in.
struct RulesPage {
    /// One field: where it is (the $defs object it belongs to: rule, action, when; or the
    /// document around the rules) and its path inside that object (`args[].glob`).
    struct Field: Equatable {
        var group: String
        var key: String
        var type: String
        var schemaText: String?
    }

    var fields: [Field]
    var texts: FieldTexts

    /// `groups`: the $defs whose fields get a list of their own (the template's markers); the
    /// fields outside them belong to "document".
    static func fields(schema text: String, groups: Set<String>) throws -> [Field] {
        let root: JSONNode
        do { root = try JSONParser.parse(text) } catch { throw ManPageError("config/rule.schema.json: \(error)") }
        var walker = SchemaWalker(defs: root["$defs"], groups: groups)
        walker.walk(root, group: "document", prefix: "")
        return walker.fields
    }

    /// A list per group, each field with its type and text; fails on a field without text
    /// and on a text for a field the schema does not have.
    func parts(groups: [String]) throws -> [String: [String]] {
        for entry in texts.entries where !fields.contains(where: { $0.group == entry.group && $0.key == entry.key }) {
            let known = fields.filter { $0.group == entry.group }.map(\.key).joined(separator: ", ")
            throw ManPageError("\(FieldTexts.path):\(entry.line): [\(entry.group)] \(entry.key) is not a field of config/rule.schema.json there (its fields: \(known)); rename or remove the entry")
        }
        var parts: [String: [String]] = [:]
        for g in groups { parts["FIELDS " + g] = [".Bl -tag -width Ds"] }
        for f in fields {
            let own = texts.entries.first { $0.group == f.group && $0.key == f.key && !$0.text.isEmpty }?.text
            guard f.schemaText != nil || own != nil else {
                throw ManPageError("\(FieldTexts.path): the field \(f.key) of config/rule.schema.json (\(f.group)) has no text; write what it means under [\(f.group)]")
            }
            var item = [".It Cm " + Mdoc.arg(f.key), Mdoc.text("(" + f.type + ")")]
            if let s = f.schemaText { item += Mdoc.prose(Self.sentence(s)) }
            if let own { item += Mdoc.prose(own) }
            parts["FIELDS " + f.group, default: [".Bl -tag -width Ds"]] += item
        }
        for g in parts.keys { parts[g]!.append(".El") }
        return parts
    }
}

extension RulesPage {
    /// The schema's descriptions are phrases; here another sentence may follow.
    static func sentence(_ text: String) -> String {
        guard let last = text.last, !".!?:".contains(last) else { return text }
        return text + "."
    }
}

/// The fields of a JSON Schema, in the schema's order, each with a type read from it.
private struct SchemaWalker {
    let defs: JSONNode?
    let groups: Set<String>
    var fields: [RulesPage.Field] = []
    var visited: Set<String> = []

    init(defs: JSONNode?, groups: Set<String>) {
        self.defs = defs
        self.groups = groups
    }

    mutating func walk(_ node: JSONNode, group: String, prefix: String) {
        if let (name, def) = resolve(node) {
            if groups.contains(name) {
                if visited.insert(name).inserted { walk(def, group: name, prefix: "") }
            } else {
                walk(def, group: group, prefix: prefix)
            }
            return
        }
        for key in ["oneOf", "anyOf", "allOf"] {
            if case .array(let alternatives)? = node[key]?.value { for a in alternatives { walk(a, group: group, prefix: prefix) } }
        }
        if case .object(let properties)? = node["properties"]?.value {
            for (key, value) in properties {
                let path = prefix + key
                if !fields.contains(where: { $0.group == group && $0.key == path }) {
                    fields.append(.init(group: group, key: path, type: type(of: value), schemaText: string(value["description"])))
                }
                walk(value, group: group, prefix: path + ".")
            }
        }
        if let items = node["items"], case .object = items.value {
            walk(items, group: group, prefix: prefix.hasSuffix(".") ? String(prefix.dropLast()) + "[]." : prefix)
        }
    }

    private func resolve(_ node: JSONNode) -> (String, JSONNode)? {
        guard let ref = string(node["$ref"]), ref.hasPrefix("#/$defs/") else { return nil }
        let name = String(ref.dropFirst("#/$defs/".count))
        return defs?[name].map { (name, $0) }
    }

    private func string(_ node: JSONNode?) -> String? {
        if case .string(let s)? = node?.value { return s }
        return nil
    }

    private func number(_ node: JSONNode?) -> String? {
        if case .number(let n)? = node?.value { return n }
        return nil
    }

    /// "integer, at least 1", "one of before, instead, after", "string or list of strings (1 to 16)".
    func type(of node: JSONNode) -> String {
        if let (name, def) = resolve(node) { return groups.contains(name) ? name + " object" : type(of: def) }
        if case .array(let values)? = node["enum"]?.value {
            return "one of " + values.map { v -> String in
                if case .string(let s) = v.value { return s }
                return v.value.rendered()
            }.joined(separator: ", ")
        }
        switch string(node["type"]) {
        case "integer"?: return "integer" + range(node)
        case "number"?: return "number" + range(node)
        case "boolean"?: return "boolean"
        case "string"?: return "string"
        case "object"?: return "object"
        case "array"?:
            let item = node["items"].map(type(of:)) ?? "value"
            let simple = !item.contains(" ") || item.hasSuffix(" object")
            return "list of " + count(node) + (simple ? item + "s" : "(" + item + ")")
        default: break
        }
        for key in ["oneOf", "anyOf"] {
            if case .array(let alternatives)? = node[key]?.value {
                var seen: [String] = []
                for a in alternatives { let t = type(of: a); if !seen.contains(t) { seen.append(t) } }
                return seen.count < 2 ? seen.joined() : seen.dropLast().joined(separator: ", ") + " or " + seen.last!
            }
        }
        return "any value"
    }

    private func range(_ node: JSONNode) -> String {
        switch (number(node["minimum"]), number(node["maximum"])) {
        case let (lo?, hi?): return " from \(lo) to \(hi)"
        case let (lo?, nil): return " from \(lo)"
        case let (nil, hi?): return " up to \(hi)"
        default: return ""
        }
    }

    /// "1 to 16 ", "at most 4 ": how many items a list has, before what they are.
    private func count(_ node: JSONNode) -> String {
        switch (number(node["minItems"]), number(node["maxItems"])) {
        case let (lo?, hi?): return "\(lo) to \(hi) "
        case let (nil, hi?): return "at most \(hi) "
        case let (lo?, nil): return "at least \(lo) "
        default: return ""
        }
    }
}

/// docs/man/aspects-rules.fields: what each field means, by group. `[group]` starts a group; a
/// line at the margin names a field (its path in the group); the lines indented under it by
/// four spaces are its text (blank lines separate paragraphs, further indentation is an
/// example shown as it is). Lines starting with # are comments of the file.
struct FieldTexts {
    static let path = ManPages.directory + "/aspects-rules.fields"

    struct Entry {
        var group: String
        var key: String
        var line: Int
        var text: String
    }

    var entries: [Entry] = []

    init(_ source: String) throws {
        var group: String?
        for (i, raw) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw)
            if line.hasPrefix("#") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") { group = String(line.dropFirst().dropLast()); continue }
            if line.hasPrefix("    ") || line.trimmingCharacters(in: .whitespaces).isEmpty {
                guard !entries.isEmpty else {
                    if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
                    throw ManPageError("\(Self.path):\(i + 1): text before any field; name the field at the margin first")
                }
                entries[entries.count - 1].text += (entries[entries.count - 1].text.isEmpty ? "" : "\n") + String(line.dropFirst(min(4, line.count)))
                continue
            }
            guard let group else { throw ManPageError("\(Self.path):\(i + 1): field \(line) before any [group] line") }
            if entries.contains(where: { $0.group == group && $0.key == line }) {
                throw ManPageError("\(Self.path):\(i + 1): [\(group)] \(line) is described twice; keep one")
            }
            entries.append(Entry(group: group, key: line, line: i + 1, text: ""))
        }
        for i in entries.indices { entries[i].text = entries[i].text.trimmingCharacters(in: .newlines) }
    }
}
