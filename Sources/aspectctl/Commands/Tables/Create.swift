import ArgumentParser
import AspectsCore
import AspectsTable
import Foundation

struct Create: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a named advice table (mode 0600).")

    @OptionGroup var table: TableOptions

    @Option(name: .customLong("rules"), help: "How many rules the table holds.")
    var ruleCapacity: Int = 256

    @Option(name: .customLong("events"), help: "How many event records the ring holds (a power of two).")
    var eventCapacity: Int = 4096

    @Option(name: .customLong("stats"), help: "How many (process, rule) statistics entries the table holds (a power of two).")
    var statCapacity: Int = 4096

    @Option(name: .customLong("share-with-group"), help: ArgumentHelp(
        "Share the table with a group (name or number): mode 0660, that group, and the header says so; processes of its members attach it, whoever runs them. Every member can then advise every member's attached processes and read their call arguments.",
        valueName: "group"))
    var shareWithGroup: String?

    @Flag(name: .customLong("live-prototypes"), help: ArgumentHelp(
        "Every program that attaches the table keeps a thread (\"aspects-watch\", all signals blocked) that applies a prototype rule as soon as it is added, before the program's next call of that function. Without it, a running program applies prototype rules at its next call of an advised function. The thread makes the program multithreaded: unshare(CLONE_NEWUSER) and similar calls then fail."))
    var livePrototypes = false

    func run() throws {
        try guarded {
            let name = try table.tableName()
            var gid: UInt32?
            if let g = shareWithGroup {
                if let n = UInt32(g) { gid = n } else if let entry = getgrnam(g) { gid = entry.pointee.gr_gid } else {
                    throw AspectsError(.invalidValue, field: "--share-with-group", "there is no group \"\(g)\"", fix: "give a group name from /etc/group, or a number")
                }
            }
            _ = try AdviceTable.create(name, ruleCapacity: ruleCapacity, eventCapacity: eventCapacity, statCapacity: statCapacity, sharedWithGroup: gid,
                                       livePrototypes: livePrototypes)
            print("created table \(name) (\(name.path))" + (gid.map { ", shared with group \($0)" } ?? "") + (livePrototypes ? ", live prototypes" : ""))
        }
    }
}
