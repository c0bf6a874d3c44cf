import AspectConfig
import ArgumentParser

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the rules of a table, in table order.")

    @OptionGroup var table: TableOptions
    @OptionGroup var output: OutputOptions

    @Flag(name: .long, help: "Include removed rules (until their slots are reused).")
    var all = false

    func run() throws {
        try guarded {
            let rules = try table.open().rules(includeRemoved: all)
            if output.json {
                printJSON(JSONOut.array(rules.map(\.json)))
                return
            }
            if rules.isEmpty { print("no rules"); return }
            for r in rules { print(Self.line(r)) }
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

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Per-rule counts: calls matched and firings, across every process of the table.")

    @OptionGroup var table: TableOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        try guarded {
            let rules = try table.open().rules(includeRemoved: true)
            if output.json {
                printJSON(JSONOut.array(rules.map { r in
                    JSONOut.object([("id", .string(r.id)), ("symbol", .string(r.symbol)), ("state", .string(r.state.rawValue)),
                                    ("matched", JSONOut.int(r.matched)), ("fired", JSONOut.int(r.fired)),
                                    ("byProcess", JSONOut.array(r.byProcess.map {
                                        JSONOut.object([("pid", JSONOut.int($0.pid)), ("matched", JSONOut.int($0.matched)), ("fired", JSONOut.int($0.fired))])
                                    }))])
                }))
                return
            }
            print(Report.table(rules))
            let processes = rules.filter { !$0.byProcess.isEmpty }
            if !processes.isEmpty {
                print("\nby process:")
                for r in processes {
                    for p in r.byProcess { print("  \(r.id)  pid \(p.pid): matched \(p.matched), fired \(p.fired)") }
                }
            }
        }
    }
}

/// The per-rule table printed by `stats` and `run --report`.
enum Report {
    static func table(_ rules: [TableRule]) -> String {
        if rules.isEmpty { return "no rules" }
        let rows = [["rule", "symbol", "position", "matched", "fired", "state"]] + rules.map {
            [$0.id, $0.symbol, $0.position, String($0.matched), String($0.fired), $0.state.rawValue]
        }
        let widths = (0..<6).map { c in rows.map { $0[c].count }.max()! }
        return rows.map { row in
            row.enumerated().map { c, cell in
                c >= 3 && c <= 4 ? String(repeating: " ", count: widths[c] - cell.count) + cell
                    : cell + String(repeating: " ", count: widths[c] - cell.count)
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }.joined(separator: "\n")
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
