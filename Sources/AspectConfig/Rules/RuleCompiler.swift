import CAspectsABI

/// A rule checked against the catalog, in the form the table stores.
public struct CompiledRule: Sendable, Equatable {
    public struct Matcher: Sendable, Equatable {
        public var arg: Int
        public var kind: UInt8      // enum aspects_match_kind
        public var type: ABIType
        public var a: UInt64
        public var b: UInt64
        public var pattern: String?
    }

    public var rule: Rule
    /// The export the rule names (for display) and the alias group it applies to.
    public var function: CatalogFunction
    public var group: Int
    public var position: UInt32
    public var actions: UInt32
    public var errnoValue: Int32
    public var returnValue: Int64
    public var delayNanoseconds: UInt64
    public var signalNumber: UInt32
    public var scope: UInt32
    public var flags: UInt32
    public var matchers: [Matcher]
    public var argSets: [(index: UInt8, value: Int64)]
    /// `fail` with a list: the codes one is drawn from.
    public var errnoChoices: [Int32] = []
    /// `probability` as a threshold on the 64-bit draw (UInt64.max = always).
    public var probability: UInt64 = 0
    /// The seed given, or nil when the table writer must draw one.
    public var seed: UInt64?
    public var processPattern: String?
    public var callerPattern: String?
    /// `site`: the calling object's file name and the return address's offset in it.
    public var site: CallSite?
    /// `context`: its frames (the first is `site`) and their hash, as the slot stores it.
    public var context: CallContext?
    /// For a function advised from its prototype (not in the catalog): its signature. The table
    /// writer gives it a group of its own.
    public var prototype: CSignature?
    /// Its fixed parameters (the rest are forwarded variadic arguments).
    public var prototypeFixedCount = 0
    /// Struct types it passes or returns by value: their field types, and their tags in order.
    public var prototypeStructs: [[ABIType]] = []
    public var prototypeStructOrder: [String] = []
    /// A struct result's bytes, laid out as C does (aspects_rule.result_off/len).
    public var resultBytes: [UInt8]?
    /// A rule on several functions (`"symbol": [...]`, `"family"`): the groups besides
    /// `group`, whose lists hold the same slot (one rule, one counter).
    public var familyGroups: [Int] = []
    /// For each of `familyGroups`, each matcher's argument number in that group (a condition
    /// on an argument named, not numbered: open's `path` is argument 0, openat's 1).
    public var familyArgs: [[UInt8]] = []
    /// Bytes of the strings area the patterns take (the family list goes after them).
    public var stringBytes = 0
    /// After rules: the original's result range and errno (aspects_rule.result_*).
    public var resultMin: Int64 = 0, resultMax: Int64 = 0
    public var resultErrno: Int32 = 0
    public var resultChecks: UInt32 = 0
    /// `"lt_arg"` (result check bit 2): the group's argument the result must be below.
    public var resultArg: UInt32 = 0
    /// `call`: the object as dlopen takes it and the function's name.
    public var callObject: String?
    public var callFunction: String?
    /// `corrupt`, `short`: the group's arguments holding the data, its count and the item size
    /// (ASPECTS_NO_ARG: a byte count), from the catalog's `data:` line.
    public var dataBuffer = UInt8(ASPECTS_NO_ARG), dataCount = UInt8(ASPECTS_NO_ARG), dataSize = UInt8(ASPECTS_NO_ARG)
    /// `corrupt`: bits flipped per firing.
    public var corruptBits: UInt32 = 0

    public static func == (a: CompiledRule, b: CompiledRule) -> Bool {
        a.rule == b.rule && a.group == b.group && a.actions == b.actions && a.matchers == b.matchers
            && a.returnValue == b.returnValue && a.errnoValue == b.errnoValue
    }

}

/// Checks decoded rules against the catalog and compiles them. Validation happens in full
/// before anything is written: a file with one bad rule writes nothing.
public struct RuleCompiler: Sendable {
    public var catalog: Catalog

    public init(catalog: Catalog = .builtIn) { self.catalog = catalog }

    public func compile(_ rules: [Rule]) throws(AspectsError) -> [CompiledRule] {
        let (compiled, errors) = compileEach(rules)
        if let first = errors.first { throw first }
        return compiled
    }

    /// Every rule that compiles, and the error of each one that does not (`check` reports
    /// them all).
    /// `positions`: each rule's place in its file (from 1), when some rules of it were left out.
    public func compileEach(_ rules: [Rule], positions: [Int]? = nil) -> (compiled: [CompiledRule], errors: [AspectsError]) {
        var out: [CompiledRule] = []
        var errors: [AspectsError] = []
        var ids: [String: Int] = [:]
        let single = (positions?.count ?? rules.count) == 1 && positions?.first ?? 1 == 1
        for (n, r) in rules.enumerated() {
            let place = positions.map { n < $0.count ? $0[n] : n + 1 } ?? n + 1
            let label = r.id.map { "rule \"\($0)\"" } ?? (single ? "rule" : "rule \(place)")
            if let id = r.id {
                if let first = ids[id] {
                    errors.append(AspectsError(.duplicateID, rule: label, field: "id", "id \"\(id)\" is used by rule \(first) too", fix: "give each rule its own id"))
                    continue
                }
                ids[id] = place
            }
            do { out.append(try compile(r, label: label)) } catch { errors.append(error) }
        }
        return (out, errors)
    }

    public func compile(_ r: Rule, label: String) throws(AspectsError) -> CompiledRule {
        if r.family != nil || !r.alsoSymbols.isEmpty { return try compileFamily(r, label: label) }
        return try compileOne(r, label: label)
    }

