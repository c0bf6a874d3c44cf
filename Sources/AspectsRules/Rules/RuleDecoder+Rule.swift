import CAspectsABI
import Foundation
import AspectsCore

/// One rule object, field by field in the order its errors are found.
extension RuleDecoder {
    /// The steps below run in this order, and the first problem found is the one told.
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
        let symbols = try symbols(node, rule: label)
        let family = try family(node, besides: symbols, rule: label)
        let prototype = try string(node, "prototype", path: "prototype", rule: label)
        let positionText = try string(node, "position", path: "position", rule: label)
        let position = try position(positionText, node: node, rule: label)
        let action = try decodeAction(try actionNode(node, positionText: positionText, rule: label), rule: label)
        let positionFromCatalog = try positionFromCatalog(positionText, action: action, node: node, rule: label)
        let when = try node["when"].map { (n: JSONNode) throws(AspectsError) -> Conditions in try decodeConditions(n, rule: label) } ?? Conditions()
        let scope = try scope(node, rule: label)
        let autoRemove = try bool(node, "autoRemove", path: "autoRemove", rule: label) ?? false
        let once = try once(node, rule: label)
        let allowAny = try bool(node, "allowAnyErrno", path: "allowAnyErrno", rule: label) ?? false
        _ = try string(node, "comment", path: "comment", rule: label)
        let failure = try ruleFailure(node, rule: label)
        var rule = Rule(id: id, symbol: symbols.first ?? family!, prototype: prototype, position: position, action: action, when: when,
                        scope: scope, autoRemove: autoRemove, once: once, allowAnyErrno: allowAny)
        rule.failure = failure
        rule.positionFromCatalog = positionFromCatalog
        rule.source = sourceAsLoaded(node, call: action.call)
        rule.alsoSymbols = Array(symbols.dropFirst())
        rule.family = family
        if let v = node["variadic"] { rule.variadic = try variadic(v, rule: label) }
        if let t = node["types"] { rule.types = try structTypes(t, rule: label) }
        return rule
    }

    /// "symbol": a name, or a list of names (one rule, one counter on all of them); none when
    /// the rule names a "family" instead.
    func symbols(_ node: JSONNode, rule label: String) throws(AspectsError) -> [String] {
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
        return symbols
    }

    /// "family": a catalog family in place of "symbol"; a rule names exactly one of the two.
    func family(_ node: JSONNode, besides symbols: [String], rule label: String) throws(AspectsError) -> String? {
        let family = try string(node, "family", path: "family", rule: label)
        if family != nil && !symbols.isEmpty {
            throw AspectsError(.invalidValue, rule: label, field: "family", location: loc(node["family"]!), "a rule names \"symbol\" or \"family\", not both",
                               fix: "drop one of them")
        }
        guard family != nil || !symbols.isEmpty else {
            throw AspectsError(.missingField, rule: label, field: "symbol", location: loc(node), "a rule needs \"symbol\"",
                               fix: "name the function to advise, e.g. \"symbol\": \"write\" (or a list of them, or \"family\": \"write\")")
        }
        return family
    }

    /// The position as written; instead until compiled when the rule leaves it to the catalog.
    func position(_ positionText: String?, node: JSONNode, rule label: String) throws(AspectsError) -> Rule.Position {
        guard let positionText else { return .instead }
        guard let written = Rule.Position(rawValue: positionText) else {
            throw AspectsError(.invalidValue, rule: label, field: "position", location: loc(node["position"]!),
                               "unknown position \"\(positionText)\"", fix: "use \"before\", \"instead\" or \"after\"")
        }
        return written
    }

    /// The "action" every rule has; without it, the error also asks for a missing position.
    func actionNode(_ node: JSONNode, positionText: String?, rule label: String) throws(AspectsError) -> JSONNode {
        guard let actionNode = node["action"] else {
            throw AspectsError(.missingField, rule: label, field: positionText == nil ? "position" : "action", location: loc(node),
                               positionText == nil ? "a rule needs \"position\" and \"action\"" : "a rule needs \"action\"",
                               fix: "add e.g. \"action\": {\"fail\": true}, {\"delay\": \"200ms\"} or {\"log\": true}" + (positionText == nil ? " and a \"position\" (only a \"fail\" rule may leave it out)" : ""))
        }
        return actionNode
    }

    /// A failure may leave its position to the catalog (where the function's real failure
    /// happens); every other action says where it runs.
    func positionFromCatalog(_ positionText: String?, action: Action, node: JSONNode, rule label: String) throws(AspectsError) -> Bool {
        let positionFromCatalog = positionText == nil && action.fail != nil
        if positionText == nil && !positionFromCatalog {
            throw AspectsError(.missingField, rule: label, field: "position", location: loc(node), "a rule needs \"position\"",
                               fix: "add \"position\": \"before\", \"instead\" or \"after\" (only a \"fail\" rule may leave it out: then the catalog says where the function fails)")
        }
        return positionFromCatalog
    }

    func scope(_ node: JSONNode, rule label: String) throws(AspectsError) -> Rule.Scope {
        guard let s = try string(node, "scope", path: "scope", rule: label) else { return .process }
        guard let v = Rule.Scope(rawValue: s) else {
            throw AspectsError(.invalidValue, rule: label, field: "scope", location: loc(node["scope"]!), "unknown scope \"\(s)\"",
                               fix: "use one of \(Rule.Scope.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))")
        }
        return v
    }

    func once(_ node: JSONNode, rule label: String) throws(AspectsError) -> Rule.Once? {
        guard let s = try string(node, "once", path: "once", rule: label) else { return nil }
        guard let v = Rule.Once(rawValue: s) else {
            throw AspectsError(.invalidValue, rule: label, field: "once", location: loc(node["once"]!), "unknown value \"\(s)\"",
                               fix: "use \"process\" or \"hierarchy\"")
        }
        return v
    }

    /// "failure": how a function the catalog does not know fails ({"return": -1, "errno": "EIO"}).
    func ruleFailure(_ node: JSONNode, rule label: String) throws(AspectsError) -> Rule.Failure? {
        guard let f = node["failure"] else { return nil }
        guard case .object(let m) = f.value else {
            throw AspectsError(.wrongType, rule: label, field: "failure", location: loc(f), "\"failure\" must be an object like {\"return\": -1, \"errno\": \"EIO\"}")
        }
        try checkFields(m, allowed: Self.failureFields, path: "failure", rule: label, what: "failure")
        guard let r = f["return"] else {
            throw AspectsError(.missingField, rule: label, field: "failure.return", location: loc(f), "\"failure\" needs \"return\": what the function returns when it fails")
        }
        let literal = try resultLiteral(r, path: "failure.return", rule: label)
        return Rule.Failure(returnValue: Self.integerBits(literal) ?? 0, errno: try string(f, "errno", path: "failure.errno", rule: label),
                            returnLiteral: literal)
    }

    /// The rule's JSON as the table keeps it: as written, but with a `call` object resolved as
    /// the loader will take it, so that `list --rules` gives back a rule that names the same
    /// object from any directory.
    func sourceAsLoaded(_ node: JSONNode, call: Action.AdviceCall?) -> JSONNode.Value {
        guard let call, call.object != call.written, case .object(var top) = node.value,
              let i = top.firstIndex(where: { $0.key == "action" }), case .object(var members) = top[i].value.value,
              let k = members.firstIndex(where: { $0.key == "call" }) else { return node.value }
        members[k].value = JSONNode(value: .string(call.target), line: members[k].value.line, column: members[k].value.column)
        top[i].value = JSONNode(value: .object(members), line: top[i].value.line, column: top[i].value.column)
        return .object(top)
    }

    /// "variadic": the C types of the arguments a variadic function is called with.
    func variadic(_ v: JSONNode, rule label: String) throws(AspectsError) -> [String] {
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
        return types
    }

    /// "types": the fields of each struct a prototype names, as C types in order.
    func structTypes(_ t: JSONNode, rule label: String) throws(AspectsError) -> [String: [String]] {
        guard case .object(let members) = t.value else {
            throw AspectsError(.wrongType, rule: label, field: "types", location: loc(t), "\"types\" maps struct names to field types, e.g. {\"struct pair\": [\"double\", \"double\"]}")
        }
        var types: [String: [String]] = [:]
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
            types[m.key] = fields
        }
        return types
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
}
