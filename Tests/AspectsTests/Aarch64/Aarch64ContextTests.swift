import Foundation
import Testing
import CAspectsABI
import AspectsCore
import AspectsExplore
import AspectsRules

/// Calling contexts on aarch64 (docs/aarch64.md; CallContextTests on x86-64): the fixtures
/// cross-built for aarch64 run under qemu with the aarch64 preload, and the rules are written
/// on this machine (x86-64) — a `context` condition's hash computed by aspectctl from the
/// frames is the one the aarch64 process computes from what it unwound, or the rule would never
/// match. The walk is libgcc_s's unwinder over aarch64's `.eh_frame`, each step checked by
/// context.c first (the CFA from sp or x29, the return address where the FDE saved x30).
///
/// What qemu cannot show: timing (no cost is measured here). Return address signing it does
/// show: its `max` CPU has pointer authentication, so a fixture built with
/// -mbranch-protection=pac-ret saves signed return addresses (this machine's arm64 libraries
/// are built without it).
@Suite(.serialized, .requires(Aarch64.available, "needs qemu-user-static, gcc-aarch64-linux-gnu and libffi-dev:arm64 (.ci/run installs them)"), .tags(.qemu))
struct Aarch64ContextTests {
    func run(_ bin: String, _ args: [String] = [], table: String?, cpu: String = "max") throws -> BoundedOutcome {
        try Aarch64Tests().run(bin, args, table: table, cpu: cpu)
    }

    /// context_wrapper (CallContextTests' fixture: three callers of one allocation wrapper).
    static func wrapper() throws -> String { try Fixture.buildAarch64("context_wrapper", flags: ["-O2"]) }

    /// context_chain and its library: three chains down to one getppid site in the library.
    static func chain() throws -> String {
        let dir = try Fixture.libraryAarch64("context_chain_lib", soname: "ctxchain", flags: ["-O2"])
        return try Fixture.buildAarch64("context_chain", flags: ["-O2", "-L", dir, "-lctxchain", "-Wl,-rpath," + dir])
    }

