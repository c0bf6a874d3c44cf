import AspectConfig
import ArgumentParser

struct Create: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create a named advice table (mode 0600).")

    @OptionGroup var table: TableOptions

    @Option(name: .customLong("rules"), help: "How many rules the table holds.")
    var ruleCapacity: Int = 256

    @Option(name: .customLong("events"), help: "How many event records the ring holds (a power of two).")
    var eventCapacity: Int = 4096

    @Option(name: .customLong("stats"), help: "How many (process, rule) statistics entries the table holds (a power of two).")
    var statCapacity: Int = 4096

    func run() throws {
        try guarded {
            let name = try table.tableName()
            _ = try AdviceTable.create(name, ruleCapacity: ruleCapacity, eventCapacity: eventCapacity, statCapacity: statCapacity)
            print("created table \(name) (\(name.path))")
        }
    }
}

struct Destroy: ParsableCommand {
    static let configuration = CommandConfiguration(
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
