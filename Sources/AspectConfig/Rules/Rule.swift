/// A rule of the rule language (docs/rules.md), as written by the user and decoded from JSON.
/// `RuleCompiler` checks it against the catalog and turns it into what the table holds.
public struct Rule: Sendable, Equatable {
    public enum Position: String, Sendable, CaseIterable { case before, instead, after }
    public enum Scope: String, Sendable, CaseIterable { case thread, process, hierarchy, table }
    public enum Once: String, Sendable, CaseIterable { case process, hierarchy }

    /// The token that removes the rule; generated (r1, r2, ...) when absent.
    public var id: String?
    public var symbol: String
    public var prototype: String?
    public var position: Position
    /// A `"fail"` rule written without "position": the compiler takes the catalog's failure
    /// position of each function it applies to (`after` for close and fsync, else `instead`).
    public var positionFromCatalog = false
    public var action: Action
    public var when: Conditions
    public var scope: Scope
    public var autoRemove: Bool
    public var once: Once?
    public var allowAnyErrno: Bool
    /// For a function advised from its prototype: what `"fail"` returns (and errno it sets).
    public var failure: Failure?
    /// For a variadic prototype: the types of the optional arguments to forward (`["int"]`).
    public var variadic: [String]?
    /// Structs the prototype passes or returns by value, with their field types in order:
    /// `{"struct pair": ["double", "double"]}`.
    public var types: [String: [String]] = [:]
    /// The rule's JSON object as it was written (nil for rules made in code): the table keeps
    /// it, with the id and any drawn seed written in, for `list --rules`.
    public var source: JSONNode.Value?
    /// More functions the rule applies to, as one rule with one counter (`"symbol": [...]`).
    public var alsoSymbols: [String] = []
    /// A catalog family (`"family": "write"`): `symbol` holds its name until compiled.
    public var family: String?

    public struct Failure: Sendable, Equatable {
        public var returnValue: Int64
        public var errno: String?
        /// The number as written (the compiler reads it by the return type: 42.5 for a double).
        public var returnLiteral: String?
        public init(returnValue: Int64, errno: String?, returnLiteral: String? = nil) {
            self.returnValue = returnValue
            self.errno = errno
            self.returnLiteral = returnLiteral
        }
    }

    public init(id: String? = nil, symbol: String, prototype: String? = nil, position: Position,
                action: Action, when: Conditions = Conditions(), scope: Scope = .process,
                autoRemove: Bool = false, once: Once? = nil, allowAnyErrno: Bool = false) {
        self.id = id
        self.symbol = symbol
        self.prototype = prototype
        self.position = position
        self.action = action
        self.when = when
        self.scope = scope
        self.autoRemove = autoRemove
        self.once = once
        self.allowAnyErrno = allowAnyErrno
    }
}

/// What a rule does when it fires. Several actions combine (e.g. `delay` + `log`).
public struct Action: Sendable, Equatable {
    public enum Fail: Sendable, Equatable {
        /// `"fail": true`: the catalog's default error of the function.
        case catalogDefault
        /// `"fail": "ENOSPC"` (or an EAI_* name for getaddrinfo-style functions).
        case named(String)
        /// `"fail": ["EIO", "ENOSPC"]`: each firing draws one, from (seed, rule, call number).
        case oneOf([String])
    }

    /// `{"arg": 2, "value": 1}`: overwrite an argument before the original runs.
    public struct ArgSet: Sendable, Equatable {
        public var arg: Int
        public var value: Int64
        public init(arg: Int, value: Int64) { self.arg = arg; self.value = value }
    }

    public var fail: Fail?
    /// `"return"`: the value the caller gets.
    public var returnValue: Int64?
    /// The number as written in the rule (true/false as 1/0): the compiler reads it by the
    /// function's return type (a double's 42.5, an unsigned 2^64-1, a bool's 0 or 1).
    public var returnLiteral: String?
    /// `"return": [1.5, 2]` for a function returning a struct by value (declared in "types"):
    /// each field's value, in field order. Written as an object, `"return": {"re": 1.5, "im": 2}`,
    /// the values in the order written and their field names in `returnFieldNames`.
    public var returnFields: [String]?
    /// The field names of `"return": {...}`, one per value of `returnFields`; nil for the list
    /// form. The compiler orders them by the names declared in "types" (`"double re"`).
    public var returnFieldNames: [String]?
    /// `"errno"`: with `return`, the errno the caller sees.
    public var errno: String?
    /// `"delay"`: sleep this long (written "50ms", "2s", "1.5s", "250us").
    public var delayNanoseconds: UInt64?
    /// `"signal"`: raise it in the calling thread.
    public var signal: String?
    /// `"log": true`: record the call in the table's event ring.
    public var log: Bool
    public var args: [ArgSet]
    /// `"call": "PATH/libadvice.so:function"`: advice as code (aspects_advice.h).
    public var call: AdviceCall?
    /// `"corrupt": {"arg": 1, "bits": 1}`: after the call, flip seeded bits of the bytes it
    /// returned in that argument.
    public var corrupt: Corruption?
    /// `"short": true`: the original transfers a seeded part of the count it was given.
    public var short: Bool = false
    /// `"context": true`: the rule's events record the call's calling context (the site and
    /// the callers above it), which `events` prints and explore's survey learns contexts from.
    public var recordContext: Bool = false

