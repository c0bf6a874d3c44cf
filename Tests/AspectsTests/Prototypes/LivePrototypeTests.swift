import Foundation
import Testing
import AspectsTable

/// Prototype rules added to a running program (issue 22, item 3). The program calls its
/// prototype function in a loop with no libc call in it (Tests/Fixtures/Prototypes/live_proto.c), so no
/// advised catalog call can bring the change in: on a table made with --live-prototypes the
/// process's watcher thread applies it; without, it applies at the next advised call, and
/// `add` says so.
@Suite(.serialized) struct LivePrototypeTests {
    static let rule = #"{"id":"live","symbol":"fx_add","prototype":"int fx_add(int a, int b)","position":"instead","action":{"return":-7}}"#

    /// live_proto linked against libfx, a table made by `aspectctl create` (with `options`),
    /// and the program's control file, all in a temporary directory. `aarch64`: both
    /// cross-built, the program run under qemu with the aarch64 preload (Aarch64Tests).
    final class Setup {
        let directory: String
        let table: String
        let control: String
        let program: String
        let aarch64: Bool

        init(createOptions: [String], aarch64: Bool = false) throws {
            self.aarch64 = aarch64
            directory = NSTemporaryDirectory() + "aspects-live-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            table = directory + "/table"
            control = directory + "/control"
            #expect(FileManager.default.createFile(atPath: control, contents: Data(count: 64)))
            let libDir = aarch64 ? try Fixture.libraryAarch64("proto_lib", soname: "fx") : try Fixture.library("proto_lib", soname: "fx")
            let flags = ["-L", libDir, "-lfx", "-Wl,-rpath," + libDir]
            program = aarch64 ? try Fixture.buildAarch64("live_proto", flags: flags) : try Fixture.build("live_proto", flags: flags)
            let created = try Proc.aspectctl(["create", "--table", table] + createOptions)
            try #require(created.status == 0, "\(created)")
        }

        deinit {
            _ = try? Proc.aspectctl(["destroy", "--table", table])
            try? FileManager.default.removeItem(atPath: directory)
        }

        /// Starts the program under the table and waits until its loop runs.
        func start(_ extra: [String] = []) throws -> (TestProcess.Live, Pipe) {
            let out = Pipe()
            let p: TestProcess.Live
            if aarch64 {
                // qemu-user runs the guest in its own process: the pid is the program's
                p = try TestProcess.start(
                    Aarch64.qemu, try Aarch64.qemuArguments(cpu: "max", preload: true) + [program, control] + extra,
                    environment: ["ASPECTS_TABLE": table], stdout: out)
            } else {
                p = try TestProcess.start(
                    program, [control] + extra, environment: ["LD_PRELOAD": Paths.library, "ASPECTS_TABLE": table],
                    stdout: out)
            }
            try #require(waitFor { self.byte(1) == 1 }, "the program never started its loop")
            return (p, out)
        }

        func byte(_ at: UInt64) -> UInt8 { bytes(at, 1).first ?? 0 }
        func word(_ at: UInt64) -> UInt64 { bytes(at, 8).reversed().reduce(0) { $0 << 8 | UInt64($1) } }
        private func bytes(_ at: UInt64, _ n: Int) -> [UInt8] {
            guard let h = FileHandle(forReadingAtPath: control) else { return [] }
            defer { try? h.close() }
            try? h.seek(toOffset: at)
            return [UInt8](h.readData(ofLength: n))
        }

        /// Lets the program leave its loop and returns what it printed after it.
        func finish(_ p: TestProcess.Live, _ out: Pipe) throws -> String {
            let h = try #require(FileHandle(forWritingAtPath: control))
            try h.seek(toOffset: 0)
            h.write(Data([1]))
            try h.close()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.wait()
            return text
        }
    }

