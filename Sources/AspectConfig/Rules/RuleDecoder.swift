import CAspectsABI
import Foundation

/// Decodes rule JSON into `Rule`s. Accepts one rule object, `{"rules": [...]}` or a bare array.
/// Every error names the source position, the rule, the field and the fix.
public struct RuleDecoder: Sendable {
    /// Shown in error locations: a file name, or "--rule" for JSON given on the command line.
    public var source: String
    /// Where a `call` action's relative object path starts: the rules file's directory (nil:
    /// the current directory, as for `--rule` and `--inject`).
    public var baseDirectory: String?

    public init(source: String, baseDirectory: String? = nil) {
        self.source = source
        self.baseDirectory = baseDirectory
    }

    static let ruleFields = ["id", "symbol", "family", "prototype", "variadic", "types", "position", "action", "when", "scope", "autoRemove", "once", "allowAnyErrno", "failure", "comment"]
    static let failureFields = ["return", "errno"]
    static let actionFields = ["fail", "return", "errno", "delay", "signal", "log", "args", "call", "corrupt", "short", "context"]
    static let corruptFields = ["arg", "bits"]
    static let whenFields = ["nth", "after", "every", "first", "times", "probability", "seed", "args", "process", "caller", "site", "context", "result", "errno"]
    static let resultFields = ["min", "max", "eq", "lt_arg"]
    static let matcherFields = ["arg", "eq", "ne", "min", "max", "mask", "all", "glob", "prefix", "fdpath"]
    static let argSetFields = ["arg", "value"]

    public func decode(_ text: String) throws(AspectsError) -> [Rule] {
        let (rules, _, errors) = try decodeEach(text)
        if let first = errors.first { throw first }
        return rules
    }

    /// Every rule of the text that decodes, and the error of each one that does not (`check`
    /// reports them all). A text that is not JSON, or not a rules file at all, still throws.
    /// `positions`: each decoded rule's place in the file (from 1), for messages.
    public func decodeEach(_ text: String) throws(AspectsError) -> (rules: [Rule], positions: [Int], errors: [AspectsError]) {
        let d = try decodeDocument(text)
        return (d.rules, d.positions, d.errors)
    }

    /// What a rules document held: the rules, their places, the errors, and what was left out
    /// on purpose (a `list --json` listing's removed rules), for the caller to say.
    public struct Document: Sendable {
        public var rules: [Rule] = []
        public var positions: [Int] = []
        public var errors: [AspectsError] = []
        public var notes: [String] = []
    }

