import Foundation
import Testing
import CAspectsABI

/// What attaching a table leaves in a process (issue 33, item 2): libffi is loaded at the first
/// need from a safe place, not at attach, and only the pages of the table the process uses
/// are touched, whatever its capacity. The fixture reports what it sees of itself.
@Suite struct AttachFootprintTests {
    static let getppid42 = #"{"id":"g","symbol":"getppid","position":"instead","action":{"return":42}}"#

    func footprint(_ mode: String, rules: Int = 64) throws -> (libffi: String, getppid: String, segmentKB: Int) {
        let bin = try Fixture.build("attach_footprint", flags: ["-pthread"])
        let t = try ScratchTable(rules: rules)
        try t.add(Self.getppid42)
        let r = try Proc.run(bin, [mode], environment: Proc.preload(table: t.name))
        let f = r.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
        #expect(r.status == 0 && f.count == 6 && f[0] == "libffi", "\(r)")
        guard f.count == 6, let kb = Int(f[5]) else { return ("?", "?", -1) }
        return (f[1], f[3], kb)
    }

    /// A process that never calls anything armed never maps libffi.
    @Test func aProcessThatCallsNothingArmedNeverLoadsLibffi() throws {
        let r = try footprint("idle")
        #expect(r.libffi == "no" && r.getppid == "0", "\(r)")
    }

    /// The first armed call, from an ordinary place, loads it and is advised.
    @Test func theFirstArmedCallLoadsLibffiAndIsAdvised() throws {
        let r = try footprint("call")
        #expect(r.libffi == "yes" && r.getppid == "42", "\(r)")
    }

    /// Installing a handler takes what the handler's first armed call will need, before the
    /// handler can run (a handler's call must not load a library: it may have interrupted
    /// malloc).
    @Test func installingASignalHandlerLoadsLibffiAtOnce() throws {
        let r = try footprint("handler")
        #expect(r.libffi == "yes", "\(r)")
    }

    /// Every signal blocked, and the C library's own handlers installed (a thread was
    /// started): no handler of the program's can be running unseen, so the first armed call
    /// still loads libffi and is advised.
    @Test func aProgramBlockingEverySignalIsStillAdvised() throws {
        let r = try footprint("blocked")
        #expect(r.libffi == "yes" && r.getppid == "42", "\(r)")
    }

    /// Attaching reads the header, the armed bytes, the lists of armed groups and the slots
    /// they name: a table of the largest capacity costs the process the pages a small one
    /// does. Reading the whole slot array once touched 1,280 bytes per slot (320 kB of a
    /// 256-slot table, 1.25 MB of a 1,024-slot one).
    @Test func attachingTouchesTheSamePagesWhateverTheCapacity() throws {
        let small = try footprint("idle", rules: 64)
        let large = try footprint("idle", rules: Int(ASPECTS_MAX_RULE_CAPACITY))
        #expect(small.segmentKB > 0 && small.segmentKB <= 32, "\(small)")
        #expect(large.segmentKB == small.segmentKB, "small \(small), large \(large)")
    }
}
