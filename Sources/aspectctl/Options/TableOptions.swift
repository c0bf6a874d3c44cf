import ArgumentParser
import AspectsCore
import AspectsTable
import Foundation

/// `--table`, on every command that works on a table.
struct TableOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The advice table (default: $ASPECTS_TABLE).", valueName: "name"))
    var table: String?

    @OptionGroup var lock: LockOptions

    /// The table named, and the lock policy for writing it.
    func tableName() throws(AspectsError) -> TableName {
        lock.apply()
        guard let name = table ?? ProcessInfo.processInfo.environment["ASPECTS_TABLE"], !name.isEmpty else {
            throw AspectsError(.usage, field: "--table", "no table given", fix: "pass --table NAME or set ASPECTS_TABLE")
        }
        return try TableName(name)
    }

    func open() throws(AspectsError) -> AdviceTable { try AdviceTable.open(try tableName()) }
}
