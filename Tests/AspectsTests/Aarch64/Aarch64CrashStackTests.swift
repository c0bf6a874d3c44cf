import CAspectsABI
import Foundation
import Testing
import AspectsExplore

/// Crash stacks of aarch64 processes (docs/aarch64.md): crash_stack, cross-built for aarch64,
/// crashes under qemu with the aarch64 preload recording it, and this machine's (x86-64)
/// CrashStack unwinds the dump by the dump's own architecture — the CFA from sp or x29, the
/// return address from the `ra` column or the link register, aarch64's frame records where
/// an object has no call frame information — and SiteSymbolizer (binutils reads aarch64
/// objects) names each frame: the crashing function, then each caller up to main.
///
/// What qemu cannot show: none of this depends on timing; the fault is a store qemu delivers
/// as the kernel would (the faulting instruction's pc, the registers of that moment).
@Suite(.requires(Aarch64.available, "needs qemu-user-static, gcc-aarch64-linux-gnu and libffi-dev:arm64 (.ci/run installs them)"), .tags(.qemu))
struct Aarch64CrashStackTests {
    /// crash_stack MODE built with `flags`, run under qemu with the crash recorder on: its
    /// frames, symbolized.
    func crash(_ mode: String, flags: [String] = ["-g"], cpu: String = "max") throws -> [StackFrame] {
        let bin = try Fixture.buildAarch64("crash_stack", flags: flags)
        let t = try ScratchTable()
        let dir = t.directory + "/crash"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let r = try BoundedRun.run(Aarch64.qemu, try Aarch64.qemuArguments(cpu: cpu, preload: true) + [bin, mode],
                                   environment: ["ASPECTS_TABLE": t.name, "ASPECTS_RECORD_CRASH": "1", "ASPECTS_CRASH_DIR": dir], timeout: 120)
        #expect(!r.timedOut && r.status == 128 + 11, "\(mode): \(r)")
        let pid = try #require(t.table.attachments().first?.crashPID, "\(mode): no crash recorded")
        return SiteSymbolizer.symbolize(CrashStack.read(directory: dir, pid: Int32(pid)))
    }

    static func describe(_ frames: [StackFrame]) -> String { frames.map(\.description).joined(separator: "\n") }

    /// The program's own frames from the first one that is not the C library's: their symbols.
    static func programSymbols(_ frames: [StackFrame]) -> [String?] {
        frames.drop { $0.site.object.hasPrefix("libc.so") }.prefix { !$0.site.object.hasPrefix("libc.so") }.map(\.symbol)
    }

    /// A non-leaf function several calls deep: each frame by the fixture's call frame
    /// information (CFA = sp or x29 + offset, the return address at the `ra` column's slot).
    @Test func aCrashSeveralCallsDeepUnwindsToMain() throws {
        let frames = try crash("deep")
        #expect(frames.first?.isReturnAddress == false, "\(Self.describe(frames))")
        #expect(Array(frames.prefix(4).map(\.symbol)) == ["deep_c", "deep_b", "deep_a", "main"], "\(Self.describe(frames))")
    }

    /// A leaf function keeps its return address in x30 only: the first step takes the link
    /// register the dump carries (the function's rule does not save `ra`).
    @Test func aCrashInALeafFunctionFindsItsCallerInTheLinkRegister() throws {
        let frames = try crash("leaf")
        #expect(Array(frames.prefix(3).map(\.symbol)) == ["leaf_fault", "leaf_caller", "main"], "\(Self.describe(frames))")
    }

    /// A fault inside the C library (strlen, a leaf of its assembly, called by printf's
    /// machinery): libc's call frame information leads back through printf to the program.
    @Test func aCrashInsideLibcUnwindsThroughItsCallFrameInformation() throws {
        let frames = try crash("libc")
        #expect(frames.first?.site.object.hasPrefix("libc.so") == true, "\(Self.describe(frames))")
        // libc's symbols are its dynamic ones, named with their version (printf@@GLIBC_2.17)
        #expect(frames.contains { $0.symbol?.split(separator: "@").first == "printf" }, "\(Self.describe(frames))")
        #expect(Array(Self.programSymbols(frames).prefix(2)) == ["libc_caller", "main"], "\(Self.describe(frames))")
    }

