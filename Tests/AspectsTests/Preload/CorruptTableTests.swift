import CAspectsABI
import Foundation
import Testing
import AspectsRules
import AspectsTable

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
            try TableSegments.withBytes(t.name) { bytes in
                for i in 0..<400 {
                    let top = i % 2 == 0 ? hot : hi
                    let offset = lo + Int(next() % UInt64(top - lo))
                    let word = next()
                    withUnsafeBytes(of: word) { w in
                        bytes.baseAddress!.advanced(by: offset).copyMemory(from: w.baseAddress!, byteCount: 1 + Int(next() % 8))
                    }
                }
            }
            let r = try Proc.run(bin, ["/etc/hostname", "4"], environment: Proc.preload(table: t.name))
            #expect(r.status == 0, "round \(round): \(r)")
            #expect(r.stdout.split(separator: "\n").count == 4, "round \(round): \(r.stdout)")
            if r.stdout.contains("-1 ") { advised += 1 }
        }
        // The scribbles leave the table usable in some rounds: the preload really read it.
        #expect(advised > 0)
    }

    /// Words any attached process can write, at impossible values: aspectctl stops with exit 65
    /// and names the table and the word, it neither traps (it once died of Swift overflow
    /// checks, exit 132) nor prints them as counts.
    @Test func aspectctlDoesNotTrapOnDamagedCounters() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"w","symbol":"write","position":"before","action":{"log":true}}"#)
        _ = try Proc.run("/bin/sh", ["-c", "echo x > /dev/null"], environment: Proc.preload(table: t.name))
        func poke<T>(_ key: KeyPath<aspects_table_header, T>, _ value: UInt64) {
            let h = UnsafeMutableRawPointer(t.table.header)
            h.storeBytes(of: value, toByteOffset: MemoryLayout<aspects_table_header>.offset(of: key)!, as: UInt64.self)
        }
        let head = t.table.eventHead
        // The event ring's head at the end of 64 bits, and just past the plausible (2^62).
        for damaged in [UInt64.max - 3, AdviceTable.countLimit] {
            poke(\.event_head, damaged)
            for args in [["events"], ["events", "--json"], ["events", "--clear"], ["stats"]] {
                let out = try Proc.aspectctl(args + ["--table", t.name])
                #expect(out.status == 65 && out.stderr.contains("is damaged: its event ring's head (events ever recorded) is \(damaged)"), "\(args): \(out)")
                #expect(out.stdout.isEmpty, "\(args): \(out)")
            }
        }
        // The last plausible head is read as one.
        poke(\.event_head, AdviceTable.countLimit - 1)
        let edge = try Proc.aspectctl(["events", "--table", t.name, "--json"])
        #expect(edge.status == 0, "\(edge)")
        poke(\.event_head, head)
        poke(\.event_cursor, UInt64.max)
        let cursor = try Proc.aspectctl(["events", "--table", t.name])
        #expect(cursor.status == 65 && cursor.stderr.contains("its event cursor (events --clear) is 18446744073709551615"), "\(cursor)")
        poke(\.event_cursor, 0)
        // The next rule number and serial: an add stops with a message.
        poke(\.next_rule_number, UInt64.max)
        let add = try Proc.aspectctl(["add", "--table", t.name, "--rule", #"{"symbol":"read","position":"before","action":{"log":true}}"#])
        #expect(add.status == 65 && add.stderr.contains("is damaged: its next rule number is 18446744073709551615"), "\(add)")
        poke(\.next_rule_number, 5)
        poke(\.next_serial, UInt64.max)
        let add2 = try Proc.aspectctl(["add", "--table", t.name, "--rule", #"{"symbol":"read","position":"before","action":{"log":true}}"#])
        #expect(add2.status == 65 && add2.stderr.contains("next rule serial"), "\(add2)")
        // A rule's counters at the top: list and stats name the rule and the count.
        let r = t.table.rule(0)
        let (matched, fired) = (r.pointee.matched, r.pointee.fired)
        for (field, value) in [("matched", UInt64.max), ("fired", UInt64.max - 1), ("matched", AdviceTable.countLimit)] {
            r.pointee.matched = field == "matched" ? value : matched
            r.pointee.fired = field == "fired" ? value : fired
            for args in [["list"], ["list", "--json"], ["list", "--all"], ["stats"], ["stats", "--json"]] {
                let out = try Proc.aspectctl(args + ["--table", t.name])
                // (the count shown adds the per-process statistics, saturating)
                #expect(out.status == 65 && out.stderr.contains("is damaged: its rule \"w\"'s \(field) count is "), "\(args): \(out)")
                #expect(out.stdout.isEmpty, "\(args): \(out)")
            }
        }
        r.pointee.matched = matched
        r.pointee.fired = fired
        for command in ["list", "stats", "events"] {
            let out = try Proc.aspectctl([command, "--table", t.name])
            #expect(out.status == 0, "\(command) after the repair: \(out)")
        }
    }
}
