/// A rule on one function of a family (`write`, while the program writes with `pwrite64`)
/// often never matches: `check` and `add` say which family it belongs to and that
/// `"family"` covers every member. A note, not a warning: the rule is valid and may be just
/// what was meant, so `--strict` (which refuses rules that can never fire) leaves it alone.
package struct FamilyNote: Sendable, Equatable, CustomStringConvertible {
    /// The rule, as errors name rules ("rule \"x\"", "rule 3").
    package var rule: String
    package var message: String
    package var description: String { "\(rule): \(message)" }

    /// A note for each rule that names one function of a family; none for rules on a
    /// family or a list of functions, or advised from a prototype.
    package static func notes(_ rules: [CompiledRule], labels: [String], catalog: Catalog = .builtIn) -> [FamilyNote] {
        zip(rules, labels).compactMap { c, label in
            guard c.prototype == nil, c.familyGroups.isEmpty, let family = catalog.family(of: c.function) else { return nil }
            return FamilyNote(rule: label, message: "\(c.function.name) is one of the \(family) family (\(catalog.familyMembers(family))); "
                + "programs often call another: \"family\": \"\(family)\" in place of \"symbol\" covers them all "
                + "(`aspectctl calls -- PROGRAM` shows which it calls)")
        }
    }
}

extension Catalog {
    /// The family that holds `function`'s alias group (`pwrite64` → `write`), if any.
    package func family(of function: CatalogFunction) -> String? {
        families.keys.sorted().first { name in
            families[name]!.contains { self.function(named: $0)?.groupIndex == function.groupIndex }
        }
    }

    /// A family's members with the names programs call them by, alias groups joined by `/`:
    /// `write, pwrite/pwrite64, writev, ...` (glibc's `__` entry points left out).
    package func familyMembers(_ family: String) -> String {
        (families[family] ?? []).compactMap { self.function(named: $0) }.map { f in
            group(of: f).members.map { functions[$0].name }.filter { !$0.hasPrefix("__") }.joined(separator: "/")
        }.joined(separator: ", ")
    }
}
