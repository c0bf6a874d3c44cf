import Foundation
import Testing
import AspectsTable

/// What the preload must survive in its host: objects unloaded under prototype rules, tables
/// changed under its feet, forks at awkward moments, signal handlers, planted libraries.
@Suite struct PreloadRobustnessTests {
    /// A program linked with libfx that dlopens and dlcloses libfxuser (which imports fx_add).
    func cycler() throws -> (bin: String, userLib: String) {
        let libDir = try Fixture.library("proto_lib", soname: "fx")
        let userDir = try Fixture.library("proto_user", soname: "fxuser", flags: ["-L", libDir, "-lfx", "-Wl,-rpath," + libDir])
        let bin = try Fixture.build("proto_cycle", flags: ["-L", libDir, "-lfx", "-Wl,-rpath," + libDir, "-ldl"])
        return (bin, userDir + "/libfxuser.so")
    }

    static let addRule = #"{"id":"add","symbol":"fx_add","prototype":"int fx_add(int a, int b)","position":"instead","action":{"return":-7}}"#
    static let watchRule = #"{"id":"watch","symbol":"getppid","position":"before","action":{"log":true},"when":{"nth":1000000000}}"#

    @Test func removingAPrototypeRuleAfterItsImporterWasDlclosedDoesNotCrash() throws {
        let t = try ScratchTable()
        try t.add(Self.watchRule)
        try t.add(Self.addRule)
        let (bin, lib) = try cycler()
        let live = try LiveProcess(bin, [lib], table: t.name)
        // The importer is loaded, rewritten, called (advised) and unloaded.
        #expect(live.send("cycle 1") == "cycles 1: first -7 last -7 advised 1")
        // Removing the rule puts the original back only where objects are still loaded.
        try t.table.remove(ids: ["add"])
        #expect(live.send("call") == "add 3")
        #expect(live.send("cycle 1") == "cycles 1: first 101 last 101 advised 0")
        #expect(try live.finish() == 0)
    }

    @Test func aPrototypeRuleKeepsApplyingOverManyDlopenDlcloseCycles() throws {
        let t = try ScratchTable()
        try t.add(Self.watchRule)
        try t.add(Self.addRule)
        let (bin, lib) = try cycler()
        let live = try LiveProcess(bin, [lib], table: t.name)
        // 64 was the number of slots a process tracked: three times that many cycles.
        #expect(live.send("cycle 200") == "cycles 200: first -7 last -7 advised 200")
        #expect(live.send("call") == "add -7")
        let status = try #require(t.table.rules().first { $0.id == "add" }?.prototypeStatus)
        #expect(!status.contains("more importing slots"), "\(status)")
        try t.table.remove(ids: ["add"])
        #expect(live.send("call") == "add 3")
        #expect(try live.finish() == 0)
    }

