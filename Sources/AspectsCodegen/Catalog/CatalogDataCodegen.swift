import AspectsRules

/// Writes the parsed catalog as Swift source (Sources/AspectsRules/Generated/CatalogData.swift):
/// `Catalog.builtIn` is that value, so aspectctl starts without parsing the spec. The data is
/// written from the parse of the spec, never by hand, and a test checks both agree.
///
/// The source is plain initializer calls with every type stated, appended one by one: the
/// type checker takes long over one large literal whose element types it must infer.
struct CatalogDataCodegen {
    let catalog: Catalog

    func source(banner: String) -> String {
        var s = "// \(banner)\n"
        s += "// The catalog as parsed from the spec, so that aspectctl validates rules against exactly the\n"
        s += "// catalog libaspects.so was generated from without parsing the spec at every start.\n\n"
        s += "extension Catalog {\n"
        s += "    static func generatedBuiltIn() -> Catalog {\n"
        // the ABI hash as computed from the parse, so a start does not compute it again
        s += "        var catalog = Catalog(\n"
        s += "            functions: builtInFunctions(), groups: builtInGroups(), refused: builtInRefused(), flagSets: builtInFlagSets(),\n"
        s += "            abiHash: 0x\(String(catalog.abiHash, radix: 16)))\n"
        s += "        catalog.families = builtInFamilies()\n"
        s += "        return catalog\n"
        s += "    }\n\n"
        s += arrayFunction("builtInFunctions", of: "CatalogFunction", catalog.functions.map(function))
        s += arrayFunction("builtInGroups", of: "CatalogGroup", catalog.groups.map(group))
        s += arrayFunction("builtInRefused", of: "RefusedSymbol", catalog.refused.map {
            "RefusedSymbol(name: \(literal($0.name)), reason: \(literal($0.reason)))"
        })
        s += dictionaryFunction("builtInFlagSets", of: "FlagSet", catalog.flagSets.mapValues(flagSet))
        s += dictionaryFunction("builtInFamilies", of: "[String]", catalog.families.mapValues { list($0.map(literal)) })
        s += "}\n\n"
        s += helpers
        return s
    }

    /// Elements per generated function: the optimizer's time grows faster than a function's
    /// length (one function of 236 appends kept a release build busy for over ten minutes).
    static let chunk = 32

    /// The array, built by functions of `chunk` appends each.
    private func arrayFunction(_ name: String, of type: String, _ elements: [String]) -> String {
        let chunks = stride(from: 0, to: elements.count, by: Self.chunk).map { elements[$0..<min($0 + Self.chunk, elements.count)] }
        var s = "    private static func \(name)() -> [\(type)] {\n"
        s += "        var all: [\(type)] = []\n"
        s += "        all.reserveCapacity(\(elements.count))\n"
        for k in chunks.indices { s += "        \(name)\(k)(&all)\n" }
        s += "        return all\n    }\n\n"
        for (k, part) in chunks.enumerated() {
            s += "    \(Self.unoptimized)\n"
            s += "    private static func \(name)\(k)(_ all: inout [\(type)]) {\n"
            for e in part { s += "        all.append(\(e))\n" }
            s += "    }\n\n"
        }
        return s
    }

    /// Data built once per process gains nothing from the optimizer, which is slow on it.
    static let unoptimized = "@_optimize(none)"

    /// Keys in sorted order: a dictionary's own order changes from run to run.
    private func dictionaryFunction(_ name: String, of type: String, _ entries: [String: String]) -> String {
        var s = "    \(Self.unoptimized)\n"
        s += "    private static func \(name)() -> [String: \(type)] {\n"
        s += "        var all: [String: \(type)] = [:]\n"
        for key in entries.keys.sorted() { s += "        all[\(literal(key))] = \(entries[key]!)\n" }
        s += "        return all\n    }\n\n"
        return s
    }

