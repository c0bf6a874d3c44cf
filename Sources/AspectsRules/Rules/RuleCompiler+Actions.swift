import CAspectsABI
import AspectsCore

/// What a rule does when it fires: the failure or value it returns and the errno it sets, a
/// delay, a signal, a log line, the arguments it changes, and code (`call`) or data faults
/// (`corrupt`, `short`).
extension RuleCompiler {
    /// `"fail"` decides the result and errno alone; `"errno"` goes with `"return"`.
    func checkFailOrReturn(_ a: Action, label: String) throws(AspectsError) {
        let fail = RuleErrors(label: label)
        if a.fail != nil && (a.returnValue != nil || a.errno != nil) {
            throw fail(.invalidValue, "action", "\"fail\" already decides the return value and errno", fix: "use either \"fail\" or \"return\" with \"errno\"")
        }
        if a.errno != nil && a.returnValue == nil {
            throw fail(.missingField, "action.return", "\"errno\" needs \"return\"", fix: "add \"return\": -1 (or use \"fail\": \"\(a.errno!)\")")
        }
    }

    /// `"fail"`: what the function returns when it fails and the error it reports, from the
    /// catalog or, for a function advised from its prototype, from the rule's `"failure"`.
    func compileFailure(_ r: Rule, function: CatalogFunction, group: CatalogGroup, isPrototype: Bool,
                        into c: inout CompiledRule, label: String) throws(AspectsError) {
        guard let f = r.action.fail else { return }
        if isPrototype {
            try compileDeclaredFailure(f, r, sig: function.signature, into: &c, label: label)
        } else {
            try compileCatalogFailure(f, r, function: function, group: group, into: &c, label: label)
        }
    }

