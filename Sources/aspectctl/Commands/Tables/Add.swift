import ArgumentParser
import AspectsRules
import AspectsTable
import Foundation

struct Add: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
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