    private func function(_ f: CatalogFunction) -> String {
        "CatalogFunction(name: \(literal(f.name)), signature: \(signature(f.signature)), fixedCount: \(f.fixedCount), "
            + "exportIndex: \(f.exportIndex), groupIndex: \(f.groupIndex), groupArguments: \(list(f.groupArguments.map { optional($0) })), "
            + "testExpression: \(optional(f.testExpression.map(literal))))"
    }

    private func signature(_ sig: CSignature) -> String {
        let parameters = sig.parameters.map { p in
            "parameter(\(optional(p.name.map(literal))), \(literal(p.spelling)), .\(p.type), \(optional(p.structName.map(literal))))"
        }
        return "signature(\(literal(sig.name)), \(literal(sig.returnSpelling)), .\(sig.returnType), "
            + "\(optional(sig.returnStructName.map(literal))), \(list(parameters)), variadic: \(sig.isVariadic))"
    }

    private func group(_ g: CatalogGroup) -> String {
        let flagArguments = g.flagArguments.keys.sorted().map { "\($0): \(literal(g.flagArguments[$0]!))" }
        let data = g.data.map { "DataArguments(buffer: \($0.buffer), count: \($0.count), itemSize: \(optional($0.itemSize)))" }
        let faults = DataFault.allCases.filter(g.faults.contains).map { ".\($0)" }
        return "CatalogGroup(index: \(g.index), section: \(literal(g.section)), header: \(literal(g.header)), failure: .\(g.failure), "
            + "errnos: \(list(g.errnos.map(literal))), defaultErrno: \(optional(g.defaultErrno.map(literal))), isNoReturn: \(g.isNoReturn), "
            + "members: \(list(g.members.map(String.init))), flagArguments: \(flagArguments.isEmpty ? "[:]" : list(flagArguments)), "
            + "isSignalUnsafe: \(g.isSignalUnsafe), data: \(optional(data)), faults: \(list(faults)), "
            + "failsAfterReason: \(optional(g.failsAfterReason.map(literal))), stream: \(optional(g.stream.map { ".\($0)" })), standardStream: \(optional(g.standardStream.map(literal))), "
            + "defaultByKind: \(g.defaultByKind.isEmpty ? "[:]" : list(g.defaultByKind.keys.sorted().map { ".\($0): \(literal(g.defaultByKind[$0]!))" })))"
    }

    private func flagSet(_ set: FlagSet) -> String {
        let kind: String
        switch set.kind {
        case .bits(let field): kind = ".bits(field: 0x\(String(field, radix: 16)))"
        case .values: kind = ".values"
        }
        let flags = set.flags.map { "(name: \(literal($0.name)), value: 0x\(String($0.value, radix: 16)))" }
        return "FlagSet(name: \(literal(set.name)), flags: \(list(flags)), kind: \(kind))"
    }

    private func list(_ items: [String]) -> String { "[" + items.joined(separator: ", ") + "]" }

    private func optional(_ value: CustomStringConvertible?) -> String { value.map(\.description) ?? "nil" }

    /// A Swift string literal of the text: quotes, backslashes and control characters escaped.
    private func literal(_ text: String) -> String {
        var s = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": s += "\\\""
            case "\\": s += "\\\\"
            case "\n": s += "\\n"
            case "\t": s += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7f: s += "\\u{\(String(scalar.value, radix: 16))}"
            default: s.unicodeScalars.append(scalar)
            }
        }
        return s + "\""
    }

    /// Short constructors with every type stated, which keep the data's lines short and cheap to type-check.
    private let helpers = """
        private func parameter(_ name: String?, _ spelling: String, _ type: ABIType, _ structName: String?) -> CParameter {
            CParameter(name: name, spelling: spelling, type: type, structName: structName)
        }

        private func signature(_ name: String, _ returnSpelling: String, _ returnType: ABIType, _ returnStructName: String?,
                               _ parameters: [CParameter], variadic: Bool) -> CSignature {
            var sig = CSignature(name: name, returnSpelling: returnSpelling, returnType: returnType, parameters: parameters, isVariadic: variadic)
            sig.returnStructName = returnStructName
            return sig
        }

        """
}
