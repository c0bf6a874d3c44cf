import CAspectsABI
import AspectsCore

/// `"when": {"args": [...]}`: conditions on the arguments of a call, each stored with the
/// argument's number in the function's group (`path` of __xstat is `path` of stat).
extension RuleCompiler {
    /// The argument a condition is on: where the rule names it, its parameter, its number in
    /// the group, and how errors describe it.
    struct MatchedArgument {
        var field: String
        var parameter: CParameter
        var groupIndex: Int
        var describe: String
    }

    /// Every condition on an argument, and the bytes their patterns take in the slot.
    func compileMatchers(_ r: Rule, function: CatalogFunction, group: CatalogGroup, into c: inout CompiledRule, label: String) throws(AspectsError) {
        for (i, m) in r.when.args.enumerated() {
            let arg = try matchedArgument(m, field: "when.args[\(i)]", symbol: r.symbol, function: function, group: group, label: label)
            let matcher = try compileMatcher(m.kind, on: arg, group: group, label: label)
            c.matchers.append(matcher)
            if let pattern = matcher.pattern { c.stringBytes += pattern.utf8.count + 1 }
        }
        if c.matchers.count > Int(ASPECTS_MAX_MATCHERS) {
            throw RuleErrors(label: label)(.limit, "when.args", "\(c.matchers.count) matchers; a rule holds at most \(ASPECTS_MAX_MATCHERS)")
        }
    }

    /// The argument a condition names (`"arg": "path"`) or numbers (`"arg": 0`), which must
    /// have a counterpart in every function of the group.
    func matchedArgument(_ m: ArgMatcher, field: String, symbol: String, function: CatalogFunction, group: CatalogGroup,
                         label: String) throws(AspectsError) -> MatchedArgument {
        let fail = RuleErrors(label: label)
        let sig = function.signature
        let list = sig.parameters.enumerated().map { "\($0.offset): \($0.element.spelling)\($0.element.name.map { " " + $0 } ?? "")" }.joined(separator: ", ")
        let index: Int
        if let name = m.argName {
            guard let found = sig.parameters.firstIndex(where: { $0.name == name }) else {
                throw fail(.argOutOfRange, field + ".arg", "\(symbol) has no argument named \"\(name)\" (its arguments: \(list.isEmpty ? "none" : list))",
                           fix: "name one of those, or give its 0-based index")
            }
            index = found
        } else {
            guard m.arg < sig.parameters.count else {
                throw fail(.argOutOfRange, field + ".arg", "\(symbol) has \(sig.parameters.count) argument(s) (\(list)); index \(m.arg) is past them",
                           fix: "arguments are numbered from 0")
            }
            index = m.arg
        }
        let p = sig.parameters[index]
        let describe = "argument \(index) of \(symbol) (\(p.spelling)\(p.name.map { " " + $0 } ?? ""))"
        guard let groupArg = function.groupIndex(ofArgument: index) else {
            throw fail(.argOutOfRange, field + ".arg", "\(describe) has no counterpart in \(catalog.primary(of: group).name), so the rule could not apply to the whole group",
                       fix: "write the rule on \(catalog.primary(of: group).name)")
        }
        return MatchedArgument(field: field, parameter: p, groupIndex: groupArg, describe: describe)
    }

    /// One condition's kind and operands, checked against the argument's type.
    func compileMatcher(_ kind: ArgMatcher.Kind, on arg: MatchedArgument, group: CatalogGroup, label: String) throws(AspectsError) -> CompiledRule.Matcher {
        let fail = RuleErrors(label: label)
        let type = arg.parameter.type
        var c = CompiledRule.Matcher(arg: arg.groupIndex, kind: 0, type: type, a: 0, b: 0, pattern: nil)
        switch kind {
        case .eq(let value):
            c.kind = UInt8(ASPECTS_MATCH_EQ.rawValue); c.a = try integerOperand(value, "eq", of: arg, group: group, label: label)
        case .ne(let value):
            c.kind = UInt8(ASPECTS_MATCH_NE.rawValue); c.a = try integerOperand(value, "ne", of: arg, group: group, label: label)
        case .maskAny(let value):
            c.kind = UInt8(ASPECTS_MATCH_MASK_ANY.rawValue); c.a = try integerOperand(value, "mask", of: arg, group: group, label: label)
        case .maskAll(let value):
            c.kind = UInt8(ASPECTS_MATCH_MASK_ALL.rawValue); c.a = try integerOperand(value, "mask", of: arg, group: group, label: label)
        case .range(let loValue, let hiValue):
            (c.a, c.b) = try rangeOperands(loValue, hiValue, of: arg, group: group, label: label)
            c.kind = UInt8(ASPECTS_MATCH_RANGE.rawValue)
        case .glob(let s), .prefix(let s):
            let isGlob: Bool
            if case .glob = kind { isGlob = true } else { isGlob = false }
            guard type == .string else {
                throw fail(.matcherType, "\(arg.field).\(isGlob ? "glob" : "prefix")", "\(arg.describe) is not a string",
                           fix: type.isInteger ? "use \"eq\", \"ne\", \"min\"/\"max\" or \"mask\" on integer arguments" : "string matchers apply to const char * arguments")
            }
            c.kind = UInt8(isGlob ? ASPECTS_MATCH_GLOB.rawValue : ASPECTS_MATCH_PREFIX.rawValue)
            c.pattern = s
        case .fdpath(let s):
            // A file descriptor: an int (or a wider signed integer) argument.
            guard type == .i32 || type == .i64 else {
                throw fail(.matcherType, "\(arg.field).fdpath", "\(arg.describe) is not a file descriptor",
                           fix: "\"fdpath\" applies to an fd argument (an int), e.g. write's argument 0")
            }
            c.kind = UInt8(ASPECTS_MATCH_FDPATH.rawValue)
            c.pattern = s
        }
        return c
    }

