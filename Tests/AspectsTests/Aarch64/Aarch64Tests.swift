import CAspectsABI
import Foundation
import Testing
import AspectsCore
import AspectsExplore
import AspectsRules

/// The preload on 64-bit ARM (docs/aarch64.md): libaspects.so cross-built by
/// scripts/build-aarch64.sh and C fixtures cross-built the same way run under qemu-user, with a
/// table written on this machine (x86-64) by AspectConfig and aspectctl — the same table
/// obeyed by both architectures. Each run is made twice where the stub's count matters: on
/// qemu's `max` CPU (LSE atomics: `ldaddal`) and on a Cortex-A57 (ARMv8.0: the
/// exclusive-load/store loop), the two ways the stub chooses between at attach.
///
/// What qemu cannot show: timing (its instructions are not the hardware's, so no cost is
/// measured here: BENCHMARKS.md reasons from the stub's instructions), and true parallelism
/// between a load and a store of two cores (qemu-user runs threads in parallel but implements
/// the exclusive pair with a compare-and-swap); a signal is delivered between translated
/// blocks, not between any two instructions.
///
/// Enabled where qemu-aarch64-static, the cross toolchain and the arm64 C library and libffi
/// (multiarch: /lib/ld-linux-aarch64.so.1 runs the fixtures without -L) are installed; .ci/run
/// installs them.
@Suite(.requires(Aarch64.available, "needs qemu-user-static, gcc-aarch64-linux-gnu and libffi-dev:arm64 (.ci/run installs them)"), .tags(.qemu))
struct Aarch64Tests {
    /// The two CPUs: with LSE atomics and without.
    static let cpus = ["max", "cortex-a57"]

    /// Runs an aarch64 fixture under qemu with the aarch64 preload and `table`.
    func run(_ bin: String, _ args: [String] = [], table: String?, cpu: String = "max") throws -> BoundedOutcome {
        let r = try BoundedRun.run(Aarch64.qemu, try Aarch64.qemuArguments(cpu: cpu, preload: table != nil) + [bin] + args,
                                   environment: ["ASPECTS_TABLE": table], timeout: 120)
        #expect(!r.timedOut, "\(r)")
        return r
    }

    static func getppid(_ when: String, scope: String = "table") -> String {
        #"{"symbol":"getppid","position":"instead","action":{"return":42},"scope":"\#(scope)","when":{\#(when)}}"#
    }

    static let procs = 2, threads = 4, calls = 2000
    static var total: Int { procs * threads * calls }

    /// gate_race (getppid returns 42 when the rule fires) under `rule`: (firings the program
    /// saw, the rule's matched and fired counts in the table).
    func race(_ rule: String, cpu: String) throws -> (seen: Int, matched: UInt64, fired: UInt64) {
        let t = try ScratchTable()
        try t.add(rule)
        let bin = try Fixture.buildAarch64("gate_race")
        let r = try run(bin, [String(Self.procs), String(Self.threads), String(Self.calls)], table: t.name, cpu: cpu)
        #expect(r.status == 0, "\(r)")
        let f = r.stdout.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        try #require(f.count == 2 && f[1] == Self.total, "\(r)")
        let row = try #require(t.table.rules().first)
        return (f[0], row.matched, row.fired)
    }

