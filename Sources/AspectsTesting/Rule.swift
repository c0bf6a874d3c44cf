import AspectConfig

/// One rule of the rule language, typed: `Rule.instead("write", .fail("ENOSPC"), when: .nth(3))`.
/// It is encoded to the rule JSON (`json`) and checked by the same decoder and compiler as a
/// rules file, so whatever a file can say a `Rule` can say, and what a file may not, it may not.
public struct Rule: Sendable, CustomStringConvertible {
    /// The rule as JSON members, in the order a person would write them.
    public private(set) var members: [(String, JSONNode.Value)]

    /// Where the advice runs: before the original, instead of it, or after it.
    public enum Position: String, Sendable { case before, instead, after }

    /// What the rule does.
    public enum Action: Sendable {
        /// The function's natural failure with this error (`fail: "ENOSPC"`).
        case fail(String)
        /// The natural failure with one of these, drawn from the seed.
        case failWithOneOf([String])
        /// The natural failure with the function's default error.
        case failDefault
        /// Make it return this value (integers; `returnDouble` for floating results).
        case `return`(Int64)
        case returnDouble(Double)
        /// Set errno (with `return`).
        case errno(String)
        /// Wait before the call goes on (`200ms`, `1s`).
        case delay(String)
        /// Raise a signal (`SIGUSR1`).
        case signal(String)
        /// Record the call in the event ring.
        case log
        /// Change an argument before the original runs.
        case setArgument(Int, Int64)
    }

    /// When the rule fires.
    public enum Condition: Sendable {
        case nth(UInt64), after(UInt64), every(UInt64), times(UInt64)
        case probability(Double), seed(UInt64)
        case process(String), caller(String), site(String)
        /// After rules: the original's result in a range, or the error it failed with.
        case result(min: Int64? = nil, max: Int64? = nil), resultEquals(Int64), failedWith(String)
        /// An argument (by index) matches: equal, not equal, in a range, has bits, a glob, a
        /// prefix, or (file descriptors) the path it refers to.
        case argEquals(Int, Int64), argNotEquals(Int, Int64), argRange(Int, min: Int64?, max: Int64?)
        case argMask(Int, String), argGlob(Int, String), argPrefix(Int, String), argFdPath(Int, String)
    }

    /// Where the rule's calls are counted (`nth`, `every`, `times`): per thread, process,
    /// process hierarchy, or across the whole table.
    public enum Scope: String, Sendable { case thread, process, hierarchy, table }
    /// At most one firing per process, or per process hierarchy.
    public enum Once: String, Sendable { case process, hierarchy }

    /// A rule on `symbol` (a catalog function, or any exported one with `prototype`).
    public init(_ position: Position, _ symbol: String, _ actions: [Action], when: [Condition] = [], id: String? = nil) {
        members = []
        if let id { members.append(("id", .string(id))) }
        members.append(("symbol", .string(symbol)))
        members.append(("position", .string(position.rawValue)))
        members.append(("action", Self.action(actions)))
        if !when.isEmpty { members.append(("when", Self.conditions(when))) }
    }

    /// Advice before the original runs: delays, signals, logs, argument changes.
    public static func before(_ symbol: String, _ actions: Action..., when: Condition..., id: String? = nil) -> Rule {
        Rule(.before, symbol, actions, when: when, id: id)
    }
    /// Advice instead of the original: a failure or a result of the rule's choosing.
    public static func instead(_ symbol: String, _ actions: Action..., when: Condition..., id: String? = nil) -> Rule {
        Rule(.instead, symbol, actions, when: when, id: id)
    }
    /// Advice after the original returned: change its result (conditions may test it).
    public static func after(_ symbol: String, _ actions: Action..., when: Condition..., id: String? = nil) -> Rule {
        Rule(.after, symbol, actions, when: when, id: id)
    }

    /// More functions under the same rule and counter (`"symbol": [...]`).
    public func alsoOn(_ symbols: String...) -> Rule {
        var r = self
        let first = members.first { $0.0 == "symbol" }.map { $0.1 }
        var names: [JSONNode.Value] = first.map { [$0] } ?? []
        names += symbols.map { .string($0) }
        r.set("symbol", JSONOut.array(names))
        return r
    }
    /// A catalog family instead of one function (`"family": "write"`).
    public func family(_ name: String) -> Rule {
        var r = self
        r.members.removeAll { $0.0 == "symbol" }
        r.members.insert(("family", .string(name)), at: r.members.firstIndex { $0.0 == "position" } ?? 0)
        return r
    }
    /// Where the rule's calls are counted.
    public func scope(_ s: Scope) -> Rule { var r = self; r.set("scope", .string(s.rawValue)); return r }
    /// At most one firing per process or process hierarchy.
    public func once(_ o: Once) -> Rule { var r = self; r.set("once", .string(o.rawValue)); return r }
    /// One firing in the whole table, then the rule is gone (Aspects' AspectOptionAutomaticRemoval).
    public func autoRemove() -> Rule { var r = self; r.set("autoRemove", .bool(true)); return r }
    /// Allow errors the function's documentation does not list.
    public func allowAnyErrno() -> Rule { var r = self; r.set("allowAnyErrno", .bool(true)); return r }
    /// For a function outside the catalog: its C declaration (and structs by value, variadics).
    public func prototype(_ declaration: String, types: [String: [String]] = [:], variadic: [String] = []) -> Rule {
        var r = self
        r.set("prototype", .string(declaration))
        if !types.isEmpty { r.set("types", JSONOut.object(types.sorted { $0.key < $1.key }.map { ($0.key, JSONOut.array($0.value.map { .string($0) })) })) }
        if !variadic.isEmpty { r.set("variadic", JSONOut.array(variadic.map { .string($0) })) }
        return r
    }

