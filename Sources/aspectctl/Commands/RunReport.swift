import AspectConfig
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where `run` says what it did — the drawn seeds, what was not injected, the report — kept
/// apart from the program's own stderr when asked: `--report-file FILE` (OutputFile: written
/// through the path, never replacing it), `--report-fd N`. Standard error otherwise. A report
/// that cannot be written is run's own failure (125), not something to pass over.
/// The file is checked at once but opened (truncated) only by `begin`, once everything is
/// validated and the command is about to start: a bad rule or option leaves it as it was
/// (issue 30: a bad rule emptied the target). What is said before is kept until then.
final class ReportChannel {
    private var fd: Int32
    private let owned: Bool
    /// The option and the path or descriptor, for errors.
    private let option: String, target: String
    private let file: String?
    private var pending: [String] = []

    init(file: String?, fd given: Int32?) throws(AspectsError) {
        self.file = file
        if let file {
            try OutputFile.check(file, option: "--report-file")
            fd = -1
            (owned, option, target) = (true, "--report-file", file)
        } else if let given {
            let flags = fcntl(given, F_GETFL)
            guard given >= 0, flags >= 0, flags & O_ACCMODE != O_RDONLY else {
                throw AspectsError(.usage, field: "--report-fd", "descriptor \(given) is not open for writing",
                                   fix: "open it in the shell first, e.g. `3>report.txt`")
            }
            // A copy of our own, so that the descriptor itself is left as it is: 1 and 2 stay the
            // command's stdout and stderr. One above 2 is the report's alone: the command does
            // not inherit it.
            let copy = fcntl(given, F_DUPFD_CLOEXEC, 3)
            guard copy >= 0 else {
                throw AspectsError(.system, field: "--report-fd", "cannot duplicate descriptor \(given): \(String(cString: strerror(errno)))")
            }
            if given > 2 { _ = fcntl(given, F_SETFD, fcntl(given, F_GETFD) | FD_CLOEXEC) }
            fd = copy
            (owned, option, target) = (true, "--report-fd", "descriptor \(given)")
        } else {
            fd = 2
            (owned, option, target) = (false, "--report", "standard error")
        }
    }

    deinit { if owned && fd >= 0 { _ = close(fd) } }

    /// Opens the report file (everything is validated: the command is about to start) and
    /// writes what was said so far.
    func begin() throws(AspectsError) {
        if let file, fd < 0 { fd = try OutputFile.open(file, option: "--report-file") }
        let said = pending
        pending = []
        for text in said { try say(text) }
    }

    func say(_ text: String) throws(AspectsError) {
        guard fd >= 0 else { pending.append(text); return }
        if let e = OutputFile.writeAll(fd, Array((text.hasSuffix("\n") ? text : text + "\n").utf8)) {
            throw OutputFile.writeFailure(target, option: option, errno: e)
        }
    }
}

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
