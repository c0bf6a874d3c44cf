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

    /// Words any attached process can write, at impossible values: aspectctl reports or shows
    /// them, it does not trap (it once died of Swift overflow checks, exit 132).
    @Test func aspectctlDoesNotTrapOnDamagedCounters() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"w","symbol":"write","position":"before","action":{"log":true}}"#)
        _ = try Proc.run("/bin/sh", ["-c", "echo x > /dev/null"], environment: Proc.preload(table: t.name))
        func poke<T>(_ key: KeyPath<aspects_table_header, T>, _ value: UInt64) {
            let h = UnsafeMutableRawPointer(t.table.header)
            h.storeBytes(of: value, toByteOffset: MemoryLayout<aspects_table_header>.offset(of: key)!, as: UInt64.self)
        }
        // The event ring's head at the end of 64 bits.
        poke(\.event_head, UInt64.max - 3)
        let events = try Proc.aspectctl(["events", "--table", t.name, "--json"])
        #expect(events.status == 0, "\(events)")
        // The next rule number and serial: an add stops with a message.
        poke(\.next_rule_number, UInt64.max)
        let add = try Proc.aspectctl(["add", "--table", t.name, "--rule", #"{"symbol":"read","position":"before","action":{"log":true}}"#])
        #expect(add.status == 65 && add.stderr.contains("is damaged: its next rule number is 18446744073709551615"), "\(add)")
        poke(\.next_rule_number, 5)
        poke(\.next_serial, UInt64.max)
        let add2 = try Proc.aspectctl(["add", "--table", t.name, "--rule", #"{"symbol":"read","position":"before","action":{"log":true}}"#])
        #expect(add2.status == 65 && add2.stderr.contains("next rule serial"), "\(add2)")
        // A rule's counters at the top: list and stats show them.
        let r = t.table.rule(0)
        r.pointee.matched = UInt64.max
        r.pointee.fired = UInt64.max - 1
        for command in ["list", "stats"] {
            let out = try Proc.aspectctl([command, "--table", t.name])
            #expect(out.status == 0, "\(command): \(out)")
        }
    }
}
