import Foundation
import Testing
import AspectsExplore
import AspectsTable

/// The preload's crash recorder (crash.c): with ASPECTS_RECORD_CRASH=1 a process that a crash
/// signal ends leaves the signal in its attachment record, and dies exactly as it would have
/// without the preload; without the variable, or where the program handles the signal
/// itself, nothing is recorded and nothing changes.
@Suite struct CrashRecorderTests {
    static let recording: [String: String?] = ["ASPECTS_RECORD_CRASH": "1"]

    func run(_ mode: String, record: Bool = true, fixture: String = "crash_tree") throws -> (Outcome, [AspectsTable.Attachment]) {
        let t = try ScratchTable()
        let bin = try Fixture.build(fixture)
        let env = Proc.preload(table: t.name).merging(record ? Self.recording : [:]) { $1 }
        let r = try Proc.run(bin, [mode], environment: env)
        return (r, t.table.attachments())
    }

    @Test(arguments: [("segv", 11), ("fpe", 8), ("raise", 11), ("abort", 6)])
    func aCrashIsRecordedAndKillsAsBefore(_ mode: String, _ signal: Int32) throws {
        let plain = try Proc.run(try Fixture.build("crash_tree"), [mode])
        #expect(plain.status == 128 + signal, "\(plain)")
        let (r, attached) = try run(mode)
        #expect(r.status == plain.status, "the same death with the recorder: \(r)")
        #expect(attached.count == 1, "\(attached)")
        #expect(attached.first?.crashSignal == signal, "\(attached)")
        #expect(attached.first?.crashPID == attached.first?.pid, "\(attached)")
    }

    @Test func aForkChildsCrashIsRecordedWithItsOwnPID() throws {
        let (r, attached) = try run("child-segv")
        #expect(r.status == 0 && r.stdout == "child: signal 11\n", "\(r)")
        // One image attached (the child did not exec); the crash is the child's.
        #expect(attached.count == 1, "\(attached)")
        let a = try #require(attached.first)
        #expect(a.crashSignal == 11, "\(attached)")
        #expect(a.crashPID != nil && a.crashPID != a.pid, "\(attached)")
    }

    @Test func nothingIsRecordedWithoutTheVariable() throws {
        let (r, attached) = try run("segv", record: false)
        #expect(r.status == 128 + 11, "\(r)")
        #expect(attached.count == 1 && attached[0].crashSignal == nil, "\(attached)")
    }

    /// The program's handler keeps the signal (it prints "caught" and exits 3); the crash is
    /// recorded as caught by it (issue 31, item 4), not as one that ended the process.
    @Test func theProgramsOwnHandlerKeepsTheSignal() throws {
        let (r, attached) = try run("own-handler")
        #expect(r.status == 3 && r.stdout == "caught\n", "\(r)")
        #expect(attached.count == 1 && attached[0].crashSignal == nil && attached[0].crashCaught == 11, "\(attached)")
    }

    /// The recorder reads as SIG_DFL (issue 30, item 11): a program that installs its crash
    /// handler only if none is installed does so under the recorder too, and one that puts the
    /// old action back reads SIG_DFL again — and the recorder stands there again. Before, the
    /// program read a handler, installed none, and died of SIGSEGV (139) instead of exiting 2.
    @Test func theRecorderReadsAsTheDefault() throws {
        let bin = try Fixture.build("crash_handler")
        let plain = try Proc.run(bin, ["probe"])
        #expect(plain.stdout.hasPrefix("SIGSEGV SIG_DFL flags 0 mask 0\n"), "\(plain)")
        let (probe, _) = try run("probe", fixture: "crash_handler")
        #expect(probe.status == 0 && probe.stdout == plain.stdout, "\(probe)")
        let (ifNone, quiet) = try run("if-none", fixture: "crash_handler")
        #expect(ifNone.status == 2 && ifNone.stdout == "internal error detected\n", "\(ifNone)")
        #expect(quiet.count == 1 && quiet[0].crashSignal == nil, "\(quiet)")
        let (restore, recorded) = try run("restore", fixture: "crash_handler")
        #expect(restore.status == 128 + 11 && restore.stdout == "restored SIG_DFL\n", "\(restore)")
        #expect(recorded.count == 1 && recorded[0].crashSignal == 11, "\(recorded)")
    }

    /// A stack from a crash the program's handler catches (issue 31, item 4): the trampoline
    /// records it before the handler prints "internal error detected" and _exit(2)s — the
    /// stack from the faulting function to main, the record marked caught. A handler that
    /// returns (the program goes on) leaves neither mark nor files, and one that has returned 4
    /// times is the program's routine: not written down from then on.
    @Test func aCrashCaughtByTheProgramsHandlerLeavesItsStack() throws {
        let t = try ScratchTable()
        let bin = try Fixture.build("crash_handler", flags: ["-g"])
        let dir = NSTemporaryDirectory() + "aspects-crashdir-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let env = Proc.preload(table: t.name).merging(["ASPECTS_RECORD_CRASH": "1", "ASPECTS_CRASH_DIR": dir]) { $1 }
        let r = try Proc.run(bin, ["if-none"], environment: env)
        #expect(r.status == 2 && r.stdout == "internal error detected\n", "\(r)")
        let a = try #require(t.table.attachments().first)
        #expect(a.crashSignal == nil && a.crashCaught == 11 && a.crashPID == a.pid, "\(a)")
        let frames = SiteSymbolizer.symbolize(CrashStack.read(directory: dir, pid: a.pid))
        #expect(frames.first?.symbol == "fault" && frames.first?.isReturnAddress == false, "\(frames.map(\.description))")
        #expect(frames.dropFirst().first?.symbol == "main", "\(frames.map(\.description))")

        let went = try Proc.run(bin, ["returns"], environment: env)
        #expect(went.status == 0 && went.stdout == "went on\n", "\(went)")
        let all = t.table.attachments()
        #expect(all.count == 2 && all[1].crashCaught == nil && all[1].crashSignal == nil, "\(all)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).count == 2, "only the first run's pair")

        // A handler that has returned 4 times handles the signal routinely: its later crashes
        // are not written down (a 64 KiB copy each).
        let routine = try Proc.run(bin, ["routine"], environment: env)
        #expect(routine.status == 2 && routine.stdout == "internal error detected\n", "\(routine)")
        let last = t.table.attachments()
        #expect(last.count == 3 && last[2].crashCaught == nil && last[2].crashSignal == nil, "\(last)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).count == 2, "only the first run's pair")
    }

    /// SIGBUS is the preload's own already (the watch over the table's mapping): the recorder
    /// runs it first and records only what it hands on to the default action.
    @Test func aSIGBUSOfTheProgramsIsRecordedBehindTheTableWatch() throws {
        let (r, attached) = try run("", fixture: "own_sigbus")
        #expect(r.status == 128 + 7, "\(r)")
        #expect(attached.count == 1 && attached[0].crashSignal == 7, "\(attached)")
        let (handled, quiet) = try run("handler", fixture: "own_sigbus")
        #expect(handled.status == 3 && handled.stdout.contains("caught SIGBUS"), "\(handled)")
        #expect(quiet.count == 1 && quiet[0].crashSignal == nil, "\(quiet)")
    }
}
