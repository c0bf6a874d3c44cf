import AspectsCore
import AspectsTable
import Foundation
#if canImport(Glibc)
import Glibc
#endif

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
