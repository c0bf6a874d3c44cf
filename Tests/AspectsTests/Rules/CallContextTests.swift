import Foundation
import Testing
import CAspectsABI
import AspectsCore
import AspectsExplore
import AspectsRules

/// Calling contexts: a call told by its site AND the callers above it (`when.context`), so
/// that the callers of one allocation wrapper are told apart; events of a rule with
/// `"context": true` record it; `explore --strategy context` fails the first call through
/// each. The fixture allocates through one `xmalloc` from careful(), tidy() and careless().
@Suite(.serialized) struct CallContextTests {
    static func fixture() throws -> String { try Fixture.build("context_wrapper", flags: ["-O2"]) }

    /// The contexts of the fixture's mallocs made through xmalloc, in call order (careful,
    /// tidy, careless), read from the events of a logging run.
    static func learnContexts(_ bin: String, args: [String] = [], symbol: String = "malloc") throws -> [CallContext] {
        let log = try ScratchTable()
        try log.add(#"{"id":"l","symbol":"\#(symbol)","position":"before","action":{"log":true,"context":true}}"#)
        let r = try Proc.run(bin, args, environment: Proc.preload(table: log.name))
        #expect(r.status == 0, "\(r)")
        let object = (bin as NSString).lastPathComponent
        return log.table.events(from: 0).events.compactMap(\.context).filter { $0.frames[0].object == object }
    }

    /// Every xmalloc call has one site; the contexts tell the three callers apart, and the
    /// preload's hash of what it unwound is the one aspectctl computes from the frames (an
    /// event's context is kept only when they agree, and the rule below matches only then).
    @Test func aContextRuleFailsOnlyTheCallerItNames() throws {
        let bin = try Self.fixture()
        let plain = try Proc.run(bin, [])
        #expect(plain.stdout == "careful ok tidy ok careless ok\n", "\(plain)")
        let contexts = try Self.learnContexts(bin)
        try #require(contexts.count == 3, "\(contexts)")
        #expect(Set(contexts.map { $0.frames[0] }).count == 1, "one site, inside xmalloc: \(contexts)")
        #expect(Set(contexts.map { $0.prefix(2) }).count == 3, "three callers: \(contexts)")
        #expect(contexts.allSatisfy { $0.frames.count == Int(ASPECTS_MAX_CONTEXT_DEPTH) }, "\(contexts)")

        // tidy's context, two frames: only tidy's allocation fails, and the count is its own
        let tidy = contexts[1].prefix(2)
        let t = try ScratchTable()
        try t.add(#"{"id":"t","symbol":"malloc","action":{"fail":"ENOMEM"},"when":{"context":\#(tidy.ruleJSON),"nth":1}}"#)
        let r = try Proc.run(bin, ["ctct"], environment: Proc.preload(table: t.name))
        #expect(r.stdout == "careful ok tidy NULL careful ok tidy ok\n", "\(r)")
        let rule = try #require(t.table.rules().first { $0.id == "t" })
        #expect(rule.matched == 2 && rule.fired == 1, "\(rule)")
        // the fired event names the context (the rule records none: its site only)
        let fired = try #require(t.table.events(from: 0).events.first)
        #expect(fired.site == tidy.frames[0])

        // careless' context: its NULL is written through
        let c = try ScratchTable()
        try c.add(#"{"id":"c","symbol":"malloc","action":{"fail":"ENOMEM"},"when":{"context":\#(contexts[2].prefix(3).ruleJSON)}}"#)
        let crash = try Proc.run(bin, [], environment: Proc.preload(table: c.name))
        #expect(crash.status != 0 && !crash.stdout.contains("careless ok"), "\(crash)")
    }

    /// In a container whose seccomp profile refuses process_vm_readv (Docker's default, to a
    /// container without CAP_SYS_PTRACE: where CI runs), contexts are known all the same: the
    /// walk asks the kernel with futex instead. Before, every check failed there, no context
    /// was known, and a `context` rule never fired.
    @Test func aSeccompProfileThatRefusesProcessVmReadvLeavesContextsKnown() throws {
        let bin = try Self.fixture()
        let deny = try Fixture.build("seccomp_deny")
        let contexts = try Self.learnContexts(bin)
        try #require(contexts.count == 3, "\(contexts)")
        let t = try ScratchTable()
        try t.add(#"{"id":"t","symbol":"malloc","action":{"fail":"ENOMEM"},"when":{"context":\#(contexts[1].prefix(2).ruleJSON),"nth":1}}"#)
        let r = try Proc.run(deny, [bin, "ctct"], environment: Proc.preload(table: t.name))
        #expect(r.status == 0 && r.stdout == "careful ok tidy NULL careful ok tidy ok\n", "\(r)")
        let rule = try #require(t.table.rules().first { $0.id == "t" })
        #expect(rule.matched == 2 && rule.fired == 1, "\(rule)")
    }

    /// A `context` rule added while the program runs holds from its next call: the unwinder is
    /// loaded by the first call that needs a context (at attach the table asked for none).
    /// Before, such a process knew no context and the rule never fired.
    @Test func aContextRuleAddedWhileTheProgramRunsHoldsFromItsNextCall() throws {
        let bin = try Self.fixture()
        let contexts = try Self.learnContexts(bin)
        try #require(contexts.count == 3, "\(contexts)")
        let t = try ScratchTable()
        let input = Pipe(), output = Pipe()
        let p = try TestProcess.start(bin, ["lines"], environment: Proc.preload(table: t.name), stdin: input, stdout: output)
        var pending = Data()
        func exchange(_ order: String) -> String {
            input.fileHandleForWriting.write(Data((order + "\n").utf8))
            while !pending.contains(UInt8(ascii: "\n")) {
                let more = output.fileHandleForReading.availableData
                if more.isEmpty { break }
                pending += more
            }
            guard let end = pending.firstIndex(of: UInt8(ascii: "\n")) else { return String(decoding: pending, as: UTF8.self) }
            defer { pending = Data(pending[(end + 1)...]) }
            return String(decoding: pending[..<end], as: UTF8.self)
        }
        #expect(exchange("ct") == "careful ok tidy ok")
        try t.add(#"{"id":"t","symbol":"malloc","action":{"fail":"ENOMEM"},"when":{"context":\#(contexts[1].prefix(2).ruleJSON)}}"#)
        #expect(exchange("ct") == "careful ok tidy NULL")
        #expect(exchange("tc") == "tidy NULL careful ok")
        try input.fileHandleForWriting.close()
        #expect(p.wait() == 0)
        let rule = try #require(t.table.rules().first { $0.id == "t" })
        #expect(rule.fired == 2, "\(rule)")
    }

    /// `list --rules` gives the rule back as written, and `events` prints the context.
    @Test func listAndEventsGiveTheContextBack() throws {
        let bin = try Self.fixture()
        let contexts = try Self.learnContexts(bin)
        try #require(contexts.count == 3)
        let t = try ScratchTable()
        let name = t.name
        let rule = #"{"id":"c","symbol":"malloc","position":"before","action":{"log":true,"context":true},"when":{"context":\#(contexts[0].prefix(2).ruleJSON)}}"#
        _ = try Proc.aspectctl(["add", "--table", name, "--rule", rule])
        let listed = try Proc.aspectctl(["list", "--table", name, "--rules"]).stdout
        #expect(listed.contains("\"context\": [\n        \"\(contexts[0].frames[0])\",\n        \"\(contexts[0].frames[1])\"\n      ]"), "\(listed)")
        _ = try Proc.run(bin, [], environment: Proc.preload(table: name))
        let events = try Proc.aspectctl(["events", "--table", name]).stdout
        #expect(events.contains("from \(contexts[0])"), "\(events)")
        #expect(events.components(separatedBy: "\n").filter { !$0.isEmpty }.count == 1, "only careful's call: \(events)")
    }

    /// The one hash (aspects_abi.h), pinned: FNV-1a over the frame count, then each frame's
    /// name, a NUL and its offset's 8 bytes, little end first (values computed apart from it).
    /// The preload folds the same inline code; that the two agree on real frames is
    /// aContextRuleFailsOnlyTheCallerItNames.
    @Test(.tags(.fast)) func theHashIsFNV1aOfTheFrames() {
        let two = CallContext([CallSite(object: "app", offset: 0x1379), CallSite(object: "app", offset: 0x14b0)])
        #expect(two.hash == 0xf3737411b6150961)
        #expect(two.prefix(1).hash == 0xdddb5e1045b5f945)
        #expect(two.ruleJSON == #"["app+0x1379","app+0x14b0"]"#)
    }

    /// The plan of `--strategy context`: one point per context cut to the depth (contexts that
    /// differ only deeper are one), a function without any known context keeps its sites, and
    /// a point's rule names its context.
    @Test(.tags(.fast)) func theContextPlanCutsToTheDepthAndLeavesNoFunctionOut() {
        func s(_ o: UInt64) -> CallSite { CallSite(object: "app", offset: o) }
        let seen = [CallContext([s(0x10), s(0x20), s(0x30), s(0x40)]): UInt64(1),
                    CallContext([s(0x10), s(0x20), s(0x30), s(0x41)]): 1,
                    CallContext([s(0x10), s(0x21), s(0x30), s(0x40)]): 2]
        // planned per image, as every strategy: the point's rule keeps to it (`process`)
        let malloc = FunctionProfile(function: "malloc", calls: 4, sites: [s(0x10): 4],
                                     images: ["/bin/app": ImageCalls(calls: 4, sites: [s(0x10): 4], contexts: seen)], contexts: seen)
        let write = FunctionProfile(function: "write", calls: 2, sites: [s(0x50): 1, s(0x60): 1],
                                    images: ["/bin/app": ImageCalls(calls: 2, sites: [s(0x50): 1, s(0x60): 1])])
        let plan = ExplorePlan.make(profiles: [malloc, write], strategy: .context, errnos: { _ in ["EIO"] }, maxRuns: 100, seed: 0, contextDepth: 3)
        let contexts = plan.points.compactMap(\.context)
        #expect(contexts.count == 2 && contexts.allSatisfy { $0.count == 3 }, "\(plan.points)")
        #expect(plan.points.filter { $0.function == "write" }.map(\.site) == [s(0x50), s(0x60)], "\(plan.points)")
        #expect(plan.points.first?.ruleJSON.contains(#""context":["app+0x10","app+0x20","app+0x30"],"process":"/bin/app","nth":1"#) == true, "\(plan.points)")
        #expect(plan.points.allSatisfy { $0.image == "/bin/app" && $0.name.hasPrefix("app:") }, "\(plan.points)")
        // glibc's start-up (here 0x30, as if it were __libc_start_call_main) is no part of a context
        let cut = ExplorePlan.make(profiles: [malloc], strategy: .context, errnos: { _ in ["EIO"] }, maxRuns: 100, seed: 0, contextDepth: 3,
                                   startup: [s(0x30)])
        #expect(Set(cut.points.compactMap(\.context)) == [[s(0x10), s(0x20)], [s(0x10), s(0x21)]], "\(cut.points)")
        let small = ExplorePlan.make(profiles: [malloc, write], strategy: .context, errnos: { _ in ["EIO"] }, maxRuns: 2, seed: 0, contextDepth: 1)
        #expect(small.points.count == 2 && Set(small.points.map(\.function)) == ["malloc", "write"], "round-robin: \(small.points)")
    }

    /// Bad contexts are refused naming the rule, the field and the fix.
    @Test(.tags(.fast)) func badContextsAreRefusedWithTheFix() throws {
        let cases: [(String, String, String)] = [
            (#"[]"#, "when.context", "the context is empty"),
            (#"["a+0x1","a+0x2","a+0x3","a+0x4","a+0x5"]"#, "when.context", "at most 4"),
            (#"["a+0x1","/usr/bin/a+0x2"]"#, "when.context[1]", "is not a call site"),
            (#"["a+0x1", 7]"#, "when.context[1]", "must be a string"),
            (#""a+0x1""#, "when.context", "must be an array"),
        ]
        for (context, field, words) in cases {
            let json = #"{"id":"bad","symbol":"malloc","action":{"fail":"ENOMEM"},"when":{"context":\#(context)}}"#
            do {
                _ = try RuleCompiler().compile(try RuleDecoder(source: "t").decode(json))
                Issue.record("accepted \(context)")
            } catch {
                let text = "\(error)"
                #expect(text.contains(field) && text.contains(words) && text.contains("bad"), "\(text)")
            }
        }
        let both = #"{"symbol":"malloc","action":{"fail":"ENOMEM"},"when":{"site":"a+0x1","context":["a+0x1"]}}"#
        #expect(throws: AspectsError.self) { try RuleCompiler().compile(try RuleDecoder(source: "t").decode(both)) }
    }

    /// A context rule on a deep stack (xmalloc under 20,000 nested calls) unwinds a bounded
    /// few frames and the program runs on; its events record the context.
    @Test func aDeepStackIsUnwoundBoundedAndRunsOn() throws {
        let bin = try Self.fixture()
        let t = try ScratchTable()
        try t.add(#"{"id":"d","symbol":"malloc","position":"before","action":{"log":true,"context":true},"when":{"context":["nowhere+0x10","nowhere+0x20"]}}"#)
        try t.add(#"{"id":"l","symbol":"malloc","position":"before","action":{"log":true,"context":true}}"#)
        let r = try Proc.run(bin, ["deep", "20000"], environment: Proc.preload(table: t.name))
        #expect(r.status == 0 && r.stdout == "deep ok\n", "\(r)")
        let object = (bin as NSString).lastPathComponent
        let deep = t.table.events(from: 0).events.compactMap(\.context).filter { $0.frames[0].object == object }
        #expect(deep.count == 1 && deep[0].frames.count == Int(ASPECTS_MAX_CONTEXT_DEPTH) && deep[0].frames[2] == deep[0].frames[3],
                "xmalloc, nest's last call, then nest calling itself: \(deep)")
    }

    /// A frame whose unwind information does not say what its code did to the stack (the
    /// fixture's via_bad_frame moves the stack pointer and puts garbage in the frame pointer):
    /// the unwinder would take a garbage return address and read the code there (libgcc's
    /// fallback for frames without an FDE) — a fault in the host. The walk checks each step
    /// first and ends there: the program runs on, the context is the frames before it.
    @Test func aFrameWhoseUnwindInformationLiesEndsTheContextNotTheProgram() throws {
        let bin = try Self.fixture()
        let t = try ScratchTable()
        try t.add(#"{"id":"l","symbol":"malloc","position":"before","action":{"log":true,"context":true}}"#)
        let r = try Proc.run(bin, ["badframe"], environment: Proc.preload(table: t.name))
        #expect(r.status == 0 && r.stdout == "badframe ok\n", "\(r)")
        let object = (bin as NSString).lastPathComponent
        let contexts = t.table.events(from: 0).events.compactMap(\.context).filter { $0.frames[0].object == object }
        #expect(contexts.count == 1 && contexts[0].frames.count == 2, "xmalloc's site, then via_bad_frame, and no further: \(contexts)")
    }

    /// In a signal handler the context is not unwound (the handler may have interrupted the
    /// unwinder or the loader): unknown, it matches nothing, and the program is fine. The same
    /// context outside the handler fires.
    @Test func inASignalHandlerTheContextIsUnknownAndNothingFires() throws {
        let bin = try Self.fixture()
        let contexts = try Self.learnContexts(bin, args: ["signal"], symbol: "write")
        try #require(contexts.count == 1, "only the direct call's context is known: \(contexts)")
        let t = try ScratchTable()
        try t.add(#"{"id":"w","symbol":"write","action":{"fail":"EIO"},"when":{"context":\#(contexts[0].prefix(2).ruleJSON)}}"#)
        let r = try Proc.run(bin, ["signal"], environment: Proc.preload(table: t.name))
        #expect(r.status == 0 && r.stdout == "direct -1 handler 0\n", "\(r)")
    }

    /// explore on the fixture: by sites there is one site for all three callers (inside
    /// xmalloc), whose first call is careful's, so the careless caller is never failed; by
    /// contexts each caller is a point of its own and the crash is one bug, whose reproducer
    /// (rules and script) fails that caller's call and crashes again.
    @Test func exploreByContextFindsTheCallerThatIgnoresNull() throws {
        let bin = try Self.fixture()
        let out = NSTemporaryDirectory() + "aspects-context-\(UUID().uuidString)"
        defer { for p in [out + "-sites", out + "-context", out + ".json"] { try? FileManager.default.removeItem(atPath: p) } }
        let sites = try Proc.aspectctl(["explore", "--function", "malloc", "--strategy", "sites", "--progress", "never", "--out", out + "-sites", "--", bin])
        #expect(sites.status == 0 && sites.stdout.contains("no findings"), "\(sites)")

        let r = try Proc.aspectctl(["explore", "--function", "malloc", "--strategy", "context", "--progress", "never",
                                    "--out", out + "-context", "--json", out + ".json", "--", bin])
        #expect(r.status == 1, "\(r)")
        #expect(r.stdout.contains("bugs: 1 (from 1 finding(s))"), "\(r.stdout)")
        let root = try JSONParser.parse(try String(contentsOfFile: out + ".json", encoding: .utf8))
        let schema = try JSONParser.parse(try String(contentsOfFile: Paths.root + "/config/explore.schema.json", encoding: .utf8))
        #expect(SchemaValidator(root: schema).validate(root).isEmpty)
        guard case .array(let coverage)? = root["coverage"]?.value, case .number(let n)? = coverage.first?["contexts"]?.value else {
            Issue.record("coverage has no contexts count"); return
        }
        #expect(Int(n)! >= 3, "three callers of xmalloc, and stdio's own: \(n)")
        guard case .array(let bugs)? = root["bugs"]?.value, let bug = bugs.first,
              case .array(let points)? = bug["faultPoints"]?.value, case .array(let context)? = points.first?["context"]?.value,
              case .string(let script)? = bug["reproducer"]?.value else {
            Issue.record("bug shape: \(root)"); return
        }
        #expect(context.count == 3, "the default depth: \(context)")
        let rules = try String(contentsOfFile: script, encoding: .utf8)
        #expect(rules.contains("\"context\":["), "\(rules)")
        let again = try Proc.run(Reproducer.scriptPath(forRules: script), [])
        #expect(again.status == 0, "the script reproduces the crash: \(again)")
    }

    /// Debian's sqlite3 shell allocates through one wrapper (sqlite3MemMalloc, under
    /// sqlite3Malloc): one malloc site in libsqlite3 for nearly every allocation. By contexts
    /// its callers are told apart — more points than sites — and the campaign gives the two
    /// glibc NSS crash bugs (getpwuid at start-up) that sites and call numbers find, each once,
    /// each with its reproducer reproducing; sqlite3's own callers handle their failures.
    @Test(.tags(.realPrograms), .requires(FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs sqlite3 (.ci/run installs it)"))
    func sqlite3ByContext() throws {
        let out = NSTemporaryDirectory() + "aspects-context-sqlite-\(UUID().uuidString)"
        defer { for p in [out, out + ".json"] { try? FileManager.default.removeItem(atPath: p) } }
        let r = try Proc.aspectctl(["explore", "--function", "malloc", "--strategy", "context", "--progress", "never", "--out", out, "--json", out + ".json",
                                    "--", "/usr/bin/sqlite3", ":memory:", "create table t(a); insert into t values(1); select * from t;"])
        #expect(r.status == 1, "\(r)")
        let root = try JSONParser.parse(try String(contentsOfFile: out + ".json", encoding: .utf8))
        guard case .array(let coverage)? = root["coverage"]?.value, let malloc = coverage.first,
              case .number(let sites)? = malloc["sites"]?.value, case .number(let contexts)? = malloc["contexts"]?.value,
              case .array(let bugs)? = root["bugs"]?.value else {
            Issue.record("shape: \(r.stdout)"); return
        }
        print("sqlite3 by context: \(sites) site(s), \(contexts) context(s), \(bugs.count) bug(s)")
        #expect(Int(contexts)! > Int(sites)!, "callers of the wrapper told apart: \(sites) sites, \(contexts) contexts")
        let signatures = bugs.compactMap { b -> String? in if case .string(let s)? = b["signature"]?.value { return s }; return nil }
        #expect(signatures.count == 2 && signatures.allSatisfy { $0.contains("nss") }, "\(signatures)")
        #expect(r.stdout.components(separatedBy: "[reproduced]").count == 3, "\(r.stdout)")
    }
}