    /// `"min"`/`"max"`: the bounds, both resolved before either is checked, a missing one the
    /// type's end (signed or unsigned as the argument is), and min not above max.
    func rangeOperands(_ loValue: ArgMatcher.Value?, _ hiValue: ArgMatcher.Value?, of arg: MatchedArgument, group: CatalogGroup,
                       label: String) throws(AspectsError) -> (UInt64, UInt64) {
        let lo = try loValue.map { (x: ArgMatcher.Value) throws(AspectsError) -> UInt64 in try operandBits(x, "min", of: arg, group: group, label: label) }
        let hi = try hiValue.map { (x: ArgMatcher.Value) throws(AspectsError) -> UInt64 in try operandBits(x, "max", of: arg, group: group, label: label) }
        if let lo { try checkOperandFits(lo, "min", of: arg, label: label) }
        if let hi { try checkOperandFits(hi, "max", of: arg, label: label) }
        let inverted = RuleErrors(label: label)(.invalidValue, arg.field, "\"min\" is greater than \"max\"")
        if arg.parameter.type.isSigned {
            let a = lo ?? UInt64(bitPattern: Int64.min), b = hi ?? UInt64(bitPattern: Int64.max)
            if Int64(bitPattern: a) > Int64(bitPattern: b) { throw inverted }
            return (a, b)
        }
        let a = lo ?? 0, b = hi ?? UInt64.max
        if a > b { throw inverted }
        return (a, b)
    }

    /// An operand of `eq`, `ne` or `mask`: its bits, checked to fit the argument.
    func integerOperand(_ value: ArgMatcher.Value, _ key: String, of arg: MatchedArgument, group: CatalogGroup, label: String) throws(AspectsError) -> UInt64 {
        let v = try operandBits(value, key, of: arg, group: group, label: label)
        try checkOperandFits(v, key, of: arg, label: label)
        return v
    }

    /// An operand's 64 bits: a number as written, or flag names (`["O_CREAT"]`) or-ed
    /// together from the flag set the catalog gives the argument.
    func operandBits(_ value: ArgMatcher.Value, _ key: String, of arg: MatchedArgument, group: CatalogGroup, label: String) throws(AspectsError) -> UInt64 {
        let fail = RuleErrors(label: label)
        switch value {
        case .number(let n): return n
        case .flags(let names):
            guard let setName = group.flagArguments[arg.groupIndex], let set = catalog.flagSets[setName] else {
                throw fail(.matcherType, "\(arg.field).\(key)", "\(arg.describe) has no named flags",
                           fix: "write the value as a number (\"0x40\")")
            }
            var v: UInt64 = 0
            for n in names {
                guard let f = set.value(of: n) else {
                    let near = ErrorNames.suggestions(for: n, in: set.flags.map(\.name))
                    throw fail(.invalidValue, "\(arg.field).\(key)", "\(n) is not a flag of \(arg.describe)",
                               fix: near.isEmpty ? "its flags: \(set.flags.map(\.name).joined(separator: " "))" : "did you mean \(near.joined(separator: " or "))?")
                }
                v |= f
            }
            return v
        }
    }

    /// An integer operand fits the argument: an integer or a pointer, and a value of its type
    /// (a 64-bit type holds any 64 bits: -1 is a size_t's largest value).
    func checkOperandFits(_ v: UInt64, _ key: String, of arg: MatchedArgument, label: String) throws(AspectsError) {
        let fail = RuleErrors(label: label)
        let type = arg.parameter.type
        guard type.isInteger || type.isPointer else {
            throw fail(.matcherType, "\(arg.field).\(key)", "\(arg.describe) is not an integer")
        }
        let signed = Int64(bitPattern: v)
        guard type.accepts(signed) || type.bits == 64 else {
            throw fail(.matcherType, "\(arg.field).\(key)", "\(signed) does not fit \(arg.describe)")
        }
    }
}
