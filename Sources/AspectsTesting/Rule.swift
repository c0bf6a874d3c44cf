import AspectsCore
import AspectsRules


/// One rule of the rule language, typed: `Rule.instead("write", .fail("ENOSPC"), when: .nth(3))`.
/// It is encoded to the rule JSON (`json`) and checked by the same decoder and compiler as a
/// rules file, so whatever a file can say a `Rule` can say, and what a file may not, it may not.
public struct Rule: Sendable, CustomStringConvertible {
    /// The rule as JSON members, in the order a person would write them.
    public private(set) var members: [(String, JSONNode.Value)]

    /// Where the advice runs: before the original, instead of it, or after it.
    public enum Position: String, Sendable { case before, instead, after }

    /// An error name: typed (`.fail(.ENOSPC)`, constants for every Linux errno) or written
    /// (`.fail("ENOSPC")`), which also takes the EAI_* codes of getaddrinfo-style functions.
    public struct Errno: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The name as the rule JSON writes it.
        public let name: String
        /// The error named `name` (checked when the rule is compiled).
        public init(_ name: String) { self.name = name }
        /// `"ENOSPC"` where an Errno is expected.
        public init(stringLiteral value: String) { name = value }
        /// The name.
        public var description: String { name }
    }

    /// A signal to raise: by name (`.SIGUSR1`, `"SIGUSR1"`) or by number (`10`, as strace's
    /// `signal=10`), encoded as the rule JSON takes either.
    public enum Signal: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
        /// `"signal": "SIGUSR1"` (`"USR1"` too).
        case named(String)
        /// `"signal": 10`.
        case number(Int32)
        /// `"SIGUSR1"` where a Signal is expected.
        public init(stringLiteral value: String) { self = .named(value) }
        /// `10` where a Signal is expected.
        public init(integerLiteral value: Int32) { self = .number(value) }
    }

    /// A number as the rule JSON writes it: an integer, or a floating value (`1.5`) for a
    /// double or a struct field of floating type.
    public enum Number: Sendable, Hashable, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
        /// `2`, `-1`.
        case int(Int64)
        /// `1.5`.
        case double(Double)
        /// `2` where a Number is expected.
        public init(integerLiteral value: Int64) { self = .int(value) }
        /// `1.5` where a Number is expected.
        public init(floatLiteral value: Double) { self = .double(value) }
    }

    /// An argument's value in a condition: a number, or names of the flags the catalog knows
    /// for that argument (`"O_CREAT|O_EXCL"`, `"O_APPEND"`).
    public enum Value: Sendable, Hashable, ExpressibleByIntegerLiteral, ExpressibleByStringLiteral {
        /// A number, kept as its 64 bits (`-1` is an unsigned argument's largest value).
        case number(Int64)
        /// Flag names joined with `|`, resolved by the compiler for the argument's flag set.
        case flags(String)
        /// `3` where a Value is expected.
        public init(integerLiteral value: Int64) { self = .number(value) }
        /// `"O_CREAT|O_EXCL"` where a Value is expected.
        public init(stringLiteral value: String) { self = .flags(value) }
    }

    /// What the rule does.
    public enum Action: Sendable {
        /// The function's natural failure with this error (`fail: "ENOSPC"`).
        case fail(Errno)
        /// The natural failure with one of these, drawn from the seed.
        case failWithOneOf([Errno])
        /// The natural failure with the function's default error.
        case failDefault
        /// Make it return this value (integers; `returnDouble` for floating results).
        case `return`(Int64)
        /// Make a function returning a float or double return this value.
        case returnDouble(Double)
        /// Make a function returning a struct by value (declared with `prototype` and `types`)
        /// return these fields, in order: `.returnStruct([1.5, 2])`.
        case returnStruct([Number])
        /// Set errno (with `return`).
        case errno(Errno)
        /// Wait before the call goes on (`200ms`, `1s`).
        case delay(String)
        /// Raise a signal (`.SIGUSR1`, `"SIGUSR1"` or its number).
        case signal(Signal)
        /// Record the call in the event ring.
        case log
        /// The rule's events also record the call's calling context (the site and the callers
        /// above it), as a `.context` condition takes it.
        case recordContext
        /// Change an argument before the original runs.
        case setArgument(Int, Int64)
        /// Run your own function: `"OBJECT:FUNCTION"`, a shared object built with
        /// aspects_advice.h (or a Swift library on AspectsAdvice) and the function it exports.
        /// A relative path starts at the current directory; a bare name is searched for.
        case call(String)
        /// After rules: flip `bits` seeded bits of the bytes the call returned in argument
        /// `arg` (read's buf: 1), the same bits on every run with the same seed.
        case corrupt(arg: Int, bits: Int = 1)
        /// Before rules: the original transfers a seeded part of its count and returns that
        /// (a partial read or write that a correct caller continues).
        case short
    }

    /// When the rule fires (all of the conditions hold).
    public enum Condition: Sendable {
        /// Exactly the nth matching call (from 1).
        case nth(UInt64)
        /// Only matching calls after this many.
        case after(UInt64)
        /// Every k-th matching call.
        case every(UInt64)
        /// With `.every(k)`: the first call it fires on, then every k-th after it (strace's
        /// when=N+STEP): `.every(2), .first(3)` fires on calls 3, 5, 7, ...
        case first(UInt64)
        /// At most this many firings in the rule's scope.
        case times(UInt64)
        /// Each matching call with this probability (0...1), drawn from the seed.
        case probability(Double)
        /// The seed of the draws (`probability`, `failWithOneOf`): the same seed, the same calls.
        case seed(UInt64)
        /// Only in programs whose executable's path matches this glob (without '/': its name).
        case process(String)
        /// Only calls from an object (executable or library) whose path matches this glob.
        case caller(String)
        /// Only calls from this call site, `object+0xOFFSET` as events print it.
        case site(String)
        /// Only calls made through this calling context: the call site, then its callers
        /// (`object+0xOFFSET` each, 1 to 4), as events of a `.recordContext` rule print them.
        case context([String])
        /// After rules: the original's result lies in this range.
        case result(min: Int64? = nil, max: Int64? = nil)
        /// After rules: the original returned exactly this.
        case resultEquals(Int64)
        /// After rules: the original's result is below the value of this integer argument
        /// (`.resultBelowArgument(2)` on write: it returned short).
        case resultBelowArgument(Int)
        /// After rules: the original failed with this error.
        case failedWith(Errno)
        /// Argument `index` equals the value.
        case argEquals(Int, Value)
        /// Argument `index` differs from the value.
        case argNotEquals(Int, Value)
        /// Argument `index` lies in the range (either end may be open).
        case argRange(Int, min: Value?, max: Value?)
        /// Argument `index` has any of these bits.
        case argMask(Int, Value)
        /// Argument `index` has all of these bits.
        case argMaskAll(Int, Value)
        /// String argument `index` matches the glob.
        case argGlob(Int, String)
        /// String argument `index` starts with the prefix.
        case argPrefix(Int, String)
        /// File-descriptor argument `index` refers to a path matching the glob (at the call).
        case argFdPath(Int, String)
    }

    /// Where the rule's calls are counted (`nth`, `every`, `times`): per thread, process,
    /// process hierarchy, or across the whole table.
    public enum Scope: String, Sendable { case thread, process, hierarchy, table }
    /// At most one firing per process, or per process hierarchy.
    public enum Once: String, Sendable { case process, hierarchy }

    /// A rule on `symbol` (a catalog function, or any exported one with `prototype`).
    public init(_ position: Position, _ symbol: String, _ actions: [Action], when: [Condition] = [], id: String? = nil) {
        self.init(position as Position?, symbol, actions, when: when, id: id)
    }

    /// Without a position the catalog's natural one applies (the rule language's default).
    private init(_ position: Position?, _ symbol: String, _ actions: [Action], when: [Condition], id: String?) {
        members = []
        if let id { members.append(("id", .string(id))) }
        members.append(("symbol", .string(symbol)))
        if let position { members.append(("position", .string(position.rawValue))) }
        members.append(("action", Self.action(actions)))
        if !when.isEmpty { members.append(("when", Self.conditions(when))) }
    }

    /// The function fails as it really does: with `errno` (or its default error), where the
    /// catalog says its failure happens — after its work for fsync, close and fclose (which
    /// release or write back first), instead of the call for the rest — so there is no
    /// position to get wrong and nothing for `check` to warn about:
    /// `Rule.failing("fsync", .EIO)`.
    public static func failing(_ symbol: String, _ errno: Errno? = nil, when: Condition..., id: String? = nil) -> Rule {
        Rule(nil, symbol, [errno.map(Action.fail) ?? .failDefault], when: when, id: id)
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
        r.members.insert(("family", .string(name)), at: r.members.firstIndex { $0.0 == "position" || $0.0 == "action" } ?? 0)
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
    /// For a function advised from its prototype: what `fail` makes it return, and the errno
    /// it sets (`"failure": {"return": -1, "errno": "EIO"}`); the catalog knows this for its own.
    public func failure(returns value: Number, errno: Errno? = nil) -> Rule {
        var r = self
        r.set("failure", JSONOut.object([("return", Self.number(value)), ("errno", errno.map { .string($0.name) })]))
        return r
    }
    /// A note for the reader of the rule (`"comment"`); the rule language ignores it.
    public func comment(_ text: String) -> Rule { var r = self; r.set("comment", .string(text)); return r }
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
            case .fail(let e): out.append(("fail", .string(e.name)))
            case .failWithOneOf(let es): out.append(("fail", JSONOut.array(es.map { .string($0.name) })))
            case .failDefault: out.append(("fail", .bool(true)))
            case .return(let v): out.append(("return", .number(String(v))))
            case .returnDouble(let v): out.append(("return", number(.double(v))))
            case .returnStruct(let fields): out.append(("return", JSONOut.array(fields.map(number))))
            case .errno(let e): out.append(("errno", .string(e.name)))
            case .delay(let d): out.append(("delay", .string(d)))
            case .signal(.named(let s)): out.append(("signal", .string(s)))
            case .signal(.number(let n)): out.append(("signal", .number(String(n))))
            case .log: out.append(("log", .bool(true)))
            case .recordContext: out.append(("context", .bool(true)))
            case .setArgument(let i, let v): sets.append(JSONOut.object([("arg", JSONOut.int(i)), ("value", .number(String(v)))]))
            case .call(let target): out.append(("call", .string(target)))
            case .corrupt(let arg, let bits): out.append(("corrupt", JSONOut.object([("arg", JSONOut.int(arg)), ("bits", JSONOut.int(bits))])))
            case .short: out.append(("short", .bool(true)))
            }
        }
        if !sets.isEmpty { out.append(("args", JSONOut.array(sets))) }
        return JSONOut.object(out)
    }

    static func number(_ n: Number) -> JSONNode.Value {
        switch n {
        case .int(let v): return .number(String(v))
        case .double(let v): return .number(String(v))
        }
    }

    static func value(_ v: Value) -> JSONNode.Value {
        switch v {
        case .number(let n): return .number(String(n))
        case .flags(let names): return .string(names)
        }
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
            case .first(let n): out.append(("first", JSONOut.int(n)))
            case .times(let n): out.append(("times", JSONOut.int(n)))
            case .probability(let p): out.append(("probability", .number(String(p))))
            case .seed(let s): out.append(("seed", JSONOut.int(s)))
            case .process(let g): out.append(("process", .string(g)))
            case .caller(let g): out.append(("caller", .string(g)))
            case .site(let s): out.append(("site", .string(s)))
            case .context(let frames): out.append(("context", JSONOut.array(frames.map { .string($0) })))
            case .result(let lo, let hi):
                if let lo { result.append(("min", .number(String(lo)))) }
                if let hi { result.append(("max", .number(String(hi)))) }
            case .resultEquals(let v): result.append(("eq", .number(String(v))))
            case .resultBelowArgument(let i): result.append(("lt_arg", JSONOut.int(i)))
            case .failedWith(let e): out.append(("errno", .string(e.name)))
            case .argEquals(let i, let v): arg(i, "eq", value(v))
            case .argNotEquals(let i, let v): arg(i, "ne", value(v))
            case .argRange(let i, let lo, let hi):
                args.append(JSONOut.object([("arg", JSONOut.int(i)), ("min", lo.map(value)), ("max", hi.map(value))]))
            case .argMask(let i, let m): arg(i, "mask", value(m))
            case .argMaskAll(let i, let m): args.append(JSONOut.object([("arg", JSONOut.int(i)), ("mask", value(m)), ("all", .bool(true))]))
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
