import CAspectsABI
import AspectsCore

/// Rules on several functions (`"symbol": [...]`, `"family"`): one slot in each member's list.
extension RuleCompiler {
    /// A rule on several functions: compiled for each, and accepted only when it means the
    /// same for all of them (the same argument numbers and types, the same failure); then one
    /// slot in every member group's list.
    func compileFamily(_ r: Rule, label: String) throws(AspectsError) -> CompiledRule {
        let fail = RuleErrors(label: label)
        let field = r.family != nil ? "family" : "symbol"
        let names = try familyMembers(r, label: label)
        if r.prototype != nil {
            throw fail(.invalidValue, "prototype", "a rule on several functions takes catalog functions only",
                       fix: "give prototype rules one function each")
        }
        let compiled = try compileMembers(r, names: names, field: field, label: label)
        guard var first = compiled.first else { throw fail(.invalidValue, field, "no function named") }
        if compiled.count - 1 > Int(ASPECTS_MAX_FAMILY) {
            throw fail(.limit, field, "\(compiled.count) functions; one rule applies to at most \(ASPECTS_MAX_FAMILY + 1)")
        }
        for c in compiled.dropFirst() {
            if let differs = familyDifference(c, from: first, r) {
                throw fail(.invalidValue, field, "the rule does not mean the same for \(c.function.name) as for \(first.function.name): \(differs)",
                           fix: "split it into one rule per function, or keep to what they share (e.g. argument 0, the fd)")
            }
        }
        let familyBytes = (first.stringBytes + 1) / 2 * 2 + (2 + first.matchers.count) * (compiled.count - 1)
        if familyBytes + (first.resultBytes?.count ?? 0) > Int(ASPECTS_RULE_STRINGS_SIZE) {
            throw fail(.limit, "when.args", "the patterns and the \(compiled.count) functions take \(familyBytes) bytes; a rule holds \(ASPECTS_RULE_STRINGS_SIZE)")
        }
        first.familyGroups = compiled.dropFirst().map(\.group)
        first.familyArgs = compiled.dropFirst().map { $0.matchers.map { UInt8($0.arg) } }
        first.rule = r
        first.rule.symbol = first.function.name
        first.flags |= ASPECTS_RULE_FAMILY.rawValue
        for c in compiled { first.flags |= c.flags & Self.perGroupFlags }
        return first
    }

    /// Flags the preload reads with each call's own catalog entry (a default by descriptor kind,
    /// the stream model): a member without that entry ignores them, so members may differ.
    static let perGroupFlags = ASPECTS_RULE_DEFAULT_BY_KIND.rawValue | ASPECTS_RULE_STREAM_FAULT.rawValue

    /// The functions a rule names: a family's members, or the symbols listed.
    func familyMembers(_ r: Rule, label: String) throws(AspectsError) -> [String] {
        let fail = RuleErrors(label: label)
        guard let family = r.family else { return [r.symbol] + r.alsoSymbols }
        guard let members = catalog.families[family] else {
            throw fail(.unknownSymbol, "family", "there is no family \"\(family)\"",
                       fix: "families: \(catalog.families.keys.sorted().joined(separator: ", ")); or list the functions in \"symbol\"")
        }
        return members
    }

    /// The rule compiled for each catalog function it names, one per alias group (an alias of
    /// a function already named adds nothing); an error says for which function.
    func compileMembers(_ r: Rule, names: [String], field: String, label: String) throws(AspectsError) -> [CompiledRule] {
        let fail = RuleErrors(label: label)
        var compiled: [CompiledRule] = []
        for name in names {
            var one = r
            one.symbol = name
            one.alsoSymbols = []
            one.family = nil
            guard catalog.function(named: name) != nil else {
                let near = ErrorNames.suggestions(for: name, in: catalog.functions.map(\.name))
                throw fail(.unknownSymbol, field, "\(name) is not in the catalog",
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
        return compiled
    }

    /// How the rule compiled for one member differs from it compiled for the first, in words
    /// for the error; nil when it means the same for both.
    func familyDifference(_ c: CompiledRule, from first: CompiledRule, _ r: Rule) -> String? {
        if c.actions != first.actions || c.returnValue != first.returnValue || c.errnoValue != first.errnoValue || c.errnoChoices != first.errnoChoices {
            return "its failure (\(c.function.name) returns \(c.returnValue), \(first.function.name) \(first.returnValue))"
        } else if c.matchers.count != first.matchers.count || c.matchers.indices.contains(where: { i in
            // a named argument may sit elsewhere in each function; it must be of one type
            var mine = c.matchers[i]
            if r.when.args[i].argName != nil { mine.arg = first.matchers[i].arg }
            return mine != first.matchers[i]
        }) {
            return "\"when.args\": an argument has another number or type in \(c.function.declaration) (a condition may name its argument, e.g. \"arg\": \"path\", to mean that argument wherever it is)"
        } else if c.argSets.map(\.index) != first.argSets.map(\.index) || c.argSets.map(\.value) != first.argSets.map(\.value) {
            return "\"action.args\": an argument has another number in \(c.function.declaration)"
        } else if c.callObject != first.callObject || c.callFunction != first.callFunction || c.dataBuffer != first.dataBuffer
                    || c.dataCount != first.dataCount || c.dataSize != first.dataSize || c.corruptBits != first.corruptBits {
            return "where its data is (\(c.function.declaration))"
        } else if c.resultArg != first.resultArg {
            return "\"when.result.lt_arg\": the argument has another number in \(c.function.declaration)"
        } else if c.position != first.position && r.positionFromCatalog {
            return "\"position\": the catalog fails \(first.function.name) and \(c.function.name) at different places (one after its work, one instead of it); write \"position\""
        } else if (c.flags & ~Self.perGroupFlags) != (first.flags & ~Self.perGroupFlags) || c.position != first.position || c.scope != first.scope || c.resultBytes != first.resultBytes {
            return "how it applies to \(c.function.name)"
        } else {
            return nil
        }
    }
}
