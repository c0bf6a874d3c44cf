import CAspectsABI
import AspectsCore

/// What the call returns: a result the rule forces (one value's 64 bits, or a struct's bytes)
/// and, for `after` rules, conditions on the result the original returned.
extension RuleCompiler {
    /// `"when": {"result": ..., "errno": ...}`: conditions on what the original did, for after
    /// rules. An errno means the call failed: the result is the function's failure value.
    func compileResultCondition(_ r: Rule, sig: CSignature, function: CatalogFunction, group: CatalogGroup, into c: inout CompiledRule, label: String) throws(AspectsError) {
        let fail = RuleErrors(label: label)
        let w = r.when
        guard w.result != nil || w.errno != nil else { return }
        let field = w.result != nil ? "when.result" : "when.errno"
        guard r.position == .after else {
            throw fail(.positionNotAllowed, field, "a condition on the result needs an \"after\" rule: before and instead advice decide before the original returns",
                       fix: "use \"position\": \"after\"")
        }
        guard sig.returnType.isInteger || sig.returnType.isPointer else {
            throw fail(.matcherType, field, "\(r.symbol) returns \(sig.returnType == .void ? "nothing" : "a \(sig.returnType)"): only integer and pointer results can be compared")
        }
        var range = w.result ?? ResultRange()
        var checks: UInt32 = range.min != .min || range.max != .max ? 1 : 0
        if let arg = range.ltArg {
            c.resultArg = try resultComparedArgument(arg, r, sig: sig, function: function, group: group, label: label)
            checks |= 4
        }
        if let name = w.errno {
            guard let code = ErrorNames.errno(name) else {
                throw fail(.unknownErrno, "when.errno", "unknown errno name \"\(name)\"", fix: errnoHint(name))
            }
            guard group.failure.setsErrno, let failed = group.failure.returnValue(for: code) else {
                throw fail(.invalidValue, "when.errno", "\(r.symbol) does not report failures through errno", fix: "use \"result\" instead")
            }
            if !r.allowAnyErrno && !group.errnos.contains(name) {
                throw fail(.errnoNotAllowed, "when.errno", "\(r.symbol) cannot fail with \(name) (its errors: \(group.errnos.joined(separator: " ")))",
                           fix: "pick one of those, or add \"allowAnyErrno\": true")
            }
            guard range.min <= failed && failed <= range.max else {
                throw fail(.invalidValue, "when.result", "the result range excludes \(failed), what \(r.symbol) returns when it fails with \(name): the rule could never fire",
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

    /// `"lt_arg"`: the group's number of the integer argument the result must be below.
    func resultComparedArgument(_ arg: Int, _ r: Rule, sig: CSignature, function: CatalogFunction, group: CatalogGroup,
                                label: String) throws(AspectsError) -> UInt32 {
        let fail = RuleErrors(label: label)
        // The preload compares the result with the argument's value as the call passed
        // it, so only an integer argument has a value to compare with.
        let field = "when.result.lt_arg"
        guard arg < sig.parameters.count else {
            let list = sig.parameters.enumerated().map { "\($0.offset): \($0.element.spelling)\($0.element.name.map { " " + $0 } ?? "")" }.joined(separator: ", ")
            throw fail(.argOutOfRange, field, "\(r.symbol) has \(sig.parameters.count) argument(s) (\(list)); index \(arg) is past them",
                       fix: "arguments are numbered from 0")
        }
        let p = sig.parameters[arg]
        let describe = "argument \(arg) of \(r.symbol) (\(p.spelling)\(p.name.map { " " + $0 } ?? ""))"
        guard p.type.isInteger else {
            throw fail(.matcherType, field, "\(describe) is not an integer, so the result cannot be compared with it",
                       fix: "name an integer argument, such as a count or a size")
        }
        guard sig.returnType.isInteger else {
            throw fail(.matcherType, field, "\(r.symbol) returns a \(sig.returnType), not a number to compare with \(describe)")
        }
        guard let g = function.groupIndex(ofArgument: arg) else {
            throw fail(.argOutOfRange, field, "\(describe) has no counterpart in \(catalog.primary(of: group).name), so the rule could not apply to the whole group",
                       fix: "write the rule on \(catalog.primary(of: group).name)")
        }
        return UInt32(g)
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

    /// `"return"` given as fields, for a function advised from its prototype that returns a
    /// struct by value: the struct's bytes, which share the slot's strings area.
    func compileStructResult(_ r: Rule, sig: CSignature, into c: inout CompiledRule, label: String) throws(AspectsError) {
        let a = r.action
        guard let given = a.returnFields else { return }
        let fail = RuleErrors(label: label)
        guard sig.returnType == .structure, let n = sig.returnStructName, let k = c.prototypeStructOrder.firstIndex(of: n) else {
            throw fail(.invalidValue, "action.return", "\(r.symbol) does not return a struct, so its result is one value, not \(a.returnFieldNames == nil ? "a list" : "an object")",
                       fix: "write one number")
        }
        var fields = given, paths: [String]? = nil
        if let names = a.returnFieldNames {
            (fields, paths) = try fieldsByName(names, values: given, declared: r.types[n] ?? [], name: n, fail: { fail($0, $1, $2, fix: $3) })
        }
        let bytes = try structBytes(fields, layout: c.prototypeStructs[k], name: n, symbol: r.symbol, paths: paths, fail: { fail($0, $1, $2, fix: $3) })
        c.resultBytes = bytes
        c.actions |= ASPECTS_ACTION_RETURN.rawValue
        if c.stringBytes + bytes.count > Int(ASPECTS_RULE_STRINGS_SIZE) {
            throw fail(.limit, "action.return", "\(n) takes \(bytes.count) bytes; with the patterns a rule holds \(ASPECTS_RULE_STRINGS_SIZE)", fix: nil)
        }
    }
}
