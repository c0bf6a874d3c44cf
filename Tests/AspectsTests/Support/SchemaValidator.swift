import Foundation
import AspectsCore

/// The subset of JSON Schema 2020-12 that config/rule.schema.json uses: type, enum,
/// const, properties, required, additionalProperties, items, min/maxItems, minProperties, minimum,
/// maximum, minLength, pattern, oneOf, anyOf, $ref to #/$defs. Enough to check the examples
/// against the schema without a dependency.
struct SchemaValidator {
    let root: JSONNode

    func validate(_ value: JSONNode) -> [String] { validate(value, against: root, path: "$") }

    private func resolve(_ schema: JSONNode) -> JSONNode {
        guard case .string(let ref)? = schema["$ref"]?.value, ref.hasPrefix("#/$defs/") else { return schema }
        return root["$defs"]![String(ref.dropFirst("#/$defs/".count))]!
    }

    private func validate(_ v: JSONNode, against raw: JSONNode, path: String) -> [String] {
        let s = resolve(raw)
        var errors: [String] = []
        if case .array(let options)? = s["oneOf"]?.value {
            let passing = options.filter { validate(v, against: $0, path: path).isEmpty }.count
            if passing != 1 { errors.append("\(path): matches \(passing) of oneOf") }
        }
        if case .array(let options)? = s["anyOf"]?.value, !options.contains(where: { validate(v, against: $0, path: path).isEmpty }) {
            errors.append("\(path): matches none of anyOf")
        }
        if case .string(let type)? = s["type"]?.value, !Self.has(v, type: type) {
            return errors + ["\(path): not \(type)"]
        }
        if case .array(let options)? = s["enum"]?.value, !options.contains(where: { $0.value == v.value }) {
            errors.append("\(path): not one of the enum")
        }
        if let c = s["const"], c.value != v.value { errors.append("\(path): not the constant") }
        if case .object(let members) = v.value {
            let properties: [(key: String, value: JSONNode)]
            if case .object(let p)? = s["properties"]?.value { properties = p } else { properties = [] }
            for m in members {
                if let p = properties.first(where: { $0.key == m.key }) {
                    errors += validate(m.value, against: p.value, path: "\(path).\(m.key)")
                } else if s["additionalProperties"]?.value == .bool(false) {
                    errors.append("\(path): unexpected property \(m.key)")
                } else if let extra = s["additionalProperties"], case .object = extra.value {
                    errors += validate(m.value, against: extra, path: "\(path).\(m.key)")
                }
            }
            if case .array(let required)? = s["required"]?.value {
                for case .string(let r) in required.map(\.value) where !members.contains(where: { $0.key == r }) {
                    errors.append("\(path): missing \(r)")
                }
            }
            if case .number(let n)? = s["minProperties"]?.value, members.count < Int(n)! { errors.append("\(path): too few properties") }
        }
        if case .array(let items) = v.value {
            if let itemSchema = s["items"] {
                for (i, item) in items.enumerated() { errors += validate(item, against: itemSchema, path: "\(path)[\(i)]") }
            }
            if case .number(let n)? = s["minItems"]?.value, items.count < Int(n)! { errors.append("\(path): too few items") }
            if case .number(let n)? = s["maxItems"]?.value, items.count > Int(n)! { errors.append("\(path): too many items") }
        }
        if case .number(let text) = v.value, let x = Double(text) {
            if case .number(let n)? = s["minimum"]?.value, x < Double(n)! { errors.append("\(path): below minimum") }
            if case .number(let n)? = s["maximum"]?.value, x > Double(n)! { errors.append("\(path): above maximum") }
        }
        if case .string(let str) = v.value {
            if case .number(let n)? = s["minLength"]?.value, str.count < Int(n)! { errors.append("\(path): too short") }
            if case .string(let pattern)? = s["pattern"]?.value,
               str.range(of: pattern, options: .regularExpression) == nil {
                errors.append("\(path): does not match \(pattern)")
            }
        }
        return errors
    }

    static func has(_ v: JSONNode, type: String) -> Bool {
        switch (type, v.value) {
        case ("object", .object), ("array", .array), ("string", .string), ("boolean", .bool), ("null", .null): return true
        case ("number", .number): return true
        case ("integer", .number(let t)): return Int64(t) != nil || UInt64(t) != nil
        default: return false
        }
    }
}
