import Foundation
import Testing
@testable import AspectConfig

/// The preload's crash recorder (crash.c): with ASPECTS_RECORD_CRASH=1 a process that a crash
/// signal ends leaves the signal in its attachment record, and dies exactly as it would have
/// without the preload; without the variable, or where the program handles the signal
/// itself, nothing is recorded and nothing changes.
@Suite struct CrashRecorderTests {
    static let recording: [String: String?] = ["ASPECTS_RECORD_CRASH": "1"]

    func run(_ mode: String, record: Bool = true, fixture: String = "crash_tree") throws -> (Outcome, [AspectConfig.Attachment]) {
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

    @Test func theProgramsOwnHandlerKeepsTheSignal() throws {
        let (r, attached) = try run("own-handler")
        #expect(r.status == 3 && r.stdout == "caught\n", "\(r)")
        #expect(attached.count == 1 && attached[0].crashSignal == nil, "\(attached)")
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