    /// The contexts of `symbol`'s calls whose site lies in `object`, in call order, read from
    /// the events of a logging run (an event's context is kept only when its frames hash to
    /// the hash the process recorded: the two architectures' hashes agree).
    func learnContexts(_ bin: String, args: [String] = [], symbol: String, object: String, cpu: String = "max") throws -> [CallContext] {
        let log = try ScratchTable()
        try log.add(#"{"id":"l","symbol":"\#(symbol)","position":"before","action":{"log":true,"context":true}}"#)
        let r = try run(bin, args, table: log.name, cpu: cpu)
        #expect(r.status == 0, "\(r)")
        return log.table.events(from: 0).events.compactMap(\.context).filter { $0.frames[0].object == object }
    }

    /// The wrapper's three callers told apart under qemu: one site (inside xmalloc), three
    /// contexts of the full depth; a rule written by x86-64 aspectctl with tidy's two frames
    /// fails tidy's allocation only, counting tidy's calls only; careless' three frames crash
    /// careless alone.
    @Test func aContextRuleFailsOnlyTheCallerItNames() throws {
        let bin = try Self.wrapper()
        let object = (bin as NSString).lastPathComponent
        let plain = try run(bin, table: nil)
        #expect(plain.stdout == "careful ok tidy ok careless ok\n", "\(plain)")
        let contexts = try learnContexts(bin, symbol: "malloc", object: object)
        try #require(contexts.count == 3, "\(contexts)")
        #expect(Set(contexts.map { $0.frames[0] }).count == 1, "one site, inside xmalloc: \(contexts)")
        #expect(Set(contexts.map { $0.prefix(2) }).count == 3, "three callers: \(contexts)")
        #expect(contexts.allSatisfy { $0.frames.count == Int(ASPECTS_MAX_CONTEXT_DEPTH) && $0.frames.prefix(3).allSatisfy { $0.object == object } },
                "xmalloc's site, the caller's call, main's call, then main's caller in libc: \(contexts)")

        let t = try ScratchTable()
        let rule = #"{"id":"t","symbol":"malloc","action":{"fail":"ENOMEM"},"when":{"context":\#(contexts[1].prefix(2).ruleJSON),"nth":1}}"#
        let added = try Proc.aspectctl(["add", "--table", t.name, "--rule", rule])
        try #require(added.status == 0, "\(added)")
        let r = try run(bin, ["ctct"], table: t.name)
        #expect(r.stdout == "careful ok tidy NULL careful ok tidy ok\n", "\(r)")
        let row = try #require(t.table.rules().first { $0.id == "t" })
        #expect(row.matched == 2 && row.fired == 1, "\(row)")

        let c = try ScratchTable()
        try c.add(#"{"id":"c","symbol":"malloc","action":{"fail":"ENOMEM"},"when":{"context":\#(contexts[2].prefix(3).ruleJSON)}}"#)
        let crash = try run(bin, table: c.name)
        #expect(crash.status != 0 && crash.stdout.isEmpty, "careless wrote through NULL: \(crash)")
    }

    /// Return addresses saved signed (context_wrapper built with -mbranch-protection=pac-ret:
    /// paciasp in each prologue) are stripped before they are looked up: on qemu's `max` CPU,
    /// which signs them, the three callers' contexts are as deep as unsigned ones and a rule
    /// on tidy's fires for tidy alone; on a Cortex-A57, without pointer authentication, the
    /// same binary (paciasp and xpaclri are hints there) gives the same contexts.
    @Test(arguments: Aarch64Tests.cpus)
    func signedReturnAddressesAreStripped(cpu: String) throws {
        let bin = try Fixture.buildAarch64("context_wrapper", flags: ["-O2", "-mbranch-protection=pac-ret"])
        let object = (bin as NSString).lastPathComponent
        let disassembly = try Proc.run("/usr/bin/env", ["aarch64-linux-gnu-objdump", "-d", bin]).stdout
        #expect(disassembly.contains("paciasp"), "built with return address signing")
        let contexts = try learnContexts(bin, symbol: "malloc", object: object, cpu: cpu)
        try #require(contexts.count == 3, "\(cpu): \(contexts)")
        #expect(contexts.allSatisfy { $0.frames.count == Int(ASPECTS_MAX_CONTEXT_DEPTH) } && Set(contexts.map { $0.prefix(2) }).count == 3, "\(cpu): \(contexts)")
        let t = try ScratchTable()
        try t.add(#"{"id":"t","symbol":"malloc","action":{"fail":"ENOMEM"},"when":{"context":\#(contexts[1].prefix(3).ruleJSON)}}"#)
        let r = try run(bin, ["ctct"], table: t.name, cpu: cpu)
        #expect(r.stdout == "careful ok tidy NULL careful ok tidy NULL\n", "\(cpu): \(r)")
    }

    /// Chains through a shared library of the program's: the site and the second frame lie in
    /// libctxchain.so, the third and fourth in the program. At every depth a rule names one
    /// chain's first frames (written by x86-64 aspectctl) and fires exactly for the chains
    /// that begin so — at depth 1 all three, at 2 first's left and second's left, at 3 and 4
    /// the chain alone — and never for the others.
    @Test func chainsThroughALibraryAreToldApartAtEachDepth() throws {
        let bin = try Self.chain()
        let plain = try run(bin, table: nil)
        #expect(plain.stdout == "first.left=real first.right=real second.left=real\n", "\(plain)")
        let chains = try learnContexts(bin, symbol: "getppid", object: "libctxchain.so")
        try #require(chains.count == 3 && chains.allSatisfy { $0.frames.count == Int(ASPECTS_MAX_CONTEXT_DEPTH) }, "\(chains)")
        let program = (bin as NSString).lastPathComponent
        #expect(chains.allSatisfy { $0.frames.map(\.object) == ["libctxchain.so", "libctxchain.so", program, program] }, "\(chains)")
        #expect(Set(chains.map { $0.prefix(2) }).count == 2 && chains[0].prefix(2) == chains[2].prefix(2), "left, right, left: \(chains)")
        #expect(Set(chains.map { $0.prefix(3) }).count == 3, "\(chains)")

        let names = ["first.left", "first.right", "second.left"]
        for depth in 1...Int(ASPECTS_MAX_CONTEXT_DEPTH) {
            for (i, chosen) in chains.enumerated() {
                let context = chosen.prefix(depth)
                let t = try ScratchTable()
                let rule = #"{"id":"p","symbol":"getppid","position":"instead","action":{"return":42},"when":{"context":\#(context.ruleJSON)}}"#
                let added = try Proc.aspectctl(["add", "--table", t.name, "--rule", rule])
                try #require(added.status == 0, "\(added)")
                let r = try run(bin, table: t.name)
                let expected = names.indices.map { "\(names[$0])=\(chains[$0].prefix(depth) == context ? "42" : "real")" }.joined(separator: " ")
                #expect(r.stdout == expected + "\n", "depth \(depth), chain \(i): \(r)")
                let hits = chains.filter { $0.prefix(depth) == context }.count
                #expect(t.table.rules().first?.fired == UInt64(hits), "depth \(depth), chain \(i)")
            }
        }
    }

    /// explore's call survey (CallSurvey, what `--strategy context` plans from) records the
    /// aarch64 process's chains: each context once, as a logging run's events give them.
    @Test func theCallSurveyRecordsTheChains() throws {
        let bin = try Self.chain()
        var survey = CallSurvey(functions: ["getppid"], preload: try Aarch64.library())
        survey.recordContexts = true
        let t = try ScratchTable()
        let pending = survey.pending
        try t.add(survey.rules(for: pending))
        let r = try run(bin, ["fsf"], table: t.name)
        #expect(r.status == 0, "\(r)")
        survey.record(t.table, pending: pending)
        let contexts = survey.contexts["getppid"] ?? [:]
        let inLibrary = contexts.filter { $0.key.frames[0].object == "libctxchain.so" }
        #expect(inLibrary.count == 3 && inLibrary.values.sorted() == [1, 2, 2], "first's two twice, second's once: \(contexts)")
        #expect(inLibrary.keys.allSatisfy { $0.frames.count == Int(ASPECTS_MAX_CONTEXT_DEPTH) }, "\(contexts)")
    }

    /// explore itself on the aarch64 program, qemu being the command: by sites the one site
    /// inside xmalloc is failed on careful's call only and nothing is found; by contexts each
    /// caller is a point of its own, careless' NULL is the one bug, and its reproducer (the
    /// same qemu command under the rules) crashes again.
    @Test func exploreByContextFindsTheCallerThatIgnoresNull() throws {
        let command = [Aarch64.qemu] + (try Aarch64.qemuArguments(cpu: "max", preload: true)) + [try Self.wrapper()]
        let out = NSTemporaryDirectory() + "aspects-a64-context-\(UUID().uuidString)"
        defer { for p in [out + "-sites", out + "-context", out + ".json"] { try? FileManager.default.removeItem(atPath: p) } }
        let sites = try Proc.aspectctl(["explore", "--function", "malloc", "--strategy", "sites", "--progress", "never", "--out", out + "-sites", "--"] + command)
        #expect(sites.status == 0 && sites.stdout.contains("no findings"), "\(sites)")
        let r = try Proc.aspectctl(["explore", "--function", "malloc", "--strategy", "context", "--progress", "never",
                                    "--out", out + "-context", "--json", out + ".json", "--"] + command)
        #expect(r.status == 1 && r.stdout.contains("bugs: 1 (from 1 finding(s))") && r.stdout.contains("[reproduced]"), "\(r)")
        let root = try JSONParser.parse(try String(contentsOfFile: out + ".json", encoding: .utf8))
        guard case .array(let bugs)? = root["bugs"]?.value, let bug = bugs.first,
              case .array(let points)? = bug["faultPoints"]?.value, case .array(let context)? = points.first?["context"]?.value else {
            Issue.record("bug shape: \(root)"); return
        }
        #expect(bugs.count == 1 && context.count == 3, "the default depth: \(context)")
    }

    /// A deep stack (xmalloc under 2,000 nested calls) is unwound a bounded few frames and the
    /// program runs on: the context is xmalloc's site, nest's last call, then nest calling
    /// itself twice.
    @Test func aDeepStackIsUnwoundBoundedAndRunsOn() throws {
        let bin = try Self.wrapper()
        let object = (bin as NSString).lastPathComponent
        let deep = try learnContexts(bin, args: ["deep", "2000"], symbol: "malloc", object: object)
        #expect(deep.count == 1 && deep[0].frames.count == Int(ASPECTS_MAX_CONTEXT_DEPTH) && deep[0].frames[2] == deep[0].frames[3], "\(deep)")
    }

    /// A frame whose unwind information lies (the fixture's aarch64 via_bad_frame pushes 64
    /// bytes of garbage where its CFI puts the saved x29 and x30, and puts garbage in x29):
    /// unchecked, the unwinder would take the garbage as a return address and read the code
    /// there (libgcc's fallback for frames without an FDE) — a fault in the host. The walk
    /// checks each step first and ends there: the program runs on, the context is xmalloc's
    /// site and via_bad_frame's call, and no further.
    @Test func aFrameWhoseUnwindInformationLiesEndsTheContextNotTheProgram() throws {
        let bin = try Self.wrapper()
        let object = (bin as NSString).lastPathComponent
        let t = try ScratchTable()
        try t.add(#"{"id":"l","symbol":"malloc","position":"before","action":{"log":true,"context":true}}"#)
        let r = try run(bin, ["badframe"], table: t.name)
        #expect(r.status == 0 && r.stdout == "badframe ok\n", "\(r)")
        let contexts = t.table.events(from: 0).events.compactMap(\.context).filter { $0.frames[0].object == object }
        #expect(contexts.count == 1 && contexts[0].frames.count == 2, "\(contexts)")
    }

    /// The same lie in a function that signs its return address (via_bad_signed_frame, pac-ret)
    /// with a code address as the garbage: stripped, it is code, but libgcc authenticates it
    /// and fails — on qemu's `max` CPU (which signs) a poisoned pointer whose code the
    /// unwinder then reads: a fault in the host. The walk signs the stripped address again as
    /// the function did and ends where the word differs: the context is xmalloc's site and
    /// the call. Keys are random per process and the code has 7 bits here, so one run in 128
    /// the garbage authenticates and the unwinder (and the walk) go on into bogus frames: ten
    /// runs, none may fault, and the walk ends at the lie in most. On a Cortex-A57 (no pointer
    /// authentication) nothing is signed and the word is a plain code address, which the walk
    /// may follow; either way the program runs on.
    @Test(arguments: Aarch64Tests.cpus)
    func aSignedFrameWhoseUnwindInformationLiesEndsTheContext(cpu: String) throws {
        let bin = try Self.wrapper()
        let object = (bin as NSString).lastPathComponent
        let t = try ScratchTable()
        try t.add(#"{"id":"l","symbol":"malloc","position":"before","action":{"log":true,"context":true}}"#)
        let runs = cpu == "max" ? 10 : 1
        for _ in 0..<runs {
            let r = try run(bin, ["badsigned"], table: t.name, cpu: cpu)
            #expect(r.status == 0 && r.stdout == "badsigned ok\n", "\(cpu): \(r)")
        }
        let contexts = t.table.events(from: 0).events.compactMap(\.context).filter { $0.frames[0].object == object }
        #expect(contexts.count == runs && contexts.allSatisfy { $0.frames.count >= 2 && $0.frames[1] == contexts[0].frames[1] }, "\(cpu): \(contexts)")
        if cpu == "max" { #expect(contexts.filter { $0.frames.count == 2 }.count >= runs / 2, "\(contexts)") }
    }

    /// In a signal handler the context is not unwound (raise delivers SIGUSR1 while the
    /// handler's write is made with the signal blocked: a handler may be running): unknown, it
    /// matches nothing; the same context outside the handler fires. qemu delivers the raised
    /// signal between translated blocks, as the kernel would after the system call.
    @Test func inASignalHandlerTheContextIsUnknownAndNothingFires() throws {
        let bin = try Self.wrapper()
        let object = (bin as NSString).lastPathComponent
        let contexts = try learnContexts(bin, args: ["signal"], symbol: "write", object: object)
        try #require(contexts.count == 1, "only the direct call's context is known: \(contexts)")
        let t = try ScratchTable()
        try t.add(#"{"id":"w","symbol":"write","action":{"fail":"EIO"},"when":{"context":\#(contexts[0].prefix(2).ruleJSON)}}"#)
        let r = try run(bin, ["signal"], table: t.name)
        #expect(r.status == 0 && r.stdout == "direct -1 handler 0\n", "\(r)")
    }
}
