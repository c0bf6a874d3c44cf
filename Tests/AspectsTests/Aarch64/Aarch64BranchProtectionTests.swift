import Foundation
import Testing

/// BTI on aarch64 (stubs/branch_protection_aarch64.h): a CPU with BTI faults an indirect branch
/// into a guarded page that does not land on a `bti` instruction, and the loader guards the
/// pages of every object marked for BTI. Distributions built with -mbranch-protection=standard
/// mark everything; the preload's hand-written stubs carry a pad at each way in, so the library
/// can be marked too and still be entered every way a program enters it.
///
/// Shown under qemu's `max` CPU (it implements BTI) with .build/aarch64/libaspects-guarded.so
/// (the same sources, marked: scripts/build-aarch64.sh says why the release build is not marked
/// on this machine's toolchain) and fixtures built as a BTI distribution builds programs
/// (bti_start.S: guarded, padded). `bti_calls nopad` first shows that enforcement is on, so
/// nothing here passes because nothing was checked. Removing the pad macro's `bti c` makes
/// the library fault at its first call (checked by hand when this was written).
@Suite(.requires(Aarch64.available, "needs qemu-user-static, gcc-aarch64-linux-gnu and libffi-dev:arm64 (.ci/run installs them)"), .tags(.qemu))
struct Aarch64BranchProtectionTests {
    static let btiFlags = ["-mbranch-protection=standard", "-nostartfiles", "-Wl,-z,force-bti"]

    /// A fixture built as a BTI program.
    static func program(_ name: String, flags: [String] = []) throws -> String {
        try Fixture.buildAarch64(name, flags: btiFlags + flags, extraSources: [Fixture.path("bti_start.S")])
    }

    static func guardedLibrary() throws -> String {
        _ = try Aarch64.library()
        return Paths.root + "/.build/aarch64/libaspects-guarded.so"
    }

    /// Runs `bin` on qemu's max CPU, with the guarded preload and `table` when there is one.
    func run(_ bin: String, _ args: [String], table: String?) throws -> BoundedOutcome {
        let preload = table == nil ? [] : ["-E", "LD_PRELOAD=" + (try Self.guardedLibrary())]
        let r = try BoundedRun.run(Aarch64.qemu, ["-cpu", "max"] + preload + [bin] + args, environment: ["ASPECTS_TABLE": table], timeout: 120)
        #expect(!r.timedOut, "\(r)")
        return r
    }

    @Test func theGuardedLibraryIsMarkedAndEveryHandWrittenWayInStartsWithAPad() throws {
        let lib = try Self.guardedLibrary()
        let notes = try Proc.run("/usr/bin/env", ["readelf", "-n", lib])
        #expect(notes.stdout.contains("AArch64 feature: BTI"), "\(notes.stdout)")
        // Every function of the hand-written files, and every global function: its first
        // instruction is a landing pad (paciasp is one too, for the compiler's functions).
        let dump = try Proc.run("/usr/bin/env", ["aarch64-linux-gnu-objdump", "-d", "--no-show-raw-insn", lib])
        let lines = dump.stdout.split(separator: "\n")
        let globals = Set(try Proc.run("/usr/bin/env", ["readelf", "-W", "--dyn-syms", lib]).stdout.split(separator: "\n").compactMap { line -> Substring? in
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            return f.count >= 8 && f[3] == "FUNC" && f[6] != "UND" ? f[7].split(separator: "@").first : nil
        })
        let handWritten = ["asp_lazy_", "asp_slow_", "asp_count_stats_", "asp_proto_stub_", "asp_proto_vstub_", "asp_proto_count_stats_", "asp_self_"]
        var checked = 0, missing: [String] = []
        for (i, line) in lines.enumerated() where line.hasSuffix(">:") && i + 1 < lines.count {
            guard let open = line.firstIndex(of: "<") else { continue }
            let name = line[line.index(after: open)..<line.index(line.endIndex, offsetBy: -2)]
            guard globals.contains(name) || handWritten.contains(where: { name.hasPrefix($0) }) || name.hasSuffix("_common") else { continue }
            checked += 1
            let first = lines[i + 1].split(separator: "\t").dropFirst().joined(separator: " ")
            if !(first.hasPrefix("bti\tc") || first.hasPrefix("bti c") || first.hasPrefix("paciasp")) { missing.append("\(name): \(first)") }
        }
        #expect(checked > 1000, "\(checked) entries checked")
        #expect(missing.isEmpty, "no landing pad: \(missing.prefix(20))")
    }