    /// The library is an aarch64 object that needs only the C library, and a table written by
    /// x86-64 aspectctl (the binary, not the library in this process) is obeyed by it.
    @Test func aTableWrittenByX86AspectctlIsObeyedByAnAarch64Process() throws {
        let elf = try Proc.run("/usr/bin/env", ["readelf", "-h", "-d", try Aarch64.library()])
        #expect(elf.stdout.contains("AArch64"), "\(elf)")
        let needed = elf.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(needed.count == 1 && needed[0].contains("[libc.so.6]"), "\(needed)")
        // the same exports as this machine's build: every catalog name wrapped, the same API
        // (global symbols; the linkers differ in the local ones they keep in the dynamic
        // table and in defining _edata, _end and __bss_start: gold here, GNU ld there)
        func exports(_ nm: String, _ lib: String) throws -> [String] {
            try Proc.run("/usr/bin/env", [nm, "-D", "--defined-only", "--extern-only", lib]).stdout.split(separator: "\n")
                .compactMap { $0.split(separator: " ").last.map(String.init) }
                .filter { !["_edata", "_end", "__bss_start"].contains($0) }.sorted()
        }
        let x86 = try exports("nm", Paths.library), arm = try exports("aarch64-linux-gnu-nm", try Aarch64.library())
        #expect(arm == x86 && x86.count > 200, "only x86-64: \(Set(x86).subtracting(arm).sorted()), only aarch64: \(Set(arm).subtracting(x86).sorted())")
        let t = try ScratchTable()
        let added = try Proc.aspectctl(["add", "--table", t.name, "--rule", Self.getppid(#""nth":3"#, scope: "process")])
        try #require(added.status == 0, "\(added)")
        let bin = try Fixture.buildAarch64("gate_race")
        let r = try run(bin, ["1", "1", "5"], table: t.name)
        #expect(r.stdout.contains("fired 1 calls 5"), "\(r)")
        #expect(t.table.rules().first?.fired == 1)
        let plain = try run(bin, ["1", "1", "5"], table: nil)
        #expect(plain.stdout.contains("fired 0 calls 5"), "\(plain)")
    }

    /// nth, every and probability fire on exactly their call numbers while 8 threads in 2
    /// processes race through the stub's gate, with either way of counting.
    @Test(arguments: cpus)
    func countsAreExactAcrossThreadsAndProcesses(cpu: String) throws {
        for nth in [1, 7777, Self.total, Self.total + 1] {
            let r = try race(Self.getppid(#""nth":\#(nth)"#), cpu: cpu)
            let expected = nth <= Self.total ? 1 : 0
            #expect(r.seen == expected && r.fired == UInt64(expected), "\(cpu) nth \(nth): \(r)")
            #expect(r.matched == UInt64(Self.total), "\(cpu) nth \(nth): \(r)")
        }
        let every = try race(Self.getppid(#""every":7"#), cpu: cpu)
        #expect(every.seen == Self.total / 7 && every.fired == UInt64(Self.total / 7), "\(cpu): \(every)")
        let perProcess = try race(Self.getppid(#""every":5"#, scope: "process"), cpu: cpu)
        #expect(perProcess.seen == Self.procs * (Self.threads * Self.calls / 5), "\(cpu): \(perProcess)")
        let p = 0.01, seed: UInt64 = 5
        let schedule = FiringSchedule(threshold: SplitMix64.threshold(p))
        let key = SplitMix64.ruleKey(id: "r1")
        let expected = (1...UInt64(Self.total)).filter { schedule.fires(seed: seed, ruleKey: key, call: $0) }.count
        let prob = try race(Self.getppid(#""probability":\#(p),"seed":\#(seed)"#), cpu: cpu)
        #expect(prob.seen == expected && prob.fired == UInt64(expected), "\(cpu): \(prob), expected \(expected)")
    }

    /// Thread scope counts each thread's calls apart (no gate: the dispatcher decides).
    @Test func threadScopeCountsEachThreadsCalls() throws {
        let r = try race(Self.getppid(#""every":5"#, scope: "thread"), cpu: "max")
        #expect(r.seen == Self.total / 5 && r.fired == UInt64(Self.total / 5), "\(r)")
    }

    /// instead, before and after on write: a failure replaces the fixture's 1-byte writes (and
    /// only those: its output's write is another size), a `before` argument rewrite makes a
    /// write short, an `after` log leaves result and errno exactly as the original left them.
    @Test func insteadBeforeAndAfterOnWrite() throws {
        let t = try ScratchTable()
        try t.add(#"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"args":[{"arg":2,"eq":1}]}}"#)
        let family = try Fixture.buildAarch64("family_writes")
        let r = try run(family, [t.directory + "/out"], table: t.name)
        #expect(r.stdout == "write: Input/output error\npwrite: 1\nwritev: 1\nwrite: Input/output error\n", "\(r)")
        #expect(t.table.rules().first?.fired == 2)

        let bin = try Fixture.buildAarch64("errno_exact")
        let plain = try run(bin, table: nil)
        #expect(plain.stdout.contains("write-ok: 5 errno=12345"), "\(plain)")
        let cases: [(String, String)] = [
            (#"{"symbol":"write","position":"before","action":{"args":[{"arg":2,"value":1}]},"when":{"args":[{"arg":2,"eq":5}]}}"#, "write-ok: 1 errno=12345"),
            (#"{"symbol":"write","position":"after","action":{"log":true}}"#, "write-ok: 5 errno=12345"),
        ]
        for (rule, line) in cases {
            let t = try ScratchTable()
            try t.add(rule)
            let r = try run(bin, table: t.name)
            #expect(r.status == 0 && r.stdout.contains(line), "\(rule): \(r)")
            #expect(t.table.rules().first?.fired ?? 0 >= 1, "\(rule)")
            if rule.contains("after") {
                #expect(r.stdout == plain.stdout, "\(r)")
                #expect(t.table.events(from: 0).events.contains { $0.rule == "r1" && $0.returnValue == 5 })
            }
        }
    }

    /// instead, before and after on getppid (no arguments: the gate's and the closure's
    /// simplest call): a forged result, a `before` log and an `after` forged result at nth.
    @Test func insteadBeforeAndAfterOnGetppid() throws {
        let bin = try Fixture.buildAarch64("gate_race")
        for (rule, fired) in [(#"{"symbol":"getppid","position":"instead","action":{"return":42},"when":{"every":2}}"#, 5),
                              (#"{"symbol":"getppid","position":"after","action":{"return":42},"when":{"nth":4}}"#, 1),
                              (#"{"symbol":"getppid","position":"before","action":{"log":true},"when":{"every":5}}"#, 0)] {
            let t = try ScratchTable()
            try t.add(rule)
            let r = try run(bin, ["1", "1", "10"], table: t.name)
            #expect(r.stdout.contains("fired \(fired) calls 10"), "\(rule): \(r)")
            let row = t.table.rules().first
            #expect(row?.matched == 10 && row?.fired == UInt64(fired == 0 ? 2 : fired), "\(rule)")
        }
    }

    /// A rule with an argument condition gets a filter in front of the closure
    /// (asp_filter_common): calls it does not hold for run uncounted, the others are counted
    /// and the second one fails — on both CPUs.
    @Test(arguments: cpus)
    func aFilterDecidesOnTheArgumentRegisters(cpu: String) throws {
        let bin = try Fixture.buildAarch64("open_calls")
        for (glob, failing) in [("/etc/host*", [2]), ("/nowhere/*", [])] {
            let t = try ScratchTable()
            try t.add(#"{"symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{"nth":2,"args":[{"arg":0,"glob":"\#(glob)"}]}}"#)
            let r = try run(bin, ["/etc/hostname", "4"], table: t.name, cpu: cpu)
            let failed = r.stdout.split(separator: "\n").enumerated().filter { $0.element.hasSuffix("EACCES") }.map { $0.offset + 1 }
            #expect(failed == failing, "\(cpu) \(glob): \(r)")
            #expect(t.table.rules().first?.matched == UInt64(failing.isEmpty ? 0 : 4), "\(cpu) \(glob)")
        }
    }

    /// A gated rule: armed but below its firing (nth 3 of every:…), the stub counts and passes
    /// calls 1 and 2, and the third enters the closure and fires.
    @Test(arguments: cpus)
    func aGatedRulePassesThenFiresAtItsNumber(cpu: String) throws {
        let bin = try Fixture.buildAarch64("open_calls")
        let t = try ScratchTable()
        try t.add(#"{"symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{"every":3}}"#)
        let r = try run(bin, ["/etc/hostname", "7"], table: t.name, cpu: cpu)
        let failed = r.stdout.split(separator: "\n").enumerated().filter { $0.element.hasSuffix("EACCES") }.map { $0.offset + 1 }
        #expect(failed == [3, 6], "\(cpu): \(r)")
        #expect(t.table.rules().first?.matched == 7)
    }

    /// A signal handler's writes, made inside advised writes, are calls of their own: counted
    /// and advised (every: 3 fails exactly a third of them all). Under qemu the timer's signals
    /// arrive between translated blocks, so fewer handler calls than on hardware.
    @Test func aSignalHandlersCallsAreCountedAndAdvised() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"third","symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"every":3,"args":[{"arg":0,"eq":100}]}}"#)
        let bin = try Fixture.buildAarch64("handler_writes")
        let r = try run(bin, ["50000", "2000"], table: t.name)
        #expect(r.status == 0, "\(r)")
        let numbers = r.stdout.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        try #require(numbers.count == 3, "\(r.stdout)")
        let (main, handler, failed) = (numbers[0], numbers[1], numbers[2])
        #expect(handler > 0, "the timer must have interrupted the loop: \(r.stdout)")
        #expect(failed == (main + handler) / 3, "\(r.stdout)")
        #expect(t.table.rules().first?.matched == UInt64(main + handler))
    }

    /// Prototype rules through GOT rewriting (R_AARCH64_JUMP_SLOT / GLOB_DAT): integers, a
    /// double result, a variadic function, a struct of two doubles (in v0/v1), a struct of
    /// four longs (passed by reference under AAPCS64) and one returned (into memory at x8),
    /// in PIE, non-PIE and -fno-plt builds.
    @Test(.tags(.realPrograms)) func prototypeRulesThroughTheGOT() throws {
        let libDir = try Fixture.libraryAarch64("proto_lib", soname: "fx")
        for flags in [["-fPIE", "-pie"], ["-no-pie", "-fno-pie"], ["-fPIE", "-pie", "-fno-plt", "-Wl,-z,now"]] {
            let bin = try Fixture.buildAarch64("proto_main", flags: flags + ["-L", libDir, "-lfx", "-Wl,-rpath," + libDir])
            let t = try ScratchTable()
            try t.add(#"""
            {"rules": [
             {"id": "add", "symbol": "fx_add", "prototype": "int fx_add(int a, int b)", "position": "instead", "action": {"return": -7}, "when": {"nth": 2}},
             {"id": "sum", "symbol": "fx_sum6", "prototype": "long fx_sum6(long a, long b, long c, long d, long e, long f)", "position": "after", "action": {"log": true}, "when": {"args": [{"arg": 5, "eq": 2}]}},
             {"id": "scale", "symbol": "fx_scale", "prototype": "double fx_scale(double x, double k)", "position": "after", "action": {"return": 0.25}, "when": {"nth": 3}},
             {"id": "vsum", "symbol": "fx_vsum", "prototype": "int fx_vsum(int count, ...)", "variadic": ["int", "int"], "position": "instead", "action": {"return": 99}, "when": {"nth": 2}},
             {"id": "swap", "symbol": "fx_swap", "prototype": "struct pair fx_swap(struct pair p)", "types": {"struct pair": ["double", "double"]}, "position": "instead", "action": {"return": [42.5, -1]}, "when": {"nth": 2}},
             {"id": "big", "symbol": "fx_bigsum", "prototype": "long fx_bigsum(struct big b)", "types": {"struct big": ["long", "long", "long", "long"]}, "position": "instead", "action": {"return": 7}, "when": {"nth": 2}},
             {"id": "make", "symbol": "fx_bigmake", "prototype": "struct big fx_bigmake(long k)", "types": {"struct big": ["long", "long", "long", "long"]}, "position": "instead", "action": {"return": [9, 8, 7, 6]}, "when": {"nth": 3}}
            ]}
            """#)
            let plain = try run(bin, ["3"], table: nil)
            #expect(plain.stdout.contains("big 3: 1113"), "\(flags): \(plain)")
            let r = try run(bin, ["3"], table: t.name)
            var expected = plain.stdout
            for (from, to) in [("add 2: 4", "add 2: -7"), ("vsum 2: 12", "vsum 2: 99"), ("swap 2: 0.5 2.0", "swap 2: 42.5 -1.0"),
                               ("big 2: 1112", "big 2: 7"), ("scale 3: 4.50", "scale 3: 0.25"), ("bigmake 3: 3 6 9 12", "bigmake 3: 9 8 7 6")] {
                expected = expected.replacingOccurrences(of: from, with: to)
            }
            #expect(r.stdout == expected, "\(flags): \(r)")
            #expect(t.table.rules().map(\.fired) == [1, 1, 1, 1, 1, 1, 1], "\(flags)")
            let sum = t.table.events(from: 0).events.first { $0.rule == "sum" }
            #expect(sum?.arguments == ["1", "2", "3", "4", "5", "2"] && sum?.returnValue == 17, "\(flags)")
        }
    }

    /// Advice as code: a rule's `call` runs a C function of an aarch64 object with the call's
    /// invocation record (aspects_advice.h), at each position, and the record describes the
    /// call as on x86-64 (AdviceCodeTests).
    @Test func adviceAsCodeRunsWithTheSameRecord() throws {
        let probe = try Fixture.libraryAarch64("advice_probe", soname: "advice_probe", flags: ["-I", Paths.root + "/Sources/CPreload/include"])
            + "/libadvice_probe.so"
        let host = try Fixture.buildAarch64("advice_host")
        func rule(_ position: String, _ function: String) -> String {
            #"{"id":"c","symbol":"write","position":"\#(position)","action":{"call":"\#(probe):\#(function)"}}"#
        }
        for position in ["before", "instead", "after"] {
            let t = try ScratchTable()
            try t.add(rule(position, "probe_contract"))
            let r = try run(host, ["write"], table: t.name)
            #expect(r.stderr.contains("probe: contract ok") && r.stdout == "hello world\n" && r.stderr.contains("write: 12"), "\(position): \(r)")
            #expect(t.table.rules().first?.fired == 1, "\(position)")
        }
        let t = try ScratchTable()
        try t.add(rule("after", "probe_describe"))
        let r = try run(host, ["write"], table: t.name)
        #expect(r.stderr.contains("probe: write rule=c call=1 position=2 version=0x10000 args=3 i1 p i12 return=12 errno=0 caller=advice_host-"), "\(r)")
    }

    /// A data fault: `corrupt` flips the same bits of an fread's items as on x86-64 (the seeded
    /// generator is the table's, not the architecture's).
    @Test func aCorruptFreadFlipsTheSameBits() throws {
        let t = try ScratchTable()
        try FileManager.default.createDirectory(atPath: t.directory + "/d", withIntermediateDirectories: true)
        try Data(count: 1000).write(to: URL(fileURLWithPath: t.directory + "/d/zeros"))
        try t.add(#"{"id":"items","symbol":"fread","position":"after","action":{"corrupt":{"arg":0,"bits":5}},"when":{"seed":21}}"#)
        let host = try Fixture.buildAarch64("advice_host")
        let qemu = ([Aarch64.qemu] + (try Aarch64.qemuArguments(cpu: "max", preload: true)) + [host, "fread", t.directory + "/d/zeros"]).joined(separator: " ")
        let r = try BoundedRun.run("/bin/sh", ["-c", "exec \(qemu) > \(t.directory)/d/out"], environment: ["ASPECTS_TABLE": t.name], timeout: 120)
        #expect(r.stderr.contains("fread: 250"), "\(r)")
        let out = [UInt8](try Data(contentsOf: URL(fileURLWithPath: t.directory + "/d/out")))
        #expect(out == SplitMix64.corrupted([UInt8](repeating: 0, count: 1000), seed: 21, id: "items", call: 1, bits: 5))
    }

    /// The crash recorder (crash.c) reads aarch64's registers: a SIGSEGV is recorded in the
    /// attachment record, the process dies as it would have, and the stack file's header
    /// (aspects_crash.h) names the machine (EM_AARCH64) and carries the interrupted pc, sp,
    /// frame pointer (x29) and link register (x30). (Aarch64CrashStackTests unwinds it.)
    @Test func aCrashIsRecordedWithAarch64sRegisters() throws {
        let bin = try Fixture.buildAarch64("crash_tree")
        let plain = try run(bin, ["segv"], table: nil)
        let t = try ScratchTable()
        let dir = t.directory + "/crash"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let r = try BoundedRun.run(Aarch64.qemu, try Aarch64.qemuArguments(cpu: "max", preload: true) + [bin, "segv"],
                                   environment: ["ASPECTS_TABLE": t.name, "ASPECTS_RECORD_CRASH": "1", "ASPECTS_CRASH_DIR": dir], timeout: 120)
        #expect(r.status == plain.status && r.status == 128 + 11, "\(r)")
        let attached = t.table.attachments()
        #expect(attached.count == 1 && attached.first?.crashSignal == 11, "\(attached)")
        let pid = try #require(attached.first?.pid)
        let stack = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir + "/crash-\(pid).stack")))
        let dump = try #require(CrashStack.Dump(stack), "\(stack.count) bytes")
        #expect(dump.architecture.machine == ASPECTS_ELF_MACHINE_AARCH64)
        let (pc, sp, fp, lr) = (dump.pc, dump.sp, dump.fp, dump.lr)
        #expect(pc != 0 && sp != 0 && sp % 16 == 0 && fp >= sp && lr != 0, "pc \(pc) sp \(sp) fp \(fp) lr \(lr)")
        #expect(FileManager.default.fileExists(atPath: dir + "/crash-\(pid).maps"))
    }

    /// A gate is made for one table generation (the stub reads it with load-acquire): a rule
    /// added while calls pass the gate applies to the very next call, a removed one to none
    /// after `remove` returned, and a new rule counts from zero (GateTests on x86-64). qemu
    /// runs with the preload set for the guest only (-E); the x86-64 one LiveProcess puts in
    /// qemu's own environment is not loaded by the static qemu, and -E replaces it for the guest.
    @Test(arguments: cpus)
    func aRuleAddedOrRemovedWhileTheGateIsOpenAppliesToTheNextCall(cpu: String) throws {
        let t = try ScratchTable()
        try t.add(GateTests.farRule)
        let bin = try Fixture.buildAarch64("live_loop")
        let live = try LiveProcess(Aarch64.qemu, try Aarch64.qemuArguments(cpu: cpu, preload: true) + [bin, "/etc/hostname"], table: t.name)
        try GateTests.rulesChangedUnder(live, table: t)
    }

    /// Preloaded twice from two paths, the second copy recognizes the first by its stub's first
    /// instructions (adrp, ldr, ldrb on x16/x17: preload.c) and stays a pass-through, so a call
    /// is counted once (RuleLanguageTests does the same on x86-64).
    @Test func aSecondCopyOfTheLibraryDoesNotAdviseTwice() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"n","symbol":"open","position":"instead","action":{"fail":"EPERM"},"when":{"nth":2,"args":[{"arg":0,"glob":"*hostname"}]}}"#)
        let copy = t.directory + "/libaspects-copy.so"
        try FileManager.default.copyItem(atPath: try Aarch64.library(), toPath: copy)
        let bin = try Fixture.buildAarch64("open_calls")
        let r = try BoundedRun.run(Aarch64.qemu, ["-E", "LD_PRELOAD=\(try Aarch64.library()) \(copy)", bin, "/etc/hostname", "3"],
                                   environment: ["ASPECTS_TABLE": t.name], timeout: 120)
        #expect(r.stdout == "open 1: ok\nopen 2: -1 EPERM\nopen 3: ok\n", "\(r)")
        #expect(t.table.rules()[0].matched == 3)
    }

    /// The decision differential (DecisionDifferentialTests) with decide_driver cross-built for
    /// aarch64: its seeded cases decide as the model on one thread, and count alike on four
    /// with either way of counting.
    @Test func theDecisionDifferentialCasesDecideAsTheModel() throws {
        let bin = try Fixture.buildAarch64("decide_driver")
        func driver(_ cpu: String) throws -> DecideDriver {
            DecideDriver(path: bin, launcher: [Aarch64.qemu] + (try Aarch64.qemuArguments(cpu: cpu, preload: true)))
        }
        let single = DecisionDifferentialTests.seeds.map { DecisionCase.generate(seed: $0) }
        let threaded = DecisionDifferentialTests.threadedSeeds.map { DecisionCase.generate(seed: $0).threaded(4) }
        for (cases, cpu) in [(single, "max"), (threaded, "max"), (threaded, "cortex-a57")] {
            let mismatches = try DecisionDifferentialTests.disagreements(cases, driver: try driver(cpu)).map(\.report)
            #expect(mismatches.isEmpty, "\(cpu): \(mismatches.count) of \(cases.count) case(s); the first:\n\(mismatches.prefix(3).joined(separator: "\n\n"))")
        }
    }

    /// The generated catalog smoke test (CatalogCallsTests) on aarch64: one harmless call of
    /// each function gives the same output without the preload, with it un-armed, and with
    /// every group armed by a rule that never fires (forwarded); and each function, failed
    /// by a rule, fails the documented way.
    @Test func everyCatalogFunctionIsWrappedForwardedAndFailed() throws {
        let catalog = Catalog.builtIn
        let bin = try Fixture.buildAarch64("generated/catalog_calls")
        func calls(_ args: [String] = [], table: String?, preload: Bool = true) throws -> Outcome {
            let dir = NSTemporaryDirectory() + "aspects-a64-calls-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { TableSegments.removeScratch(dir) }
            // timeout(1): a run that hangs fails the test instead of holding the suite
            return try Proc.run("/usr/bin/timeout", ["120", Aarch64.qemu] + (try Aarch64.qemuArguments(cpu: "max", preload: preload)) + [bin] + args,
                                environment: ["ASPECTS_TABLE": table], directory: dir)
        }
        let plain = try calls(table: nil, preload: false)
        let tested = catalog.groups.filter { catalog.primary(of: $0).testExpression != nil }
        #expect(plain.status == 0 && plain.stdout.split(separator: "\n").count == tested.count, "\(plain)")
        #expect(try calls(table: nil).stdout == plain.stdout)
        let t = try ScratchTable(rules: 512)
        let rules = catalog.groups.filter { !$0.isNoReturn }.map { g in
            #"{"symbol":"\#(catalog.primary(of: g).name)","position":"before","action":{"log":true},"when":{"nth":1000000000}}"#
        }
        try t.add("[" + rules.joined(separator: ",") + "]")
        let armed = try calls(table: t.name)
        #expect(armed.stdout == plain.stdout && armed.status == plain.status, "\(armed)")
        #expect(t.table.rules().filter { $0.matched > 0 }.count > 10)
        var failedRight = 0, failing = 0
        for g in catalog.groups where g.failure != .none {
            let f = catalog.primary(of: g)
            guard f.testExpression != nil else { continue }
            let t = try ScratchTable()
            try t.add(#"{"symbol":"\#(f.name)","position":"instead","action":{"fail":true},"when":{"caller":"catalog_calls-*"}}"#)
            let r = try calls([f.name], table: t.name)
            failing += 1
            let name = g.defaultErrno!
            let code: Int32 = g.failure.usesEAI ? ErrorNames.eai(name)! : g.failure.usesHErrno ? ErrorNames.hErrno(name)! : ErrorNames.errno(name)!
            let errno = g.failure.setsErrno ? code : 0
            let expected = "\(f.name) ret=\(g.failure.returnValue(for: code)!) errno=\(errno)\n"
            #expect(r.stdout == expected, "\(f.name) (\(g.failure.rawValue) \(name)): \(r)")
            if r.stdout == expected { failedRight += 1 }
        }
        print("Aarch64Tests: \(tested.count) catalog functions called; \(failedRight) of \(failing) failed the documented way")
    }
}

/// The aarch64 tools and the cross-built preload, built once per test run.
enum Aarch64 {
    static let qemu = "/usr/bin/qemu-aarch64-static"

    static let available: Bool = {
        let fm = FileManager.default
        let tools = fm.isExecutableFile(atPath: qemu) && fm.isExecutableFile(atPath: "/usr/bin/aarch64-linux-gnu-ld")
        let arm64 = fm.fileExists(atPath: "/usr/include/aarch64-linux-gnu/ffi.h") && fm.fileExists(atPath: "/lib/ld-linux-aarch64.so.1")
            && fm.fileExists(atPath: "/usr/lib/aarch64-linux-gnu/libffi.so.8")
        return tools && arm64
    }()

    /// .build/aarch64/libaspects.so, from the sources as they are now (built once; a failed
    /// build fails every test that needs it, with the compiler's words).
    static func library() throws -> String { try built.get() }
    private static let built: Result<String, Fixture.FixtureError> = {
        let r = try? Proc.run(Paths.root + "/scripts/build-aarch64.sh")
        guard let r, r.status == 0 else {
            return .failure(Fixture.FixtureError(message: "scripts/build-aarch64.sh failed: \(r.map(\.description) ?? "not run")"))
        }
        return .success(Paths.root + "/.build/aarch64/libaspects.so")
    }()

    /// qemu's options: the CPU, and the preload set in the guest's environment only (qemu
    /// itself is a static x86-64 program, but a host program in between would try to load it).
    static func qemuArguments(cpu: String, preload: Bool) throws -> [String] {
        ["-cpu", cpu] + (preload ? ["-E", "LD_PRELOAD=" + (try library())] : [])
    }
}