    /// A rule on several functions: compiled for each, and accepted only when it means the
    /// same for all of them (the same argument numbers and types, the same failure); then one
    /// slot in every member group's list.
    func compileFamily(_ r: Rule, label: String) throws(AspectsError) -> CompiledRule {
        let field = r.family != nil ? "family" : "symbol"
        let names: [String]
        if let family = r.family {
            guard let members = catalog.families[family] else {
                throw AspectsError(.unknownSymbol, rule: label, field: "family", "there is no family \"\(family)\"",
                                   fix: "families: \(catalog.families.keys.sorted().joined(separator: ", ")); or list the functions in \"symbol\"")
            }
            names = members
        } else {
            names = [r.symbol] + r.alsoSymbols
        }
        if r.prototype != nil {
            throw AspectsError(.invalidValue, rule: label, field: "prototype", "a rule on several functions takes catalog functions only",
                               fix: "give prototype rules one function each")
        }
        var compiled: [CompiledRule] = []
        for name in names {
            var one = r
            one.symbol = name
            one.alsoSymbols = []
            one.family = nil
            guard catalog.function(named: name) != nil else {
                let near = ErrorNames.suggestions(for: name, in: catalog.functions.map(\.name))
                throw AspectsError(.unknownSymbol, rule: label, field: field, "\(name) is not in the catalog",
                                   fix: near.isEmpty ? "a rule on several functions takes catalog functions only" : "did you mean \(near.joined(separator: " or "))?")
            }
            let c: CompiledRule
            do { c = try compileOne(one, label: label) } catch {
                var e = error
                e.message = "for \(name): " + e.message
                throw e
            }
            if !compiled.contains(where: { $0.group == c.group }) { compiled.append(c) } // an alias of one already named
        }
        guard var first = compiled.first else { throw AspectsError(.invalidValue, rule: label, field: field, "no function named") }
        if compiled.count - 1 > Int(ASPECTS_MAX_FAMILY) {
            throw AspectsError(.limit, rule: label, field: field, "\(compiled.count) functions; one rule applies to at most \(ASPECTS_MAX_FAMILY + 1)")
        }
        for c in compiled.dropFirst() {
            let differs: String?
            if c.actions != first.actions || c.returnValue != first.returnValue || c.errnoValue != first.errnoValue || c.errnoChoices != first.errnoChoices {
                differs = "its failure (\(c.function.name) returns \(c.returnValue), \(first.function.name) \(first.returnValue))"
            } else if c.matchers.count != first.matchers.count || c.matchers.indices.contains(where: { i in
                // a named argument may sit elsewhere in each function; it must be of one type
                var mine = c.matchers[i]
                if r.when.args[i].argName != nil { mine.arg = first.matchers[i].arg }
                return mine != first.matchers[i]
            }) {
                differs = "\"when.args\": an argument has another number or type in \(c.function.declaration) (a condition may name its argument, e.g. \"arg\": \"path\", to mean that argument wherever it is)"
            } else if c.argSets.map(\.index) != first.argSets.map(\.index) || c.argSets.map(\.value) != first.argSets.map(\.value) {
                differs = "\"action.args\": an argument has another number in \(c.function.declaration)"
            } else if c.callObject != first.callObject || c.callFunction != first.callFunction || c.dataBuffer != first.dataBuffer
                        || c.dataCount != first.dataCount || c.dataSize != first.dataSize || c.corruptBits != first.corruptBits {
                differs = "where its data is (\(c.function.declaration))"
            } else if c.resultArg != first.resultArg {
                differs = "\"when.result.lt_arg\": the argument has another number in \(c.function.declaration)"
            } else if c.position != first.position && r.positionFromCatalog {
                differs = "\"position\": the catalog fails \(first.function.name) and \(c.function.name) at different places (one after its work, one instead of it); write \"position\""
            } else if c.flags != first.flags || c.position != first.position || c.scope != first.scope || c.resultBytes != first.resultBytes {
                differs = "how it applies to \(c.function.name)"
            } else {
                differs = nil
            }
            if let differs {
                throw AspectsError(.invalidValue, rule: label, field: field, "the rule does not mean the same for \(c.function.name) as for \(first.function.name): \(differs)",
                                   fix: "split it into one rule per function, or keep to what they share (e.g. argument 0, the fd)")
            }
        }
        let familyBytes = (first.stringBytes + 1) / 2 * 2 + (2 + first.matchers.count) * (compiled.count - 1)
        if familyBytes + (first.resultBytes?.count ?? 0) > Int(ASPECTS_RULE_STRINGS_SIZE) {
            throw AspectsError(.limit, rule: label, field: "when.args", "the patterns and the \(compiled.count) functions take \(familyBytes) bytes; a rule holds \(ASPECTS_RULE_STRINGS_SIZE)")
        }
        first.familyGroups = compiled.dropFirst().map(\.group)
        first.familyArgs = compiled.dropFirst().map { $0.matchers.map { UInt8($0.arg) } }
        first.rule = r
        first.rule.symbol = first.function.name
        first.flags |= ASPECTS_RULE_FAMILY.rawValue
        return first
    }

    /// `"when": {"result": ..., "errno": ...}`: conditions on what the original did, for after
    /// rules. An errno means the call failed: the result is the function's failure value.
    func compileResultCondition(_ r: Rule, sig: CSignature, function: CatalogFunction, group: CatalogGroup, into c: inout CompiledRule, label: String) throws(AspectsError) {
        let w = r.when
        guard w.result != nil || w.errno != nil else { return }
        let field = w.result != nil ? "when.result" : "when.errno"
        guard r.position == .after else {
            throw AspectsError(.positionNotAllowed, rule: label, field: field, "a condition on the result needs an \"after\" rule: before and instead advice decide before the original returns",
                               fix: "use \"position\": \"after\"")
        }
        guard sig.returnType.isInteger || sig.returnType.isPointer else {
            throw AspectsError(.matcherType, rule: label, field: field, "\(r.symbol) returns \(sig.returnType == .void ? "nothing" : "a \(sig.returnType)"): only integer and pointer results can be compared")
        }
        var range = w.result ?? ResultRange()
        var checks: UInt32 = range.min != .min || range.max != .max ? 1 : 0
        if let arg = range.ltArg {
            // The preload compares the result with the argument's value as the call passed
            // it, so only an integer argument has a value to compare with.
            let field = "when.result.lt_arg"
            guard arg < sig.parameters.count else {
                let list = sig.parameters.enumerated().map { "\($0.offset): \($0.element.spelling)\($0.element.name.map { " " + $0 } ?? "")" }.joined(separator: ", ")
                throw AspectsError(.argOutOfRange, rule: label, field: field, "\(r.symbol) has \(sig.parameters.count) argument(s) (\(list)); index \(arg) is past them",
                                   fix: "arguments are numbered from 0")
            }
            let p = sig.parameters[arg]
            let describe = "argument \(arg) of \(r.symbol) (\(p.spelling)\(p.name.map { " " + $0 } ?? ""))"
            guard p.type.isInteger else {
                throw AspectsError(.matcherType, rule: label, field: field, "\(describe) is not an integer, so the result cannot be compared with it",
                                   fix: "name an integer argument, such as a count or a size")
            }
            guard sig.returnType.isInteger else {
                throw AspectsError(.matcherType, rule: label, field: field, "\(r.symbol) returns a \(sig.returnType), not a number to compare with \(describe)")
            }
            guard let g = function.groupIndex(ofArgument: arg) else {
                throw AspectsError(.argOutOfRange, rule: label, field: field, "\(describe) has no counterpart in \(catalog.primary(of: group).name), so the rule could not apply to the whole group",
                                   fix: "write the rule on \(catalog.primary(of: group).name)")
            }
            c.resultArg = UInt32(g)
            checks |= 4
        }
        if let name = w.errno {
            guard let code = ErrorNames.errno(name) else {
                throw AspectsError(.unknownErrno, rule: label, field: "when.errno", "unknown errno name \"\(name)\"", fix: errnoHint(name))
            }
            guard group.failure.setsErrno, let failed = group.failure.returnValue(for: code) else {
                throw AspectsError(.invalidValue, rule: label, field: "when.errno", "\(r.symbol) does not report failures through errno", fix: "use \"result\" instead")
            }
            if !r.allowAnyErrno && !group.errnos.contains(name) {
                throw AspectsError(.errnoNotAllowed, rule: label, field: "when.errno", "\(r.symbol) cannot fail with \(name) (its errors: \(group.errnos.joined(separator: " ")))",
                                   fix: "pick one of those, or add \"allowAnyErrno\": true")
            }
            guard range.min <= failed && failed <= range.max else {
                throw AspectsError(.invalidValue, rule: label, field: "when.result", "the result range excludes \(failed), what \(r.symbol) returns when it fails with \(name): the rule could never fire",
                                   fix: "drop \"result\" (\"errno\" alone means the call failed)")
            }
            range = ResultRange(min: failed, max: failed, ltArg: range.ltArg)
            checks |= 3
            c.resultErrno = code
        }
        c.resultMin = range.min
        c.resultMax = range.max
        c.resultChecks = checks
        c.flags |= ASPECTS_RULE_HAS_RESULT.rawValue
    }