    /// Polls `condition` until it holds or a generous deadline passes (an outcome, not a time,
    /// is asserted).
    static func waitFor(_ condition: () -> Bool) -> Bool {
        for _ in 0..<3000 {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }
    func waitFor(_ condition: () -> Bool) -> Bool { Self.waitFor(condition) }

    /// The process's threads: their names and blocked-signal masks (/proc/PID/task).
    static func threads(_ pid: Int32) -> [(name: String, blocked: UInt64)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { tid in
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/status", encoding: .utf8) else { return nil }
            let field = { (key: String) in status.split(separator: "\n").first { $0.hasPrefix(key + ":") }.map { $0.dropFirst(key.count + 1).trimmingCharacters(in: .whitespaces) } }
            return (field("Name") ?? "", UInt64(field("SigBlk") ?? "", radix: 16) ?? 0)
        }
    }

    @Test func aPrototypeRuleAddedToARunningProgramAppliesWithoutACatalogCall() throws {
        try Self.addedWhileTheLoopRuns(try Setup(createOptions: ["--live-prototypes"]))
    }

    /// The scenario of the test above, on a Setup of either architecture (Aarch64RuleFeaturesTests
    /// runs it under qemu). On this machine's own architecture `add` waits until the process
    /// has applied the rule, so its record is read at once. Under qemu the record is polled:
    /// the watcher's pass is emulated and may take longer than the 2 s `add` waits (then `add`
    /// names the process in a note), and qemu-user gives its guest a start time of its own
    /// (`/proc/self/stat`'s field 22, from qemu's clock reading as it starts), which on a
    /// loaded machine falls in a later tick than the kernel's: `add` then cannot tell the
    /// emulated process from a later one with its pid, counts it gone and waits for nothing.
    static func addedWhileTheLoopRuns(_ s: Setup) throws {
        let (p, out) = try s.start()
        let added = try Proc.aspectctl(["add", "--table", s.table, "--rule", Self.rule])
        #expect(added.status == 0, "\(added)")
        let table = try AdviceTable.open(try TableName(s.table))
        let generation = table.header.pointee.proto_generation
        func applied() -> Bool { table.attachments().last { $0.pid == p.pid }?.protosApplied == generation }
        if s.aarch64 {
            if added.stderr.contains("note") { #expect(added.stderr.contains(String(p.pid)), "\(added)") }
            #expect(Self.waitFor(applied), "the watcher never applied generation \(generation)")
        } else {
            // Once `add` returned, the process had applied it (its record says so, read at
            // once, not polled): its very next call of fx_add is advised.
            #expect(!added.stderr.contains("note"), "\(added)")
            let record = try #require(table.attachments().last { $0.pid == p.pid })
            #expect(generation > 0 && record.protosApplied == generation, "\(record), generation \(generation)")
        }
        // The loop's own calls return the rule's -7: nothing but the watcher could have
        // rewritten the slot, since the loop calls nothing else.
        #expect(Self.waitFor { s.word(16) > 0 }, "the rule never reached the loop (calls: \(s.word(8)))")
        let live = try #require(table.rules().first { $0.id == "live" })
        #expect(live.fired > 0, "\(live)")
        #expect(try s.finish(p, out) == "after: -7\n")
        #expect(p.status == 0)
    }

    @Test func withoutTheOptionAddSaysWhoWaitsAndTheRuleAppliesAtTheNextAdvisedCall() throws {
        let s = try Setup(createOptions: [])
        // getppid armed: the advised call after the loop, where the process notices the change.
        let armed = try Proc.aspectctl(["add", "--table", s.table, "--rule", #"{"symbol":"getppid","position":"before","action":{"log":true},"when":{"nth":1000000000}}"#])
        try #require(armed.status == 0, "\(armed)")
        let (p, out) = try s.start()
        #expect(Self.threads(p.pid).count == 1)
        let added = try Proc.aspectctl(["add", "--table", s.table, "--rule", Self.rule])
        #expect(added.status == 0, "\(added)")
        #expect(
            added.stderr.contains("aspectctl: note: ") && added.stderr.contains("\(p.pid) (")
                && added.stderr.contains("next call of an advised function")
                && added.stderr.contains("create --live-prototypes"), "\(added)")
        // A hundred thousand calls after `add` returned, none advised: no watcher, no advised call.
        let before = s.word(8)
        #expect(waitFor { s.word(8) > before + 100_000 })
        #expect(s.word(16) == 0)
        #expect(try s.finish(p, out) == "after: -7\n")
    }

    @Test func theWatcherIsAThreadOfItsOwnWithEverySignalBlocked() throws {
        let live = try Setup(createOptions: ["--live-prototypes"])
        let (p, out) = try live.start()
        let threads = Self.threads(p.pid)
        let _ = try live.finish(p, out)
        #expect(threads.count == 2, "\(threads)")
        let watcher = try #require(threads.first { $0.name == "aspects-watch" }, "\(threads)")
        // Every signal but those no thread can block (SIGKILL, SIGSTOP) and glibc's own two
        // (32: cancellation, 33: set*id across threads), which the host cannot handle.
        let unblockable: Set<Int> = [Int(SIGKILL), Int(SIGSTOP), 32, 33]
        for signal in 1...64 where !unblockable.contains(signal) {
            #expect(watcher.blocked & (1 << UInt64(signal - 1)) != 0, "signal \(signal) is not blocked in the watcher (SigBlk \(String(watcher.blocked, radix: 16)))")
        }
    }

    /// A fork child has no threads but the forking one: it starts a watcher of its own at its
    /// first advised call, and that watcher applies a rule added later.
    @Test func aForkChildStartsItsOwnWatcher() throws {
        try Self.forkChildWatches(try Setup(createOptions: ["--live-prototypes"]))
    }

    /// The scenario of the test above, on a Setup of either architecture.
    static func forkChildWatches(_ s: Setup) throws {
        let armed = try Proc.aspectctl(["add", "--table", s.table, "--rule", #"{"symbol":"getppid","position":"before","action":{"log":true},"when":{"nth":1000000000}}"#])
        try #require(armed.status == 0, "\(armed)")
        let (p, out) = try s.start(["fork"])
        let child = Int32(truncatingIfNeeded: s.word(24))
        #expect(Self.waitFor { Self.threads(child).contains { $0.name == "aspects-watch" } }, "\(Self.threads(child))")
        let added = try Proc.aspectctl(["add", "--table", s.table, "--rule", Self.rule])
        #expect(added.status == 0, "\(added)")
        #expect(Self.waitFor { s.word(16) > 0 }, "the rule never reached the child's loop")
        #expect(try s.finish(p, out) == "after: -7\n")
        #expect(p.status == 0)
    }

    /// The table destroyed under a watched program: the segment stays mapped until the
    /// program ends, the watcher keeps sleeping, the program runs on.
    @Test func destroyingTheTableLeavesAWatchedProgramRunning() throws {
        let s = try Setup(createOptions: ["--live-prototypes"])
        let (p, out) = try s.start()
        let destroyed = try Proc.aspectctl(["destroy", "--table", s.table])
        #expect(destroyed.status == 0, "\(destroyed)")
        let before = s.word(8)
        #expect(waitFor { s.word(8) > before + 100_000 })
        #expect(Self.threads(p.pid).contains { $0.name == "aspects-watch" })
        #expect(try s.finish(p, out) == "after: 3\n")
        #expect(p.status == 0)
    }

    @Test func aProgramThatMustStaySingleThreadedRunsWithoutTheOption() throws {
        let bin = try Fixture.build("unshare_user")
        let plain = try Proc.run(bin)
        try #require(plain.status == 0, "user namespaces are not available here: \(plain)")
        let rule = ["--rule", #"{"symbol":"getppid","position":"before","action":{"log":true}}"#]
        let r = try Proc.aspectctl(["run"] + rule + ["--", bin])
        #expect(r.status == 0 && r.stdout == "unshare: ok\n", "\(r)")
        // The price of the option, as documented: the watcher makes the program multithreaded.
        let live = try Proc.aspectctl(["run", "--live-prototypes"] + rule + ["--", bin])
        #expect(live.status == 1 && live.stdout == "unshare: EINVAL\n", "\(live)")
    }

    @Test func runRefusesANamedTableMadeWithoutTheOption() throws {
        let s = try Setup(createOptions: [])
        let r = try Proc.aspectctl(["run", "--live-prototypes", "--table", s.table, "--rule", Self.rule, "--", "/bin/true"])
        #expect(r.status == 125 && r.stderr.contains("--live-prototypes") && r.stderr.contains("create --live-prototypes"), "\(r)")
    }
}