    /// The rule JSON, as a rules file would hold it.
    public var json: String { JSONOut.object(members.map { ($0.0, $0.1) }).rendered() }
    /// The rule JSON.
    public var description: String { json }

    /// The rule as the table writer takes it, validated (errors name the field and the fix).
    public func compiled() throws(AspectsError) -> [CompiledRule] {
        try RuleCompiler().compile(try RuleDecoder(source: "Rule").decode(json))
    }

    mutating func set(_ key: String, _ value: JSONNode.Value) {
        if let i = members.firstIndex(where: { $0.0 == key }) { members[i].1 = value } else { members.append((key, value)) }
    }

    static func action(_ actions: [Action]) -> JSONNode.Value {
        var out: [(String, JSONNode.Value?)] = []
        var sets: [JSONNode.Value] = []
        for a in actions {
            switch a {
            case .fail(let e): out.append(("fail", .string(e)))
            case .failWithOneOf(let es): out.append(("fail", JSONOut.array(es.map { .string($0) })))
            case .failDefault: out.append(("fail", .bool(true)))
            case .return(let v): out.append(("return", .number(String(v))))
            case .returnDouble(let v): out.append(("return", .number(String(v))))
            case .errno(let e): out.append(("errno", .string(e)))
            case .delay(let d): out.append(("delay", .string(d)))
            case .signal(let s): out.append(("signal", .string(s)))
            case .log: out.append(("log", .bool(true)))
            case .setArgument(let i, let v): sets.append(JSONOut.object([("arg", JSONOut.int(i)), ("value", .number(String(v)))]))
            }
        }
        if !sets.isEmpty { out.append(("args", JSONOut.array(sets))) }
        return JSONOut.object(out)
    }

    static func conditions(_ when: [Condition]) -> JSONNode.Value {
        var out: [(String, JSONNode.Value?)] = []
        var args: [JSONNode.Value] = []
        var result: [(String, JSONNode.Value?)] = []
        func arg(_ i: Int, _ k: String, _ v: JSONNode.Value) { args.append(JSONOut.object([("arg", JSONOut.int(i)), (k, v)])) }
        for c in when {
            switch c {
            case .nth(let n): out.append(("nth", JSONOut.int(n)))
            case .after(let n): out.append(("after", JSONOut.int(n)))
            case .every(let n): out.append(("every", JSONOut.int(n)))
            case .times(let n): out.append(("times", JSONOut.int(n)))
            case .probability(let p): out.append(("probability", .number(String(p))))
            case .seed(let s): out.append(("seed", JSONOut.int(s)))
            case .process(let g): out.append(("process", .string(g)))
            case .caller(let g): out.append(("caller", .string(g)))
            case .site(let s): out.append(("site", .string(s)))
            case .result(let lo, let hi):
                if let lo { result.append(("min", .number(String(lo)))) }
                if let hi { result.append(("max", .number(String(hi)))) }
            case .resultEquals(let v): result.append(("eq", .number(String(v))))
            case .failedWith(let e): out.append(("errno", .string(e)))
            case .argEquals(let i, let v): arg(i, "eq", .number(String(v)))
            case .argNotEquals(let i, let v): arg(i, "ne", .number(String(v)))
            case .argRange(let i, let lo, let hi):
                args.append(JSONOut.object([("arg", JSONOut.int(i)), ("min", lo.map { .number(String($0)) }), ("max", hi.map { .number(String($0)) })]))
            case .argMask(let i, let m): arg(i, "mask", .string(m))
            case .argGlob(let i, let g): arg(i, "glob", .string(g))
            case .argPrefix(let i, let p): arg(i, "prefix", .string(p))
            case .argFdPath(let i, let g): arg(i, "fdpath", .string(g))
            }
        }
        if !result.isEmpty { out.append(("result", JSONOut.object(result))) }
        if !args.isEmpty { out.append(("args", JSONOut.array(args))) }
        return JSONOut.object(out)
    }
}
