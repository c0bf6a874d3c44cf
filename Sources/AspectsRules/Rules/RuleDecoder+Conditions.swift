import CAspectsABI
import Foundation
import AspectsCore

/// A rule's "when": counting, draw, origin, result and argument matchers.
extension RuleDecoder {
    /// The conditions in this order, and the first problem found is the one told.
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
        if let p = node["probability"] { c.probability = try probability(p, rule: rule) }
        c.seed = try natural(node, "seed", rule: rule)
        c.process = try string(node, "process", path: "when.process", rule: rule)
        c.caller = try string(node, "caller", path: "when.caller", rule: rule)
        c.site = try string(node, "site", path: "when.site", rule: rule)
        if let list = node["context"] { c.context = try contextFrames(list, rule: rule) }
        c.errno = try string(node, "errno", path: "when.errno", rule: rule)
        if let r = node["result"] { c.result = try resultRange(r, rule: rule) }
        if let list = node["args"] { c.args = try argMatchers(list, rule: rule) }
        return c
    }

    func probability(_ p: JSONNode, rule: String) throws(AspectsError) -> Double {
        guard case .number(let text) = p.value, let v = Double(text), v >= 0, v <= 1 else {
            throw AspectsError(.invalidValue, rule: rule, field: "when.probability", location: loc(p), "\"probability\" must be a number from 0 to 1")
        }
        return v
    }

    /// "context": the call sites of the stack, the site first.
    func contextFrames(_ list: JSONNode, rule: String) throws(AspectsError) -> [String] {
        guard case .array(let items) = list.value else {
            throw AspectsError(.wrongType, rule: rule, field: "when.context", location: loc(list),
                               "\"context\" must be an array of call sites, the site first, not \(list.typeName)",
                               fix: "write e.g. \"context\": [\"app+0x1a2b\", \"app+0x3c4d\"]")
        }
        return try items.enumerated().map { (i, item) throws(AspectsError) -> String in
            guard case .string(let s) = item.value else {
                throw AspectsError(.wrongType, rule: rule, field: "when.context[\(i)]", location: loc(item),
                                   "a frame of \"context\" must be a string such as \"app+0x1a2b\", not \(item.typeName)")
            }
            return s
        }
    }

    /// "result": the range an after rule's call must have returned in ("eq" is min and max).
    func resultRange(_ r: JSONNode, rule: String) throws(AspectsError) -> ResultRange {
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
        return range
    }

    func argMatchers(_ list: JSONNode, rule: String) throws(AspectsError) -> [ArgMatcher] {
        guard case .array(let items) = list.value else {
            throw AspectsError(.wrongType, rule: rule, field: "when.args", location: loc(list), "\"args\" must be an array of matchers, not \(list.typeName)",
                               fix: "write e.g. [{\"arg\": 0, \"glob\": \"*.db\"}]")
        }
        var matchers: [ArgMatcher] = []
        for (i, item) in items.enumerated() { matchers.append(try decodeMatcher(item, path: "when.args[\(i)]", rule: rule)) }
        return matchers
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
        let (arg, argName) = try matcherArgument(argNode, path: path, rule: rule)
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
        let kind = try matcherKind(node, kinds[0], path: path, rule: rule)
        var matcher = ArgMatcher(arg: Int(arg), kind: kind)
        matcher.argName = argName
        return matcher
    }

    /// A matcher's "arg": its 0-based index, or its name.
    func matcherArgument(_ argNode: JSONNode, path: String, rule: String) throws(AspectsError) -> (index: Int64, name: String?) {
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
        return (arg, argName)
    }

    /// What the matcher tests: the one kind it names ("min" and "max" together are one range).
    func matcherKind(_ node: JSONNode, _ key: String, path: String, rule: String) throws(AspectsError) -> ArgMatcher.Kind {
        switch key {
        case "eq": return .eq(try matchValue(node["eq"]!, path: path + ".eq", rule: rule))
        case "ne": return .ne(try matchValue(node["ne"]!, path: path + ".ne", rule: rule))
        case "mask":
            let m = try matchValue(node["mask"]!, path: path + ".mask", rule: rule)
            return try bool(node, "all", path: path + ".all", rule: rule) == true ? .maskAll(m) : .maskAny(m)
        case "glob", "prefix", "fdpath":
            guard case .string(let s) = node[key]!.value else {
                throw AspectsError(.wrongType, rule: rule, field: "\(path).\(key)", location: loc(node[key]!), "\"\(key)\" must be a string, not \(node[key]!.typeName)")
            }
            if s.isEmpty { throw AspectsError(.invalidValue, rule: rule, field: "\(path).\(key)", location: loc(node[key]!), "the pattern is empty") }
            if s.utf8.contains(0) { throw AspectsError(.invalidValue, rule: rule, field: "\(path).\(key)", location: loc(node[key]!), "the pattern contains a NUL character") }
            return key == "glob" ? .glob(s) : key == "prefix" ? .prefix(s) : .fdpath(s)
        default:
            let lo = try node["min"].map { (n: JSONNode) throws(AspectsError) -> ArgMatcher.Value in try matchValue(n, path: path + ".min", rule: rule) }
            let hi = try node["max"].map { (n: JSONNode) throws(AspectsError) -> ArgMatcher.Value in try matchValue(n, path: path + ".max", rule: rule) }
            return .range(min: lo, max: hi)
        }
    }
}