    /// No catalog entry says how a function advised from its prototype fails: the rule's
    /// `"failure"` does (its return value and default errno).
    func compileDeclaredFailure(_ f: Action.Fail, _ r: Rule, sig: CSignature, into c: inout CompiledRule, label: String) throws(AspectsError) {
        let fail = RuleErrors(label: label)
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
            guard let code = ErrorNames.errno(n) else {
                throw fail(.unknownErrno, names.count == 1 && failure.errno == n ? "failure.errno" : "action.fail", "unknown errno name \"\(n)\"", fix: errnoHint(n))
            }
            codes.append(code)
        }
        guard sig.returnType != .void else {
            throw fail(.invalidValue, "failure.return", "\(r.symbol) returns void, so a failure cannot be returned", fix: "use a before/after advice")
        }
        c.returnValue = try resultBits(failure.returnLiteral, bits: failure.returnValue, sig: sig, symbol: r.symbol, field: "failure.return", fail: { fail($0, $1, $2, fix: $3) })
        c.actions |= ASPECTS_ACTION_RETURN.rawValue
        if let first = codes.first { c.errnoValue = first; c.actions |= ASPECTS_ACTION_ERRNO.rawValue }
        if codes.count > 1 { c.errnoChoices = codes }
    }

    /// A catalog function fails as its catalog entry says: the failure value for the error, and
    /// the error reported where the function reports it (errno, h_errno, or the result itself).
    func compileCatalogFailure(_ f: Action.Fail, _ r: Rule, function: CatalogFunction, group: CatalogGroup,
                               into c: inout CompiledRule, label: String) throws(AspectsError) {
        let names: [String]
        switch f {
        case .catalogDefault, .named: names = [try failureName(f, function: function, group: group, label: label)]
        case .oneOf(let list): names = list
        }
        var codes: [Int32] = []
        for n in names { codes.append(try failureCode(n, function: function, group: group, allowAny: r.allowAnyErrno, label: label)) }
        c.returnValue = group.failure.returnValue(for: codes[0])!
        c.actions |= ASPECTS_ACTION_RETURN.rawValue
        switch group.failure {
        case _ where group.failure.setsErrno:
            c.errnoValue = codes[0]; c.actions |= ASPECTS_ACTION_ERRNO.rawValue
        case .nullHErrno:
            c.errnoValue = codes[0]; c.actions |= ASPECTS_ACTION_HERRNO.rawValue
        case .errnoReturned, .eaiCode:
            // the code is the return value: the preload returns the (drawn) error itself
            c.errnoValue = codes[0]; c.flags |= ASPECTS_RULE_RETURN_IS_CODE.rawValue
        default:
            break // NULL alone: nothing else to report
        }
        if codes.count > 1 { c.errnoChoices = codes }
        // A stdio function fails where its stream's system call does (the catalog's `fails:
        // stream:`), at the place the catalog fails it; `"return"` with `"errno"` stays literal.
        if group.stream != nil && r.position == group.failurePosition { c.flags |= ASPECTS_RULE_STREAM_FAULT.rawValue }
        // `"fail": true`: the default error of what the descriptor is, decided when it fires.
        if case .catalogDefault = f, !group.defaultByKind.isEmpty { c.flags |= ASPECTS_RULE_DEFAULT_BY_KIND.rawValue }
    }

    /// `"return"`: one value of the function's return type. (A struct result, given as its
    /// fields, is laid out from the prototype's declared structs: `compileStructResult`.)
    func compileReturn(_ r: Rule, sig: CSignature, into c: inout CompiledRule, label: String) throws(AspectsError) {
        let fail = RuleErrors(label: label)
        let a = r.action
        if let v = a.returnValue, a.returnFields == nil {
            guard sig.returnType != .void else {
                throw fail(.invalidValue, "action.return", "\(r.symbol) returns void", fix: "drop \"return\"")
            }
            c.returnValue = try resultBits(a.returnLiteral, bits: v, sig: sig, symbol: r.symbol, field: "action.return", fail: { fail($0, $1, $2, fix: $3) })
            c.actions |= ASPECTS_ACTION_RETURN.rawValue
        } else if a.returnFields != nil && sig.returnType != .structure {
            throw fail(.invalidValue, "action.return", "\(r.symbol) returns \(sig.returnSpelling.trimmingCharacters(in: .whitespaces)), so its result is one value, not \(a.returnFieldNames == nil ? "a list" : "an object") of fields",
                       fix: sig.returnType == .void ? "drop \"return\"" : "write one number")
        }
    }

    /// `"errno"` (with `"return"`): an errno name, one the function can fail with unless the
    /// rule allows any.
    func compileErrno(_ r: Rule, group: CatalogGroup, into c: inout CompiledRule, label: String) throws(AspectsError) {
        guard let name = r.action.errno else { return }
        let fail = RuleErrors(label: label)
        guard let e = ErrorNames.errno(name) else {
            throw fail(.unknownErrno, "action.errno", "unknown errno name \"\(name)\"", fix: errnoHint(name))
        }
        if !r.allowAnyErrno && group.failure.setsErrno && !group.errnos.contains(name) {
            throw fail(.errnoNotAllowed, "action.errno", "\(r.symbol) cannot fail with \(name) (its errors: \(group.errnos.joined(separator: " ")))",
                       fix: "pick one of those, or add \"allowAnyErrno\": true")
        }
        c.errnoValue = e
        c.actions |= ASPECTS_ACTION_ERRNO.rawValue
    }

    /// `"delay"`, `"signal"` (a signal name) and `"log"`.
    func compileDelaySignalAndLog(_ a: Action, into c: inout CompiledRule, label: String) throws(AspectsError) {
        if let d = a.delayNanoseconds { c.delayNanoseconds = d; c.actions |= ASPECTS_ACTION_DELAY.rawValue }
        if let s = a.signal {
            guard let n = ErrorNames.signal(s) else {
                throw RuleErrors(label: label)(.invalidValue, "action.signal", "unknown signal \"\(s)\"", fix: "use a name such as \"SIGSEGV\", \"SIGABRT\" or \"SIGKILL\"")
            }
            c.signalNumber = UInt32(n)
            c.actions |= ASPECTS_ACTION_SIGNAL.rawValue
        }
        if a.log { c.actions |= ASPECTS_ACTION_LOG.rawValue }
    }

    /// `"args"`: integer arguments set before the original runs, each stored by its number in
    /// the function's group.
    func compileArgumentSets(_ r: Rule, function: CatalogFunction, group: CatalogGroup, into c: inout CompiledRule, label: String) throws(AspectsError) {
        let fail = RuleErrors(label: label)
        let sig = function.signature
        var argSets: [(index: UInt8, value: Int64)] = []
        for (i, s) in r.action.args.enumerated() {
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
        c.argSets = argSets
        if !argSets.isEmpty { c.actions |= ASPECTS_ACTION_ARGS.rawValue }
    }

    /// `call` (the object checked as the preload will load it), `corrupt` and `short` (where
    /// the catalog says the function's data is, and that the fault makes sense for it).
    func compileCodeAndData(_ r: Rule, function: CatalogFunction, group: CatalogGroup, into c: inout CompiledRule,
                            label: String) throws(AspectsError) {
        let fail = RuleErrors(label: label)
        let a = r.action
        if let call = a.call {
            do { try AdviceObject.check(call) } catch { throw fail(.invalidValue, "action.call", error.message, fix: error.fix) }
            c.callObject = call.object
            c.callFunction = call.function
            c.actions |= ASPECTS_ACTION_CALL.rawValue
            c.stringBytes += call.object.utf8.count + 1 + call.function.utf8.count + 1
            if c.stringBytes > Int(ASPECTS_RULE_STRINGS_SIZE) {
                throw fail(.limit, "action.call", "the object's path and the patterns take \(c.stringBytes) bytes; a rule holds \(ASPECTS_RULE_STRINGS_SIZE)",
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
        let fail = RuleErrors(label: label)
        guard group.failure != .none else {
            throw fail(.invalidValue, "action.fail", "\(function.name) cannot fail (the catalog says so)",
                       fix: "use \"return\" to force a value, or a before/after advice")
        }
        switch f {
        case .catalogDefault:
            guard let d = group.defaultErrno else {
                throw fail(.invalidValue, "action.fail", "\(function.name) has no default error", fix: "name one: \"fail\": \"EIO\"")
            }
            return d
        case .named(let n): return n
        case .oneOf(let list): return list[0]
        }
    }

    /// The number of an error name the function may fail with (an errno, or an EAI_* code).
    func failureCode(_ chosen: String, function: CatalogFunction, group: CatalogGroup, allowAny: Bool, label: String) throws(AspectsError) -> Int32 {
        let fail = RuleErrors(label: label)
        let name = function.name
        guard group.failure != .none else {
            throw fail(.invalidValue, "action.fail", "\(name) cannot fail (the catalog says so)",
                       fix: "use \"return\" to force a value, or a before/after advice")
        }
        let code: Int32
        if group.failure.usesHErrno {
            guard let c = ErrorNames.hErrno(chosen) else {
                throw fail(.unknownErrno, "action.fail", "\(name) reports h_errno codes, and \"\(chosen)\" is not one",
                           fix: "use one of \(group.errnos.joined(separator: " "))")
            }
            code = c
        } else if group.failure == .eaiCode {
            guard let c = ErrorNames.eai(chosen) else {
                throw fail(.unknownErrno, "action.fail", "\(name) reports EAI_* codes, and \"\(chosen)\" is not one",
                           fix: "use one of \(group.errnos.joined(separator: " "))")
            }
            code = c
        } else {
            guard let c = ErrorNames.errno(chosen) else {
                throw fail(.unknownErrno, "action.fail", "unknown errno name \"\(chosen)\"", fix: errnoHint(chosen))
            }
            code = c
        }
        if !allowAny && !group.errnos.contains(chosen) {
            throw fail(.errnoNotAllowed, "action.fail",
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