    /// Without call frame information for the program's functions (built with no unwind
    /// tables and no debug information: only the C runtime's start files bring an .eh_frame),
    /// the frame records the program keeps (x29 -> [caller's x29, return address]) are walked.
    @Test func withoutCallFrameInformationTheFrameRecordsAreWalked() throws {
        let flags = ["-fno-asynchronous-unwind-tables", "-fno-unwind-tables"]
        let frames = try crash("deep", flags: flags)
        let bin = try Fixture.buildAarch64("crash_stack", flags: flags)
        let cfi = CallFrameInfo.table(bin, architecture: .aarch64)
        let symbols = try Proc.run("/usr/bin/env", ["nm", bin]).stdout.split(separator: "\n").map { $0.split(separator: " ") }
        for name in ["deep_c", "deep_b", "deep_a", "main"] {
            let address = try #require(symbols.first { $0.last.map(String.init) == name }.flatMap { UInt64($0[0], radix: 16) }, "\(name)")
            #expect(cfi.row(at: address + 4) == nil, "\(name) has call frame information")
        }
        #expect(Array(frames.prefix(4).map(\.symbol)) == ["deep_c", "deep_b", "deep_a", "main"], "\(Self.describe(frames))")
    }

    /// Return addresses signed by pointer authentication (-mbranch-protection=pac-ret, on
    /// qemu's `max` CPU, which authenticates): the signature in the bits above the 48-bit
    /// address is stripped before a return address is looked up.
    @Test func signedReturnAddressesAreStripped() throws {
        let frames = try crash("deep", flags: ["-g", "-mbranch-protection=pac-ret"])
        #expect(Array(frames.prefix(4).map(\.symbol)) == ["deep_c", "deep_b", "deep_a", "main"], "\(Self.describe(frames))")
    }
}

