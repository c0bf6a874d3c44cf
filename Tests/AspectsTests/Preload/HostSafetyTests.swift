import Foundation
import Testing

/// The host-safety matrix (issue 10, "Faults against ourselves"): the preload, attached to an
/// armed table, inside programs that do hostile or unusual things. Wherever no rule fires the
/// program must behave exactly as without the preload; it must never crash or hang. Every run
/// is bounded (BoundedRun kills it and the test fails); the suite runs its tests one at a time
/// so their storms of threads, signals and children do not compete with each other for the
/// machine's two cores.
@Suite(.serialized) struct HostSafetyTests {
    /// A generous bound for runs that take about a second: they fail, never hang the suite.
    static let limit = 60.0

    /// getppid() returns 42 on every 2nd call (counted per process): fixtures count the 42s.
    static let getppidEvery2 = #"{"id":"g","symbol":"getppid","position":"instead","action":{"return":42},"when":{"every":2}}"#

    /// A rule that arms a function but never fires: the call takes the whole armed path
    /// (closure, dispatcher, counting) and must still behave exactly like the original.
    static func armedNeverFiring(_ id: String, _ symbol: String) -> String {
        #"{"id":"\#(id)","symbol":"\#(symbol)","position":"instead","action":{"return":0},"when":{"nth":1000000000000}}"#
    }

    /// "key value key value ..." (the fixtures' one-line reports) as a dictionary.
    func fields(_ line: String) -> [String: String] {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
        var out: [String: String] = [:]
        var i = 0
        while i + 1 < words.count { out[words[i]] = words[i + 1]; i += 2 }
        return out
    }

    func rule(_ t: ScratchTable, _ id: String) throws -> (matched: UInt64, fired: UInt64) {
        let r = try #require(t.table.rules().first { $0.id == id }, "rule \(id)")
        return (r.matched, r.fired)
    }

    // MARK: - descriptors and environment

    /// close_range(0, ~0U) or close() on every descriptor below 1024, then armed calls: the
    /// preload keeps no descriptor the program could take away (the table is a mapping).
    @Test(arguments: ["range", "loop"])
    func closingEveryDescriptorLeavesAdviceWorking(mode: String) throws {
        let bin = try Fixture.build("closed_fds")
        let dir = NSTemporaryDirectory() + "aspects-fds-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }

        let plain = try BoundedRun.run(bin, [mode, dir + "/plain"], timeout: Self.limit)
        #expect(plain.status == 0, "\(plain)")
        #expect(try String(contentsOfFile: dir + "/plain", encoding: .utf8) == "getppid42 0 writes 100 closes 100\n")

        // Armed but never firing on close and write: exactly the plain result.
        let quiet = try ScratchTable()
        try quiet.add("[" + [Self.armedNeverFiring("c", "close"), Self.armedNeverFiring("w", "write")].joined(separator: ",") + "]")
        let same = try BoundedRun.run(bin, [mode, dir + "/quiet"], environment: BoundedRun.preload(quiet.name), timeout: Self.limit)
        #expect(same.status == 0, "\(same)")
        #expect(try String(contentsOfFile: dir + "/quiet", encoding: .utf8) == "getppid42 0 writes 100 closes 100\n")
        // 100 closes of /dev/null and the output file's, plus the 1024 of the loop.
        #expect(try rule(quiet, "c").matched == (mode == "loop" ? 1125 : 101))
        #expect(try rule(quiet, "c").fired == 0)

        // A firing rule still fires after every descriptor was closed.
        let firing = try ScratchTable()
        try firing.add(Self.getppidEvery2)
        let advised = try BoundedRun.run(bin, [mode, dir + "/advised"], environment: BoundedRun.preload(firing.name), timeout: Self.limit)
        #expect(advised.status == 0, "\(advised)")
        #expect(try String(contentsOfFile: dir + "/advised", encoding: .utf8) == "getppid42 50 writes 100 closes 100\n")
        #expect(try rule(firing, "g") == (100, 50))
    }