    /// A table's file truncated under a running program (`: > TABLE`, `truncate -s 4096
    /// TABLE`): the file is only the table's anchor, the table is a segment of fixed size
    /// (aspects_abi.h), so the program goes on, advised as before (when the file was the
    /// table's memory, it went on unadvised at best).
    @Test(arguments: [0, 4096])
    func aTableTruncatedUnderARunningProgramLeavesItRunning(size: Int) throws {
        let t = try ScratchTable()
        try t.add(#"{"symbol":"open","position":"instead","action":{"fail":"ENOENT"},"when":{"args":[{"arg":0,"glob":"/etc/hostname"}]}}"#)
        let bin = try Fixture.build("live_loop")
        let live = try LiveProcess(bin, ["/etc/hostname"], table: t.name)
        #expect(live.call() == "ENOENT")
        #expect(truncate(t.name, off_t(size)) == 0)
        #expect(live.call() == "ENOENT")
        #expect(live.call() == "ENOENT")
        #expect(try live.finish() == 0)
    }

    /// A table extended under a running program changes nothing: advice goes on.
    @Test func aTableExtendedUnderARunningProgramKeepsAdvising() throws {
        let t = try ScratchTable()
        try t.add(#"{"symbol":"open","position":"instead","action":{"fail":"ENOENT"},"when":{"args":[{"arg":0,"glob":"/etc/hostname"}]}}"#)
        let bin = try Fixture.build("live_loop")
        let live = try LiveProcess(bin, ["/etc/hostname"], table: t.name)
        #expect(live.call() == "ENOENT")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: t.name)[.size] as? Int)
        #expect(truncate(t.name, off_t(size * 2)) == 0)
        #expect(live.call() == "ENOENT")
        #expect(try live.finish() == 0)
    }

    /// The same with nothing armed: the wrappers' own read of the armed bytes faults.
    @Test func aTableTruncatedUnderAnUnadvisedProgramLeavesItRunning() throws {
        let t = try ScratchTable()
        let bin = try Fixture.build("live_loop")
        let live = try LiveProcess(bin, ["/etc/hostname"], table: t.name)
        #expect(live.call() == "ok")
        #expect(truncate(t.name, 0) == 0)
        #expect(live.call() == "ok")
        #expect(try live.finish() == 0)
    }

    /// A SIGBUS that is not about the table still does what it did without the preload: it
    /// kills the program, or reaches the program's own handler.
    @Test(arguments: [[], ["handler"]])
    func aProgramsOwnSigbusIsLeftAsItWas(args: [String]) throws {
        let t = try ScratchTable()
        try t.add(#"{"symbol":"getppid","position":"before","action":{"log":true}}"#)
        let bin = try Fixture.build("own_sigbus")
        let plain = try Proc.run(bin, args)
        #expect(plain.status == (args.isEmpty ? 128 + SIGBUS : 3), "\(plain)")
        let r = try Proc.run(bin, args, environment: Proc.preload(table: t.name))
        #expect(r.status == plain.status, "\(r)")
        #expect(r.stdout == plain.stdout)
    }

    /// A libffi.so.8 planted beside the preload must not be what it loads when a rule is armed
    /// (SwiftPM's RUNPATH $ORIGIN would find it there; Package.swift removes it, and libffi is
    /// loaded by absolute path all the same).
    @Test(.tags(.realPrograms)) func aLibffiPlantedBesideThePreloadIsNeverLoaded() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"seen","symbol":"open","position":"before","action":{"log":true},"when":{"args":[{"arg":0,"glob":"/etc/hostname"}]}}"#)
        let dir = t.directory + "/preload"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.library, toPath: dir + "/libaspects.so")
        let planted = try Fixture.library("planted_ffi", soname: "ffi-planted")
        try FileManager.default.copyItem(atPath: planted + "/libffi-planted.so", toPath: dir + "/libffi.so.8")
        let marker = t.directory + "/planted-was-loaded"
        let r = try Proc.run("/bin/cat", ["/etc/hostname"], environment: [
            "LD_PRELOAD": dir + "/libaspects.so", "ASPECTS_TABLE": t.name, "PLANTED_MARKER": marker,
        ])
        #expect(r.status == 0, "\(r)")
        #expect(!FileManager.default.fileExists(atPath: marker), "the planted libffi.so.8 ran its constructor")
        // The real libffi was loaded instead: the rule fired.
        #expect(t.table.events(from: 0).events.contains { $0.rule == "seen" })
    }

