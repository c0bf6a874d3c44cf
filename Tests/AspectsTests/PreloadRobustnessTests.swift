import Foundation
import Testing
@testable import AspectConfig

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
}
