import AspectsCore

/// A rule of the rule language (docs/rules.md), as written by the user and decoded from JSON.
/// `RuleCompiler` checks it against the catalog and turns it into what the table holds.
package struct Rule: Sendable, Equatable {
    package enum Position: String, Sendable, CaseIterable { case before, instead, after }
    package enum Scope: String, Sendable, CaseIterable { case thread, process, hierarchy, table }
    package enum Once: String, Sendable, CaseIterable { case process, hierarchy }

    /// The token that removes the rule; generated (r1, r2, ...) when absent.
    package var id: String?
    package var symbol: String
    package var prototype: String?
    package var position: Position
    /// A `"fail"` rule written without "position": the compiler takes the catalog's failure
    /// position of each function it applies to (`after` for close and fsync, else `instead`).
    package var positionFromCatalog = false
    package var action: Action
    package var when: Conditions
    package var scope: Scope
    package var autoRemove: Bool
    package var once: Once?
    package var allowAnyErrno: Bool
    /// For a function advised from its prototype: what `"fail"` returns (and errno it sets).
    package var failure: Failure?
    /// For a variadic prototype: the types of the optional arguments to forward (`["int"]`).
    package var variadic: [String]?
    /// Structs the prototype passes or returns by value, with their field types in order:
    /// `{"struct pair": ["double", "double"]}`.
    package var types: [String: [String]] = [:]
    /// The rule's JSON object as it was written (nil for rules made in code): the table keeps
    /// it, with the id and any drawn seed written in, for `list --rules`.
    package var source: JSONNode.Value?
    /// More functions the rule applies to, as one rule with one counter (`"symbol": [...]`).
    package var alsoSymbols: [String] = []
    /// A catalog family (`"family": "write"`): `symbol` holds its name until compiled.
    package var family: String?

    package struct Failure: Sendable, Equatable {
        package var returnValue: Int64
        package var errno: String?
        /// The number as written (the compiler reads it by the return type: 42.5 for a double).
        package var returnLiteral: String?
        package init(returnValue: Int64, errno: String?, returnLiteral: String? = nil) {
            self.returnValue = returnValue
            self.errno = errno
            self.returnLiteral = returnLiteral
        }
    }

    package init(id: String? = nil, symbol: String, prototype: String? = nil, position: Position,
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
package struct Action: Sendable, Equatable {
    package enum Fail: Sendable, Equatable {
        /// `"fail": true`: the catalog's default error of the function.
        case catalogDefault
        /// `"fail": "ENOSPC"` (or an EAI_* name for getaddrinfo-style functions).
        case named(String)
        /// `"fail": ["EIO", "ENOSPC"]`: each firing draws one, from (seed, rule, call number).
        case oneOf([String])
    }

    /// `{"arg": 2, "value": 1}`: overwrite an argument before the original runs.
    package struct ArgSet: Sendable, Equatable {
        package var arg: Int
        package var value: Int64
        package init(arg: Int, value: Int64) { self.arg = arg; self.value = value }
    }

    package var fail: Fail?
    /// `"return"`: the value the caller gets.
    package var returnValue: Int64?
    /// The number as written in the rule (true/false as 1/0): the compiler reads it by the
    /// function's return type (a double's 42.5, an unsigned 2^64-1, a bool's 0 or 1).
    package var returnLiteral: String?
    /// `"return": [1.5, 2]` for a function returning a struct by value (declared in "types"):
    /// each field's value, in field order. Written as an object, `"return": {"re": 1.5, "im": 2}`,
    /// the values in the order written and their field names in `returnFieldNames`.
    package var returnFields: [String]?
    /// The field names of `"return": {...}`, one per value of `returnFields`; nil for the list
    /// form. The compiler orders them by the names declared in "types" (`"double re"`).
    package var returnFieldNames: [String]?
    /// `"errno"`: with `return`, the errno the caller sees.
    package var errno: String?
    /// `"delay"`: sleep this long (written "50ms", "2s", "1.5s", "250us").
    package var delayNanoseconds: UInt64?
    /// `"signal"`: raise it in the calling thread.
    package var signal: String?
    /// `"log": true`: record the call in the table's event ring.
    package var log: Bool
    package var args: [ArgSet]
    /// `"call": "PATH/libadvice.so:function"`: advice as code (aspects_advice.h).
    package var call: AdviceCall?
    /// `"corrupt": {"arg": 1, "bits": 1}`: after the call, flip seeded bits of the bytes it
    /// returned in that argument.
    package var corrupt: Corruption?
    /// `"short": true`: the original transfers a seeded part of the count it was given.
    package var short: Bool = false
    /// `"context": true`: the rule's events record the call's calling context (the site and
    /// the callers above it), which `events` prints and explore's survey learns contexts from.
    package var recordContext: Bool = false

    /// Where a `call` action's function is: the object as written and as the loader will be
    /// given it (a path made absolute against the rules file's directory, or a bare soname),
    /// and the function's name.
    package struct AdviceCall: Sendable, Equatable {
        /// The object as the rule wrote it.
        package var written: String
        /// The object as dlopen takes it: an absolute path, or a bare name (no '/') that the
        /// loader searches for.
        package var object: String
        package var function: String
        package init(written: String, object: String, function: String) {
            self.written = written
            self.object = object
            self.function = function
        }
        /// `object:function`, as the table stores and `list --rules` gives it back.
        package var target: String { object + ":" + function }
    }

    /// `"corrupt"`: which argument holds the bytes, and how many bits of them to flip.
    package struct Corruption: Sendable, Equatable {
        package var arg: Int
        package var bits: Int
        package init(arg: Int, bits: Int) { self.arg = arg; self.bits = bits }
    }

    package init(fail: Fail? = nil, returnValue: Int64? = nil, errno: String? = nil, delayNanoseconds: UInt64? = nil,
                signal: String? = nil, log: Bool = false, args: [ArgSet] = []) {
        self.fail = fail
        self.returnValue = returnValue
        self.errno = errno
        self.delayNanoseconds = delayNanoseconds
        self.signal = signal
        self.log = log
        self.args = args
    }

    package var isEmpty: Bool {
        fail == nil && returnValue == nil && errno == nil && delayNanoseconds == nil && signal == nil && !log && args.isEmpty
            && call == nil && corrupt == nil && !short
    }
}

/// When a rule fires: all conditions must hold.
package struct Conditions: Sendable, Equatable {
    /// Fire on exactly the nth matching call (1-based).
    package var nth: UInt64?
    /// Fire only on matching calls after this many.
    package var after: UInt64?
    /// Fire on every k-th matching call.
    package var every: UInt64?
    /// With `every`: the first call it fires on (then every k-th after it: first, first + k,
    /// ...), strace's when=N+STEP; without it `every` fires on the multiples of k.
    package var first: UInt64?
    /// Fire at most this many times.
    package var times: UInt64?
    package var probability: Double?
    package var seed: UInt64?
    package var args: [ArgMatcher]
    package var process: String?
    package var caller: String?
    /// One call site (`object+0xOFFSET`, as events print it): only calls from there match,
    /// and `nth` counts among them.
    package var site: String?
    /// A calling context: the call site first, then its callers (`object+0xOFFSET` each),
    /// 1 to ASPECTS_MAX_CONTEXT_DEPTH frames; only calls made through them match, and `nth`
    /// counts among them.
    package var context: [String]?
    /// After rules: the original's result lies in this range (`"result": {"min": 0}`).
    package var result: ResultRange?
    /// After rules: the original failed with this error (`"errno": "EINTR"`).
    package var errno: String?

    package init(nth: UInt64? = nil, after: UInt64? = nil, every: UInt64? = nil, times: UInt64? = nil,
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
package struct ArgMatcher: Sendable, Equatable {
    /// An integer as written: a number (kept as its 64 bits), or flag names such as
    /// `O_CREAT|O_EXCL` that the catalog resolves for the argument's flag set.
    package enum Value: Sendable, Equatable {
        case number(UInt64)
        case flags([String])
    }

    package enum Kind: Sendable, Equatable {
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

    package var arg: Int
    package var kind: Kind
    /// The argument named rather than numbered (`"arg": "path"`): the compiler takes its index
    /// from each function's prototype (`arg` is then unused), so a rule on `open` and `openat`
    /// tests the path of each.
    package var argName: String?

    package init(arg: Int, kind: Kind) {
        self.arg = arg
        self.kind = kind
    }

    package init(argName: String, kind: Kind) {
        self.arg = 0
        self.kind = kind
        self.argName = argName
    }
}

/// What an original returned, for `"when": {"result": ...}`: an inclusive range, and
/// optionally below the value of one of the call's integer arguments (`"lt_arg": 2`: a write
/// that returned less than its count, "only when it returned short").
package struct ResultRange: Sendable, Equatable {
    package var min: Int64 = .min
    package var max: Int64 = .max
    /// `"lt_arg"`: the 0-based index of the integer argument the result must be below.
    package var ltArg: Int?

    package init(min: Int64 = .min, max: Int64 = .max, ltArg: Int? = nil) {
        self.min = min
        self.max = max
        self.ltArg = ltArg
    }
}