    /// Like `decodeEach`, and also takes what `aspectctl list --json` prints: each item's rule
    /// is under "rule" (the JSON it was added with), beside its state and counts. Removed rules
    /// are left out, with a note; an item without its rule JSON is an error.
    public func decodeDocument(_ text: String) throws(AspectsError) -> Document {
        let root: JSONNode
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw AspectsError(.malformedJSON, location: "\(source):\(error.line):\(error.column)", error.message,
                               fix: "fix the JSON syntax at that position")
        }
        let items: [JSONNode]
        switch root.value {
        case .array(let a):
            items = a
        case .object(let members) where members.contains(where: { $0.key == "rules" }):
            guard members.count == 1 || members.allSatisfy({ $0.key == "rules" || $0.key == "comment" }) else {
                let other = members.first { $0.key != "rules" && $0.key != "comment" }!
                throw AspectsError(.unknownField, field: other.key, location: loc(other.value),
                                   "a rules file has only \"rules\" at the top level",
                                   fix: "move \"\(other.key)\" into a rule")
            }
            guard case .array(let a) = root["rules"]!.value else {
                throw AspectsError(.wrongType, field: "rules", location: loc(root["rules"]!), "\"rules\" must be an array of rule objects, not \(root["rules"]!.typeName)")
            }
            items = a
        case .object:
            items = [root]
        default:
            throw AspectsError(.wrongType, location: loc(root), "expected a rule object, {\"rules\": [...]} or an array of rules, not \(root.typeName)")
        }
        var d = Document()
        for (n, item) in items.enumerated() {
            do {
                guard let rule = try listedRule(item, notes: &d.notes) else { continue }
                d.rules.append(try decodeRule(rule, label: items.count == 1 ? "rule" : "rule \(n + 1)"))
                d.positions.append(n + 1)
            } catch {
                d.errors.append(error)
            }
        }
        return d
    }

    /// The rule of an item: the item itself, or for an item of `list --json` (it has the
    /// "state" and "slot" no rule has) its "rule"; nil for a removed rule, which is noted.
    func listedRule(_ item: JSONNode, notes: inout [String]) throws(AspectsError) -> JSONNode? {
        guard item["state"] != nil, item["slot"] != nil else { return item }
        var id = "?"
        if case .string(let s)? = item["id"]?.value { id = s }
        if case .string(let state)? = item["state"]?.value, state != "active" {
            notes.append("\(loc(item)): rule \"\(id)\" is \(state) in this listing of a table, so it is not taken")
            return nil
        }
        guard let rule = item["rule"], case .object = rule.value else {
            throw AspectsError(.missingField, rule: "rule \"\(id)\"", field: "rule", location: loc(item),
                               "this item of a `list --json` listing has no \"rule\": the table kept no JSON for rule \"\(id)\" (added through the Swift API, or longer than \(ASPECTS_RULE_SOURCE_SIZE - 16) bytes)",
                               fix: "add that rule from its own rules file, or drop the item")
        }
        return rule
    }

    func loc(_ node: JSONNode) -> String { "\(source):\(node.line):\(node.column)" }

    // MARK: - one rule

    func decodeRule(_ node: JSONNode, label fallback: String) throws(AspectsError) -> Rule {
        guard case .object(let members) = node.value else {
            throw AspectsError(.wrongType, rule: fallback, location: loc(node), "a rule must be a JSON object, not \(node.typeName)")
        }
        // Name the rule by its id as soon as we know it: errors then say "rule \"slow-dns\"".
        var label = fallback
        if let idNode = node["id"], case .string(let id) = idNode.value { label = "rule \"\(id)\"" }
        try checkFields(members, allowed: Self.ruleFields, path: nil, rule: label, what: "rule")

        let id = try string(node, "id", path: "id", rule: label)
        if let id { try validateID(id, node: node["id"]!, rule: label) }
        // "symbol": a name, or a list of names (one rule, one counter on all of them);
        // "family": a catalog family instead.
        var symbols: [String] = []
        if let s = node["symbol"], case .array(let items) = s.value {
            for (i, item) in items.enumerated() {
                guard case .string(let name) = item.value, !name.isEmpty else {
                    throw AspectsError(.wrongType, rule: label, field: "symbol[\(i)]", location: loc(item), "each name in \"symbol\" must be a non-empty string")
                }
                symbols.append(name)
            }
            guard !symbols.isEmpty else {
                throw AspectsError(.invalidValue, rule: label, field: "symbol", location: loc(s), "\"symbol\" lists no function", fix: "name one or more, e.g. [\"write\", \"pwrite\"]")
            }
        } else if let one = try string(node, "symbol", path: "symbol", rule: label) {
            if one.isEmpty { throw AspectsError(.invalidValue, rule: label, field: "symbol", location: loc(node["symbol"]!), "\"symbol\" is empty") }
            symbols = [one]
        }
        let family = try string(node, "family", path: "family", rule: label)
        if family != nil && !symbols.isEmpty {
            throw AspectsError(.invalidValue, rule: label, field: "family", location: loc(node["family"]!), "a rule names \"symbol\" or \"family\", not both",
                               fix: "drop one of them")
        }
        guard let symbol = symbols.first ?? family else {
            throw AspectsError(.missingField, rule: label, field: "symbol", location: loc(node), "a rule needs \"symbol\"",
                               fix: "name the function to advise, e.g. \"symbol\": \"write\" (or a list of them, or \"family\": \"write\")")
        }
        let prototype = try string(node, "prototype", path: "prototype", rule: label)
        let positionText = try string(node, "position", path: "position", rule: label)
        var position = Rule.Position.instead // until compiled, for a position from the catalog
        if let positionText {
            guard let written = Rule.Position(rawValue: positionText) else {
                throw AspectsError(.invalidValue, rule: label, field: "position", location: loc(node["position"]!),
                                   "unknown position \"\(positionText)\"", fix: "use \"before\", \"instead\" or \"after\"")
            }
            position = written
        }
        guard let actionNode = node["action"] else {
            throw AspectsError(.missingField, rule: label, field: positionText == nil ? "position" : "action", location: loc(node),
                               positionText == nil ? "a rule needs \"position\" and \"action\"" : "a rule needs \"action\"",
                               fix: "add e.g. \"action\": {\"fail\": true}, {\"delay\": \"200ms\"} or {\"log\": true}" + (positionText == nil ? " and a \"position\" (only a \"fail\" rule may leave it out)" : ""))
        }
        let action = try decodeAction(actionNode, rule: label)
        // A failure may leave its position to the catalog (where the function's real failure
        // happens); every other action says where it runs.
        let positionFromCatalog = positionText == nil && action.fail != nil
        if positionText == nil && !positionFromCatalog {
            throw AspectsError(.missingField, rule: label, field: "position", location: loc(node), "a rule needs \"position\"",
                               fix: "add \"position\": \"before\", \"instead\" or \"after\" (only a \"fail\" rule may leave it out: then the catalog says where the function fails)")
        }
        let when = try node["when"].map { (n: JSONNode) throws(AspectsError) -> Conditions in try decodeConditions(n, rule: label) } ?? Conditions()
        var scope = Rule.Scope.process
        if let s = try string(node, "scope", path: "scope", rule: label) {
            guard let v = Rule.Scope(rawValue: s) else {
                throw AspectsError(.invalidValue, rule: label, field: "scope", location: loc(node["scope"]!), "unknown scope \"\(s)\"",
                                   fix: "use one of \(Rule.Scope.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))")
            }
            scope = v
        }
        let autoRemove = try bool(node, "autoRemove", path: "autoRemove", rule: label) ?? false
        var once: Rule.Once?
        if let s = try string(node, "once", path: "once", rule: label) {
            guard let v = Rule.Once(rawValue: s) else {
                throw AspectsError(.invalidValue, rule: label, field: "once", location: loc(node["once"]!), "unknown value \"\(s)\"",
                                   fix: "use \"process\" or \"hierarchy\"")
            }
            once = v
        }
        let allowAny = try bool(node, "allowAnyErrno", path: "allowAnyErrno", rule: label) ?? false
        _ = try string(node, "comment", path: "comment", rule: label)
        var failure: Rule.Failure?
        if let f = node["failure"] {
            guard case .object(let m) = f.value else {
                throw AspectsError(.wrongType, rule: label, field: "failure", location: loc(f), "\"failure\" must be an object like {\"return\": -1, \"errno\": \"EIO\"}")
            }
            try checkFields(m, allowed: Self.failureFields, path: "failure", rule: label, what: "failure")
            guard let r = f["return"] else {
                throw AspectsError(.missingField, rule: label, field: "failure.return", location: loc(f), "\"failure\" needs \"return\": what the function returns when it fails")
            }
            let literal = try resultLiteral(r, path: "failure.return", rule: label)
            failure = Rule.Failure(returnValue: Self.integerBits(literal) ?? 0, errno: try string(f, "errno", path: "failure.errno", rule: label),
                                   returnLiteral: literal)
        }
        var rule = Rule(id: id, symbol: symbol, prototype: prototype, position: position, action: action, when: when,
                        scope: scope, autoRemove: autoRemove, once: once, allowAnyErrno: allowAny)
        rule.failure = failure
        rule.positionFromCatalog = positionFromCatalog
        rule.source = node.value
        if let call = action.call, call.object != call.written, case .object(var top) = node.value,
           let i = top.firstIndex(where: { $0.key == "action" }), case .object(var members) = top[i].value.value,
           let k = members.firstIndex(where: { $0.key == "call" }) {
            // The table keeps the rule as the loader will take it: `list --rules` then gives
            // back a rule that names the same object from any directory.
            members[k].value = JSONNode(value: .string(call.target), line: members[k].value.line, column: members[k].value.column)
            top[i].value = JSONNode(value: .object(members), line: top[i].value.line, column: top[i].value.column)
            rule.source = .object(top)
        }
        rule.alsoSymbols = Array(symbols.dropFirst())
        rule.family = family
        if let v = node["variadic"] {
            guard case .array(let items) = v.value else {
                throw AspectsError(.wrongType, rule: label, field: "variadic", location: loc(v), "\"variadic\" must be an array of C types, e.g. [\"int\", \"double\"]")
            }
            var types: [String] = []
            for item in items {
                guard case .string(let t) = item.value else {
                    throw AspectsError(.wrongType, rule: label, field: "variadic", location: loc(item), "a variadic argument type is a string such as \"int\", not \(item.typeName)")
                }
                types.append(t)
            }
            rule.variadic = types
        }
        if let t = node["types"] {
            guard case .object(let members) = t.value else {
                throw AspectsError(.wrongType, rule: label, field: "types", location: loc(t), "\"types\" maps struct names to field types, e.g. {\"struct pair\": [\"double\", \"double\"]}")
            }
            for m in members {
                guard m.key.hasPrefix("struct "), m.key.count > 7 else {
                    throw AspectsError(.invalidValue, rule: label, field: "types", location: loc(m.value), "\"\(m.key)\" is not a struct name", fix: "write \"struct NAME\"")
                }
                guard case .array(let items) = m.value.value else {
                    throw AspectsError(.wrongType, rule: label, field: "types.\(m.key)", location: loc(m.value), "the fields of \(m.key) are an array of C types")
                }
                var fields: [String] = []
                for item in items {
                    guard case .string(let f) = item.value else {
                        throw AspectsError(.wrongType, rule: label, field: "types.\(m.key)", location: loc(item), "a field type is a string such as \"double\"")
                    }
                    fields.append(f)
                }
                rule.types[m.key] = fields
            }
        }
        return rule
    }

    func validateID(_ id: String, node: JSONNode, rule: String) throws(AspectsError) {
        let ok = !id.isEmpty && id.utf8.count < 32 && id.unicodeScalars.allSatisfy {
            (("0"..."9").contains($0) || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || $0 == "-" || $0 == "_" || $0 == ".")
        }
        if !ok {
            throw AspectsError(.invalidValue, rule: rule, field: "id", location: loc(node), "id \"\(id)\" is not a valid token",
                               fix: "use 1 to 31 characters of letters, digits, '-', '_' and '.'")
        }
        // `remove --all` and `remove -x` are options: an id spelled so could not be named.
        if id.hasPrefix("-") {
            throw AspectsError(.invalidValue, rule: rule, field: "id", location: loc(node), "id \"\(id)\" starts with '-', so `aspectctl remove \(id)` would read it as an option",
                               fix: "start the id with a letter, a digit, '_' or '.'")
        }
    }

    // MARK: - action

    func decodeAction(_ node: JSONNode, rule: String) throws(AspectsError) -> Action {
        guard case .object(let members) = node.value else {
            throw AspectsError(.wrongType, rule: rule, field: "action", location: loc(node), "\"action\" must be an object, not \(node.typeName)",
                               fix: "write e.g. {\"fail\": \"ENOSPC\"}")
        }
        try checkFields(members, allowed: Self.actionFields, path: "action", rule: rule, what: "action")
        var a = Action()
        if let f = node["fail"] {
            switch f.value {
            case .bool(true): a.fail = .catalogDefault
            case .bool(false): a.fail = nil
            case .string(let name): a.fail = .named(name)
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
                a.fail = .oneOf(names)
            default:
                throw AspectsError(.wrongType, rule: rule, field: "action.fail", location: loc(f), "\"fail\" must be true, an error name or a list of them, not \(f.typeName)",
                                   fix: "write \"fail\": true (the catalog's default error), \"fail\": \"ENOSPC\" or \"fail\": [\"EIO\", \"ENOSPC\"]")
            }
        }
        if let r = node["return"] {
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
        a.errno = try string(node, "errno", path: "action.errno", rule: rule)
        if let d = node["delay"] { a.delayNanoseconds = try duration(d, path: "action.delay", rule: rule) }
        if let s = node["signal"] {
            switch s.value {
            case .string(let name): a.signal = name
            case .number(let n): a.signal = n
            default: throw AspectsError(.wrongType, rule: rule, field: "action.signal", location: loc(s), "\"signal\" must be a signal name, not \(s.typeName)", fix: "write e.g. \"signal\": \"SIGSEGV\"")
            }
        }
        a.log = try bool(node, "log", path: "action.log", rule: rule) ?? false
        if let list = node["args"] {
            guard case .array(let items) = list.value else {
                throw AspectsError(.wrongType, rule: rule, field: "action.args", location: loc(list), "\"args\" must be an array of {\"arg\": N, \"value\": V}, not \(list.typeName)")
            }
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
                a.args.append(.init(arg: Int(arg), value: try integer(valueNode, path: path + ".value", rule: rule)))
            }
        }
        if let c = node["call"] { a.call = try adviceCall(c, rule: rule) }
        if let c = node["corrupt"] {
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
            a.corrupt = Action.Corruption(arg: Int(arg), bits: Int(bits))
        }
        a.short = try bool(node, "short", path: "action.short", rule: rule) ?? false
        a.recordContext = try bool(node, "context", path: "action.context", rule: rule) ?? false
        if a.isEmpty {
            throw AspectsError(.invalidValue, rule: rule, field: "action", location: loc(node), "the action does nothing",
                               fix: "give at least one of \(Self.actionFields.map { "\"\($0)\"" }.joined(separator: ", "))")
        }
        return a
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

    // MARK: - conditions

    func decodeConditions(_ node: JSONNode, rule: String) throws(AspectsError) -> Conditions {
        guard case .object(let members) = node.value else {
            throw AspectsError(.wrongType, rule: rule, field: "when", location: loc(node), "\"when\" must be an object, not \(node.typeName)")
        }
        try checkFields(members, allowed: Self.whenFields, path: "when", rule: rule, what: "condition")
        var c = Conditions()
        c.nth = try positive(node, "nth", rule: rule)
        c.after = try natural(node, "after", rule: rule)
        c.every = try positive(node, "every", rule: rule)
        c.first = try positive(node, "first", rule: rule)
        c.times = try positive(node, "times", rule: rule)
        if let p = node["probability"] {
            guard case .number(let text) = p.value, let v = Double(text), v >= 0, v <= 1 else {
                throw AspectsError(.invalidValue, rule: rule, field: "when.probability", location: loc(p), "\"probability\" must be a number from 0 to 1")
            }
            c.probability = v
        }
        c.seed = try natural(node, "seed", rule: rule)
        c.process = try string(node, "process", path: "when.process", rule: rule)
        c.caller = try string(node, "caller", path: "when.caller", rule: rule)
        c.site = try string(node, "site", path: "when.site", rule: rule)
        if let list = node["context"] {
            guard case .array(let items) = list.value else {
                throw AspectsError(.wrongType, rule: rule, field: "when.context", location: loc(list),
                                   "\"context\" must be an array of call sites, the site first, not \(list.typeName)",
                                   fix: "write e.g. \"context\": [\"app+0x1a2b\", \"app+0x3c4d\"]")
            }
            c.context = try items.enumerated().map { (i, item) throws(AspectsError) -> String in
                guard case .string(let s) = item.value else {
                    throw AspectsError(.wrongType, rule: rule, field: "when.context[\(i)]", location: loc(item),
                                       "a frame of \"context\" must be a string such as \"app+0x1a2b\", not \(item.typeName)")
                }
                return s
            }
        }
        c.errno = try string(node, "errno", path: "when.errno", rule: rule)
        if let r = node["result"] {
            guard case .object(let fields) = r.value, !fields.isEmpty else {
                throw AspectsError(.wrongType, rule: rule, field: "when.result", location: loc(r), "\"result\" must be an object: {\"min\": 0}, {\"max\": -1}, {\"eq\": 0} or {\"lt_arg\": 2}")
            }
            try checkFields(fields, allowed: Self.resultFields, path: "when.result", rule: rule, what: "result condition")
            var range = ResultRange()
            if let v = r["eq"] {
                guard r["min"] == nil && r["max"] == nil else {
                    throw AspectsError(.invalidValue, rule: rule, field: "when.result", location: loc(r), "\"eq\" takes no \"min\" or \"max\" beside it")
                }
                let x = try integer(v, path: "when.result.eq", rule: rule)
                range = ResultRange(min: x, max: x)
            }
            if let v = r["min"] { range.min = try integer(v, path: "when.result.min", rule: rule) }
            if let v = r["max"] { range.max = try integer(v, path: "when.result.max", rule: rule) }
            if let v = r["lt_arg"] {
                let arg = try integer(v, path: "when.result.lt_arg", rule: rule)
                guard arg >= 0 && arg < 64 else {
                    throw AspectsError(.argOutOfRange, rule: rule, field: "when.result.lt_arg", location: loc(v), "argument index \(arg) is negative or absurd",
                                       fix: "name the 0-based index of the argument the result must be below, e.g. 2 for write's count")
                }
                range.ltArg = Int(arg)
            }
            guard range.min <= range.max else {
                throw AspectsError(.invalidValue, rule: rule, field: "when.result", location: loc(r), "\"min\" \(range.min) is above \"max\" \(range.max): no result lies between")
            }
            c.result = range
        }
        if let list = node["args"] {
            guard case .array(let items) = list.value else {
                throw AspectsError(.wrongType, rule: rule, field: "when.args", location: loc(list), "\"args\" must be an array of matchers, not \(list.typeName)",
                                   fix: "write e.g. [{\"arg\": 0, \"glob\": \"*.db\"}]")
            }
            for (i, item) in items.enumerated() { c.args.append(try decodeMatcher(item, path: "when.args[\(i)]", rule: rule)) }
        }
        return c
    }

    func decodeMatcher(_ node: JSONNode, path: String, rule: String) throws(AspectsError) -> ArgMatcher {
        guard case .object(let members) = node.value else {
            throw AspectsError(.wrongType, rule: rule, field: path, location: loc(node), "a matcher must be an object, not \(node.typeName)")
        }
        try checkFields(members, allowed: Self.matcherFields, path: path, rule: rule, what: "matcher")
        guard let argNode = node["arg"] else {
            throw AspectsError(.missingField, rule: rule, field: path + ".arg", location: loc(node), "a matcher needs \"arg\"",
                               fix: "add the 0-based argument index, e.g. \"arg\": 0, or the argument's name, e.g. \"arg\": \"path\"")
        }
        // By name ("path"): the compiler finds it in each function's prototype, so that one
        // condition of a rule on several functions means the same argument in each.
        var argName: String?
        var arg: Int64 = 0
        if case .string(let name) = argNode.value {
            guard let first = name.first, first.isLetter || first == "_", name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
                throw AspectsError(.invalidValue, rule: rule, field: path + ".arg", location: loc(argNode), "\"\(name)\" is not an argument name",
                                   fix: "name the argument as the function's prototype does (`aspectctl catalog NAME`), e.g. \"path\", or give its 0-based index")
            }
            argName = name
        } else {
            arg = try integer(argNode, path: path + ".arg", rule: rule)
            guard arg >= 0 && arg < 64 else { throw AspectsError(.argOutOfRange, rule: rule, field: path + ".arg", location: loc(argNode), "argument index \(arg) is out of range") }
        }
        let kinds = ["eq", "ne", "min", "max", "mask", "glob", "prefix", "fdpath"].filter { node[$0] != nil }
        let isRange = !kinds.isEmpty && kinds.allSatisfy { $0 == "min" || $0 == "max" }
        guard kinds.count == 1 || isRange else {
            throw AspectsError(.invalidValue, rule: rule, field: path, location: loc(node),
                               kinds.isEmpty ? "the matcher tests nothing" : "one matcher tests one thing, not \(kinds.joined(separator: " and "))",
                               fix: kinds.isEmpty ? "add one of \"eq\", \"ne\", \"min\"/\"max\", \"mask\", \"glob\", \"prefix\", \"fdpath\"" : "split it into several matchers on the same \"arg\"")
        }
        if node["all"] != nil && node["mask"] == nil {
            throw AspectsError(.invalidValue, rule: rule, field: path + ".all", location: loc(node["all"]!), "\"all\" only goes with \"mask\"")
        }
        let kind: ArgMatcher.Kind
        switch kinds[0] {
        case "eq": kind = .eq(try matchValue(node["eq"]!, path: path + ".eq", rule: rule))
        case "ne": kind = .ne(try matchValue(node["ne"]!, path: path + ".ne", rule: rule))
        case "mask":
            let m = try matchValue(node["mask"]!, path: path + ".mask", rule: rule)
            kind = try bool(node, "all", path: path + ".all", rule: rule) == true ? .maskAll(m) : .maskAny(m)
        case "glob", "prefix", "fdpath":
            let key = kinds[0]
            guard case .string(let s) = node[key]!.value else {
                throw AspectsError(.wrongType, rule: rule, field: "\(path).\(key)", location: loc(node[key]!), "\"\(key)\" must be a string, not \(node[key]!.typeName)")
            }
            if s.isEmpty { throw AspectsError(.invalidValue, rule: rule, field: "\(path).\(key)", location: loc(node[key]!), "the pattern is empty") }
            if s.utf8.contains(0) { throw AspectsError(.invalidValue, rule: rule, field: "\(path).\(key)", location: loc(node[key]!), "the pattern contains a NUL character") }
            kind = key == "glob" ? .glob(s) : key == "prefix" ? .prefix(s) : .fdpath(s)
        default:
            let lo = try node["min"].map { (n: JSONNode) throws(AspectsError) -> ArgMatcher.Value in try matchValue(n, path: path + ".min", rule: rule) }
            let hi = try node["max"].map { (n: JSONNode) throws(AspectsError) -> ArgMatcher.Value in try matchValue(n, path: path + ".max", rule: rule) }
            kind = .range(min: lo, max: hi)
        }
        var matcher = ArgMatcher(arg: Int(arg), kind: kind)
        matcher.argName = argName
        return matcher
    }

    // MARK: - field helpers

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

    public static func parseDuration(_ s: String) -> UInt64? {
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
