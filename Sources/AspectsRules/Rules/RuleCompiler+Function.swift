import CAspectsABI
import AspectsCore

/// Which function a rule advises: a catalog function (and its alias group), or one outside the
/// catalog described by the rule's `prototype`.
extension RuleCompiler {
    /// The function the rule names and its group; for a function advised from its prototype,
    /// also its signature (nil for a catalog function).
    func adviseFunction(_ r: Rule, label: String) throws(AspectsError) -> (CatalogFunction, CatalogGroup, CSignature?) {
        let fail = RuleErrors(label: label)
        if let refused = catalog.refusal(for: r.symbol) {
            throw fail(.refusedSymbol, "symbol", "\(r.symbol) cannot be advised: \(refused.reason)")
        }
        if let f = catalog.function(named: r.symbol) { return (f, catalog.group(of: f), nil) }
        guard let proto = r.prototype else {
            let near = ErrorNames.suggestions(for: r.symbol, in: catalog.functions.map(\.name))
            throw fail(.unknownSymbol, "symbol", "\(r.symbol) is not in the catalog",
                       fix: near.isEmpty ? "see `aspectctl catalog` for what can be advised, or give its \"prototype\"" : "did you mean \(near.joined(separator: " or "))?")
        }
        let (function, group) = try prototypeFunction(r, proto, label: label)
        return (function, group, function.signature)
    }

    /// A catalog function needs no `prototype`; one given must declare what the catalog does.
    func checkCatalogPrototype(_ r: Rule, function: CatalogFunction, label: String) throws(AspectsError) {
        guard let proto = r.prototype else { return }
        let fail = RuleErrors(label: label)
        let sig = function.signature
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

    /// A function outside the catalog, advised from the rule's prototype (docs/ARCHITECTURE.md
    /// §5, prototype stubs).
    func prototypeFunction(_ r: Rule, _ proto: String, label: String) throws(AspectsError) -> (CatalogFunction, CatalogGroup) {
        let fail = RuleErrors(label: label)
        let baseName = try prototypeBaseName(r, label: label)
        let layouts = try declaredStructs(r, label: label)
        let sig: CSignature
        do { sig = try PrototypeParser(structs: Set(layouts.keys)).parse(proto) } catch {
            throw fail(.badPrototype, "prototype", "\(error)", fix: "write a C declaration such as \"int \(r.symbol)(int fd)\"")
        }
        guard sig.name == baseName else {
            throw fail(.prototypeMismatch, "prototype", "the prototype declares \(sig.name), the rule names \(r.symbol)", fix: "make them the same function")
        }
        let fixed = sig.parameters.count
        var full = try forwardingVariadics(sig, r, label: label)
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

    /// The name the prototype declares: the symbol, or of "name@VERSION" (one version of a
    /// versioned symbol) the name; one the catalog's wrapper does not already advise, nor refuses.
    func prototypeBaseName(_ r: Rule, label: String) throws(AspectsError) -> String {
        let fail = RuleErrors(label: label)
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
        return baseName
    }

    /// The structs the rule declares in `"types"`, by tag: their fields' types, scalars only
    /// (no nested structs, arrays or long double).
    func declaredStructs(_ r: Rule, label: String) throws(AspectsError) -> [String: [ABIType]] {
        let fail = RuleErrors(label: label)
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
        return layouts
    }

    /// A variadic prototype's signature with the optional arguments the rule says its callers
    /// pass (`"variadic"`), promoted as C promotes them; a fixed one as it is.
    func forwardingVariadics(_ sig: CSignature, _ r: Rule, label: String) throws(AspectsError) -> CSignature {
        let fail = RuleErrors(label: label)
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
        return full
    }

    /// The field types of the structs a prototype passes or returns by value, in the order of
    /// their first use (the table writer lays them out in that order).
    func layOutPrototypeStructs(_ r: Rule, sig: CSignature, into c: inout CompiledRule, label: String) throws(AspectsError) {
        let fail = RuleErrors(label: label)
        var order: [String] = []
        for n in sig.parameters.compactMap(\.structName) + [sig.returnStructName].compactMap({ $0 }) where !order.contains(n) { order.append(n) }
        c.prototypeStructs = try order.map { (n: String) throws(AspectsError) -> [ABIType] in
            var layout: [ABIType] = []
            for t in r.types[n] ?? [] {
                do { layout.append(try PrototypeParser().parseType(t).type) } catch { throw fail(.badPrototype, "types.\(n)", "\(error)") }
            }
            return layout
        }
        c.prototypeStructOrder = order
    }
}