    func compileOne(_ r: Rule, label: String) throws(AspectsError) -> CompiledRule {
        var r = r
        func fail(_ code: AspectsError.Code, _ field: String?, _ message: String, fix: String? = nil) -> AspectsError {
            AspectsError(code, rule: label, field: field, message, fix: fix)
        }
        // The symbol.
        if let refused = catalog.refusal(for: r.symbol) {
            throw fail(.refusedSymbol, "symbol", "\(r.symbol) cannot be advised: \(refused.reason)")
        }
        let function: CatalogFunction
        let group: CatalogGroup
        var prototypeSignature: CSignature?
        if let f = catalog.function(named: r.symbol) {
            function = f
            group = catalog.group(of: f)
        } else {
            guard let proto = r.prototype else {
                let near = ErrorNames.suggestions(for: r.symbol, in: catalog.functions.map(\.name))
                throw fail(.unknownSymbol, "symbol", "\(r.symbol) is not in the catalog",
                           fix: near.isEmpty ? "see `aspectctl catalog` for what can be advised, or give its \"prototype\"" : "did you mean \(near.joined(separator: " or "))?")
            }
            (function, group) = try prototypeFunction(r, proto, label: label)
            prototypeSignature = function.signature
        }
        if r.positionFromCatalog { r.position = group.failurePosition }
        let sig = function.signature
        if let proto = r.prototype, prototypeSignature == nil {
            let given: CSignature
            do { given = try PrototypeParser().parse(proto) } catch {
                throw fail(.badPrototype, "prototype", "\(error)", fix: "write a C declaration such as \"\(sig.declaration)\"")
            }
            var expected = sig
            if expected.isVariadic { expected.parameters.removeLast(expected.parameters.count - function.fixedCount) }
            if given.name != r.symbol || !given.abiEquals(expected) {
                throw fail(.prototypeMismatch, "prototype", "\"\(proto)\" does not match the catalog's \(sig.declaration)",
                           fix: "drop \"prototype\" (catalog functions do not need one) or correct it")
            }
        }
        // Position and actions.
        let a = r.action
        if group.isNoReturn && r.position != .before {
            throw fail(.positionNotAllowed, "position", "\(r.symbol) never returns, so only \"before\" advice can run", fix: "use \"position\": \"before\"")
        }
        let changesResult = a.fail != nil || a.returnValue != nil || a.errno != nil
        if r.position == .before && changesResult {
            throw fail(.positionNotAllowed, "position", "\"before\" advice runs before the original and cannot change its result",
                       fix: "use \"instead\" to replace the call, or \"after\" to change its result afterwards")
        }
        if r.position == .instead && a.fail == nil && a.returnValue == nil && a.call == nil {
            throw fail(.invalidValue, "action", "\"instead\" advice replaces the call, so it must say what the caller gets",
                       fix: "add \"fail\": true, \"fail\": \"E...\", \"return\": N or \"call\" (or use \"before\" for a delay or log)")
        }
        if r.position != .before && !a.args.isEmpty {
            throw fail(.positionNotAllowed, "action.args", "arguments can only be changed before the original runs", fix: "use \"position\": \"before\"")
        }
        if a.fail != nil && (a.returnValue != nil || a.errno != nil) {
            throw fail(.invalidValue, "action", "\"fail\" already decides the return value and errno", fix: "use either \"fail\" or \"return\" with \"errno\"")
        }
        if a.errno != nil && a.returnValue == nil {
            throw fail(.missingField, "action.return", "\"errno\" needs \"return\"", fix: "add \"return\": -1 (or use \"fail\": \"\(a.errno!)\")")
        }
        var actions: UInt32 = 0
        var returnValue: Int64 = 0
        var errnoValue: Int32 = 0
        var flags: UInt32 = 0
        var choices: [Int32] = []
        if let f = a.fail, prototypeSignature != nil {
            // No catalog entry says how this function fails: the rule's "failure" does.
            guard let failure = r.failure else {
                throw fail(.missingField, "failure", "\(r.symbol) is not in the catalog, so \"fail\" does not know what it returns when it fails",
                           fix: "add \"failure\": {\"return\": -1, \"errno\": \"EIO\"} to the rule, or use \"return\" (and \"errno\")")
            }
            var names: [String] = []
            switch f {
            case .catalogDefault: names = failure.errno.map { [$0] } ?? []
            case .named(let n): names = [n]
            case .oneOf(let list): names = list
            }
            var codes: [Int32] = []
            for n in names {
                guard let c = ErrorNames.errno(n) else {
                    throw fail(.unknownErrno, names.count == 1 && failure.errno == n ? "failure.errno" : "action.fail", "unknown errno name \"\(n)\"", fix: errnoHint(n))
                }
                codes.append(c)
            }
            guard sig.returnType != .void else {
                throw fail(.invalidValue, "failure.return", "\(r.symbol) returns void, so a failure cannot be returned", fix: "use a before/after advice")
            }
            returnValue = try resultBits(failure.returnLiteral, bits: failure.returnValue, sig: sig, symbol: r.symbol, field: "failure.return", fail: { fail($0, $1, $2, fix: $3) })
            actions |= ASPECTS_ACTION_RETURN.rawValue
            if let first = codes.first { errnoValue = first; actions |= ASPECTS_ACTION_ERRNO.rawValue }
            if codes.count > 1 { choices = codes }
        } else if let f = a.fail {
            let names: [String]
            switch f {
            case .catalogDefault, .named: names = [try failureName(f, function: function, group: group, label: label)]
            case .oneOf(let list): names = list
            }
            var codes: [Int32] = []
            for n in names { codes.append(try failureCode(n, function: function, group: group, allowAny: r.allowAnyErrno, label: label)) }
            returnValue = group.failure.returnValue(for: codes[0])!
            actions |= ASPECTS_ACTION_RETURN.rawValue
            switch group.failure {
            case _ where group.failure.setsErrno:
                errnoValue = codes[0]; actions |= ASPECTS_ACTION_ERRNO.rawValue
            case .nullHErrno:
                errnoValue = codes[0]; actions |= ASPECTS_ACTION_HERRNO.rawValue
            case .errnoReturned, .eaiCode:
                // the code is the return value: the preload returns the (drawn) error itself
                errnoValue = codes[0]; flags |= ASPECTS_RULE_RETURN_IS_CODE.rawValue
            default:
                break // NULL alone: nothing else to report
            }
            if codes.count > 1 { choices = codes }
        }
        if let v = a.returnValue, a.returnFields == nil {
            guard sig.returnType != .void else {
                throw fail(.invalidValue, "action.return", "\(r.symbol) returns void", fix: "drop \"return\"")
            }
            returnValue = try resultBits(a.returnLiteral, bits: v, sig: sig, symbol: r.symbol, field: "action.return", fail: { fail($0, $1, $2, fix: $3) })
            actions |= ASPECTS_ACTION_RETURN.rawValue
        } else if a.returnFields != nil && sig.returnType != .structure {
            // (a struct result is laid out below, from the prototype's declared structs)
            throw fail(.invalidValue, "action.return", "\(r.symbol) returns \(sig.returnSpelling.trimmingCharacters(in: .whitespaces)), so its result is one value, not \(a.returnFieldNames == nil ? "a list" : "an object") of fields",
                       fix: sig.returnType == .void ? "drop \"return\"" : "write one number")
        }
        if let name = a.errno {
            guard let e = ErrorNames.errno(name) else {
                throw fail(.unknownErrno, "action.errno", "unknown errno name \"\(name)\"", fix: errnoHint(name))
            }
            if !r.allowAnyErrno && group.failure.setsErrno && !group.errnos.contains(name) {
                throw fail(.errnoNotAllowed, "action.errno", "\(r.symbol) cannot fail with \(name) (its errors: \(group.errnos.joined(separator: " ")))",
                           fix: "pick one of those, or add \"allowAnyErrno\": true")
            }
            errnoValue = e
            actions |= ASPECTS_ACTION_ERRNO.rawValue
        }
        var delay: UInt64 = 0
        if let d = a.delayNanoseconds { delay = d; actions |= ASPECTS_ACTION_DELAY.rawValue }
        var signal: UInt32 = 0
        if let s = a.signal {
            guard let n = ErrorNames.signal(s) else {
                throw fail(.invalidValue, "action.signal", "unknown signal \"\(s)\"", fix: "use a name such as \"SIGSEGV\", \"SIGABRT\" or \"SIGKILL\"")
            }
            signal = UInt32(n)
            actions |= ASPECTS_ACTION_SIGNAL.rawValue
        }
        if a.log { actions |= ASPECTS_ACTION_LOG.rawValue }
        var argSets: [(UInt8, Int64)] = []
        for (i, s) in a.args.enumerated() {
            let field = "action.args[\(i)].arg"
            guard s.arg < sig.parameters.count else {
                throw fail(.argOutOfRange, field, "\(r.symbol) has \(sig.parameters.count) argument(s); index \(s.arg) is past them", fix: "arguments are numbered from 0")
            }
            let t = sig.parameters[s.arg].type
            guard t.isInteger else {
                throw fail(.matcherType, field, "argument \(s.arg) of \(r.symbol) is \(sig.parameters[s.arg].spelling); only integer arguments can be set")
            }
            guard t.accepts(s.value) || (t == .u64 && s.value < 0) else {
                throw fail(.invalidValue, "action.args[\(i)].value", "\(s.value) does not fit \(sig.parameters[s.arg].spelling)")
            }
            guard let g = function.groupIndex(ofArgument: s.arg) else {
                throw fail(.argOutOfRange, field, "argument \(s.arg) of \(r.symbol) has no counterpart in \(catalog.primary(of: group).name), so the rule could not apply to the whole group")
            }
            argSets.append((UInt8(g), s.value))
        }
        if argSets.count > Int(ASPECTS_MAX_ARG_SETS) {
            throw fail(.limit, "action.args", "at most \(ASPECTS_MAX_ARG_SETS) arguments can be set by one rule")
        }
        if !argSets.isEmpty { actions |= ASPECTS_ACTION_ARGS.rawValue }

        // Conditions.
        let w = r.when
        var probability: UInt64 = 0
        if let p = w.probability {
            flags |= ASPECTS_RULE_PROBABILITY.rawValue
            probability = SplitMix64.threshold(p)
        } else if w.seed != nil && choices.isEmpty && a.corrupt == nil && !a.short {
            throw fail(.invalidValue, "when.seed", "\"seed\" only matters with \"probability\", a list of errors to \"fail\" with, \"corrupt\" or \"short\"",
                       fix: "add \"probability\", or drop \"seed\"")
        }
        if r.autoRemove { flags |= ASPECTS_RULE_AUTOREMOVE.rawValue }
        switch r.once {
        case .process?: flags |= ASPECTS_RULE_ONCE_PROCESS.rawValue
        case .hierarchy?: flags |= ASPECTS_RULE_ONCE_HIERARCHY.rawValue
        case nil: break
        }
        if r.autoRemove && r.once != nil {
            throw fail(.invalidValue, "once", "\"autoRemove\" already means one firing in the whole table", fix: "drop \"once\" or \"autoRemove\"")
        }
        if let p = w.process, p.isEmpty { throw fail(.invalidValue, "when.process", "the pattern is empty") }
        if let p = w.caller, p.isEmpty { throw fail(.invalidValue, "when.caller", "the pattern is empty") }
        if w.process != nil { flags |= ASPECTS_RULE_HAS_PROCESS.rawValue }
        if w.caller != nil { flags |= ASPECTS_RULE_HAS_CALLER.rawValue }
        var site: CallSite?
        if let text = w.site {
            guard let s = CallSite(text) else {
                throw fail(.invalidValue, "when.site", "\"\(text)\" is not a call site",
                           fix: "write the calling object's file name and the offset of the return address, as events print them: \"ledger+0x1a2b\"")
            }
            site = s
            flags |= ASPECTS_RULE_HAS_SITE.rawValue
        }
        var context: CallContext?
        if let frames = w.context {
            if w.site != nil {
                throw fail(.invalidValue, "when.context", "\"context\" names the call site as its first frame, and the rule has \"site\" too",
                           fix: "drop \"site\"; the context's first frame is the site")
            }
            guard !frames.isEmpty else {
                throw fail(.invalidValue, "when.context", "the context is empty",
                           fix: "list the call site, then its callers, as events print them: [\"app+0x1a2b\", \"app+0x3c4d\"]")
            }
            guard frames.count <= Int(ASPECTS_MAX_CONTEXT_DEPTH) else {
                throw fail(.limit, "when.context", "\(frames.count) frames; a context holds at most \(ASPECTS_MAX_CONTEXT_DEPTH)",
                           fix: "keep the call site and its nearest callers, at most \(ASPECTS_MAX_CONTEXT_DEPTH)")
            }
            var sites: [CallSite] = []
            for (i, text) in frames.enumerated() {
                guard let s = CallSite(text) else {
                    throw fail(.invalidValue, "when.context[\(i)]", "\"\(text)\" is not a call site",
                               fix: "write the object's file name and the offset of the return address, as events print them: \"ledger+0x1a2b\"")
                }
                sites.append(s)
            }
            context = CallContext(sites)
            site = sites[0]
            flags |= ASPECTS_RULE_HAS_SITE.rawValue | ASPECTS_RULE_HAS_CONTEXT.rawValue
        }
        if a.recordContext { flags |= ASPECTS_RULE_RECORD_CONTEXT.rawValue }
        if let first = w.first {
            guard w.every != nil else {
                throw fail(.invalidValue, "when.first", "\"first\" says where \"every\" starts, and the rule has no \"every\"",
                           fix: "add \"every\": N to fire on calls \(first), \(first)+N, ...; for that one call alone use \"nth\": \(first)")
            }
            if let after = w.after {
                throw fail(.invalidValue, "when.first", "\"first\": \(first) and \"after\": \(after) both say where counting starts",
                           fix: "keep \"first\" (\"first\": F fires from call F on: \"after\": F - 1)")
            }
            if w.nth != nil { throw fail(.invalidValue, "when.first", "\"first\" goes with \"every\", not with \"nth\"", fix: "drop \"first\"") }
            flags |= ASPECTS_RULE_EVERY_FROM.rawValue
        }
        if let nth = w.nth, let after = w.after, nth <= after {
            throw fail(.invalidValue, "when.nth", "\"nth\": \(nth) can never fire together with \"after\": \(after)", fix: "drop one of them")
        }
        var matchers: [CompiledRule.Matcher] = []
        var stringOffset = 0
        for (i, m) in w.args.enumerated() {
            let field = "when.args[\(i)]"
            let list = sig.parameters.enumerated().map { "\($0.offset): \($0.element.spelling)\($0.element.name.map { " " + $0 } ?? "")" }.joined(separator: ", ")
            let index: Int
            if let name = m.argName {
                guard let found = sig.parameters.firstIndex(where: { $0.name == name }) else {
                    throw fail(.argOutOfRange, field + ".arg", "\(r.symbol) has no argument named \"\(name)\" (its arguments: \(list.isEmpty ? "none" : list))",
                               fix: "name one of those, or give its 0-based index")
                }
                index = found
            } else {
                guard m.arg < sig.parameters.count else {
                    throw fail(.argOutOfRange, field + ".arg", "\(r.symbol) has \(sig.parameters.count) argument(s) (\(list)); index \(m.arg) is past them",
                               fix: "arguments are numbered from 0")
                }
                index = m.arg
            }
            let p = sig.parameters[index]
            let describe = "argument \(index) of \(r.symbol) (\(p.spelling)\(p.name.map { " " + $0 } ?? ""))"
            // The table speaks of the group's arguments (by name): `path` of __xstat is `path` of stat.
            guard let groupArg = function.groupIndex(ofArgument: index) else {
                throw fail(.argOutOfRange, field + ".arg", "\(describe) has no counterpart in \(catalog.primary(of: group).name), so the rule could not apply to the whole group",
                           fix: "write the rule on \(catalog.primary(of: group).name)")
            }
            var c = CompiledRule.Matcher(arg: groupArg, kind: 0, type: p.type, a: 0, b: 0, pattern: nil)
            func resolve(_ value: ArgMatcher.Value, _ key: String) throws(AspectsError) -> UInt64 {
                switch value {
                case .number(let n): return n
                case .flags(let names):
                    guard let setName = group.flagArguments[groupArg], let set = catalog.flagSets[setName] else {
                        throw fail(.matcherType, "\(field).\(key)", "\(describe) has no named flags",
                                   fix: "write the value as a number (\"0x40\")")
                    }
                    var v: UInt64 = 0
                    for n in names {
                        guard let f = set.value(of: n) else {
                            let near = ErrorNames.suggestions(for: n, in: set.flags.map(\.name))
                            throw fail(.invalidValue, "\(field).\(key)", "\(n) is not a flag of \(describe)",
                                       fix: near.isEmpty ? "its flags: \(set.flags.map(\.name).joined(separator: " "))" : "did you mean \(near.joined(separator: " or "))?")
                        }
                        v |= f
                    }
                    return v
                }
            }
            func checkInteger(_ v: UInt64, _ key: String) throws(AspectsError) {
                guard p.type.isInteger || p.type.isPointer else {
                    throw fail(.matcherType, "\(field).\(key)", "\(describe) is not an integer")
                }
                let signed = Int64(bitPattern: v)
                guard p.type.accepts(signed) || (p.type.bits == 64) || (!p.type.isSigned && signed >= 0 && UInt64(signed) <= (1 << UInt64(p.type.bits)) - 1) else {
                    throw fail(.matcherType, "\(field).\(key)", "\(signed) does not fit \(describe)")
                }
            }
            switch m.kind {
            case .eq(let value):
                let v = try resolve(value, "eq"); try checkInteger(v, "eq"); c.kind = UInt8(ASPECTS_MATCH_EQ.rawValue); c.a = v
            case .ne(let value):
                let v = try resolve(value, "ne"); try checkInteger(v, "ne"); c.kind = UInt8(ASPECTS_MATCH_NE.rawValue); c.a = v
            case .maskAny(let value):
                let v = try resolve(value, "mask"); try checkInteger(v, "mask"); c.kind = UInt8(ASPECTS_MATCH_MASK_ANY.rawValue); c.a = v
            case .maskAll(let value):
                let v = try resolve(value, "mask"); try checkInteger(v, "mask"); c.kind = UInt8(ASPECTS_MATCH_MASK_ALL.rawValue); c.a = v
            case .range(let loValue, let hiValue):
                let lo = try loValue.map { (x: ArgMatcher.Value) throws(AspectsError) -> UInt64 in try resolve(x, "min") }
                let hi = try hiValue.map { (x: ArgMatcher.Value) throws(AspectsError) -> UInt64 in try resolve(x, "max") }
                if let lo { try checkInteger(lo, "min") }
                if let hi { try checkInteger(hi, "max") }
                c.kind = UInt8(ASPECTS_MATCH_RANGE.rawValue)
                if p.type.isSigned {
                    c.a = lo ?? UInt64(bitPattern: Int64.min)
                    c.b = hi ?? UInt64(bitPattern: Int64.max)
                    if Int64(bitPattern: c.a) > Int64(bitPattern: c.b) { throw fail(.invalidValue, field, "\"min\" is greater than \"max\"") }
                } else {
                    c.a = lo ?? 0
                    c.b = hi ?? UInt64.max
                    if c.a > c.b { throw fail(.invalidValue, field, "\"min\" is greater than \"max\"") }
                }
            case .glob(let s), .prefix(let s):
                let isGlob: Bool
                if case .glob = m.kind { isGlob = true } else { isGlob = false }
                guard p.type == .string else {
                    throw fail(.matcherType, "\(field).\(isGlob ? "glob" : "prefix")", "\(describe) is not a string",
                               fix: p.type.isInteger ? "use \"eq\", \"ne\", \"min\"/\"max\" or \"mask\" on integer arguments" : "string matchers apply to const char * arguments")
                }
                c.kind = UInt8(isGlob ? ASPECTS_MATCH_GLOB.rawValue : ASPECTS_MATCH_PREFIX.rawValue)
                c.pattern = s
                stringOffset += s.utf8.count + 1
            case .fdpath(let s):
                // A file descriptor: an int (or a wider signed integer) argument.
                guard p.type == .i32 || p.type == .i64 else {
                    throw fail(.matcherType, "\(field).fdpath", "\(describe) is not a file descriptor",
                               fix: "\"fdpath\" applies to an fd argument (an int), e.g. write's argument 0")
                }
                c.kind = UInt8(ASPECTS_MATCH_FDPATH.rawValue)
                c.pattern = s
                stringOffset += s.utf8.count + 1
            }
            matchers.append(c)
        }
        if matchers.count > Int(ASPECTS_MAX_MATCHERS) {
            throw fail(.limit, "when.args", "\(matchers.count) matchers; a rule holds at most \(ASPECTS_MAX_MATCHERS)")
        }
        stringOffset += [w.process, w.caller, site?.object].compactMap { $0 }.reduce(0) { $0 + $1.utf8.count + 1 }
        if stringOffset > Int(ASPECTS_RULE_STRINGS_SIZE) {
            throw fail(.limit, "when.args", "the patterns take \(stringOffset) bytes; a rule holds at most \(ASPECTS_RULE_STRINGS_SIZE)",
                       fix: "shorten the patterns (a glob such as \"*/data/*.db\" often does)")
        }
        let scope: UInt32
        switch r.scope {
        case .process: scope = ASPECTS_SCOPE_PROCESS.rawValue
        case .thread: scope = ASPECTS_SCOPE_THREAD.rawValue
        case .hierarchy: scope = ASPECTS_SCOPE_HIERARCHY.rawValue
        case .table: scope = ASPECTS_SCOPE_TABLE.rawValue
        }
        var compiled = CompiledRule(rule: r, function: function, group: function.groupIndex,
                            position: r.position == .before ? ASPECTS_POSITION_BEFORE.rawValue : r.position == .instead ? ASPECTS_POSITION_INSTEAD.rawValue : ASPECTS_POSITION_AFTER.rawValue,
                            actions: actions, errnoValue: errnoValue, returnValue: returnValue, delayNanoseconds: delay,
                            signalNumber: signal, scope: scope, flags: flags, matchers: matchers, argSets: argSets)
        compiled.errnoChoices = choices
        try compileCodeAndData(r, function: function, group: group, into: &compiled, strings: &stringOffset, label: label)
        compiled.stringBytes = stringOffset
        try compileResultCondition(r, sig: sig, function: function, group: group, into: &compiled, label: label)
        compiled.prototype = prototypeSignature
        compiled.prototypeFixedCount = function.fixedCount
        if let sig = prototypeSignature {
            // struct layouts in order of first use; results of struct type cannot be forged
            var order: [String] = []
            for n in sig.parameters.compactMap(\.structName) + [sig.returnStructName].compactMap({ $0 }) where !order.contains(n) { order.append(n) }
            compiled.prototypeStructs = try order.map { (n: String) throws(AspectsError) -> [ABIType] in
                var layout: [ABIType] = []
                for t in r.types[n] ?? [] {
                    do { layout.append(try PrototypeParser().parseType(t).type) } catch { throw fail(.badPrototype, "types.\(n)", "\(error)") }
                }
                return layout
            }
            compiled.prototypeStructOrder = order
            if let given = a.returnFields {
                guard sig.returnType == .structure, let n = sig.returnStructName, let k = order.firstIndex(of: n) else {
                    throw fail(.invalidValue, "action.return", "\(r.symbol) does not return a struct, so its result is one value, not \(a.returnFieldNames == nil ? "a list" : "an object")",
                               fix: "write one number")
                }
                var fields = given, paths: [String]? = nil
                if let names = a.returnFieldNames {
                    (fields, paths) = try fieldsByName(names, values: given, declared: r.types[n] ?? [], name: n, fail: fail)
                }
                compiled.resultBytes = try structBytes(fields, layout: compiled.prototypeStructs[k], name: n, symbol: r.symbol, paths: paths, fail: fail)
                compiled.actions |= ASPECTS_ACTION_RETURN.rawValue
                if stringOffset + compiled.resultBytes!.count > Int(ASPECTS_RULE_STRINGS_SIZE) {
                    throw fail(.limit, "action.return", "\(n) takes \(compiled.resultBytes!.count) bytes; with the patterns a rule holds \(ASPECTS_RULE_STRINGS_SIZE)", fix: nil)
                }
            }
        }
        compiled.probability = probability
        compiled.seed = w.seed
        compiled.processPattern = w.process
        compiled.callerPattern = w.caller
        compiled.site = site
        compiled.context = context
        return compiled
    }

