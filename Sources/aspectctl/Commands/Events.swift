import AspectConfig
import ArgumentParser
import Foundation

struct Events: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the event ring: calls recorded by rules with \"log\".",
        discussion: "With --json, one JSON object per line.")

    @OptionGroup var table: TableOptions
    @OptionGroup var output: OutputOptions

    @Flag(name: .shortAndLong, help: "Keep printing new events until interrupted.")
    var follow = false

    func run() throws {
        try guarded {
            let t = try table.open()
            var cursor: UInt64 = 0
            repeat {
                let batch = t.events(from: cursor)
                if batch.dropped > 0 {
                    let note = "\(batch.dropped) event(s) lost: the ring holds \(t.eventCapacity)"
                    if output.json { printJSON(JSONOut.object([("dropped", JSONOut.int(batch.dropped))]), pretty: false) }
                    else { print("... \(note)") }
                }
                for e in batch.events {
                    if output.json { printJSON(e.json, pretty: false) } else { print(Self.line(e)) }
                }
                cursor = batch.next
                if follow {
                    fflush(nil)
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
        if e.position != "before" { s += " = \(e.returnText)" }
        if let err = e.errnoName { s += " errno \(err)" }
        if let site = e.site { s += " from \(site)" }
        return s
    }
}
