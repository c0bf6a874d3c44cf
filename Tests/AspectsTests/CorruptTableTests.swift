import CAspectsABI
import Foundation
import Testing
@testable import AspectConfig

/// Everything the preload takes from the table is untrusted: whatever bytes a table holds, the
/// host program must not crash (advice may misfire; the program must live).
@Suite struct CorruptTableTests {
    @Test func garbageInTheTableNeverCrashesTheHost() throws {
        let bin = try Fixture.build("open_calls")
        var state: UInt64 = 42
        var advised = 0
        func next() -> UInt64 { state = SplitMix64.mix(state); return state }
        for round in 0..<40 {
            let t = try ScratchTable()
            try t.add(#"""
            {"rules": [
              {"symbol": "open", "position": "instead", "action": {"fail": "EACCES"}, "when": {"nth": 2, "args": [{"arg": 0, "glob": "*host*"}]}},
              {"symbol": "open", "position": "after", "action": {"log": true}, "scope": "table"},
              {"symbol": "close", "position": "before", "action": {"log": true}, "when": {"every": 2}}
            ]}
            """#)
            let h = t.table.header.pointee
            // Scribble over the armed bytes, group lists, rule slots and events (and, in some
            // rounds, the header itself): the geometry the preload trusts is the one it checked.
            let lo = round % 5 == 0 ? 0 : Int(h.armed_offset)
            let hi = Int(h.stats_offset)
            // Half the writes land in the armed bytes, group lists and the rules' own slots.
            let hot = Int(h.rules_offset) + 4 * MemoryLayout<aspects_rule>.size
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: t.name))
            for i in 0..<400 {
                let top = i % 2 == 0 ? hot : hi
                let offset = lo + Int(next() % UInt64(top - lo))
                try handle.seek(toOffset: UInt64(offset))
                var word = next()
                handle.write(Data(bytes: &word, count: 1 + Int(next() % 8)))
            }
            try handle.close()
            let r = try Proc.run(bin, ["/etc/hostname", "4"], environment: Proc.preload(table: t.name))
            #expect(r.status == 0, "round \(round): \(r)")
            #expect(r.stdout.split(separator: "\n").count == 4, "round \(round): \(r.stdout)")
            if r.stdout.contains("-1 ") { advised += 1 }
        }
        // The scribbles leave the table usable in some rounds: the preload really read it.
        #expect(advised > 0)
    }
}