    /// The 64 bits a result is stored as (aspects_abi.h, return_value): an integer checked
    /// against the return type as written (2^63 is no `long`; only 0 and 1 are a `bool`), a
    /// float's or double's IEEE bits (a float's in the low half).
    func resultBits(_ literal: String?, bits: Int64, sig: CSignature, symbol: String, field: String,
                    fail: (AspectsError.Code, String, String, String?) -> AspectsError) throws(AspectsError) -> Int64 {
        let type = sig.returnType
        let text = literal ?? String(bits)
        let spelled = "\(sig.returnSpelling) of \(symbol)"
        switch type {
        case .f64:
            guard let d = Double(text), d.isFinite else { throw fail(.invalidValue, field, "\(text) is not a finite number for the return type \(spelled)", nil) }
            return Int64(bitPattern: d.bitPattern)
        case .f32:
            guard let f = Float(text), f.isFinite else {
                throw fail(.invalidValue, field, "\(text) does not fit the return type \(spelled) (a float holds up to \(Float.greatestFiniteMagnitude))", nil)
            }
            return Int64(UInt32(f.bitPattern))
        case .void:
            throw fail(.invalidValue, field, "\(symbol) returns void", "drop \"return\"")
        case .structure:
            throw fail(.invalidValue, field, "\(symbol) returns \(sig.returnStructName ?? "a struct") by value; one number cannot be its result",
                       "give its fields in order, e.g. \"return\": [1.5, 2]")
        default:
            break
        }
        if let i = Int64(text) {
            let spelling = sig.returnSpelling.trimmingCharacters(in: .whitespaces)
            if spelling == "bool" || spelling == "_Bool" {
                guard i == 0 || i == 1 else { throw fail(.invalidValue, field, "\(text) is not a \(spelled): it is 0 or 1 (false or true)", "write 0, 1, false or true") }
                return i
            }
            guard type.accepts(i) || (type == .u64 && i < 0 && literal == nil) else {
                throw fail(.invalidValue, field, "\(text) does not fit the return type \(spelled)", nil)
            }
            return i
        }
        if let u = UInt64(text) {
            guard type == .u64 || type == .pointer || type == .string else {
                throw fail(.invalidValue, field, "\(text) does not fit the return type \(spelled) (at most \(Int64.max))", nil)
            }
            return Int64(bitPattern: u)
        }
        if let why = RuleDecoder.outOfRange(text) {
            throw fail(.invalidValue, field, "\(text) \(why), and \(symbol) returns \(sig.returnSpelling)", "write a value the return type holds")
        }
        throw fail(.invalidValue, field, "\(text) is not an integer, and \(symbol) returns \(sig.returnSpelling)", "write a whole number")
    }

