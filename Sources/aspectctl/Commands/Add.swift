import AspectConfig
import ArgumentParser
import Foundation

struct Add: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add rules to a table; running programs see them on their next call.",
        discussion: """
        Prints a token per rule added, one per line: `id@serial`. `remove` takes it (or the plain id); the token removes exactly that rule, never a later one that reuses the id. All rules are validated first; if one is bad, none is added. A rule that names one function of a family (write, while programs often call pwrite64 or writev) gets a note on stderr that "family" covers every member; the rule is added as written.
        """)

    @OptionGroup var table: TableOptions
    @OptionGroup var sources: RuleSources

    @Argument(help: ArgumentHelp("Rules files (JSON).", valueName: "file"))
    var files: [String] = []

    @Flag(name: .long, help: "Refuse rules that can never fire (behind an instead rule without conditions, repeating another, or with a process glob no program matches) instead of warning.")
    var strict = false

    func validate() throws { try sources.requireSome(files) }

    func run() throws {
        try guarded {
            let compiled = try sources.load(extraFiles: files)
            let t = try table.open()
            try t.checkRoom(for: compiled.count)
            let labels = Conflicts.labels(compiled)
            try Conflicts.report(RuleConflicts.find(compiled, labels: labels, after: Conflicts.existing(t))
                                 + RuleConflicts.processGlobsMatchingNothing(compiled, labels: labels), strict: strict)
            Conflicts.warnAboutObjects(compiled)
            Conflicts.noteFamilies(compiled, labels: labels)
            let added = try t.addRules(compiled)
            for a in added { print(a.token) }
            reportDrawnSeeds(added)
            if let note = t.livePrototypeNote(compiled) { Console.write("aspectctl: note: \(note)\n") }
            if let note = AdviceTable.lateLivePrototypeNote(t.lateLivePrototypes) { Console.write("aspectctl: note: \(note)\n") }
        }
    }
}

struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove rules from a table.",
        discussion: "Once this returns, no call that starts afterwards is advised by the removed rules.")

    @OptionGroup var table: TableOptions

    @Argument(help: ArgumentHelp("Rules to remove: tokens (id@serial, as add prints them) or ids.", valueName: "token"))
    var ids: [String] = []

    @Flag(name: .long, help: "Remove every active rule.")
    var all = false

    @Option(name: .long, help: ArgumentHelp("Remove every rule on this function (and its aliases).", valueName: "name"))
    var symbol: String?

    func validate() throws {
        let modes = (ids.isEmpty ? 0 : 1) + (all ? 1 : 0) + (symbol == nil ? 0 : 1)
        if modes != 1 { throw ValidationError("give rule ids, --all, or --symbol NAME (one of them)") }
    }

    func run() throws {
        try guarded {
            let t = try table.open()
            let removed = ids.isEmpty ? try t.removeAll(symbol: symbol) : try t.remove(ids: ids)
            for id in removed { print(id) }
        }
    }
}

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate rules files without writing anything.",
        discussion: "Reports every problem of every rule (not only the first). Exit status 0 when every rule is valid, 65 (66 for a file that cannot be read) otherwise; --json prints the errors as JSON too. A rule that names one function of a family (write, while programs often call pwrite64 or writev) gets a note on stderr (`notes` with --json) that \"family\" covers every member; a note never fails the check, also with --strict.")

    @OptionGroup var sources: RuleSources
    @OptionGroup var output: OutputOptions

    @Argument(help: ArgumentHelp("Rules files (JSON).", valueName: "file"))
    var files: [String] = []

    @Flag(name: .long, help: "Count rules that can never fire (behind an instead rule without conditions, repeating another, or with a process glob no program matches) as errors.")
    var strict = false

    func validate() throws { try sources.requireSome(files) }

    func run() throws {
        var (compiled, errors) = sources.loadEach(extraFiles: files)
        let labels = Conflicts.labels(compiled)
        let findings = RuleConflicts.find(compiled, labels: labels) + RuleConflicts.processGlobsMatchingNothing(compiled, labels: labels)
        let notes = FamilyNote.notes(compiled, labels: labels)
        if strict {
            errors += findings.map { AspectsError(.invalidValue, rule: $0.rule, $0.message, fix: $0.fix ?? "give it a condition, remove the rule that takes its calls, or drop it") }
        }
        if !errors.isEmpty {
            if output.json {
                printJSON(JSONOut.object([
                    ("valid", .bool(false)), ("rules", JSONOut.int(compiled.count)),
                    ("errors", JSONOut.array(errors.map { e in
                        JSONOut.object([("code", .string("E\(e.code.abiValue)")), ("kind", .string(e.code.summary)),
                                        ("location", e.location.map { .string($0) }), ("rule", e.rule.map { .string($0) }),
                                        ("field", e.field.map { .string($0) }), ("message", .string(e.message)),
                                        ("fix", e.fix.map { .string($0) })])
                    })),
                ]))
            }
            for e in errors { Console.write("aspectctl: error: \(e)\n") }
            throw ExitCode(errors.allSatisfy { $0.code == .noInput } ? 66 : 65)
        }
        try guarded {
            if output.json {
                printJSON(JSONOut.object([("valid", .bool(true)), ("rules", JSONOut.int(compiled.count)),
                                          ("json", JSONOut.array(compiled.compactMap(\.rule.source))),
                                          ("warnings", findings.isEmpty ? nil : JSONOut.array(findings.map {
                                              JSONOut.object([("rule", .string($0.rule)), ("message", .string($0.message))]) })),
                                          ("notes", notes.isEmpty ? nil : JSONOut.array(notes.map {
                                              JSONOut.object([("rule", .string($0.rule)), ("message", .string($0.message))]) }))]))
            } else {
                for f in findings { Console.write("aspectctl: warning: \(f)\n") }
                Conflicts.warnAboutObjects(compiled)
                Conflicts.noteFamilies(compiled, labels: labels)
                for c in compiled {
                    let scope: String
                    if c.prototype != nil {
                        scope = "from its prototype: the GOT slots that import it"
                    } else {
                        scope = "applies to " + Catalog.builtIn.group(of: c.function).members.map { Catalog.builtIn.functions[$0].name }.joined(separator: " ")
                    }
                    print("ok  \(c.rule.id ?? "(id on add)")  \(c.rule.position.rawValue) \(c.function.name)  [\(scope)]")
                }
                print("\(compiled.count) rule(s) valid")
            }
        }
    }
}

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

/// A drawn seed is printed, so that any run can be repeated with `"seed": N`.
func reportDrawnSeeds(_ added: [AdviceTable.Added]) {
    for line in drawnSeedNotices(added) { Console.write(line + "\n") }
}

/// The notice for each rule whose seed was drawn: how to repeat the run.
func drawnSeedNotices(_ added: [AdviceTable.Added]) -> [String] {
    added.filter(\.seedWasDrawn).map { "aspectctl: rule \($0.id): seed \($0.seed!) (drawn; add \"seed\": \($0.seed!) to \"when\" to repeat this run)" }
}
