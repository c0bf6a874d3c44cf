import Foundation
import Testing
import AspectsTable

/// C fixtures run under LD_PRELOAD=libaspects.so with rules in a scratch table.
@Suite struct PreloadTests {
    @Test func theSecondOpenOfAMatchingPathFails() throws {
        let t = try ScratchTable()
        try t.add(#"{"symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{"nth":2,"args":[{"arg":0,"glob":"/etc/host*"}]}}"#)
        let bin = try Fixture.build("open_calls")
        let r = try Proc.run(bin, ["/etc/hostname", "3"], environment: Proc.preload(table: t.name))
        #expect(r.status == 0)
        #expect(r.stdout == "open 1: ok\nopen 2: -1 EACCES\nopen 3: ok\n")
        // A path the glob does not match is neither counted nor failed.
        let other = try Proc.run(bin, ["/etc/passwd", "3"], environment: Proc.preload(table: t.name))
        #expect(other.stdout == "open 1: ok\nopen 2: ok\nopen 3: ok\n")
        let rule = t.table.rules()[0]
        #expect(rule.matched == 3)
        #expect(rule.fired == 1)
    }

    @Test func afterAdviceKeepsTheReturnValueAndErrnoExactly() throws {
        let t = try ScratchTable()
        try t.add(#"""
        {"rules": [
          {"id": "o", "symbol": "open", "position": "after", "action": {"log": true}},
          {"id": "c", "symbol": "close", "position": "after", "action": {"log": true}},
          {"id": "w", "symbol": "write", "position": "after", "action": {"log": true}},
          {"id": "r", "symbol": "read", "position": "after", "action": {"log": true}}
        ]}
        """#)
        let bin = try Fixture.build("errno_exact")
        let plain = try Proc.run(bin)
        #expect(plain.stdout == "open-missing: -1 errno=2\nclose-bad: -1 errno=9\nwrite-ok: 5 errno=12345\nread-ok: 5 errno=12345\n")
        let advised = try Proc.run(bin, environment: Proc.preload(table: t.name))
        #expect(advised.stdout == plain.stdout)
        #expect(advised.status == 0)
        // The after advice saw the same results: the events record them.
        let events = t.table.events(from: 0).events
        let open = try #require(events.first { $0.rule == "o" && $0.arguments.first == "\"/nonexistent-aspects-dir/file\"" })
        #expect(open.returnValue == -1)
        #expect(open.errnoName == "ENOENT")
        let close = try #require(events.first { $0.rule == "c" && $0.arguments == ["-1"] })
        #expect(close.errnoName == "EBADF")
        // write and read succeeded: the caller still sees its sentinel errno (stdout above), and
        // the events record no errno (the sentinel is stale, not the call's).
        #expect(events.contains { $0.rule == "w" && $0.returnValue == 5 && $0.errnoName == nil })
        #expect(events.contains { $0.rule == "r" && $0.returnValue == 5 && $0.errnoName == nil })
    }

    /// An `after` rule sees the original's result and may replace it: the caller gets the
    /// rule's result and errno, the event records both; a call its matcher rejects is untouched.
    @Test func afterAdviceReplacesTheResultTheOriginalLeft() throws {
        let bin = try Fixture.build("errno_exact")
        let failing = try ScratchTable()
        try failing.add(#"{"id":"late","symbol":"write","position":"after","action":{"fail":"EIO"}}"#)
        let r = try Proc.run(bin, environment: Proc.preload(table: failing.name))
        #expect(r.stdout.contains("write-ok: -1 errno=5\n"), "\(r)")
        #expect(r.stdout.contains("read-ok: 5 errno=12345\n"), "\(r)")
        let event = try #require(failing.table.events(from: 0).events.first { $0.rule == "late" })
        #expect(event.returnValue == -1)
        #expect(event.errnoName == "EIO")

        let returning = try ScratchTable()
        try returning.add(#"{"id":"short","symbol":"write","position":"after","action":{"return":3},"when":{"args":[{"arg":2,"eq":5}]}}"#)
        let short = try Proc.run(bin, environment: Proc.preload(table: returning.name))
        #expect(short.stdout.contains("write-ok: 3 errno=12345\n"), "\(short)")

        let unmatched = try ScratchTable()
        try unmatched.add(#"{"id":"other","symbol":"write","position":"after","action":{"return":3},"when":{"args":[{"arg":2,"eq":6}]}}"#)
        let plain = try Proc.run(bin, environment: Proc.preload(table: unmatched.name))
        #expect(plain.stdout.contains("write-ok: 5 errno=12345\n"), "\(plain)")
        #expect(unmatched.table.rules()[0].matched == 0)
    }

    @Test func createModeSurvivesAnArmedOpenThatDoesNotFire() throws {
        let t = try ScratchTable()
        try t.add(#"{"symbol":"open","position":"instead","action":{"fail":true},"when":{"nth":1000}}"#)
        let bin = try Fixture.build("create_mode")
        let path = t.directory + "/created"
        let r = try Proc.run(bin, [path], environment: Proc.preload(table: t.name))
        #expect(r.stdout == "mode 640\n", "\(r)")
        let attrs = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attrs[.posixPermissions] as? NSNumber)?.intValue == 0o640)
        #expect(t.table.rules()[0].matched >= 1)
    }

    @Test func noTableOrAMissingTableBehavesLikeNoPreload() throws {
        for fixture in ["errno_exact", "open_calls"] {
            let bin = try Fixture.build(fixture)
            let args = fixture == "open_calls" ? ["/etc/hostname", "2"] : []
            let plain = try Proc.run(bin, args)
            let noTable = try Proc.run(bin, args, environment: Proc.preload(table: nil))
            let missing = try Proc.run(bin, args, environment: Proc.preload(table: "no-such-table-\(getpid())"))
            let badName = try Proc.run(bin, args, environment: Proc.preload(table: "../etc/passwd"))
            for r in [noTable, missing, badName] {
                #expect(r.stdout == plain.stdout)
                #expect(r.stderr == plain.stderr)
                #expect(r.status == plain.status)
            }
        }
    }

    @Test func debugModeSaysWhyItPassesThrough() throws {
        let bin = try Fixture.build("open_calls")
        let r = try Proc.run(bin, ["/etc/hostname", "1"], environment: Proc.preload(table: "no-such-table") .merging(["ASPECTS_DEBUG": "1"]) { $1 })
        #expect(r.stderr.contains("libaspects: table /dev/shm/aspects.no-such-table does not exist; ignored (pass-through)"))
        #expect(r.stdout == "open 1: ok\n")
    }

    @Test func aRuleOnOpenHitsLargeFileAndFortifiedBuilds() throws {
        let t = try ScratchTable()
        try t.add(#"{"symbol":"open","position":"instead","action":{"fail":"EPERM"},"when":{"args":[{"arg":0,"glob":"*hostname"}]}}"#)
        let variants: [(flags: [String], imports: String)] = [
            (["-D_FILE_OFFSET_BITS=64"], "open64"),
            (["-O2", "-D_FORTIFY_SOURCE=2"], "__open_2"),
            (["-O2", "-D_FORTIFY_SOURCE=2", "-D_FILE_OFFSET_BITS=64"], "__open64_2"),
        ]
        for v in variants {
            let bin = try Fixture.build("open_calls", flags: v.flags)
            // The build really calls the sibling entry point, or this test proves nothing.
            let imports = try Proc.run("/usr/bin/env", ["nm", "-D", "--undefined-only", bin]).stdout
            #expect(imports.split(separator: "\n").contains { $0.hasSuffix(" " + v.imports) || $0.contains(" \(v.imports)@") }, "\(v.flags): \(imports)")
            let r = try Proc.run(bin, ["/etc/hostname", "1", "0"], environment: Proc.preload(table: t.name))
            #expect(r.stdout == "open 1: -1 EPERM\n", "\(v.flags): \(r)")
        }
    }

    @Test func theTenThousandthMallocOfASizeReturnsNull() throws {
        let t = try ScratchTable()
        try t.add(#"{"symbol":"malloc","position":"instead","action":{"fail":true},"when":{"nth":10000,"args":[{"arg":0,"eq":32}]}}"#)
        let bin = try Fixture.build("malloc_nth")
        let r = try Proc.run(bin, ["12000"], environment: Proc.preload(table: t.name))
        #expect(r.stdout == "malloc 10000: NULL errno=12\ndone\n", "\(r)")
    }

    @Test func aLongRunningProgramFollowsAddAndRemove() throws {
        let t = try ScratchTable()
        let bin = try Fixture.build("live_loop")
        let live = try LiveProcess(bin, ["/etc/hostname"], table: t.name)
        let call = live.call
        #expect(call() == "ok")
        let add = try Proc.aspectctl(["add", "--table", t.name, "--rule",
                                      #"{"id":"live","symbol":"open","position":"instead","action":{"fail":"ENOENT"}}"#])
        #expect(add.status == 0)
        #expect(add.stdout == "live@1\n")
        #expect(call() == "ENOENT")
        #expect(call() == "ENOENT")
        let remove = try Proc.aspectctl(["remove", "--table", t.name, "live"])
        #expect(remove.status == 0)
        #expect(call() == "ok")
        #expect(try live.finish() == 0)
    }

    /// A group with one simple rule takes the single-rule path; adding a rule that needs the
    /// full path (after advice) and removing it again must not restart the first rule's count.
    @Test func aRulesCountSurvivesItsGroupChangingPaths() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"fifth","symbol":"open","position":"instead","action":{"fail":"ENOENT"},"when":{"nth":5}}"#)
        let bin = try Fixture.build("live_loop")
        let live = try LiveProcess(bin, ["/etc/hostname"], table: t.name)
        let call = live.call
        #expect([call(), call(), call()] == ["ok", "ok", "ok"])
        try t.add(#"{"id":"watch","symbol":"open","position":"after","action":{"log":true}}"#)
        #expect(call() == "ok")
        #expect(call() == "ENOENT")
        let remove = try Proc.aspectctl(["remove", "--table", t.name, "watch"])
        #expect(remove.status == 0)
        #expect([call(), call()] == ["ok", "ok"])
        #expect(try live.finish() == 0)
        let fifth = try #require(t.table.rules().first { $0.id == "fifth" })
        #expect(fifth.matched == 7)
        #expect(fifth.fired == 1)
    }

    /// `times` caps the firings in the rule's scope; once a process finds the cap reached, the
    /// rule stays matched and counted but never fires again (per process, or table-wide).
    @Test func timesCapsFiringsPerScope() throws {
        let bin = try Fixture.build("open_calls")
        let t = try ScratchTable()
        try t.add(#"{"id":"p","symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{"every":2,"times":2}}"#)
        let perProcess = try Proc.run(bin, ["/etc/hostname", "8"], environment: Proc.preload(table: t.name))
        #expect(perProcess.stdout == (1...8).map { "open \($0): " + ([2, 4].contains($0) ? "-1 EACCES" : "ok") + "\n" }.joined(), "\(perProcess)")
        // A second process has its own two.
        let again = try Proc.run(bin, ["/etc/hostname", "3"], environment: Proc.preload(table: t.name))
        #expect(again.stdout == "open 1: ok\nopen 2: -1 EACCES\nopen 3: ok\n")

        let shared = try ScratchTable()
        try shared.add(#"{"id":"t","symbol":"open","position":"instead","action":{"fail":"EACCES"},"scope":"table","when":{"times":3}}"#)
        let first = try Proc.run(bin, ["/etc/hostname", "2"], environment: Proc.preload(table: shared.name))
        #expect(first.stdout == "open 1: -1 EACCES\nopen 2: -1 EACCES\n")
        let second = try Proc.run(bin, ["/etc/hostname", "3"], environment: Proc.preload(table: shared.name))
        #expect(second.stdout == "open 1: -1 EACCES\nopen 2: ok\nopen 3: ok\n")
        let rule = try #require(shared.table.rules().first)
        #expect(rule.matched == 5)
        #expect(rule.fired == 3)
    }

    /// Events of the single-rule path record the argument registers as they are; an int
    /// argument must still read as its declared type (close(-1) is -1, not 4294967295).
    @Test func eventsShowNarrowArgumentsAsTheirType() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"c","symbol":"close","position":"instead","action":{"fail":"EIO"}}"#)
        let bin = try Fixture.build("errno_exact")
        let r = try Proc.run(bin, environment: Proc.preload(table: t.name))
        #expect(r.stdout.contains("close-bad: -1 errno=5"), "\(r)")
        let events = t.table.events(from: 0).events.filter { $0.rule == "c" }
        #expect(events.contains { $0.arguments == ["-1"] && $0.errnoName == "EIO" }, "\(events.map(\.arguments))")
        #expect(AdviceTable.integerText(0xdead_beef_ffff_ffff, .i32) == "-1")
        #expect(AdviceTable.integerText(0xdead_beef_ffff_ffff, .u32) == "4294967295")
        #expect(AdviceTable.integerText(0x1ff, .u8) == "255")
        #expect(AdviceTable.integerText(0x8000, .i16) == "-32768")
        #expect(AdviceTable.integerText(UInt64.max, .i64) == "-1")
        #expect(AdviceTable.integerText(UInt64.max, .u64) == "18446744073709551615")
    }

    @Test func beforeDelayAndArgumentRewriteMakeAShortWrite() throws {
        let t = try ScratchTable()
        // write(fd, "hello", 5) becomes write(fd, "hello", 1): a short write, and errno stays.
        try t.add(#"{"symbol":"write","position":"before","action":{"args":[{"arg":2,"value":1}],"delay":"1ms"},"when":{"args":[{"arg":2,"eq":5}]}}"#)
        let bin = try Fixture.build("errno_exact")
        let r = try Proc.run(bin, environment: Proc.preload(table: t.name))
        #expect(r.stdout.contains("write-ok: 1 errno=12345"), "\(r)")
        #expect(r.stdout.contains("read-ok: 1 errno=12345"), "\(r)")
    }

    @Test func severalInsteadRulesFireTheFirstOnly() throws {
        let t = try ScratchTable()
        try t.add(#"""
        {"rules": [
          {"id": "first", "symbol": "open", "position": "instead", "action": {"fail": "EACCES", "log": true}, "when": {"args": [{"arg": 0, "glob": "*hostname"}]}},
          {"id": "second", "symbol": "open64", "position": "instead", "action": {"fail": "EPERM", "log": true}}
        ]}
        """#)
        let bin = try Fixture.build("open_calls")
        let r = try Proc.run(bin, ["/etc/hostname", "1"], environment: Proc.preload(table: t.name))
        #expect(r.stdout == "open 1: -1 EACCES\n")
        let rules = t.table.rules()
        #expect(rules.map(\.fired) == [1, 0])
        #expect(rules.map(\.matched) == [1, 1])
        let kinds = t.table.events(from: 0).events.map { "\($0.rule) \($0.kind)" }
        #expect(kinds == ["second shadowed", "first fired"])
    }
}
