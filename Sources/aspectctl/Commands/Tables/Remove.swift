import ArgumentParser
import Foundation

struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
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
