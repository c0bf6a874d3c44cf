import Foundation
import Testing
import AspectsCore
import AspectsRules

/// The wrapper stubs' gate (gate.c): an armed call below its rule's next possible firing is
/// counted in the stub and goes to the original without entering libffi's closure. Counts
/// stay exact: every firing fires exactly once, however many threads and processes race
/// through the gate at the same call numbers, and a table change applies to the next call.
@Suite struct GateTests {
    static let procs = 4, threads = 8, calls = 5000
    static var total: Int { procs * threads * calls }

    /// Runs gate_race under `rule` (getppid returns 42 when it fires): (fired as the program
    /// saw it, the rule's matched and fired counts in the table).
    func race(_ rule: String) throws -> (seen: Int, matched: UInt64, fired: UInt64) {
        let t = try ScratchTable()
        try t.add(rule)
        let bin = try Fixture.build("gate_race", flags: ["-pthread"])
        let r = try BoundedRun.run(bin, [String(Self.procs), String(Self.threads), String(Self.calls)],
                                   environment: BoundedRun.preload(t.name), timeout: 60)
        #expect(r.status == 0 && !r.timedOut, "\(r)")
        let f = r.stdout.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        try #require(f.count == 2 && f[1] == Self.total, "\(r)")
        let row = try #require(t.table.rules().first)
        return (f[0], row.matched, row.fired)
    }

    static func getppid(_ when: String, scope: String = "process") -> String {
        #"{"symbol":"getppid","position":"instead","action":{"return":42},"scope":"\#(scope)","when":{\#(when)}}"#
    }

