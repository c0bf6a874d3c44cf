import ArgumentParser
import AspectsCore
import AspectsRules
import AspectsTable
import Foundation

/// Rules that can never fire: a warning each, or with --strict a refusal (before anything is
/// written).
enum Conflicts {
    static func labels(_ rules: [CompiledRule]) -> [String] {
        rules.enumerated().map { n, c in c.rule.id.map { "rule \"\($0)\"" } ?? (rules.count == 1 ? "rule" : "rule \(n + 1)") }
    }

    /// The table's active rules, compiled again from the JSON they were added with (rules
    /// added through the Swift API have none and are left out).
    static func existing(_ t: AdviceTable) -> [CompiledRule] {
        t.rules().compactMap { r in
            guard let text = r.source, let rules = try? RuleDecoder(source: "table").decode(text),
                  let c = try? RuleCompiler(catalog: t.catalog).compile(rules) else { return nil }
            return c.first
        }
    }

    /// Advice objects someone else could change (AdviceObject.trustWarning): a warning each.
    static func warnAboutObjects(_ rules: [CompiledRule]) {
        for (label, c) in zip(labels(rules), rules) {
            guard let object = c.callObject, let text = AdviceObject.trustWarning(object) else { continue }
            Console.write("aspectctl: warning: \(label): \(text)\n")
        }
    }

    /// A rule on one function of a family: a note (never an error, also with --strict).
    static func noteFamilies(_ rules: [CompiledRule], labels: [String]) {
        for n in FamilyNote.notes(rules, labels: labels) { Console.write("aspectctl: note: \(n)\n") }
    }

    static func report(_ findings: [RuleConflicts.Finding], strict: Bool) throws(AspectsError) {
        if strict, let f = findings.first {
            throw AspectsError(.invalidValue, rule: f.rule, f.message,
                               fix: (f.fix ?? "give it a condition, remove the rule that takes its calls, or drop it") + " (without --strict this is a warning)")
        }
        for f in findings { Console.write("aspectctl: warning: \(f)\n") }
    }
}
