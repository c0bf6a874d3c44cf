import ArgumentParser
import AspectsCore
import AspectsTable
import CAspectsABI
import Foundation

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the rules of a table, in table order.",
        discussion: """
        --json gives each rule's state and counts, and under "rule" the rule's JSON as it was added (its id and any drawn seed written in); add, check and run take such a listing again (removed rules are left out, with a note). --rules prints just those, as one rules file that `add` takes again: `aspectctl list --rules > saved.json`, later `aspectctl add --rules saved.json`.
        """)

    @OptionGroup var table: TableOptions
    @OptionGroup var output: OutputOptions

    @Flag(name: .long, help: "Include removed rules (until their slots are reused).")
    var all = false

    @Flag(name: .customLong("rules"), help: "Print the active rules as a rules file that `add` accepts.")
    var asRules = false

    func validate() throws {
        if asRules && (all || output.json) { throw ValidationError("--rules prints the active rules as JSON already; it takes no --all or --json") }
    }

    func run() throws {
        try guarded {
            let t = try table.open()
            if let note = t.ownerNote { Console.write("aspectctl: note: \(note)\n") }
            let rules = t.rules(includeRemoved: all)
            try t.checkCounts(rules)
            if asRules {
                var kept: [JSONNode.Value] = []
                for r in rules {
                    if let text = r.source, let node = try? JSONParser.parse(text) { kept.append(node.value); continue }
                    Console.write("aspectctl: rule \(r.id) is left out: the table keeps no JSON for it (added through the Swift API, or longer than \(ASPECTS_RULE_SOURCE_SIZE - 16) bytes)\n")
                }
                printJSON(JSONOut.array(kept))
                return
            }
            if output.json {
                printJSON(JSONOut.array(rules.map(\.json)))
                return
            }
            if rules.isEmpty { print("no rules") }
            for r in rules { print(Self.line(r)) }
            print(AttachedProcesses.text(t))
        }
    }

    static func line(_ r: TableRule) -> String {
        var removed = ""
        if r.state == .removed { removed = r.removedByPID.map { "[removed by pid \($0)] " } ?? "[removed] " }
        var s = "\(r.id)  \(removed)\(r.position) \(r.symbol): \(r.actions.joined(separator: ", "))"
        if !r.conditions.isEmpty { s += "  when \(r.conditions.joined(separator: ", "))" }
        if r.scope != "process" { s += "  scope \(r.scope)" }
        s += "  (matched \(r.matched), fired \(r.fired))"
        if let p = r.prototypeStatus { s += "  [\(p)]" }
        return s
    }
}