    /// A signal handler's call that interrupts an advised call of the same function on the
    /// same thread is a call of its own: counted and advised (`every: 3` fails exactly a third
    /// of all writes, the handler's included).
    @Test func callsFromASignalHandlerInsideAnAdvisedCallAreCountedAndAdvised() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"third","symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"every":3,"args":[{"arg":0,"eq":100}]}}"#)
        let bin = try Fixture.build("handler_writes")
        let r = try Proc.run(bin, ["200000", "20000"], environment: Proc.preload(table: t.name))
        #expect(r.status == 0, "\(r)")
        let numbers = r.stdout.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        try #require(numbers.count == 3, "\(r.stdout)")
        let (main, handler, failed) = (numbers[0], numbers[1], numbers[2])
        print("handler_writes: main \(main), handler \(handler), failed \(failed)")
        #expect(handler > 100, "the timer must have interrupted the loop: \(r.stdout)")
        #expect(failed == (main + handler) / 3, "\(r.stdout)")
        let rule = try #require(t.table.rules().first { $0.id == "third" })
        #expect(rule.matched == UInt64(main + handler))
    }

    /// A fork while another thread fills the /proc/self/maps cache of caller conditions: every
    /// child still answers its own caller condition.
    @Test func forkWhileAnotherThreadReadsTheMapsLeavesCallerConditionsWorking() throws {
        let t = try ScratchTable()
        try t.add(#"{"symbol":"getppid","position":"instead","action":{"return":4242},"when":{"caller":"fork_maps-*"}}"#)
        let libDir = try Fixture.library("caller_lib", soname: "callerlib")
        let bin = try Fixture.build("fork_maps", flags: ["-ldl"])
        let r = try Proc.run(bin, [libDir + "/libcallerlib.so", "30"], environment: Proc.preload(table: t.name))
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == "children 30 unadvised 0\n", "\(r)")
    }

    /// Forks while another thread is inside a prototype pass (a dlopen loop keeps passes
    /// running): every child must still apply a prototype rule added after the fork, put the
    /// originals back when the rules go, and never hang. Without the child's reset of the
    /// prototype lock most children answer "not applied".
    @Test func forkWhileAnotherThreadIsInsideAPrototypePassLeavesChildrenWorking() throws {
        let t = try ScratchTable()
        try t.add(Self.watchRule)
        try t.add(#"{"id":"add","symbol":"fx_add","prototype":"int fx_add(int a, int b)","position":"instead","action":{"return":-7}}"#)
        let scale = t.directory + "/scale.json"
        try #"{"id":"scale","symbol":"fx_scale","prototype":"double fx_scale(double x, double k)","position":"instead","action":{"return":0.25}}"#
            .write(toFile: scale, atomically: true, encoding: .utf8)
        let libDir = try Fixture.library("proto_lib", soname: "fx")
        let userDir = try Fixture.library("proto_user", soname: "fxuser", flags: ["-L", libDir, "-lfx", "-Wl,-rpath," + libDir])
        let bin = try Fixture.build("proto_fork", flags: ["-L", libDir, "-lfx", "-Wl,-rpath," + libDir, "-ldl"])
        let ctl = "'\(Paths.aspectctl)'", table = "'\(t.name)'"
        let children = 60
        let r = try BoundedRun.run(bin, [userDir + "/libfxuser.so", String(children),
                                         "\(ctl) add --table \(table) '\(scale)' >/dev/null 2>&1",
                                         "\(ctl) remove --table \(table) add scale >/dev/null"],
                                   environment: ["LD_PRELOAD": Paths.library, "ASPECTS_TABLE": t.name], timeout: 120)
        #expect(!r.timedOut && r.status == 0, "\(r)")
        let numbers = r.stdout.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        try #require(numbers.count == 6, "\(r)")
        let (rounds, applied, removed, stuck, parentRemoved) = (numbers[0], numbers[2], numbers[3], numbers[4], numbers[5])
        print("proto_fork: \(r.stdout)", terminator: "")
        #expect(numbers[1] == children)
        #expect(rounds > children, "the loading thread must have kept passes running while the children were forked: \(r.stdout)")
        #expect(parentRemoved == 1, "\(r.stdout)")
        // Every child that answered saw the rules applied and then removed.
        #expect(applied == children - stuck && removed == children - stuck, "\(r.stdout)")
        // A pass runs inside dl_iterate_phdr, whose lock glibc does not reset in a fork child:
        // fork waits for a running pass to end (proto.c's atfork prepare), so no child hangs.
        #expect(stuck == 0, "children hung in their next prototype pass: \(r.stdout)")
    }

    /// Writers one lap apart on the same record of a 16-record ring (8 threads logging every
    /// write): no record a reader accepts mixes two writers. Each thread's arguments are
    /// derived from its number, so a mixed record shows as arguments that disagree with each
    /// other or with its thread id. Writers once could both fill a record at once (found by
    /// reading events.c under TSan); the claim is now exclusive. That old window is too narrow
    /// for this test to hit on demand: it guards the claim (records are whole, and enough of
    /// them survive the contention), not the old race.
    @Test func writersALapApartNeverMixARecord() throws {
        let bin = try Fixture.build("event_laps", flags: ["-pthread"])
        let t = try ScratchTable(events: 16)
        try t.add(#"{"id":"w","symbol":"write","position":"before","action":{"log":true},"when":{"args":[{"arg":0,"eq":-1}]}}"#)
        // The test polls the ring while the writers run (a mixed record may be overwritten
        // whole before the end), then reads what is left. The fixture prints 9 short lines:
        // its pipe never fills while we poll.
        let out = Pipe()
        let p = try TestProcess.start(
            bin, ["8", "40000"], environment: ["LD_PRELOAD": Paths.library, "ASPECTS_TABLE": t.name],
            stdout: out)
        var seen: [TableEvent] = []
        while p.isRunning { seen += t.table.events(from: 0).events.filter { $0.rule == "w" } }
        let status = p.wait()
        seen += t.table.events(from: 0).events.filter { $0.rule == "w" }
        let r = (status: status, stdout: String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
        #expect(r.status == 0 && r.stdout.hasSuffix("done\n"), "\(r)")
        var threadOf: [Int32: Int] = [:]
        for line in r.stdout.split(separator: "\n") where line.hasPrefix("tid ") {
            let f = line.split(separator: " ")
            threadOf[Int32(f[1])!] = Int(f[3])!
        }
        #expect(threadOf.count == 8)
        #expect(seen.count > 16, "the reader saw \(seen.count) records")
        var mixed: [TableEvent] = []
        for e in seen {
            guard let n = threadOf[e.tid], e.arguments.count == 3 else { mixed.append(e); continue }
            let buffer = UInt64(e.arguments[1].dropFirst(2), radix: 16)
            if e.arguments[0] != "-1" || e.arguments[2] != String(n + 1) || buffer != UInt64(0x10000 * (n + 1)) { mixed.append(e) }
        }
        #expect(mixed.isEmpty, "\(mixed.count) of \(seen.count) records mix two writers, e.g. \(mixed.prefix(3))")
    }

    /// A record left claimed by a writer that died mid-write is never taken over (a claim
    /// cannot tell a dead writer from one descheduled for laps, whose late stores would land in
    /// the new record: TSan saw exactly that with 300 threads): every later event on it is
    /// dropped, and a reader counts it dropped and reads on past it.
    @Test func aRecordClaimedByADeadWriterIsSkippedNotTakenOver() throws {
        let bin = try Fixture.build("event_laps", flags: ["-pthread"])
        let t = try ScratchTable(events: 16)
        try t.add(#"{"id":"w","symbol":"write","position":"before","action":{"log":true},"when":{"args":[{"arg":0,"eq":-1}]}}"#)
        // Position 5's writer claimed record 5 (sequence 2 * 5 + 1) and was killed.
        let seq = t.table.field(t.table.event(5), \.seq)
        seq.pointee = 11
        let r = try Proc.run(bin, ["1", "100"], environment: Proc.preload(table: t.name))
        #expect(r.status == 0 && r.stdout.hasSuffix("done\n"), "\(r)")
        #expect(t.table.eventHead == 100)
        // Positions 21, 37, 53, 69 and 85 found it claimed (the old rule took over from 37 on).
        #expect(seq.pointee == 11)
        let batch = t.table.events(from: 0)
        // The ring holds 84..99: 85 is lost, the 15 others are read, and the reader gets past 85.
        #expect(batch.next == 100 && batch.dropped == 85, "next \(batch.next), dropped \(batch.dropped)")
        #expect(batch.events.map(\.index) == [84] + Array(86..<100), "\(batch.events.map(\.index))")
        #expect(batch.events.allSatisfy { $0.rule == "w" && $0.arguments.first == "-1" })
        #expect(t.table.rules().first { $0.id == "w" }?.fired == 100)
    }
}
