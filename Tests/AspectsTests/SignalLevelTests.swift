import Foundation
import Testing
@testable import AspectConfig

/// The program's signal handlers behind the preload's trampoline (signals.c), which gives each
/// handler a fresh level of the invocation stack so that its calls are advised as its own
/// wherever it lands (DecisionDifferentialTests checks that). Here: the program must never see
/// the trampoline — every handler, flag, mask, old action, signal() result and refusal as
/// without the preload — while the kernel does hold the trampoline.
@Suite struct SignalLevelTests {
    /// A table whose rules arm write and getppid (never firing): the preload is attached.
    static func armedTable() throws -> ScratchTable {
        let t = try ScratchTable()
        try t.add(#"[{"id":"w","symbol":"write","position":"instead","action":{"return":0},"when":{"nth":1000000000000}},"#
            + #"{"id":"g","symbol":"getppid","position":"before","action":{"log":true},"when":{"nth":1000000000000}}]"#)
        return t
    }

    @Test func theProgramSeesOnlyItsOwnHandlers() throws {
        let bin = try Fixture.build("signal_dispositions")
        let plain = try Proc.run(bin)
        #expect(plain.status == 0, "\(plain)")
        #expect(plain.stdout.contains("delivered sig 10 value 77 queued 1") && plain.stdout.contains("replace 0 old on_plain"), "\(plain.stdout)")
        let t = try Self.armedTable()
        let advised = try Proc.run(bin, environment: Proc.preload(table: t.name))
        #expect(advised.status == 0, "\(advised)")
        #expect(advised.stdout == plain.stdout)
        // Not attached (no table): the same.
        let unattached = try Proc.run(bin, environment: Proc.preload(table: nil))
        #expect(unattached.stdout == plain.stdout)
    }

    @Test func theKernelHoldsTheTrampoline() throws {
        let bin = try Fixture.build("signal_dispositions")
        #expect(try Proc.run(bin, ["kernel"]).stdout == "kernel-holds-own 1\n")
        let t = try Self.armedTable()
        #expect(try Proc.run(bin, ["kernel"], environment: Proc.preload(table: t.name)).stdout == "kernel-holds-own 0\n")
    }
}
