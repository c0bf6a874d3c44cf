import ArgumentParser
import AspectsCore
import AspectsRules

struct CatalogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog",
        abstract: "What can be advised: functions, their alias groups, prototypes and natural failures.")

    @OptionGroup var output: OutputOptions

    @Option(name: .long, help: ArgumentHelp("Only groups with a name containing this text.", valueName: "text"))
    var search: String?

    func run() throws {
        let catalog = Catalog.builtIn
        let groups = catalog.groups.filter { g in
            guard let q = search?.lowercased() else { return true }
            return g.members.contains { catalog.functions[$0].name.lowercased().contains(q) } || g.section.lowercased() == q
        }
        if output.json {
            printJSON(JSONOut.array(groups.map { g in
                JSONOut.object([
                    ("section", .string(g.section)), ("header", .string(g.header)),
                    ("functions", JSONOut.array(g.members.map { m in
                        let f = catalog.functions[m]
                        return JSONOut.object([("name", .string(f.name)), ("prototype", .string(f.declaration))])
                    })),
                    ("failure", .string(g.failure.rawValue)),
                    ("errors", JSONOut.array(g.errnos.map { .string($0) })),
                    ("default", g.defaultErrno.map { .string($0) }),
                    ("noreturn", .bool(g.isNoReturn)),
                ])
            }))
            return
        }
        var section = ""
        for g in groups {
            if g.section != section { section = g.section; print("[\(section)]") }
            let primary = catalog.primary(of: g)
            print("  \(primary.declaration)")
            let others = g.members.dropFirst().map { catalog.functions[$0] }
            if !others.isEmpty { print("      also: \(others.map(\.name).joined(separator: " "))") }
            if g.failure == .none {
                print("      cannot fail")
            } else {
                let byKind = g.defaultByKind.keys.sorted().filter { $0 != .file }.map { "\($0) \(g.defaultByKind[$0]!)" }
                print("      fails: \(g.failure.rawValue), default \(g.defaultErrno ?? "-")\(byKind.isEmpty ? "" : " (" + byKind.joined(separator: ", ") + ")"); errors: \(g.errnos.joined(separator: " "))")
                if let reason = g.failsAfterReason { print("      fails after its work (\"fail\" without a position: after): \(reason)") }
                if let io = g.stream { print("      fails where its stream's \(io)(2) fails: glibc's own code runs with the error (a call served by the buffer cannot fail)") }
            }
        }
        if search == nil { print("\(catalog.functions.count) names in \(catalog.groups.count) groups") }
    }
}