/// The unwinder's aarch64 steps on hand-made dumps: nothing runs, so no qemu.
@Suite struct CrashStackDumpTests {
    static func le(_ w: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: w >> (8 * $0)) } }

    /// A stack file of the current layout (aspects_crash.h) for `machine`.
    static func dump(machine: UInt32, pc: UInt64, sp: UInt64, fp: UInt64, lr: UInt64, stack: [UInt64]) -> [UInt8] {
        var words = [UInt64](repeating: 0, count: ASPECTS_CRASH_HEADER_WORDS)
        words[ASPECTS_CRASH_WORD_MACHINE] = UInt64(machine)
        words[ASPECTS_CRASH_WORD_PC] = pc
        words[ASPECTS_CRASH_WORD_SP] = sp
        words[ASPECTS_CRASH_WORD_FP] = fp
        words[ASPECTS_CRASH_WORD_LR] = lr
        return Array(ASPECTS_CRASH_STACK_MAGIC.utf8) + (words.dropFirst() + stack).flatMap(le)
    }

    /// An object with no call frame information (there is no file): only frame records lead on.
    static let maps = "aaaa00000000-aaaa00010000 r-xp 00000000 00:00 0 /nonexistent/prog\n"
    static let base: UInt64 = 0xaaaa_0000_0000

    /// Two frame records, the first return address signed (bits above the 48-bit address):
    /// three frames, at the offsets of the unsigned addresses.
    @Test func frameRecordsAreWalkedAndSignaturesStripped() {
        let sp: UInt64 = 0xffff_f000_0000
        // sp+0: record 1 = [sp+32, signed ra]; sp+32: record 2 = [0, ra]
        let stack: [UInt64] = [sp + 32, 0x0023_0000_0000_0000 | (Self.base + 0x1234), 0, 0, 0, Self.base + 0x2000, 0, 0]
        let d = Self.dump(machine: ASPECTS_ELF_MACHINE_AARCH64, pc: Self.base + 0x100, sp: sp, fp: sp, lr: 0, stack: stack)
        let frames = CrashStack.frames(stack: d, maps: Self.maps)
        #expect(frames.map(\.offset) == [0x100, 0x1234, 0x2000], "\(frames.map(\.description))")
        #expect(frames.map(\.isReturnAddress) == [false, true, true])
    }

    /// A frame record that points at itself or down the stack is not followed (each record
    /// must be above the one before): the walk ends there; one that points past the copied
    /// stack gives its return address, and the walk ends at the end of the copy.
    @Test func aFrameRecordThatDoesNotClimbEndsTheWalk() {
        let sp: UInt64 = 0xffff_f000_0000
        for callerFP in [sp, sp - 16, sp + 4096] {
            let d = Self.dump(machine: ASPECTS_ELF_MACHINE_AARCH64, pc: Self.base + 0x100, sp: sp, fp: sp, lr: 0,
                              stack: [callerFP, Self.base + 0x1234, 0, 0])
            let frames = CrashStack.frames(stack: d, maps: Self.maps)
            #expect(frames.map(\.offset) == (callerFP == sp + 4096 ? [0x100, 0x1234] : [0x100]), "\(callerFP): \(frames.map(\.description))")
        }
    }

    /// Registers at the very top of the address space (a corrupt or hostile file): the walk
    /// and the scan end at the end of the copy instead of wrapping around.
    @Test func aDumpAtTheTopOfTheAddressSpaceEndsTheWalk() {
        let sp: UInt64 = 0xFFFF_FFFF_FFFF_FFE0
        for machine in [ASPECTS_ELF_MACHINE_AARCH64, ASPECTS_ELF_MACHINE_X86_64] {
            let d = Self.dump(machine: machine, pc: Self.base + 0x100, sp: sp, fp: sp + 16, lr: 0,
                              stack: [0, 0, sp + 24, Self.base + 0x1234])
            let frames = CrashStack.frames(stack: d, maps: Self.maps)
            #expect(frames.first?.offset == 0x100 && frames.count <= 2, "\(machine): \(frames.map(\.description))")
        }
    }

    /// Seeded random dumps of both machines — registers and stack words that point into the
    /// copy, into the mapping, signed or anywhere — never trap the reader and give at most
    /// its frame limit, each in the mapping.
    @Test func randomDumpsGiveBoundedFramesAndNeverTrap() {
        var state: UInt64 = 0x5EED
        func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state ^ (state >> 29)
        }
        let sp: UInt64 = 0xffff_f000_0000
        func word() -> UInt64 {
            switch next() % 5 {
            case 0: return sp &+ (next() % 80) * 8 // into the copy
            case 1: return Self.base &+ next() % 0x10000 // into the mapping
            case 2: return (next() & 0x007F_0000_0000_0000) | (Self.base &+ next() % 0x10000) // signed
            case 3: return 0
            default: return next()
            }
        }
        for k in 0..<2000 {
            let machine = k % 2 == 0 ? ASPECTS_ELF_MACHINE_AARCH64 : ASPECTS_ELF_MACHINE_X86_64
            let d = Self.dump(machine: machine, pc: Self.base &+ next() % 0x10000, sp: k % 7 == 0 ? next() : sp, fp: word(), lr: word(),
                              stack: (0..<64).map { _ in word() })
            let frames = CrashStack.frames(stack: d, maps: Self.maps)
            #expect(frames.count >= 1 && frames.count <= CrashStack.maxFrames && frames.allSatisfy { $0.offset < 0x10000 }, "dump \(k)")
        }
    }

    /// A dump of an unknown machine, or of the old layout without one, gives no frames.
    @Test func aDumpOfAnUnknownMachineOrTheOldLayoutGivesNoFrames() {
        let sp: UInt64 = 0xffff_f000_0000
        let unknown = Self.dump(machine: 40, pc: Self.base + 0x100, sp: sp, fp: sp, lr: 0, stack: [0, 0])
        #expect(CrashStack.frames(stack: unknown, maps: Self.maps).isEmpty)
        let old = Array("ASPSTK1\n".utf8) + [Self.base + 0x100, sp, sp, 0, 0].flatMap(Self.le)
        #expect(CrashStack.frames(stack: old, maps: Self.maps).isEmpty)
    }
}
