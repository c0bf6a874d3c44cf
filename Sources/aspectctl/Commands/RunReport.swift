import AspectConfig
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where `run` says what it did — the drawn seeds, what was not injected, the report — kept
/// apart from the program's own stderr when asked: `--report-file FILE`, `--report-fd N`.
/// Standard error otherwise.
final class ReportChannel {
    private let handle: FileHandle

    init(file: String?, fd: Int32?) throws(AspectsError) {
        if let file {
            let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw AspectsError(.system, field: "--report-file", "cannot write \(file): \(String(cString: strerror(errno)))",
                                   fix: "give a path in a directory you can write")
            }
            handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        } else if let fd {
            let flags = fcntl(fd, F_GETFL)
            guard fd >= 0, flags >= 0, flags & O_ACCMODE != O_RDONLY else {
                throw AspectsError(.usage, field: "--report-fd", "descriptor \(fd) is not open for writing",
                                   fix: "open it in the shell first, e.g. `3>report.txt`")
            }
            // The command does not inherit it: the report is ours, not the program's.
            _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
            handle = FileHandle(fileDescriptor: fd, closeOnDealloc: false)
        } else {
            handle = FileHandle.standardError
        }
    }

    func say(_ text: String) {
        handle.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
    }
}

/// The processes that attached a table, for `list`, `stats` and `run`: who, and whether they
/// still run.
enum AttachedProcesses {
    static func json(_ attached: [Attachment]) -> JSONNode.Value {
        JSONOut.array(attached.map { a in
            JSONOut.object([("pid", JSONOut.int(a.pid)), ("parentPid", JSONOut.int(a.parentPID)), ("program", .string(a.program)),
                            ("hierarchy", JSONOut.int(a.hierarchy)), ("running", .bool(a.isRunning))])
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
        return s
    }
}

/// `run --report-json FILE`: everything `run` knows after the command ended, for a test to
/// assert on (config/run-report.schema.json).
struct RunReport {
    var command: [String]
    var status: Int32
    var table: String
    var warnings: [String]
    var seeds: [(rule: String, seed: UInt64)]

    func json(_ t: AdviceTable, ids: [String]) -> JSONNode.Value {
        let rules = t.rules(includeRemoved: true).filter { ids.contains($0.id) }
        let attached = t.attachments()
        let events = t.events(from: 0)
        let sites = t.sites(of: rules)
        let failures = t.attachFailures
        return JSONOut.object([
            ("version", JSONOut.int(1)),
            ("command", JSONOut.array(command.map { .string($0) })),
            ("status", JSONOut.int(status)),
            ("signal", status > 128 && status < 128 + 65 ? JSONOut.int(status - 128) : nil),
            ("table", .string(table)),
            ("attached", AttachedProcesses.json(attached)),
            ("attachFailures", JSONOut.object([("count", JSONOut.int(failures.count)),
                                               ("lastPid", failures.count > 0 ? JSONOut.int(failures.lastPID) : nil),
                                               ("lastReason", failures.count > 0 ? .string(failures.lastReason) : nil)])),
            ("rules", JSONOut.array(rules.map { r in
                JSONOut.object([("id", .string(r.id)), ("symbol", .string(r.symbol)), ("position", .string(r.position)),
                                ("state", .string(r.state.rawValue)), ("matched", JSONOut.int(r.matched)), ("fired", JSONOut.int(r.fired)),
                                ("seed", r.seed.map { JSONOut.int($0) }),
                                ("byProgram", JSONOut.array(Stats.byProgram(r, attached).map { $0.json })),
                                ("bySite", Stats.siteJSON(sites[r.id])),
                                ("firedWithoutSite", JSONOut.int(sites[r.id]?.firedWithoutSite ?? 0))])
            })),
            ("seedsDrawn", JSONOut.array(seeds.map { JSONOut.object([("rule", .string($0.rule)), ("seed", JSONOut.int($0.seed))]) })),
            ("warnings", JSONOut.array(warnings.map { .string($0) })),
            ("events", JSONOut.array(events.events.map(\.json))),
            ("eventsDropped", JSONOut.int(events.dropped)),
        ])
    }
}
