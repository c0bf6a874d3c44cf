import ArgumentParser
import AspectsCore
import AspectsTable
import CAspectsABI
import Foundation

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Per-rule counts: calls matched and firings, across every process of the table.",
        discussion: "Also by program (the executable each attached process ran, so a program that re-executes itself is one line), by process hierarchy, and by call site: the firings (and shadowed calls) whose events the ring still holds, with the firings it no longer places — calls that matched without firing are counted but have no site.")

    @OptionGroup var table: TableOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        try guarded {
            let t = try table.open()
            let rules = t.rules(includeRemoved: true)
            try t.checkCounts(rules)
            try t.checkEventCounters() // the call sites come from the event ring
            let attached = t.attachments()
            // Where the firings came from: from the events the ring still holds (RuleSites).
            let sites = t.sites(of: rules), eventsLost = t.callSites().dropped
            if output.json {
                let failures = t.attachFailures
                printJSON(JSONOut.object([("rules", JSONOut.array(rules.map { r in
                    JSONOut.object([("id", .string(r.id)), ("symbol", .string(r.symbol)), ("state", .string(r.state.rawValue)),
                                    ("matched", JSONOut.int(r.matched)), ("fired", JSONOut.int(r.fired)),
                                    ("hierarchiesFull", r.hierarchiesFull > 0 ? JSONOut.int(r.hierarchiesFull) : nil),
                                    ("byProcess", JSONOut.array(r.byProcess.map { p in
                                        let a = Self.attachment(of: p.pid, image: p.image, attached)
                                        return JSONOut.object([("pid", JSONOut.int(p.pid)), ("program", a.map { .string($0.program) }),
                                                               ("hierarchy", a.map { JSONOut.int($0.hierarchy) }),
                                                               ("matched", JSONOut.int(p.matched)), ("fired", JSONOut.int(p.fired))])
                                    })),
                                    ("byProgram", JSONOut.array(Self.byProgram(r, attached).map(\.json))),
                                    ("byHierarchy", JSONOut.array(Self.byHierarchy(r, attached).map { h in
                                        JSONOut.object([("hierarchy", JSONOut.int(h.hierarchy)), ("processes", JSONOut.int(h.processes)),
                                                        ("matched", JSONOut.int(h.matched)), ("fired", JSONOut.int(h.fired))])
                                    })),
                                    ("bySite", Self.siteJSON(sites[r.id])),
                                    ("firedWithoutSite", JSONOut.int(sites[r.id]?.firedWithoutSite ?? 0))])
                })), ("eventsLost", JSONOut.int(eventsLost)), ("attachCount", JSONOut.int(t.attachCount)), ("attached", AttachedProcesses.json(attached)),
                     ("attachFailures", JSONOut.object([("count", JSONOut.int(failures.count)),
                                                        ("lastPid", failures.count > 0 ? JSONOut.int(failures.lastPID) : nil),
                                                        ("lastReason", failures.count > 0 ? .string(failures.lastReason) : nil)]))]))
                return
            }
            print(Report.table(rules))
            let lines = Self.programLines(rules, attached)
            if !lines.isEmpty {
                print("\nby program:")
                for l in lines { print("  " + l) }
            }
            let full = Self.hierarchiesFullLines(rules)
            if !full.isEmpty {
                print("")
                for l in full { print(l) }
            }
            let siteLines = Self.siteLines(rules, sites)
            if !siteLines.isEmpty {
                print("\n" + Self.siteHeading + ":")
                for l in siteLines { print("  " + l) }
            }
            print("\n" + AttachedProcesses.text(t))
        }
    }

    /// What the by-site numbers are, said wherever they are printed.
    static let siteHeading = "by call site (firings, from the events the ring holds; a call that matched without firing has no site)"

    /// `[{"site": "app+0x1a2b", "fired": 2, "shadowed": 0}, ...]` (config/stats.schema.json).
    static func siteJSON(_ s: RuleSites?) -> JSONNode.Value {
        JSONOut.array((s?.sites ?? []).map { x in
            JSONOut.object([("site", .string(x.site.description)), ("fired", JSONOut.int(x.fired)), ("shadowed", JSONOut.int(x.shadowed))])
        })
    }

    /// `w  app+0x1a2b: fired 2`, most firings first, and a line for the firings the ring no
    /// longer places, so that a rule's lines add up to its fired count.
    static func siteLines(_ rules: [TableRule], _ sites: [String: RuleSites]) -> [String] {
        var seen = Set<String>()
        return rules.filter { seen.insert($0.id).inserted }.flatMap { r -> [String] in
            guard let s = sites[r.id] else { return [] }
            var lines = s.sites.map { x in "\(r.id)  \(x.site): fired \(x.fired)" + (x.shadowed > 0 ? ", shadowed \(x.shadowed)" : "") }
            if s.firedWithoutSite > 0 { lines.append("\(r.id)  (site no longer recorded): fired \(s.firedWithoutSite)") }
            return lines
        }
    }

    /// The attachment record of a process image (`Attachment.record`).
    static func attachment(of pid: Int32, image: UInt64, _ attached: [Attachment]) -> Attachment? {
        Attachment.record(ofPID: pid, image: image, in: attached)
    }

    struct ProgramCount {
        var program: String
        var processes = 0
        var hierarchies: Set<UInt64> = []
        var matched: UInt64 = 0
        var fired: UInt64 = 0

        var json: JSONNode.Value {
            JSONOut.object([("program", .string(program)), ("processes", JSONOut.int(processes)),
                            ("hierarchies", JSONOut.array(hierarchies.sorted().map { JSONOut.int($0) })),
                            ("matched", JSONOut.int(matched)), ("fired", JSONOut.int(fired))])
        }
    }

    /// A rule's counts summed per program image, in order of first appearance.
    static func byProgram(_ r: TableRule, _ attached: [Attachment]) -> [ProgramCount] {
        var order: [String] = []
        var counts: [String: ProgramCount] = [:]
        for p in r.byProcess {
            let a = attachment(of: p.pid, image: p.image, attached)
            let program = a?.program ?? "pid \(p.pid) (no attachment record)"
            if counts[program] == nil { order.append(program); counts[program] = ProgramCount(program: program) }
            counts[program]!.processes += 1
            if let h = a?.hierarchy { counts[program]!.hierarchies.insert(h) }
            counts[program]!.matched = AdviceTableCounts.add(counts[program]!.matched, p.matched)
            counts[program]!.fired = AdviceTableCounts.add(counts[program]!.fired, p.fired)
        }
        return order.map { counts[$0]! }
    }

    static func byHierarchy(_ r: TableRule, _ attached: [Attachment]) -> [(hierarchy: UInt64, processes: Int, matched: UInt64, fired: UInt64)] {
        var out: [UInt64: (Int, UInt64, UInt64)] = [:]
        for p in r.byProcess {
            let h = attachment(of: p.pid, image: p.image, attached)?.hierarchy ?? 0
            let old = out[h] ?? (0, 0, 0)
            out[h] = (old.0 + 1, AdviceTableCounts.add(old.1, p.matched), AdviceTableCounts.add(old.2, p.fired))
        }
        return out.keys.sorted().map { (hierarchy: $0, processes: out[$0]!.0, matched: out[$0]!.1, fired: out[$0]!.2) }
    }

    /// `r1  hierarchy slots full: 3 process(es) not advised` for a rule whose per-hierarchy
    /// entries were all taken by running hierarchies when those processes looked.
    static func hierarchiesFullLines(_ rules: [TableRule]) -> [String] {
        rules.filter { $0.hierarchiesFull > 0 }.map {
            "\($0.id)  hierarchy slots full: \($0.hierarchiesFull) process(es) not advised (\(ASPECTS_HIERARCHY_SLOTS) process hierarchies at a time)"
        }
    }

    /// `r1  /usr/bin/cat: 2 process(es) in hierarchy 3, matched 4, fired 1`
    static func programLines(_ rules: [TableRule], _ attached: [Attachment]) -> [String] {
        rules.flatMap { r in
            byProgram(r, attached).map { c in
                let h = c.hierarchies.sorted().map(String.init).joined(separator: ", ")
                return "\(r.id)  \(c.program): \(c.processes) process(es)\(h.isEmpty ? "" : " in hierarchy \(h)"), matched \(c.matched), fired \(c.fired)"
            }
        }
    }
}
