import ArgumentParser
import AspectsCore
import AspectsTable
import Foundation

struct Tables: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tables",
        abstract: "List your tables in /dev/shm: size, rules, attached processes, last use.",
        discussion: "Tables given by file path are not listed (they live where their owner put them); a note names those whose file was deleted without `destroy`, whose memory `gc` removes.")

    @OptionGroup var output: OutputOptions

    func run() throws {
        let inventory = TableInventory.scan()
        if output.json {
            printJSON(JSONOut.array(inventory.entries.map { e in
                JSONOut.object([("name", .string(e.name.name)), ("path", .string(e.name.path)), ("bytes", JSONOut.int(e.bytes)),
                                ("rules", e.activeRules.map { JSONOut.int($0) }), ("attached", JSONOut.int(e.attached)),
                                ("running", JSONOut.int(e.running)), ("lastUse", .number(String(format: "%.3f", e.lastUse))),
                                ("leftOver", .bool(e.isLeftOver)), ("problem", e.problem.map { .string($0) })])
            }))
            return
        }
        let leftovers = LeftoverSegment.scan()
        if !leftovers.isEmpty {
            Console.write("aspectctl: note: \(leftovers.count) shared memory segment(s) of yours were left by a `create` killed before its table had a name (\(leftovers.map { "shmid \($0.shmid)" }.joined(separator: ", "))): `aspectctl gc` removes them\n")
        }
        let orphans = AnchorRegistry.orphans()
        if !orphans.isEmpty {
            Console.write("aspectctl: note: \(orphans.count) table(s) of yours lost their file without `destroy` (\(orphans.map { "\($0.anchor), \(Self.size($0.bytes))" }.joined(separator: "; "))): their memory stays until `aspectctl gc` removes them\n")
        }
        Self.noteUncheckable()
        if let problem = AnchorRegistry.problem() { Console.write("aspectctl: warning: \(problem)\n") }
        if inventory.entries.isEmpty { print("no tables"); return }
        let rows = [["table", "size", "rules", "attached", "running", "last use", ""]] + inventory.entries.map { e in
            [e.name.name, Self.size(e.bytes), e.activeRules.map(String.init) ?? "?", String(e.attached), String(e.running),
             Self.ago(e.lastUse), e.problem ?? (e.isLeftOver ? "left over by a run that is gone (aspectctl gc removes it)" : "")]
        }
        let widths = (0..<7).map { c in rows.map { $0[c].count }.max()! }
        for row in rows {
            print(row.enumerated().map { c, cell in cell + String(repeating: " ", count: c == 6 ? 0 : widths[c] - cell.count) }
                .joined(separator: "  ").trimmingTrailingSpaces())
        }
    }

    /// The tables with nothing attached whose file cannot be looked at from here: kept, said.
    static func noteUncheckable() {
        for t in AnchorRegistry.uncheckable() {
            Console.write("aspectctl: note: the table of \(t.anchor) (\(size(t.bytes)), shmid \(t.shmid)) has nothing attached, but whether its file still exists is not checkable here: \(t.uncheckableReason); it is kept (`ipcrm -m \(t.shmid)` removes it once you know it is gone)\n")
        }
    }

    static func size(_ bytes: UInt64) -> String {
        bytes >= 1 << 20 ? String(format: "%.1f MB", Double(bytes) / 1048576) : String(format: "%.0f KB", Double(bytes) / 1024)
    }

    static func ago(_ time: Double) -> String {
        let s = max(0, Date().timeIntervalSince1970 - time)
        if s < 120 { return "\(Int(s)) s ago" }
        if s < 7200 { return "\(Int(s / 60)) min ago" }
        if s < 172_800 { return "\(Int(s / 3600)) h ago" }
        return "\(Int(s / 86400)) days ago"
    }
}