    /// nth at the first call, amid the race, at the last call and past it: 32 threads in 4
    /// processes cross the gate at those numbers together.
    @Test(arguments: [1, 80_000, 160_000, 160_001])
    func nthTableWideFiresExactlyOnceAtTheBoundary(nth: Int) throws {
        let r = try race(Self.getppid(#""nth":\#(nth)"#, scope: "table"))
        let expected = nth <= Self.total ? 1 : 0
        #expect(r.seen == expected && r.fired == UInt64(expected), "nth \(nth): \(r)")
        #expect(r.matched == UInt64(Self.total))
    }

    @Test func everyTableWideFiresOnEachMultiple() throws {
        let r = try race(Self.getppid(#""every":7"#, scope: "table"))
        #expect(r.seen == Self.total / 7 && r.fired == UInt64(Self.total / 7), "\(r)")
    }

    @Test func everyPerProcessFiresOnEachProcesssMultiples() throws {
        let perProcess = Self.threads * Self.calls
        let r = try race(Self.getppid(#""every":5"#))
        #expect(r.seen == Self.procs * (perProcess / 5) && r.fired == UInt64(r.seen), "\(r)")
        #expect(r.matched == UInt64(Self.total))
    }

    /// A probability rule fires on its schedule's call numbers, table-wide: as many firings as
    /// FiringSchedule finds in 1...total, whoever makes the calls.
    @Test func aProbabilityRuleFiresExactlyOnItsSchedule() throws {
        let p = 0.01, seed: UInt64 = 5
        let r = try race(Self.getppid(#""probability":\#(p),"seed":\#(seed)"#, scope: "table"))
        let schedule = FiringSchedule(threshold: SplitMix64.threshold(p))
        let key = SplitMix64.ruleKey(id: "r1")
        let expected = (1...UInt64(Self.total)).filter { schedule.fires(seed: seed, ruleKey: key, call: $0) }.count
        #expect(r.seen == expected && r.fired == UInt64(expected), "\(r), expected \(expected)")
    }

    @Test func claimsCloseTheGate() throws {
        let times = try race(Self.getppid(#""every":2,"times":3"#, scope: "table"))
        #expect(times.seen == 3 && times.fired == 3, "\(times)")
        let once = try race(#"{"symbol":"getppid","position":"instead","action":{"return":42},"once":"process","when":{"every":10}}"#)
        #expect(once.seen == Self.procs && once.fired == UInt64(Self.procs), "\(once)")
    }

    /// `first` starts `every` at a call of its own (strace's when=N+STEP): calls 3, 5, 7 of
    /// eight fail, decided by the gate's bound like every other count; without `first` the
    /// multiples of 2; and the rules that cannot go with it are refused.
    @Test func everyFromFirstFiresOnFirstThenEveryStep() throws {
        let bin = try Fixture.build("open_calls")
        for (when, failing) in [(#""every":2,"first":3"#, [3, 5, 7]), (#""every":2"#, [2, 4, 6, 8]), (#""every":3,"first":1"#, [1, 4, 7])] {
            let t = try ScratchTable()
            try t.add(#"{"symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{\#(when)}}"#)
            let r = try Proc.run(bin, ["/etc/hostname", "8"], environment: Proc.preload(table: t.name))
            let failed = r.stdout.split(separator: "\n").enumerated().filter { $0.element.hasSuffix("EACCES") }.map { $0.offset + 1 }
            #expect(failed == failing, "\(when): \(r.stdout)")
        }
        let t = try ScratchTable()
        for bad in [#""first":3"#, #""every":2,"first":3,"after":1"#, #""nth":2,"every":2,"first":3"#] {
            #expect(throws: AspectsError.self) { try t.add(#"{"symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{\#(bad)}}"#) }
        }
        let listed = try Proc.aspectctl(["check", "--inject", "write:error=EIO:when=3+2", "--json"])
        #expect(listed.stdout.contains(#""first""#), "\(listed)")
    }

    /// A gate is made for one table generation: a rule added while calls pass it applies to the
    /// very next call, a removed one to none after `remove` returned, and a new rule counts
    /// from zero.
    @Test func aRuleAddedOrRemovedWhileTheGateIsOpenAppliesToTheNextCall() throws {
        let t = try ScratchTable()
        try t.add(Self.farRule)
        try Self.rulesChangedUnder(try LiveProcess(try Fixture.build("live_loop"), ["/etc/hostname"], table: t.name), table: t)
    }

    /// The gate's rule, far from firing, under which `rulesChangedUnder` runs.
    static let farRule = #"{"id":"far","symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{"nth":1000000000}}"#

    /// live_loop (one open per line it is sent) under `t`, whose gate holds farRule: a rule
    /// added applies to the very next call, a removed one stops there, a new one counts from
    /// zero. Aarch64Tests runs it under qemu.
    static func rulesChangedUnder(_ live: LiveProcess, table t: ScratchTable) throws {
        #expect((1...3).map { _ in live.call() } == ["ok", "ok", "ok"])
        try t.add(#"{"id":"now","symbol":"open","position":"instead","action":{"fail":"ENOENT"}}"#)
        #expect(live.call() == "ENOENT")
        _ = try t.table.remove(ids: ["now"])
        #expect(live.call() == "ok")
        _ = try t.table.remove(ids: ["far"])
        try t.add(#"{"id":"second","symbol":"open","position":"instead","action":{"fail":"ENOENT"},"when":{"every":2}}"#)
        #expect((1...4).map { _ in live.call() } == ["ok", "ENOENT", "ok", "ENOENT"])
        #expect(try live.finish() == 0)
    }

    /// An interposer between aspects and libc whose open64 calls open: the stub cannot tell
    /// that inner open from a call of the program's own, so such a group gets no gate and the
    /// dispatcher counts the chain as one call ("nth": 2 is the program's open, not the inner
    /// one). Without the interposer the gate counts the same.
    @Test func anInterposerBetweenUsAndLibcKeepsAnAliasChainOneCall() throws {
        let shim = try Fixture.library("alias_shim", soname: "aliasshim")
        let bin = try Fixture.build("alias_main")
        for preload in [Paths.library + " " + shim + "/libaliasshim.so", Paths.library] {
            let t = try ScratchTable()
            try t.add(#"{"id":"o","symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{"nth":2}}"#)
            let r = try Proc.run(bin, [], environment: ["LD_PRELOAD": preload, "ASPECTS_TABLE": t.name])
            #expect(r.stdout == "ok fail\n", "LD_PRELOAD=\(preload): \(r)")
        }
    }

    /// A prototype function (GOT rewriting) goes through its own wrapper stub and gate: fx_add
    /// every 3rd call, fx_vsum (variadic: the stub form that keeps %rax) every 2nd.
    @Test func prototypeFunctionsAreCountedByTheirGate() throws {
        let libDir = try Fixture.library("proto_lib", soname: "fx")
        let bin = try Fixture.build("proto_main", flags: ["-fPIE", "-pie", "-L", libDir, "-lfx", "-Wl,-rpath," + libDir, "-ldl"])
        let plain = try Proc.run(bin, ["9"])
        let t = try ScratchTable()
        try t.add(#"{"id":"add","symbol":"fx_add","prototype":"int fx_add(int a, int b)","position":"instead","action":{"return":-7},"when":{"every":3}}"#)
        try t.add(#"{"id":"vsum","symbol":"fx_vsum","prototype":"int fx_vsum(int count, ...)","variadic":["int","int"],"position":"instead","action":{"return":-1},"when":{"every":2}}"#)
        let r = try Proc.run(bin, ["9"], environment: Proc.preload(table: t.name))
        #expect(r.status == 0, "\(r)")
        let adds = r.stdout.split(separator: "\n").filter { $0.hasPrefix("add ") }
        let plainAdds = plain.stdout.split(separator: "\n").filter { $0.hasPrefix("add ") }
        #expect(adds.count == 9 && plainAdds.count == 9)
        for (i, line) in adds.enumerated() {
            #expect((i + 1) % 3 == 0 ? line.hasSuffix(": -7") : line == plainAdds[i], "\(line)")
        }
        let vsums = r.stdout.split(separator: "\n").filter { $0.hasPrefix("vsum ") }
        let plainVsums = plain.stdout.split(separator: "\n").filter { $0.hasPrefix("vsum ") }
        #expect(vsums.count == 9)
        for (i, line) in vsums.enumerated() {
            #expect((i + 1) % 2 == 0 ? line.hasSuffix(": -1") : line == plainVsums[i], "\(line)")
        }
        let rows = t.table.rules()
        let add = try #require(rows.first { $0.id == "add" }), vsum = try #require(rows.first { $0.id == "vsum" })
        #expect(add.matched == 9 && add.fired == 3, "\(add.matched) \(add.fired)")
        #expect(vsum.matched == 9 && vsum.fired == 4, "\(vsum.matched) \(vsum.fired)")
    }

    /// An argument condition is decided in front of the closure: calls it does not hold for are
    /// not counted, calls it holds for are counted by the gate and fire on their numbers.
    @Test func argumentConditionsFilterBeforeTheGateCounts() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"w","symbol":"open","position":"instead","action":{"fail":"EACCES"},"scope":"table","when":{"every":2,"args":[{"arg":1,"mask":"O_WRONLY"}]}}"#)
        let file = t.directory + "/f"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        let bin = try Fixture.build("open_calls")
        // three write-only opens (calls 1-3 of the rule), three read-only ones (not its calls),
        // three write-only ones again (calls 4-6)
        var lines: [String] = []
        for flags in ["1", "0", "1"] {
            let r = try Proc.run(bin, [file, "3", flags], environment: Proc.preload(table: t.name))
            lines += r.stdout.split(separator: "\n").map(String.init)
        }
        #expect(lines == ["open 1: ok", "open 2: -1 EACCES", "open 3: ok", "open 1: ok", "open 2: ok", "open 3: ok",
                          "open 1: -1 EACCES", "open 2: ok", "open 3: -1 EACCES"], "\(lines)")
        let row = try #require(t.table.rules().first)
        #expect(row.matched == 6 && row.fired == 3, "\(row.matched) \(row.fired)")
    }

    /// The gate's whole point, counted by callgrind (instructions, not time): getppid armed with
    /// a rule that cannot fire for a billion calls costs at most 16 instructions over the
    /// direct call (13 in the stub), not the ~150 of the closure and the dispatcher.
    @Test(.tags(.realPrograms), .requires(FileManager.default.isExecutableFile(atPath: "/usr/bin/valgrind"), "needs valgrind"))
    func anArmedCallBelowItsGateNeverEntersTheClosure() throws {
        let t = try ScratchTable()
        try t.add(Self.getppid(#""nth":1000000000"#))
        let bin = try Fixture.build("gate_race", flags: ["-pthread"])
        func instructions(_ calls: Int, _ env: [String: String?]) throws -> Int {
            var e = env
            e["GATE"] = "1"
            let r = try Proc.run("/usr/bin/valgrind", ["--tool=callgrind", "--callgrind-out-file=/dev/null", bin, "1", "1", String(calls)],
                                 environment: e)
            let line = try #require(r.stderr.split(separator: "\n").first { $0.contains("Collected :") }, "\(r)")
            return try #require(Int(line.split(separator: " ").last ?? ""))
        }
        let direct = try (instructions(40_000, [:]) - instructions(10_000, [:])) / 30_000
        let armed = try (instructions(40_000, Proc.preload(table: t.name)) - instructions(10_000, Proc.preload(table: t.name))) / 30_000
        #expect(armed <= direct + 16, "direct \(direct), armed \(armed) instructions per call")
    }
}