    /// Where a `call` action's function is: the object as written and as the loader will be
    /// given it (a path made absolute against the rules file's directory, or a bare soname),
    /// and the function's name.
    public struct AdviceCall: Sendable, Equatable {
        /// The object as the rule wrote it.
        public var written: String
        /// The object as dlopen takes it: an absolute path, or a bare name (no '/') that the
        /// loader searches for.
        public var object: String
        public var function: String
        public init(written: String, object: String, function: String) {
            self.written = written
            self.object = object
            self.function = function
        }
        /// `object:function`, as the table stores and `list --rules` gives it back.
        public var target: String { object + ":" + function }
    }

    /// `"corrupt"`: which argument holds the bytes, and how many bits of them to flip.
    public struct Corruption: Sendable, Equatable {
        public var arg: Int
        public var bits: Int
        public init(arg: Int, bits: Int) { self.arg = arg; self.bits = bits }
    }

    public init(fail: Fail? = nil, returnValue: Int64? = nil, errno: String? = nil, delayNanoseconds: UInt64? = nil,
                signal: String? = nil, log: Bool = false, args: [ArgSet] = []) {
        self.fail = fail
        self.returnValue = returnValue
        self.errno = errno
        self.delayNanoseconds = delayNanoseconds
        self.signal = signal
        self.log = log
        self.args = args
    }

    public var isEmpty: Bool {
        fail == nil && returnValue == nil && errno == nil && delayNanoseconds == nil && signal == nil && !log && args.isEmpty
            && call == nil && corrupt == nil && !short
    }
}

/// When a rule fires: all conditions must hold.
public struct Conditions: Sendable, Equatable {
    /// Fire on exactly the nth matching call (1-based).
    public var nth: UInt64?
    /// Fire only on matching calls after this many.
    public var after: UInt64?
    /// Fire on every k-th matching call.
    public var every: UInt64?
    /// With `every`: the first call it fires on (then every k-th after it: first, first + k,
    /// ...), strace's when=N+STEP; without it `every` fires on the multiples of k.
    public var first: UInt64?
    /// Fire at most this many times.
    public var times: UInt64?
    public var probability: Double?
    public var seed: UInt64?
    public var args: [ArgMatcher]
    public var process: String?
    public var caller: String?
    /// One call site (`object+0xOFFSET`, as events print it): only calls from there match,
    /// and `nth` counts among them.
    public var site: String?
    /// A calling context: the call site first, then its callers (`object+0xOFFSET` each),
    /// 1 to ASPECTS_MAX_CONTEXT_DEPTH frames; only calls made through them match, and `nth`
    /// counts among them.
    public var context: [String]?
    /// After rules: the original's result lies in this range (`"result": {"min": 0}`).
    public var result: ResultRange?
    /// After rules: the original failed with this error (`"errno": "EINTR"`).
    public var errno: String?

    public init(nth: UInt64? = nil, after: UInt64? = nil, every: UInt64? = nil, times: UInt64? = nil,
                probability: Double? = nil, seed: UInt64? = nil, args: [ArgMatcher] = [],
                process: String? = nil, caller: String? = nil, site: String? = nil) {
        self.nth = nth
        self.after = after
        self.every = every
        self.times = times
        self.probability = probability
        self.seed = seed
        self.args = args
        self.process = process
        self.caller = caller
        self.site = site
    }
}

/// A condition on one argument. Exactly one kind per matcher (`min`/`max` together form one).
public struct ArgMatcher: Sendable, Equatable {
    /// An integer as written: a number (kept as its 64 bits), or flag names such as
    /// `O_CREAT|O_EXCL` that the catalog resolves for the argument's flag set.
    public enum Value: Sendable, Equatable {
        case number(UInt64)
        case flags([String])
    }

    public enum Kind: Sendable, Equatable {
        case eq(Value)
        case ne(Value)
        case range(min: Value?, max: Value?)
        case maskAny(Value)
        case maskAll(Value)
        case glob(String)
        case prefix(String)
        /// A glob on the path an fd argument refers to at the call ("*.db").
        case fdpath(String)
    }

    public var arg: Int
    public var kind: Kind
    /// The argument named rather than numbered (`"arg": "path"`): the compiler takes its index
    /// from each function's prototype (`arg` is then unused), so a rule on `open` and `openat`
    /// tests the path of each.
    public var argName: String?

    public init(arg: Int, kind: Kind) {
        self.arg = arg
        self.kind = kind
    }

    public init(argName: String, kind: Kind) {
        self.arg = 0
        self.kind = kind
        self.argName = argName
    }
}

/// What an original returned, for `"when": {"result": ...}`: an inclusive range, and
/// optionally below the value of one of the call's integer arguments (`"lt_arg": 2`: a write
/// that returned less than its count, "only when it returned short").
public struct ResultRange: Sendable, Equatable {
    public var min: Int64 = .min
    public var max: Int64 = .max
    /// `"lt_arg"`: the 0-based index of the integer argument the result must be below.
    public var ltArg: Int?

    public init(min: Int64 = .min, max: Int64 = .max, ltArg: Int? = nil) {
        self.min = min
        self.max = max
        self.ltArg = ltArg
    }
}
