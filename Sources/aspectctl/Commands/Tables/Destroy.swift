import ArgumentParser
import AspectsTable
import Foundation

struct Destroy: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "destroy",
        abstract: "Destroy a named advice table.",
        discussion: "Processes that have it mapped keep their copy until they exit; new processes no longer find it.")

    @OptionGroup var table: TableOptions

    func run() throws {
        try guarded {
            let name = try table.tableName()
            try AdviceTable.destroy(name)
            print("destroyed table \(name)")
        }
    }
}