    /// `"return": {"re": 1.5, "im": 2}`: the values in the declared field order (and each one's
    /// path for errors), by the names the rule's "types" gives its fields (`"double re"`).
    func fieldsByName(_ names: [String], values: [String], declared: [String], name: String,
                      fail: (AspectsError.Code, String?, String, String?) -> AspectsError) throws(AspectsError) -> (values: [String], paths: [String]) {
        let declaredNames = declared.map { (try? PrototypeParser().parseType($0))?.name }
        let known = declaredNames.compactMap { $0 }
        guard known.count == declared.count else {
            let unnamed = declaredNames.indices.filter { declaredNames[$0] == nil }.map(String.init).joined(separator: ", ")
            throw fail(.invalidValue, "action.return",
                       "\(name) is declared without field names (field \(unnamed)), so its fields cannot be given by name",
                       "name every field in \"types\", e.g. {\"\(name)\": [\"double re\", \"double im\"]}, or give the values in order: \"return\": [1.5, 2]")
        }
        let byName = Dictionary(zip(names, values), uniquingKeysWith: { first, _ in first })
        for n in names where !known.contains(n) {
            throw fail(.invalidValue, "action.return.\(n)", "\(name) has no field \"\(n)\" (its fields: \(known.joined(separator: ", ")))",
                       "use the field names declared in \"types\"")
        }
        var ordered: [String] = []
        for n in known {
            guard let v = byName[n] else {
                throw fail(.invalidValue, "action.return", "the field \"\(n)\" of \(name) is not given",
                           "give every field: {\(known.map { "\"\($0)\": …" }.joined(separator: ", "))}")
            }
            ordered.append(v)
        }
        return (ordered, known.map { "action.return.\($0)" })
    }

    /// A struct result's bytes as the x86-64 System V ABI lays the struct out: each field at an
    /// offset aligned to its size, the whole rounded up to its largest field. `paths` names each
    /// value in errors (default: its place in the list).
    func structBytes(_ values: [String], layout: [ABIType], name: String, symbol: String, paths: [String]? = nil,
                     fail: (AspectsError.Code, String?, String, String?) -> AspectsError) throws(AspectsError) -> [UInt8] {
        guard values.count == layout.count else {
            throw fail(.invalidValue, "action.return", "\(name) has \(layout.count) field(s), the rule gives \(values.count)",
                       "give one value per field, in the order of \"types\"")
        }
        var bytes: [UInt8] = []
        var largest = 1
        for (i, (text, type)) in zip(values, layout).enumerated() {
            let size = max(1, type.bits / 8)
            largest = max(largest, size)
            while bytes.count % size != 0 { bytes.append(0) }
            let field = CSignature(name: symbol, returnSpelling: type.cName, returnType: type, parameters: [], isVariadic: false)
            let bits = try resultBits(text, bits: 0, sig: field, symbol: "\(name) field \(i)", field: paths?[i] ?? "action.return[\(i)]",
                                      fail: { fail($0, $1, $2, $3) })
            let raw = UInt64(bitPattern: bits)
            for b in 0..<size { bytes.append(UInt8(truncatingIfNeeded: raw >> (8 * UInt64(b)))) }
        }
        while bytes.count % largest != 0 { bytes.append(0) }
        return bytes
    }

    /// A function outside the catalog, advised from the rule's prototype (docs/ARCHITECTURE.md
    /// §5, prototype stubs).
    func prototypeFunction(_ r: Rule, _ proto: String, label: String) throws(AspectsError) -> (CatalogFunction, CatalogGroup) {
        func fail(_ code: AspectsError.Code, _ field: String?, _ message: String, fix: String? = nil) -> AspectsError {
            AspectsError(code, rule: label, field: field, message, fix: fix)
        }
        // "name@VERSION" selects one version of a versioned symbol; the prototype names `name`.
        let parts = r.symbol.components(separatedBy: "@").filter { !$0.isEmpty }
        let baseName = parts.first ?? r.symbol
        if r.symbol.contains("@") && (parts.count != 2 || !r.symbol.hasPrefix(baseName + "@")) {
            throw fail(.invalidValue, "symbol", "\"\(r.symbol)\" is not name@VERSION", fix: "write e.g. \"fx_open@LIBFX_2\"")
        }
        if catalog.function(named: baseName) != nil {
            throw fail(.invalidValue, "symbol", "\(baseName) is in the catalog: its wrapper advises every version of it",
                       fix: "write \"symbol\": \"\(baseName)\"")
        }
        if let refused = catalog.refusal(for: baseName) {
            throw fail(.refusedSymbol, "symbol", "\(baseName) cannot be advised: \(refused.reason)")
        }
        // Declared structs: scalar fields only (no nested structs, arrays or long double).
        var layouts: [String: [ABIType]] = [:]
        for (name, fields) in r.types.sorted(by: { $0.key < $1.key }) {
            guard (1...Int(ASPECTS_STRUCT_FIELDS)).contains(fields.count) else {
                throw fail(.limit, "types.\(name)", "a struct passed by value has 1 to \(ASPECTS_STRUCT_FIELDS) fields here, not \(fields.count)")
            }
            var types: [ABIType] = []
            var names: Set<String> = []
            for f in fields {
                let t: (spelling: String, type: ABIType, name: String?)
                do { t = try PrototypeParser().parseType(f) } catch {
                    throw fail(.badPrototype, "types.\(name)", "field type \"\(f)\": \(error)")
                }
                types.append(t.type)
                if let n = t.name, !names.insert(n).inserted {
                    throw fail(.badPrototype, "types.\(name)", "the field name \"\(n)\" is declared twice", fix: "give each field a name of its own")
                }
            }
            layouts[name] = types
        }
        let sig: CSignature
        do { sig = try PrototypeParser(structs: Set(layouts.keys)).parse(proto) } catch {
            throw fail(.badPrototype, "prototype", "\(error)", fix: "write a C declaration such as \"int \(r.symbol)(int fd)\"")
        }
        guard sig.name == baseName else {
            throw fail(.prototypeMismatch, "prototype", "the prototype declares \(sig.name), the rule names \(r.symbol)", fix: "make them the same function")
        }
        var full = sig
        let fixed = sig.parameters.count
        if sig.isVariadic {
            // The closure receives a fixed signature: the rule says which optional arguments
            // the calls pass (as a catalog entry's `variadic:` line does), and they are forwarded.
            guard let extra = r.variadic, !extra.isEmpty else {
                throw fail(.missingField, "variadic", "\(r.symbol) is variadic: the rule must say which optional arguments to forward",
                           fix: "add e.g. \"variadic\": [\"int\"] (the types its callers pass after the fixed arguments)")
            }
            for (i, text) in extra.enumerated() {
                do {
                    let t = try PrototypeParser().parseType(text)
                    guard t.type != .void else { throw PrototypeParser.Failure(message: "void cannot be passed", column: 1) }
                    // C's default argument promotions: what a variadic call really passes.
                    let promoted: ABIType = t.type == .f32 ? .f64 : (t.type.isInteger && t.type.bits < 32) ? (t.type.isSigned ? .i32 : .u32) : t.type
                    full.parameters.append(CParameter(name: t.name ?? "arg\(fixed + i)", spelling: t.spelling, type: promoted))
                } catch {
                    throw fail(.badPrototype, "variadic[\(i)]", "\(error)")
                }
            }
        } else if r.variadic != nil {
            throw fail(.invalidValue, "variadic", "\(r.symbol) is not variadic (its prototype has no '...')", fix: "drop \"variadic\"")
        }
        guard full.parameters.count <= Catalog.maxArguments else {
            throw fail(.limit, "prototype", "\(r.symbol) has \(full.parameters.count) parameters; at most \(Catalog.maxArguments) are supported")
        }
        guard r.symbol.utf8.count < Int(ASPECTS_PROTO_NAME_SIZE) else {
            throw fail(.limit, "symbol", "the name is longer than \(ASPECTS_PROTO_NAME_SIZE - 1) bytes")
        }
        full.name = r.symbol // with its @VERSION, which the preload matches against the slots' versions
        let used = Set(full.parameters.compactMap(\.structName) + [full.returnStructName].compactMap { $0 })
        for name in layouts.keys where !used.contains(name) {
            throw fail(.invalidValue, "types.\(name)", "\(name) is declared but the prototype does not pass or return it by value", fix: "drop it")
        }
        if used.count > Int(ASPECTS_PROTO_STRUCTS) {
            throw fail(.limit, "types", "a prototype passes at most \(ASPECTS_PROTO_STRUCTS) struct types by value")
        }
        var f = CatalogFunction(name: r.symbol, signature: full, fixedCount: fixed, exportIndex: -1, groupIndex: -1)
        f.groupArguments = full.parameters.indices.map { $0 }
        let g = CatalogGroup(index: -1, section: "prototype", header: "", failure: .none, errnos: [], defaultErrno: nil,
                             isNoReturn: false, members: [])
        return (f, g)
    }

    /// Whether the rule draws from its seed (so the writer must store one).
    public static func needsSeed(_ c: CompiledRule) -> Bool {
        c.flags & ASPECTS_RULE_PROBABILITY.rawValue != 0 || !c.errnoChoices.isEmpty
            || c.actions & (ASPECTS_ACTION_CORRUPT.rawValue | ASPECTS_ACTION_SHORT.rawValue) != 0
    }

    /// `call` (the object checked as the preload will load it), `corrupt` and `short` (where
    /// the catalog says the function's data is, and that the fault makes sense for it).
    func compileCodeAndData(_ r: Rule, function: CatalogFunction, group: CatalogGroup, into c: inout CompiledRule,
                            strings: inout Int, label: String) throws(AspectsError) {
        func fail(_ code: AspectsError.Code, _ field: String, _ message: String, fix: String? = nil) -> AspectsError {
            AspectsError(code, rule: label, field: field, message, fix: fix)
        }
        let a = r.action
        if let call = a.call {
            do { try AdviceObject.check(call) } catch { throw fail(.invalidValue, "action.call", error.message, fix: error.fix) }
            c.callObject = call.object
            c.callFunction = call.function
            c.actions |= ASPECTS_ACTION_CALL.rawValue
            strings += call.object.utf8.count + 1 + call.function.utf8.count + 1
            if strings > Int(ASPECTS_RULE_STRINGS_SIZE) {
                throw fail(.limit, "action.call", "the object's path and the patterns take \(strings) bytes; a rule holds \(ASPECTS_RULE_STRINGS_SIZE)",
                           fix: "shorten the path or the patterns (a symbolic link to the object serves a user's own table only: root's processes and shared tables refuse one)")
            }
        }
        let wanted: [(DataFault, String)] = (a.corrupt != nil ? [(.corrupt, "action.corrupt")] : []) + (a.short ? [(.short, "action.short")] : [])
        for (fault, field) in wanted {
            let needed: Rule.Position = fault == .corrupt ? .after : .before
            guard r.position == needed else {
                throw fail(.positionNotAllowed, field, fault == .corrupt
                           ? "\"corrupt\" changes the bytes the call returned, so it runs after the original"
                           : "\"short\" cuts the count the original is given, so it runs before it",
                           fix: "use \"position\": \"\(needed.rawValue)\"")
            }
            guard group.faults.contains(fault), let data = group.data else {
                let able = catalog.groups.filter { $0.faults.contains(fault) }.map { catalog.primary(of: $0).name }
                throw fail(.invalidValue, field, "\(r.symbol) \(fault == .corrupt ? "returns no bytes that could be corrupted" : "transfers no count of bytes that could be cut short")",
                           fix: "\"\(fault.rawValue)\" applies to \(able.joined(separator: ", ")); for anything else write the fault as code (\"call\")")
            }
            c.dataBuffer = UInt8(data.buffer)
            c.dataCount = UInt8(data.count)
            c.dataSize = data.itemSize.map(UInt8.init) ?? UInt8(ASPECTS_NO_ARG)
        }
        if a.short { c.actions |= ASPECTS_ACTION_SHORT.rawValue }
        if let corrupt = a.corrupt, let data = group.data {
            // The rule names the argument as the function it names numbers it (__fread_chk's
            // ptr is its argument 0 too); the table holds the group's number.
            let own = function.groupArguments.indices.contains(data.buffer) ? function.groupArguments[data.buffer] : nil
            guard corrupt.arg == own else {
                let sig = function.signature
                let p = corrupt.arg < sig.parameters.count ? sig.parameters[corrupt.arg] : nil
                let what = p.map { "argument \(corrupt.arg) of \(r.symbol) (\($0.spelling)\($0.name.map { " " + $0 } ?? ""))" } ?? "\(r.symbol) has no argument \(corrupt.arg), and it"
                let buffer = own.map { o in "argument \(o) (\(sig.parameters[o].spelling) \(sig.parameters[o].name ?? ""))" } ?? "its buffer"
                throw fail(.argOutOfRange, "action.corrupt.arg", "\(what) is not where the call returns its bytes: that is \(buffer)",
                           fix: own.map { "write \"arg\": \($0)" } ?? "write the rule on \(catalog.primary(of: group).name)")
            }
            c.corruptBits = UInt32(corrupt.bits)
            c.actions |= ASPECTS_ACTION_CORRUPT.rawValue
        }
    }

    /// The error name a single `"fail"` asks for (the catalog default for `true`).
    func failureName(_ f: Action.Fail, function: CatalogFunction, group: CatalogGroup, label: String) throws(AspectsError) -> String {
        guard group.failure != .none else {
            throw AspectsError(.invalidValue, rule: label, field: "action.fail", "\(function.name) cannot fail (the catalog says so)",
                               fix: "use \"return\" to force a value, or a before/after advice")
        }
        switch f {
        case .catalogDefault:
            guard let d = group.defaultErrno else {
                throw AspectsError(.invalidValue, rule: label, field: "action.fail", "\(function.name) has no default error", fix: "name one: \"fail\": \"EIO\"")
            }
            return d
        case .named(let n): return n
        case .oneOf(let list): return list[0]
        }
    }

    /// The number of an error name the function may fail with (an errno, or an EAI_* code).
    func failureCode(_ chosen: String, function: CatalogFunction, group: CatalogGroup, allowAny: Bool, label: String) throws(AspectsError) -> Int32 {
        let name = function.name
        guard group.failure != .none else {
            throw AspectsError(.invalidValue, rule: label, field: "action.fail", "\(name) cannot fail (the catalog says so)",
                               fix: "use \"return\" to force a value, or a before/after advice")
        }
        let code: Int32
        if group.failure.usesHErrno {
            guard let c = ErrorNames.hErrno(chosen) else {
                throw AspectsError(.unknownErrno, rule: label, field: "action.fail", "\(name) reports h_errno codes, and \"\(chosen)\" is not one",
                                   fix: "use one of \(group.errnos.joined(separator: " "))")
            }
            code = c
        } else if group.failure == .eaiCode {
            guard let c = ErrorNames.eai(chosen) else {
                throw AspectsError(.unknownErrno, rule: label, field: "action.fail", "\(name) reports EAI_* codes, and \"\(chosen)\" is not one",
                                   fix: "use one of \(group.errnos.joined(separator: " "))")
            }
            code = c
        } else {
            guard let c = ErrorNames.errno(chosen) else {
                throw AspectsError(.unknownErrno, rule: label, field: "action.fail", "unknown errno name \"\(chosen)\"", fix: errnoHint(chosen))
            }
            code = c
        }
        if !allowAny && !group.errnos.contains(chosen) {
            throw AspectsError(.errnoNotAllowed, rule: label, field: "action.fail",
                               "\(name) cannot fail with \(chosen) (its errors: \(group.errnos.joined(separator: " ")))",
                               fix: "pick one of those, or add \"allowAnyErrno\": true")
        }
        return code
    }

    func errnoHint(_ name: String) -> String {
        let near = ErrorNames.suggestions(for: name, in: ErrorNames.errnos.map(\.name))
        return near.isEmpty ? "use a name from errno(3), such as \"EIO\" or \"ENOSPC\"" : "did you mean \(near.joined(separator: " or "))?"
    }
}