    /// The control: this program's own pages are guarded and a way in without a pad faults.
    @Test func btiIsEnforcedHere() throws {
        let r = try run(try Self.program("bti_calls"), ["nopad"], table: nil)
        #expect(r.status == 128 + Int32(SIGILL), "qemu's max CPU did not enforce BTI on a BTI program (so the other tests here would prove nothing): \(r)")
    }

    /// Every way into the guarded library, from a BTI program's PLT and function pointers: the
    /// lazy entry of a first call, the un-armed tail branch, the gate passing and firing (the
    /// slow entry), a table-scope count (the count_stats thunk, entered by the stub's br x16),
    /// a filter, and the dispatcher's own C.
    @Test(arguments: [
        ("", 0),
        (#"{"symbol":"fsync","position":"after","action":{"fail":"EIO"}}"#, 0),
        (#"{"symbol":"getppid","position":"instead","action":{"return":42},"when":{"every":3}}"#, 6),
        (#"{"symbol":"getppid","position":"instead","action":{"return":42},"scope":"table","when":{"every":3}}"#, 6),
        (#"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"args":[{"arg":2,"eq":999}]}}"#, 0),
        (#"{"symbol":"write","position":"before","action":{"log":true}}"#, 0),
    ])
    func everyWayIntoTheGuardedLibraryLandsOnAPad(rule: String, fired: Int) throws {
        let t = try ScratchTable()
        if !rule.isEmpty { try t.add(rule) }
        let r = try run(try Self.program("bti_calls"), ["10"], table: t.name)
        #expect(r.status == 0 && r.stdout == "plt\npointer\nfired \(fired) calls 20\n", "\(rule): \(r)")
        if rule.contains("log") { #expect(t.table.rules().first?.matched == 2, "\(rule)") }
    }

    /// A prototype rule rewrites the BTI program's GOT to a prototype stub of the guarded
    /// library (entered by the PLT's br x17), and a signal handler runs behind the preload's
    /// trampoline (entered by the kernel's signal delivery).
    @Test func prototypeStubsAndTheSignalTrampolineToo() throws {
        let libDir = try Fixture.libraryAarch64("proto_lib", soname: "fx", flags: ["-mbranch-protection=standard"])
        let proto = try Self.program("proto_main", flags: ["-L", libDir, "-lfx", "-Wl,-rpath," + libDir])
        let t = try ScratchTable()
        try t.add(#"{"id":"add","symbol":"fx_add","prototype":"int fx_add(int a, int b)","position":"instead","action":{"return":-7},"when":{"nth":2}}"#)
        let r = try run(proto, ["3"], table: t.name)
        #expect(r.status == 0 && r.stdout.contains("add 1: 3\n") && r.stdout.contains("add 2: -7\n") && r.stdout.contains("add 3: 5\n"), "\(r)")
        #expect(t.table.rules().first?.fired == 1)

        let handlers = try Self.program("handler_writes")
        let w = try ScratchTable()
        try w.add(#"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"every":3,"args":[{"arg":0,"eq":100}]}}"#)
        let h = try run(handlers, ["20000", "2000"], table: w.name)
        let numbers = h.stdout.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        #expect(h.status == 0 && numbers.count == 3, "\(h)")
        if numbers.count == 3 {
            #expect(numbers[1] > 0 && numbers[2] == (numbers[0] + numbers[1]) / 3, "\(h.stdout)")
        }
    }
}
