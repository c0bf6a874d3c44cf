import ArgumentParser
import AspectsCore
import AspectsTable
import Foundation

struct Events: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Print the event ring: calls recorded by rules with \"log\", and every firing.",
        discussion: """
        Each event has an index (its place in the ring's history). Without --since, events start where the last `events --clear` left the cursor, so a test case can clear, run, and read only its own. With --json, one JSON object per line, each with a "kind": fired and logged calls as recorded, and "dropped" where the ring overran (its "count" events were overwritten before they were read).
        """)

    @OptionGroup var table: TableOptions
    @OptionGroup var output: OutputOptions

    @Flag(name: .shortAndLong, help: "Keep printing new events until interrupted.")
    var follow = false

    @Option(name: .long, help: ArgumentHelp("Start at this event index (default: the cursor --clear set, else 0).", valueName: "index"))
    var since: UInt64?

    @Flag(name: .long, help: "Print nothing; mark every event recorded so far as read (moves the cursor).")
    var clear = false

    func validate() throws {
        if clear && (follow || since != nil) { throw ValidationError("--clear takes no --follow or --since") }
    }

    func run() throws {
        try guarded {
            let t = try table.open()
            if clear {
                try t.checkEventCounters() // the cursor is raised to the head
                let cursor = t.clearEvents()
                if output.json { printJSON(JSONOut.object([("kind", .string("cleared")), ("next", JSONOut.int(cursor))]), pretty: false) }
                return
            }
            var cursor = since ?? t.eventCursor
            repeat {
                try t.checkEventCounters()
                let batch = t.events(from: cursor)
                if batch.dropped > 0 {
                    let first = cursor  // the ring overran from here on
                    if output.json {
                        printJSON(JSONOut.object([("kind", .string("dropped")), ("index", JSONOut.int(first)), ("count", JSONOut.int(batch.dropped))]), pretty: false)
                    } else {
                        print("... \(batch.dropped) event(s) lost: the ring holds \(t.eventCapacity)")
                    }
                }
                for e in batch.events {
                    if output.json { printJSON(e.json, pretty: false) } else { print(Self.line(e)) }
                }
                cursor = batch.next
                if follow {
                    // a reader gone away ends the follow (SIGPIPE is ignored: Console)
                    Console.checkStandardOutput()
                    usleep(100_000)
                }
            } while follow
        }
    }

    /// UTC time of day with microseconds: 01:51:00.889196.
    static func timestamp(_ ns: UInt64) -> String {
        var t = time_t(ns / 1_000_000_000)
        var parts = tm()
        gmtime_r(&t, &parts)
        return String(format: "%02d:%02d:%02d.%06d", parts.tm_hour, parts.tm_min, parts.tm_sec, Int((ns % 1_000_000_000) / 1000))
    }

    static func line(_ e: TableEvent) -> String {
        var s = Self.timestamp(e.timeNanoseconds) + " pid \(e.pid) tid \(e.tid) \(e.rule) \(e.kind) \(e.position) "
        s += "\(e.symbol)(\(e.arguments.joined(separator: ", "))) #\(e.callNumber)"
        if let reason = e.reason { s += ": \(reason)" }
        else if e.position != "before" { s += " = \(e.returnText)" }
        if let err = e.errnoName { s += " errno \(err)" }
        if let context = e.context, context.frames.count > 1 { s += " from \(context)" }
        else if let site = e.site { s += " from \(site)" }
        return s
    }
}
