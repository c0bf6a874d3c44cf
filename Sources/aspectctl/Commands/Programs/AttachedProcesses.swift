import AspectsCore
import AspectsTable
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The processes that attached a table, for `list`, `stats` and `run`: who, and whether they
/// still run.
enum AttachedProcesses {
    static func json(_ attached: [Attachment]) -> JSONNode.Value {
        JSONOut.array(attached.map { a in
            JSONOut.object([("pid", JSONOut.int(a.pid)), ("parentPid", JSONOut.int(a.parentPID)), ("program", .string(a.program)),
                            ("hierarchy", JSONOut.int(a.hierarchy)), ("running", .bool(a.isRunning)),
                            ("stubFailures", a.stubFailures > 0 ? JSONOut.int(a.stubFailures) : nil)])
        })
    }

    /// `attached: 3 process(es) since creation, 1 running` and the latest ones, one per line.
    static func text(_ t: AdviceTable, latest: Int = 20) -> String {
        let attached = t.attachments()
        let failures = t.attachFailures
        var s = "attached: \(t.attachCount) process(es), \(attached.filter(\.isRunning).count) running"
        if failures.count > 0 { s += "; \(failures.count) refused the table (last: pid \(failures.lastPID), \(failures.lastReason))" }
        if attached.count > latest { s += "\n  (\(attached.count - latest) earlier ones not shown)" }
        for a in attached.suffix(latest) {
            s += "\n  pid \(a.pid)  \(a.program.isEmpty ? "?" : a.program)  parent \(a.parentPID)  hierarchy \(a.hierarchy)  \(a.isRunning ? "running" : "exited")"
        }
        for note in t.stubFailureNotes(attached) { s += "\n  warning: " + note }
        return s
    }
}