    /// clearenv() under an attached preload, then exec: a child with the empty environment runs
    /// plain; one given LD_PRELOAD and ASPECTS_TABLE back is advised as a new hierarchy (the
    /// preload exports ASPECTS_HIERARCHY at attach: its third variable).
    @Test func clearenvThenExecRunsTheChildPlainOrAdvised() throws {
        let bin = try Fixture.build("clearenv_exec")
        let plain = try BoundedRun.run(bin, ["bare"], timeout: Self.limit)
        #expect(plain.stdout == "parent getppid42 0\nchild getppid42 0 environ 0\n", "\(plain)")

        let quiet = try ScratchTable()
        try quiet.add(Self.armedNeverFiring("g", "getppid"))
        let same = try BoundedRun.run(bin, ["bare"], environment: BoundedRun.preload(quiet.name), timeout: Self.limit)
        #expect(same.status == 0)
        #expect(same.stdout == plain.stdout, "\(same)")

        let t = try ScratchTable()
        try t.add(Self.getppidEvery2)
        let bare = try BoundedRun.run(bin, ["bare"], environment: BoundedRun.preload(t.name), timeout: Self.limit)
        #expect(bare.status == 0, "\(bare)")
        #expect(bare.stdout == "parent getppid42 10\nchild getppid42 0 environ 0\n", "\(bare)")
        let keep = try BoundedRun.run(bin, ["keep"], environment: BoundedRun.preload(t.name), timeout: Self.limit)
        #expect(keep.status == 0, "\(keep)")
        #expect(keep.stdout == "parent getppid42 10\nchild getppid42 5 environ 3\n", "\(keep)")
        // parent bare 20 + parent keep 20 + child 10: the plain child was never counted.
        #expect(try rule(t, "g") == (50, 25))
    }

    // MARK: - signals

