import Foundation
import Testing
import AspectsCore
import AspectsPreflight
import AspectsRules

/// The rule features Aarch64Tests does not cover yet, under qemu with the aarch64 preload and a
/// table written on this machine: counters shared by a process tree (`scope` and `once`
/// `hierarchy`), automatic removal, the `short` data fault, and prototype rules added while the
/// program runs (the --live-prototypes watcher, a thread of the preload's own), and explore of
/// an aarch64 program end to end. Each outcome is the one x86-64 gives: where the two can be
/// compared run for run, they are.
@Suite(.requires(Aarch64.available, "needs qemu-user-static, gcc-aarch64-linux-gnu and libffi-dev:arm64 (.ci/run installs them)"), .tags(.qemu))
struct Aarch64RuleFeaturesTests {
    let arm = Aarch64Tests()

    static func getppid(_ extra: String) -> String {
        #"{"symbol":"getppid","position":"instead","action":{"return":42},\#(extra)}"#
    }

    /// gate_race forks its processes from a parent that makes no getppid call: a `hierarchy`
    /// counter is the whole tree's (every 5th of all the calls fires), `once: hierarchy` fires
    /// for the tree's first call only, `once: process` for each process's first.
    @Test(arguments: Aarch64Tests.cpus)
    func aProcessTreeSharesItsCounter(cpu: String) throws {
        let tree = try arm.race(Self.getppid(#""scope":"hierarchy","when":{"every":5}"#), cpu: cpu)
        #expect(tree.seen == Aarch64Tests.total / 5 && tree.fired == UInt64(Aarch64Tests.total / 5), "\(cpu): \(tree)")
        #expect(tree.matched == UInt64(Aarch64Tests.total), "\(cpu): \(tree)")
        let onceTree = try arm.race(Self.getppid(#""once":"hierarchy""#), cpu: cpu)
        #expect(onceTree.seen == 1 && onceTree.fired == 1, "\(cpu): \(onceTree)")
        let onceEach = try arm.race(Self.getppid(#""once":"process""#), cpu: cpu)
        #expect(onceEach.seen == Aarch64Tests.procs && onceEach.fired == UInt64(Aarch64Tests.procs), "\(cpu): \(onceEach)")
    }

    /// autoRemove: the rule fires at its number once in the whole run (8 threads of 2
    /// processes racing to it) and is then removed from the table by the process that fired it.
    @Test func anAutoRemovedRuleFiresOnceAndLeavesTheTable() throws {
        let t = try ScratchTable()
        try t.add(Self.getppid(#""id":"once","autoRemove":true,"when":{"nth":500}"#))
        let bin = try Fixture.buildAarch64("gate_race")
        let r = try arm.run(bin, [String(Aarch64Tests.procs), String(Aarch64Tests.threads), String(Aarch64Tests.calls)], table: t.name)
        #expect(r.status == 0 && r.stdout.contains("fired 1 calls \(Aarch64Tests.total)"), "\(r)")
        #expect(t.table.rules().isEmpty, "\(t.table.rules())")
        let removed = try #require(t.table.rules(includeRemoved: true).first { $0.id == "once" })
        #expect(removed.fired == 1 && removed.removedNanoseconds != nil && removed.removedByPID != nil, "\(removed)")
    }

    /// `short`: every write of a correct caller's loop is given a seeded part of what is left
    /// (advice_host writes 12 bytes and reports each write's result). The aarch64 process cuts
    /// exactly where the x86-64 one does, and the loop still delivers every byte.
    @Test func aShortWriteCutsWhereX86Cuts() throws {
        let rule = #"{"id":"cut","symbol":"write","position":"before","action":{"short":true},"when":{"seed":99,"args":[{"arg":0,"eq":1}]}}"#
        let t = try ScratchTable()
        try t.add(rule)
        let r = try arm.run(try Fixture.buildAarch64("advice_host"), ["write"], table: t.name)
        #expect(r.status == 0 && r.stdout == "hello world\n", "\(r)")
        let x86 = try ScratchTable()
        try x86.add(rule)
        let native = try Proc.run(try Fixture.build("advice_host"), ["write"], environment: ["LD_PRELOAD": Paths.library, "ASPECTS_TABLE": x86.name])
        let writes = r.stderr.split(separator: "\n").filter { $0.hasPrefix("write: ") }
        #expect(writes.count >= 2, "no write was cut: \(r.stderr)")
        #expect(r.stderr == native.stderr, "aarch64:\n\(r.stderr)\nx86-64:\n\(native.stderr)")
        let first = try #require(writes.first.flatMap { UInt64($0.dropFirst(7)) })
        #expect(first == SplitMix64.shortCount(seed: 99, id: "cut", call: 1, count: 12), "\(writes)")
    }

    /// --live-prototypes under qemu: the preload's watcher thread (a futex wait on the shared
    /// table) applies a prototype rule to a loop that makes no libc call (LivePrototypeTests'
    /// scenario, the same function, its record polled under qemu), in the process and in a
    /// fork child.
    @Test func theWatcherAppliesAPrototypeRuleAddedWhileTheLoopRuns() throws {
        try LivePrototypeTests.addedWhileTheLoopRuns(try LivePrototypeTests.Setup(createOptions: ["--live-prototypes"], aarch64: true))
    }

    @Test func aForkChildsWatcherAppliesItToo() throws {
        try LivePrototypeTests.forkChildWatches(try LivePrototypeTests.Setup(createOptions: ["--live-prototypes"], aarch64: true))
    }

    /// explore of an aarch64 program, from this machine: `--preload` names the aarch64 library
    /// and the command is qemu (a static program: the library reaches only the guest it runs).
    /// The two bugs of explore_bugs (ExploreBugsTests.twoCrashSitesAreTwoBugs on x86-64) are
    /// found, told apart by their stacks — unwound from aarch64 dumps by this x86-64 aspectctl
    /// and named with file and line — and each reproducer reproduces.
    @Test func exploreFindsTheTwoBugsOfAnAarch64ProgramWithTheirStacks() throws {
        let bin = try Fixture.buildAarch64("explore_bugs", flags: ["-g", "-O0"])
        let out = NSTemporaryDirectory() + "aspects-arm-explore-\(UUID().uuidString)"
        defer { for p in [out, out + ".json"] { TableSegments.removeScratch(p) } }
        let r = try Proc.aspectctl(["explore", "--out", out, "--json", out + ".json", "--preload", try Aarch64.library(),
                                    "--function", "malloc", "--strategy", "sites", "--", Aarch64.qemu, bin, "two"])
        #expect(r.status == 1, "\(r)")
        let root = try JSONParser.parse(try String(contentsOfFile: out + ".json", encoding: .utf8))
        let bugs = ReportJSON.array(root, "bugs")
        let signatures = bugs.compactMap { ReportJSON.str($0, "signature") }
        #expect(signatures.count == 2, "\(r.stdout)")
        #expect(signatures.contains("SIGSEGV in store_name (explore_bugs.c:13)"), "\(signatures)")
        let memset = try #require(bugs.first { ReportJSON.str($0, "signature")?.hasSuffix("← store_value (explore_bugs.c:19)") == true }, "\(signatures)")
        #expect(ExploreBugsTests.places(memset).contains("explore_bugs.c:19 (store_value)"), "\(ExploreBugsTests.places(memset))")
        let findings = ReportJSON.array(root, "runs").filter { ExploreTests.bool($0, "finding") == true }
        let reproduced = findings.filter { ExploreTests.bool($0, "reproduced") == true }
        #expect(findings.count >= 2 && reproduced.count == findings.count, "\(r.stdout)")
    }

    /// preflight of an aarch64 program reads the libraries its own loader would load, asked
    /// under qemu (this machine's loader cannot list a program of another architecture, and
    /// preflight said "0 libraries"); and a program named bare, from its own directory, is
    /// listed as such (the loader took a bare name for a library to search for: 0 libraries on
    /// either architecture).
    @Test func preflightListsTheLibrariesOfAnAarch64Program() throws {
        let libDir = try Fixture.libraryAarch64("proto_lib", soname: "fx")
        let bin = try Fixture.buildAarch64("proto_main", flags: ["-L", libDir, "-lfx", "-Wl,-rpath," + libDir])
        let paths = try Preflight(binary: bin).objects.map(\.path)
        #expect(paths.contains(libDir + "/libfx.so") && paths.contains { $0.hasSuffix("aarch64-linux-gnu/libc.so.6") }, "\(paths)")
        let name = (bin as NSString).lastPathComponent
        let pre = try Proc.run(Paths.aspectctl, ["preflight", name], directory: (bin as NSString).deletingLastPathComponent)
        #expect(pre.stdout.hasPrefix("\(name): dynamically linked, 2 libraries"), "\(pre)")
    }
}
