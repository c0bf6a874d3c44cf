import ArgumentParser
import AspectsCore
import AspectsRules
import Foundation

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
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