    /// A SIGALRM handler at 10 kHz (setitimer, 100 us) calls getppid and write while the main
    /// loop calls them too, for one second. Every firing reaches exactly one caller, and with
    /// `every: 3` exactly a third of the counted calls fire; the armed write never fails.
    @Test func signalHandlersAtTenKilohertzCallArmedFunctions() throws {
        let bin = try Fixture.build("signal_storm")
        let t = try ScratchTable()
        try t.add(#"{"id":"g","symbol":"getppid","position":"instead","action":{"return":42},"when":{"every":3}}"#)
        try t.add(Self.armedNeverFiring("w", "write"))
        let r = try BoundedRun.run(bin, ["1000", "100"], environment: BoundedRun.preload(t.name), timeout: Self.limit)
        #expect(r.status == 0 && !r.timedOut, "\(r)")
        let f = fields(r.stdout)
        let mainCalls = try #require(f["calls"].flatMap { UInt64($0) }, "\(r)")
        let main42 = try #require(f["main42"].flatMap { UInt64($0) })
        let handlerCalls = try #require(f["handlercalls"].flatMap { UInt64($0) })
        let handler42 = try #require(f["handler42"].flatMap { UInt64($0) })
        #expect(f["writebad"] == "0", "\(r)")
        // 10,000 expected; a loaded machine delivers far fewer (841 was seen with two fuzzers
        // and a build sharing the 2 cores): enough handler calls to interleave is what counts.
        #expect(handlerCalls >= 100, "\(r)")
        let g = try rule(t, "g")
        #expect(main42 + handler42 == g.fired, "\(r)\nmatched \(g.matched) fired \(g.fired)")
        #expect(g.fired == g.matched / 3, "matched \(g.matched) fired \(g.fired)")
        // Every main-loop call is counted; a handler's call may not be (issue 10, item 11).
        #expect(g.matched >= mainCalls && g.matched <= mainCalls + handlerCalls, "\(r)\nmatched \(g.matched)")
        #expect(try rule(t, "w").fired == 0)
    }

    /// A function's first armed call made inside a signal handler that interrupted malloc:
    /// the preload builds the forwarding stub then (dlopen of libffi, closure allocation),
    /// which is not async-signal-safe. Each of 100 forked children starts cold; with the stub
    /// built before the timer starts ("warm") no child may die, and none may die cold either.
    @Test func firstArmedCallInsideASignalHandlerAfterAWarmUp() throws {
        let bin = try Fixture.build("first_call_in_handler")
        let t = try ScratchTable()
        try t.add(Self.getppidEvery2)
        let r = try BoundedRun.run(bin, ["100", "15", "warm"], environment: BoundedRun.preload(t.name), timeout: Self.limit)
        #expect(r.status == 0 && !r.timedOut, "\(r)")
        #expect(r.stdout.hasPrefix("children 100 crashed 0 handled "), "\(r)")
        #expect(try rule(t, "g").matched >= 100)
    }

    /// The same without the warm-up: the stub is built inside the handler. Before libffi and
    /// the closures' memory were taken at attach (closures.c), 10-15 of 100 children died
    /// (glibc: "corrupted double-linked list", SIGSEGV): the handler's malloc (inside dlopen
    /// and ffi_closure_alloc) re-entered the malloc it interrupted.
    @Test func firstArmedCallInsideASignalHandlerWhileMallocRuns() throws {
        let bin = try Fixture.build("first_call_in_handler")
        let t = try ScratchTable()
        try t.add(Self.getppidEvery2)
        let r = try BoundedRun.run(bin, ["100", "15"], environment: BoundedRun.preload(t.name), timeout: Self.limit)
        #expect(r.status == 0 && !r.timedOut, "\(r)")
        #expect(r.stdout.hasPrefix("children 100 crashed 0 handled "), "\(r)")
    }

    /// The siglongjmp timeout idiom: a SIGALRM handler jumps out of an armed read blocked in
    /// the original (after 100 ms). The jump skips the preload's frames; afterwards the
    /// thread's calls are advised and counted as before.
    @Test func siglongjmpOutOfAnArmedCallLeavesAdviceWorking() throws {
        let r = try longjmpOut(delayRule: false)
        #expect(r.outcome.stdout == "jumped yes getppid42 5 read 7\n", "\(r.outcome)")
        #expect(try rule(r.table, "g") == (10, 5))
    }

    /// The same jump out of a `delay` the preload runs for the read. The engine's re-entry
    /// guard is down while a delay or a raised signal runs (advice.h, asp_run_effects); when
    /// it was up, it stayed up on that thread for good and every later armed call there
    /// passed through unadvised and uncounted ("getppid42 0 read 2", getppid matched 0).
    @Test func siglongjmpOutOfADelayLeavesAdviceWorking() throws {
        let r = try longjmpOut(delayRule: true)
        #expect(r.outcome.stdout == "jumped yes getppid42 5 read 7\n", "\(r.outcome)")
        #expect(try rule(r.table, "g") == (10, 5))
    }

    func longjmpOut(delayRule: Bool) throws -> (outcome: BoundedOutcome, table: ScratchTable) {
        let bin = try Fixture.build("longjmp_out")
        let t = try ScratchTable()
        var rules = [
            #"{"id":"r","symbol":"read","position":"after","action":{"return":7},"when":{"args":[{"arg":2,"eq":2}]}}"#,
            Self.getppidEvery2,
        ]
        if delayRule {
            rules.append(#"{"id":"d","symbol":"read","position":"before","action":{"delay":"2s"},"when":{"args":[{"arg":2,"eq":1}]}}"#)
        }
        try t.add("[" + rules.joined(separator: ",") + "]")
        let r = try BoundedRun.run(bin, [], environment: BoundedRun.preload(t.name), timeout: Self.limit)
        #expect(r.status == 0 && !r.timedOut, "\(r)")
        return (r, t)
    }

    // MARK: - processes and threads

    /// fork, vfork, fork + exec and posix_spawn from 4 threads at once, with fork, execve and
    /// posix_spawn themselves armed: every child runs to its end and counts from zero (a vfork
    /// child shares its parent's counters: any count is right for it).
    @Test func forkVforkExecAndSpawnFromThreads() throws {
        let bin = try Fixture.build("child_storm")
        let t = try ScratchTable()
        try t.add("[" + [Self.getppidEvery2, Self.armedNeverFiring("f", "fork"), Self.armedNeverFiring("e", "execve"),
                         Self.armedNeverFiring("s", "posix_spawn")].joined(separator: ",") + "]")
        let r = try BoundedRun.run(bin, ["4", "24"], environment: BoundedRun.preload(t.name), timeout: Self.limit)
        #expect(r.status == 0 && !r.timedOut, "\(r)")
        let f = fields(r.stdout)
        #expect(f["fork"] == "24:120", "\(r)")
        #expect(f["exec"] == "24:120", "\(r)")
        #expect(f["spawn"] == "24:120", "\(r)")
        #expect(f["bad"] == "0", "\(r)")
        let vfork = try #require(f["vfork"]?.split(separator: ":").compactMap { Int($0) }, "\(r)")
        #expect(vfork.count == 2 && vfork[0] == 24 && (0...240).contains(vfork[1]), "\(r)")
        // The fork rule saw the 48 forks (24 plain, 24 before an exec); none failed.
        #expect(try rule(t, "f") == (48, 0))
        #expect(try rule(t, "s") == (24, 0))
    }

    /// 1,000 threads alive at once, each calling getppid 100 times under a thread-scoped
    /// `every: 10` rule: each sees exactly 10 firings. A process-scoped `after` rule on write
    /// counts all 10,000 writes across the threads exactly.
    @Test func aThousandThreadsCallArmedFunctions() throws {
        let bin = try Fixture.build("many_threads")
        let t = try ScratchTable()
        try t.add(#"""
        [{"id":"g","symbol":"getppid","position":"instead","action":{"return":42},"scope":"thread","when":{"every":10}},
         {"id":"w","symbol":"write","position":"after","action":{"log":true},"when":{"every":1000}}]
        """#)
        let r = try BoundedRun.run(bin, ["1000", "100"], environment: BoundedRun.preload(t.name), timeout: Self.limit)
        #expect(r.status == 0 && !r.timedOut, "\(r)")
        #expect(r.stdout == "threads 1000 started 1000 min42 10 max42 10 total42 10000 writes 10000\n", "\(r)")
        #expect(try rule(t, "g") == (100_000, 10_000))
        #expect(try rule(t, "w") == (10_000, 10))
    }

    // MARK: - resource limits

    /// The limit lowered to nearly nothing before the first armed call, which is when the
    /// preload loads libffi and builds the stub: advice works or the call passes through.
    @Test(arguments: ["as", "nofile"])
    func aLimitLoweredBeforeTheFirstArmedCall(resource: String) throws {
        let bin = try Fixture.build("late_rlimit")
        let t = try ScratchTable()
        try t.add(Self.getppidEvery2)
        let plain = try BoundedRun.run(bin, [resource], timeout: Self.limit)
        let r = try BoundedRun.run(bin, [resource], environment: BoundedRun.preload(t.name), timeout: Self.limit)
        #expect(plain.status == 0 && r.status == 0, "plain: \(plain)\nadvised: \(r)")
        let open = resource == "nofile" ? "EMFILE" : "ok"
        #expect(plain.stdout == "getppid42 0 open \(open)\n", "\(plain)")
        #expect(["getppid42 0 open \(open)\n", "getppid42 5 open \(open)\n"].contains(r.stdout), "\(r)")
    }

    /// Limits in force from exec on, from too small for the program itself to plenty: the
    /// preloaded run never dies of a signal; it prints the plain or the advised output, or,
    /// when the limit leaves no room for one more library, the loader refuses to start it
    /// (never the preload crashing). With room enough the advice works.
    @Test(arguments: [
        ("as", [2, 3, 4, 5, 6, 8, 16, 64].map { $0 * 1024 * 1024 }),
        ("nofile", [3, 4, 5, 6, 7, 8, 16, 64]),
    ])
    func aLimitInForceFromStartUp(resource: String, values: [Int]) throws {
        let launcher = try Fixture.build("with_rlimit")
        let bin = try Fixture.build("open_calls")
        let t = try ScratchTable()
        try t.add(#"{"symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{"nth":2,"args":[{"arg":0,"glob":"/etc/host*"}]}}"#)
        let advisedOutput = "open 1: ok\nopen 2: -1 EACCES\nopen 3: ok\n"
        var lastAdvised = ""
        for value in values {
            let args = [resource, String(value), bin, "/etc/hostname", "3"]
            let plain = try BoundedRun.run(launcher, args, timeout: Self.limit)
            let r = try BoundedRun.run(launcher, args, environment: BoundedRun.preload(t.name), timeout: Self.limit)
            #expect(r.status < 128 && !r.timedOut, "\(resource) \(value): \(r)")
            #expect(plain.status < 128, "\(resource) \(value): \(plain)")
            if r.stdout.isEmpty {
                #expect(r.stderr.contains("error while loading shared libraries"), "\(resource) \(value): \(r)")
            } else {
                // The program's own failures under the limit (EMFILE) are the same either way.
                #expect([plain.stdout, advisedOutput].contains(r.stdout) || plain.stdout.isEmpty, "\(resource) \(value): \(r)\nplain: \(plain)")
            }
            lastAdvised = r.stdout
        }
        #expect(lastAdvised == advisedOutput)
    }

    // MARK: - binaries the preload cannot enter, and valgrind

    static let staticLibc = FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/libc.a")

    /// A statically linked program ignores LD_PRELOAD and simply runs, with the rule unseen;
    /// the dynamically linked program it execs is advised again (the environment passed on).
    @Test(.tags(.realPrograms), .requires(staticLibc, "needs libc.a (Debian: libc6-dev) for static fixtures"))
    func aStaticBinaryRunsAndItsDynamicChildIsAdvised() throws {
        let bin = try Fixture.build("exec_child", flags: ["-static"])
        let child = try Fixture.build("open_calls")
        let t = try ScratchTable()
        try t.add("[" + [Self.getppidEvery2,
                         #"{"id":"o","symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{"nth":2}}"#].joined(separator: ",") + "]")
        let plain = try BoundedRun.run(bin, [child, "/etc/hostname", "3"], timeout: Self.limit)
        #expect(plain.stdout == "static getppid42 0\nopen 1: ok\nopen 2: ok\nopen 3: ok\n", "\(plain)")
        let r = try BoundedRun.run(bin, [child, "/etc/hostname", "3"], environment: BoundedRun.preload(t.name), timeout: Self.limit)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == "static getppid42 0\nopen 1: ok\nopen 2: -1 EACCES\nopen 3: ok\n", "\(r)")
        #expect(try rule(t, "g").matched == 0)
        #expect(try rule(t, "o") == (3, 1))
    }

    static let valgrind = ["/usr/bin/valgrind", "/usr/local/bin/valgrind"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// memcheck over a program whose armed calls fire (instead, with a glob), are logged
    /// (after) and delayed (before): no error at all, with one suppression for the dynamic
    /// loader's own word-at-a-time strncmp (Tests/Fixtures/Preload/valgrind-rtld.supp says why).
    @Test(.tags(.realPrograms), .requires(valgrind != nil, "needs valgrind"))
    func valgrindFindsNoErrors() throws {
        let bin = try Fixture.build("open_calls")
        let t = try ScratchTable()
        try t.add(#"""
        [{"id":"o","symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{"nth":2,"args":[{"arg":0,"glob":"/etc/host*"}]}},
         {"id":"c","symbol":"close","position":"after","action":{"log":true}},
         {"id":"p","symbol":"open","position":"before","action":{"delay":"1ms"},"when":{"nth":3}}]
        """#)
        let r = try BoundedRun.run(Self.valgrind!, ["--error-exitcode=99", "--num-callers=40",
                                                "--suppressions=" + Fixture.path("valgrind-rtld.supp"),
                                                bin, "/etc/hostname", "3"],
                                   environment: BoundedRun.preload(t.name), timeout: 120)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == "open 1: ok\nopen 2: -1 EACCES\nopen 3: ok\n", "\(r)")
        #expect(r.stderr.contains("ERROR SUMMARY: 0 errors"), "\(r.stderr)")
        #expect(try rule(t, "o") == (3, 1))
        // valgrind's launcher is a shell script, and runs under the preload too: its own
        // closes and opens count as well.
        #expect(try rule(t, "c").fired >= 2)
        #expect(try rule(t, "p").fired >= 1)
    }
}
