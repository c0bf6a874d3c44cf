import CAspectsABI
import Foundation
import AspectsCore

/// A rule's "action", part by part, and the advice function a `call` names.
extension RuleDecoder {
    /// The parts in this order, and the first problem found is the one told.
    func decodeAction(_ node: JSONNode, rule: String) throws(AspectsError) -> Action {
        guard case .object(let members) = node.value else {
            throw AspectsError(.wrongType, rule: rule, field: "action", location: loc(node), "\"action\" must be an object, not \(node.typeName)",
                               fix: "write e.g. {\"fail\": \"ENOSPC\"}")
        }
        try checkFields(members, allowed: Self.actionFields, path: "action", rule: rule, what: "action")
        var a = Action()
        if let f = node["fail"] { a.fail = try failChoice(f, rule: rule) }
        if let r = node["return"] { try returned(r, into: &a, rule: rule) }
        a.errno = try string(node, "errno", path: "action.errno", rule: rule)
        if let d = node["delay"] { a.delayNanoseconds = try duration(d, path: "action.delay", rule: rule) }
        if let s = node["signal"] { a.signal = try signal(s, rule: rule) }
        a.log = try bool(node, "log", path: "action.log", rule: rule) ?? false
        if let list = node["args"] { a.args = try argSettings(list, rule: rule) }
        if let c = node["call"] { a.call = try adviceCall(c, rule: rule) }
        if let c = node["corrupt"] { a.corrupt = try corruption(c, rule: rule) }
        a.short = try bool(node, "short", path: "action.short", rule: rule) ?? false
        a.recordContext = try bool(node, "context", path: "action.context", rule: rule) ?? false
        if a.isEmpty {
            throw AspectsError(.invalidValue, rule: rule, field: "action", location: loc(node), "the action does nothing",
                               fix: "give at least one of \(Self.actionFields.map { "\"\($0)\"" }.joined(separator: ", "))")
        }
        return a
    }

    /// "fail": true (the catalog's default error), false (no failure), an error name or a list
    /// of them to choose from.
    func failChoice(_ f: JSONNode, rule: String) throws(AspectsError) -> Action.Fail? {
        switch f.value {
        case .bool(true): return .catalogDefault
        case .bool(false): return nil
        case .string(let name): return .named(name)
        case .array(let items):
            var names: [String] = []
            for item in items {
                guard case .string(let n) = item.value else {
                    throw AspectsError(.wrongType, rule: rule, field: "action.fail", location: loc(item), "a list of errors holds error names, not \(item.typeName)")
                }
                names.append(n)
            }
            guard !names.isEmpty, names.count <= Int(ASPECTS_MAX_ERRNO_CHOICES) else {
                throw AspectsError(.invalidValue, rule: rule, field: "action.fail", location: loc(f), "a list of errors holds 1 to \(ASPECTS_MAX_ERRNO_CHOICES) names")
            }
            return .oneOf(names)
        default:
            throw AspectsError(.wrongType, rule: rule, field: "action.fail", location: loc(f), "\"fail\" must be true, an error name or a list of them, not \(f.typeName)",
                               fix: "write \"fail\": true (the catalog's default error), \"fail\": \"ENOSPC\" or \"fail\": [\"EIO\", \"ENOSPC\"]")
        }
    }

    /// "return": one value, or a struct's fields in order (an array) or by name (an object).
    func returned(_ r: JSONNode, into a: inout Action, rule: String) throws(AspectsError) {
        if case .array(let items) = r.value {
            // a struct's fields, in order
            a.returnFields = try items.enumerated().map { (i, item) throws(AspectsError) -> String in
                try resultLiteral(item, path: "action.return[\(i)]", rule: rule)
            }
            a.returnValue = 0
        } else if case .object(let members) = r.value {
            // a struct's fields by name (declared in "types"); the compiler puts them in order
            a.returnFields = try members.map { (m) throws(AspectsError) -> String in
                try resultLiteral(m.value, path: "action.return.\(m.key)", rule: rule)
            }
            a.returnFieldNames = members.map(\.key)
            a.returnValue = 0
        } else {
            let literal = try resultLiteral(r, path: "action.return", rule: rule)
            a.returnLiteral = literal
            a.returnValue = Self.integerBits(literal) ?? 0
        }
    }

    /// "signal": a name, or a number as written (the compiler resolves both).
    func signal(_ s: JSONNode, rule: String) throws(AspectsError) -> String {
        switch s.value {
        case .string(let name): return name
        case .number(let n): return n
        default: throw AspectsError(.wrongType, rule: rule, field: "action.signal", location: loc(s), "\"signal\" must be a signal name, not \(s.typeName)", fix: "write e.g. \"signal\": \"SIGSEGV\"")
        }
    }

    /// "args": the arguments set before the original runs, each {"arg": N, "value": V}.
    func argSettings(_ list: JSONNode, rule: String) throws(AspectsError) -> [Action.ArgSet] {
        guard case .array(let items) = list.value else {
            throw AspectsError(.wrongType, rule: rule, field: "action.args", location: loc(list), "\"args\" must be an array of {\"arg\": N, \"value\": V}, not \(list.typeName)")
        }
        var settings: [Action.ArgSet] = []
        for (i, item) in items.enumerated() {
            let path = "action.args[\(i)]"
            guard case .object(let m) = item.value else {
                throw AspectsError(.wrongType, rule: rule, field: path, location: loc(item), "expected {\"arg\": N, \"value\": V}, not \(item.typeName)")
            }
            try checkFields(m, allowed: Self.argSetFields, path: path, rule: rule, what: "argument setting")
            guard let argNode = item["arg"] else { throw AspectsError(.missingField, rule: rule, field: path + ".arg", location: loc(item), "missing \"arg\" (the 0-based argument index)") }
            guard let valueNode = item["value"] else { throw AspectsError(.missingField, rule: rule, field: path + ".value", location: loc(item), "missing \"value\"") }
            let arg = try integer(argNode, path: path + ".arg", rule: rule)
            guard arg >= 0 && arg < 64 else { throw AspectsError(.argOutOfRange, rule: rule, field: path + ".arg", location: loc(argNode), "argument index \(arg) is negative or absurd") }
            settings.append(.init(arg: Int(arg), value: try integer(valueNode, path: path + ".value", rule: rule)))
        }
        return settings
    }

    /// "corrupt": which buffer argument has bits flipped, and how many.
    func corruption(_ c: JSONNode, rule: String) throws(AspectsError) -> Action.Corruption {
        guard case .object(let m) = c.value else {
            throw AspectsError(.wrongType, rule: rule, field: "action.corrupt", location: loc(c), "\"corrupt\" must be an object like {\"arg\": 1, \"bits\": 1}, not \(c.typeName)")
        }
        try checkFields(m, allowed: Self.corruptFields, path: "action.corrupt", rule: rule, what: "corruption")
        guard let argNode = c["arg"] else {
            throw AspectsError(.missingField, rule: rule, field: "action.corrupt.arg", location: loc(c), "\"corrupt\" needs \"arg\": the argument whose bytes are corrupted",
                               fix: "add the buffer's 0-based index, e.g. \"arg\": 1 for read's buf")
        }
        let arg = try integer(argNode, path: "action.corrupt.arg", rule: rule)
        guard arg >= 0 && arg < 64 else {
            throw AspectsError(.argOutOfRange, rule: rule, field: "action.corrupt.arg", location: loc(argNode), "argument index \(arg) is negative or absurd")
        }
        var bits: Int64 = 1
        if let b = c["bits"] { bits = try integer(b, path: "action.corrupt.bits", rule: rule) }
        guard bits >= 1 && bits <= Int64(ASPECTS_MAX_CORRUPT_BITS) else {
            throw AspectsError(.invalidValue, rule: rule, field: "action.corrupt.bits", location: loc(c["bits"] ?? c),
                               "\(bits) bits: a firing flips 1 to \(ASPECTS_MAX_CORRUPT_BITS) of them", fix: "write e.g. \"bits\": 1")
        }
        return Action.Corruption(arg: Int(arg), bits: Int(bits))
    }

    /// `"call": "OBJECT:FUNCTION"`: the object and the function, split at the last ':' (a
    /// path may hold one, a C name never does). A path with a '/' is made absolute against
    /// the rules file's directory now, so the table names the object wherever aspectctl ran;
    /// a bare name is left to the loader's search in the advised process.
    func adviceCall(_ node: JSONNode, rule: String) throws(AspectsError) -> Action.AdviceCall {
        let example = "e.g. \"call\": \"./libadvice.so:my_advice\""
        guard case .string(let text) = node.value else {
            throw AspectsError(.wrongType, rule: rule, field: "action.call", location: loc(node), "\"call\" must be a string \"OBJECT:FUNCTION\", not \(node.typeName)", fix: "write \(example)")
        }
        guard let colon = text.lastIndex(of: ":") else {
            throw AspectsError(.invalidValue, rule: rule, field: "action.call", location: loc(node), "\"\(text)\" does not name a function",
                               fix: "write the shared object, a colon and the function: \(example)")
        }
        let object = String(text[..<colon]), function = String(text[text.index(after: colon)...])
        guard !object.isEmpty else {
            throw AspectsError(.invalidValue, rule: rule, field: "action.call", location: loc(node), "\"\(text)\" names no shared object before the colon", fix: "write \(example)")
        }
        guard let first = function.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic),
              function.unicodeScalars.allSatisfy({ $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) }) else {
            throw AspectsError(.invalidValue, rule: rule, field: "action.call", location: loc(node), "\"\(function)\" is not a C function name",
                               fix: "name an exported function after the colon (letters, digits and '_'; for Swift advice, its @_cdecl name): \(example)")
        }
        guard !object.utf8.contains(0) else {
            throw AspectsError(.invalidValue, rule: rule, field: "action.call", location: loc(node), "the object's path contains a NUL character")
        }
        var resolved = object
        if object.contains("/") && !object.hasPrefix("/") {
            let base = baseDirectory ?? FileManager.default.currentDirectoryPath
            resolved = URL(fileURLWithPath: object, relativeTo: URL(fileURLWithPath: base.isEmpty ? "." : base, isDirectory: true)).standardizedFileURL.path
            // A path relative to the rules file names the file found from there now: stored as
            // its real path, so that links on the way (SwiftPM's .build/release is one) are
            // not followed again at load time, where root's processes refuse them. An absolute
            // path is the user's to keep as written.
            if let real = realpath(resolved, nil) {
                resolved = String(cString: real)
                free(real)
            }
        } else if object.hasPrefix("/") {
            resolved = URL(fileURLWithPath: object).standardizedFileURL.path
        }
        return Action.AdviceCall(written: object, object: resolved, function: function)
    }
}
