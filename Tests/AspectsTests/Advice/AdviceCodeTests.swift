import Foundation
import Testing
import AspectsRules
import AspectsTable

/// Advice as code: a rule's `"call"` runs the user's own C function with the call's invocation
/// record (aspects_advice.h), Aspects' AspectInfo and originalInvocation. The probes are in
/// Tests/Fixtures/Advice/advice_probe.c, the program they advise in advice_host.c.
@Suite struct AdviceCodeTests {
    static func probe() throws -> String {
        try Fixture.library("advice_probe", soname: "advice_probe", flags: ["-I", Paths.root + "/Sources/CPreload/include"]) + "/libadvice_probe.so"
    }

    static func host() throws -> String { try Fixture.build("advice_host") }

    /// Whether advice_host's `fork` mode ran unadvised: both getppid answers are the kernel's
    /// (which it prints on stderr). A real pid can be 4242 too, so the probe's value is no test.
    static func forkRanUnadvised(stdout: String, stderr: String) -> Bool {
        guard let line = stderr.split(separator: "\n").first(where: { $0.hasPrefix("kernel: child ") }) else { return false }
        let words = line.split(separator: " ")
        guard words.count == 5 else { return false }
        return stdout == "child: \(words[2]) parent: \(words[4])\n"
    }

    /// A rule calling `function` of the probe library.
    static func rule(_ id: String, _ symbol: String, _ position: String, _ function: String, when: String = "") throws -> String {
        #"{"id":"\#(id)","symbol":"\#(symbol)","position":"\#(position)","action":{"call":"\#(try probe()):\#(function)"}\#(when.isEmpty ? "" : #","when":"# + when)}"#
    }

    static func run(_ rules: [String], _ args: [String], debug: Bool = false) throws -> (Outcome, ScratchTable) {
        let t = try ScratchTable()
        for r in rules { try t.add(r) }
        var env = Proc.preload(table: t.name)
        if debug { env["ASPECTS_DEBUG"] = "1" }
        return (try Proc.run(try host(), args, environment: env), t)
    }

    @Test(.tags(.realPrograms), arguments: ["before", "instead", "after"]) func eachPositionKeepsItsPromises(position: String) throws {
        let (r, t) = try Self.run([try Self.rule("c", "write", position, "probe_contract")], ["write"])
        #expect(r.stderr.contains("probe: contract ok"), "\(r)")
        // instead proceeded once: the write happened, with its result
        #expect(r.status == 0 && r.stdout == "hello world\n" && r.stderr.contains("write: 12"), "\(r)")
        #expect(t.table.rules().first?.fired == 1)
    }

    @Test(.tags(.realPrograms)) func theRecordDescribesTheCall() throws {
        let (r, t) = try Self.run([try Self.rule("d", "write", "after", "probe_describe")], ["write"])
        // fd 1, the buffer, the count 12; the original's result; errno of a success; the caller
        #expect(r.stderr.contains("probe: write rule=d call=1 position=2 version=0x10000 args=3 i1 p i12 return=12 errno=0 caller=advice_host-"), "\(r)")
        let events = t.table.events(from: 0).events
        #expect(events.map(\.kind) == ["fired"] && events.first?.site?.object.hasPrefix("advice_host-") == true, "\(events)")
        // written before the function ran: after a write, what the original returned
        #expect(events.first?.returnText == "12 (before the advice ran)", "\(events)")
        let rule = try #require(t.table.rules().first)
        let probe = try Self.probe()
        #expect(rule.actions.contains("call \(probe):probe_describe"), "\(rule.actions)")
    }

    /// Conditions decide as for any rule, and other rules of the function run around it.
    @Test(.tags(.realPrograms)) func conditionsAndOtherRulesApply() throws {
        let three = try Self.rule("three", "write", "before", "probe_write_three")
        let second = try Self.rule("second", "write", "after", "probe_describe", when: #"{"nth":2,"args":[{"arg":0,"eq":1}]}"#)
        let (r, t) = try Self.run([three, second], ["write"])
        // the original wrote 3 bytes a call, and the program wrote the rest
        #expect(r.stdout == "hello world\n" && r.stderr.components(separatedBy: "write: 3\n").count == 5, "\(r)")
        // the arguments as the original got them: the count was 9, the first rule made it 3
        #expect(r.stderr.contains("probe: write rule=second call=2 ") && r.stderr.contains(" i1 p i3 return=3 "), "\(r)")
        let counts = Dictionary(uniqueKeysWithValues: t.table.rules().map { ($0.id, $0.fired) })
        #expect(counts == ["three": 4, "second": 1])
    }

    @Test(.tags(.realPrograms)) func insteadGivesTheResultAndErrnoWithoutTheOriginal() throws {
        let file = NSTemporaryDirectory() + "advice-unlink-\(getpid())"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        defer { TableSegments.removeScratch(file) }
        let (r, _) = try Self.run([try Self.rule("ro", "unlink", "instead", "probe_unlink_erofs")], ["unlink", file])
        #expect(r.stderr.contains("unlink: -1 errno \(EROFS)"), "\(r)")
        #expect(FileManager.default.fileExists(atPath: file))
    }

    @Test(.tags(.realPrograms)) func theAdvicesOwnErrnoIsNotTheCallers() throws {
        let (r, _) = try Self.run([try Self.rule("e", "getppid", "after", "probe_clobber_errno")], ["errno"])
        #expect(r.stderr.contains("errno: 12345"), "\(r)")
    }

    /// The advice writes with write itself: advised by its own rule, it would never return.
    @Test(.tags(.realPrograms)) func callsTheAdviceMakesAreNotAdvised() throws {
        let log = #"{"id":"log","symbol":"write","position":"before","action":{"log":true}}"#
        let (r, t) = try Self.run([try Self.rule("r", "write", "before", "probe_reenter"), log], ["write"])
        #expect(r.status == 0 && r.stdout == "hello world\n", "\(r)")
        #expect(r.stderr.components(separatedBy: "probe: reentered write").count == 2, "\(r)")
        let counts = Dictionary(uniqueKeysWithValues: t.table.rules().map { ($0.id, $0.fired) })
        #expect(counts == ["r": 1, "log": 1], "not even another rule advises the advice's own call")
    }

    @Test(.tags(.realPrograms)) func anAdviceThatCrashesIsTheLastEventOfItsProcess() throws {
        let log = #"{"id":"log","symbol":"write","position":"before","action":{"log":true}}"#
        let (r, t) = try Self.run([log, try Self.rule("crash", "write", "before", "probe_crash")], ["write"])
        #expect(r.status == 128 + SIGSEGV && r.stdout.isEmpty, "\(r)")
        let events = t.table.events(from: 0).events
        let last = try #require(events.last)
        #expect(last.kind == "fired" && last.rule == "crash" && last.symbol == "write", "\(events)")
        #expect(events.map(\.rule) == ["log", "crash"], "the log rule's event first, in table order")
    }

    /// Not async-signal-safe to load: a rule added while the program runs is not loaded by a
    /// first firing in a signal handler (unavailable, the original runs), but by the next call
    /// made outside one.
    @Test func aFirstFiringInASignalHandlerDoesNotLoad() throws {
        let t = try ScratchTable()
        try t.add(#"{"symbol":"fsync","position":"instead","action":{"fail":true}}"#)
        let p = try LiveProcess(try Self.host(), ["handler"], table: t.name)
        #expect(p.send("start") == "ready")
        try t.add(try Self.rule("pp", "getppid", "instead", "probe_getppid_4242"))
        let answer = p.send("go")
        let words = answer.split(separator: " ")
        #expect(words.count == 6 && words[1] == words[5] && words[3] == "4242", "the handler's call unadvised, main's advised: \(answer)")
        let events = t.table.events(from: 0).events
        #expect(events.map(\.kind) == ["unavailable", "fired"], "\(events)")
        #expect(events.first?.reason?.contains("not safe") == true, "\(events)")
        #expect(try p.finish() == 0)
    }

    /// A rule in the table when the program starts: loaded then, so a first firing in a handler
    /// runs it.
    @Test func aRuleThereAtStartIsLoadedAtStart() throws {
        let t = try ScratchTable()
        try t.add(try Self.rule("pp", "getppid", "instead", "probe_getppid_4242"))
        let p = try LiveProcess(try Self.host(), ["handler"], table: t.name)
        #expect(p.send("start") == "ready")
        let both = p.send("go")
        #expect(both.hasPrefix("handler: 4242 main: 4242 kernel: "), "\(both)")
        #expect(t.table.events(from: 0).events.map(\.kind) == ["fired", "fired"])
        #expect(try p.finish() == 0)
    }

    @Test(.tags(.realPrograms)) func forkChildrenKeepTheLoadedAdvice() throws {
        let (r, t) = try Self.run([try Self.rule("pp", "getppid", "instead", "probe_getppid_4242")], ["fork"])
        #expect(r.stdout == "child: 4242 parent: 4242\n", "\(r)")
        #expect(Set(t.table.events(from: 0).events.map(\.pid)).count == 2)
    }

    /// Functions advised from a prototype: integer arguments, double results, a struct by value.
    @Test func prototypeFunctionsToo() throws {
        let libDir = try Fixture.library("proto_lib", soname: "fx")
        let bin = try Fixture.build("proto_main", flags: ["-L", libDir, "-lfx", "-Wl,-rpath," + libDir, "-ldl"])
        let probe = try Self.probe()
        let t = try ScratchTable()
        try t.add(#"{"id":"add","symbol":"fx_add","prototype":"int fx_add(int a, int b)","position":"instead","action":{"call":"\#(probe):probe_add_hundred"}}"#)
        try t.add(#"{"id":"scale","symbol":"fx_scale","prototype":"double fx_scale(double x, double k)","position":"after","action":{"call":"\#(probe):probe_double_scale"}}"#)
        try t.add(#"{"id":"swap","symbol":"fx_swap","prototype":"struct pair fx_swap(struct pair p)","types":{"struct pair":["double","double"]},"position":"after","action":{"call":"\#(probe):probe_negate_swap"}}"#)
        let r = try Proc.run(bin, ["1"], environment: Proc.preload(table: t.name))
        #expect(r.stdout.contains("add 1: 102\n"), "\(r)")         // fx_add(100, 2)
        #expect(r.stdout.contains("scale 1: 3.00\n"), "\(r)")      // 1 * 1.5, doubled
        #expect(r.stdout.contains("swap 1: -0.5 1.0\n"), "\(r)")   // {0.5, 1}, first field negated
        let t2 = try ScratchTable()
        try t2.add(#"{"id":"ten","symbol":"fx_scale","prototype":"double fx_scale(double x, double k)","position":"instead","action":{"call":"\#(probe):probe_scale_ten"}}"#)
        let r2 = try Proc.run(bin, ["1"], environment: Proc.preload(table: t2.name))
        #expect(r2.stdout.contains("scale 1: 15.00\n"), "\(r2)")   // fx_scale(10, 1.5)
    }

    /// check and add read the object as the preload will load it, and refuse with the rule,
    /// the field and the fix.
    @Test func theObjectIsCheckedBeforeAnythingIsWritten() throws {
        let dir = NSTemporaryDirectory() + "advice-check-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        _ = try Proc.run("/usr/bin/env", ["cc", "-shared", "-fPIC", "-o", dir + "/libnewer.so", Fixture.path("advice_newer.c")])
        _ = try Proc.run("/usr/bin/env", ["cc", "-shared", "-fPIC", "-o", dir + "/libbare.so", Fixture.path("advice_unversioned.c")])
        func error(_ call: String) -> String {
            let json = #"{"id":"a","symbol":"write","position":"before","action":{"call":"\#(call)"}}"#
            do { _ = try RuleCompiler().compile(try RuleDecoder(source: "t", baseDirectory: dir).decode(json)); return "" } catch { return "\(error)" }
        }
        let probe = try Self.probe()
        #expect(error("\(probe):probe_describe") == "")
        #expect(error("./libnewer.so:probe_describe").contains("was built with aspects_advice.h 2.0; this aspects runs version 1.0"))
        #expect(error("./libbare.so:probe_describe").contains("was not built with aspects_advice.h"))
        #expect(error("\(probe):probe_descrbe").contains("exports no function probe_descrbe; did you mean probe_describe?"))
        let missing = error("./nothing.so:f")
        #expect(missing.contains("rule \"a\": action.call: \(dir)/nothing.so (\"./nothing.so\", from the rules file's directory) does not exist"), "\(missing)")
        #expect(error("libnothing-\(getpid()).so:f").contains("is not found where the loader looks"))
        #expect(error("\(probe):2bad").contains("is not a C function name"))
        #expect(error("\(probe)").contains("does not name a function"))
        #expect(error("/etc/hostname:f").contains("is not a shared object"))
    }

    /// A relative path is the rules file's directory's, wherever aspectctl runs; the table
    /// keeps it absolute, so `list --rules` gives back a rule that names the same object.
    @Test func aRelativePathIsTheRulesFilesDirectorys() throws {
        let dir = NSTemporaryDirectory() + "advice-relative-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir + "/rules", withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        try FileManager.default.copyItem(atPath: try Self.probe(), toPath: dir + "/rules/libprobe.so")
        try #"{"id":"rel","symbol":"getppid","position":"instead","action":{"call":"./libprobe.so:probe_getppid_4242"}}"#
            .write(toFile: dir + "/rules/rel.json", atomically: true, encoding: .utf8)
        let check = try Proc.run(Paths.aspectctl, ["check", dir + "/rules/rel.json"], directory: "/")
        #expect(check.status == 0, "\(check)")
        let t = try ScratchTable()
        #expect(try Proc.aspectctl(["add", "--table", t.name, dir + "/rules/rel.json"]).status == 0)
        let listed = try Proc.aspectctl(["list", "--table", t.name, "--rules"])
        #expect(listed.stdout.contains(#""call": "\#(dir)/rules/libprobe.so:probe_getppid_4242""#), "\(listed)")
        let r = try Proc.run(try Self.host(), ["fork"], environment: Proc.preload(table: t.name))
        #expect(r.stdout == "child: 4242 parent: 4242\n", "\(r)")
    }

    /// A relative path through a symbolic link (SwiftPM's `.build/release` is one) is stored as
    /// the real path it names when the rule is added, so root's processes, which refuse links in
    /// an object's path, still load it; an absolute path stays as written.
    @Test func aRelativePathIsStoredAsItsRealPath() throws {
        let dir = NSTemporaryDirectory() + "advice-realpath-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir + "/build/x86_64/release", withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        try FileManager.default.createSymbolicLink(atPath: dir + "/build/release", withDestinationPath: "x86_64/release")
        try FileManager.default.copyItem(atPath: try Self.probe(), toPath: dir + "/build/x86_64/release/libprobe.so")
        try #"{"id":"rel","symbol":"getppid","position":"instead","action":{"call":"./build/release/libprobe.so:probe_getppid_4242"}}"#
            .write(toFile: dir + "/rel.json", atomically: true, encoding: .utf8)
        let t = try ScratchTable()
        #expect(try Proc.aspectctl(["add", "--table", t.name, dir + "/rel.json"]).status == 0)
        let listed = try Proc.aspectctl(["list", "--table", t.name, "--rules"])
        #expect(listed.stdout.contains(#""call": "\#(dir)/build/x86_64/release/libprobe.so:probe_getppid_4242""#), "\(listed)")
        let r = try Proc.run(try Self.host(), ["fork"], environment: Proc.preload(table: t.name))
        #expect(r.stdout == "child: 4242 parent: 4242\n", "\(r)")
        let absolute = #"{"symbol":"getppid","position":"instead","action":{"call":"\#(dir)/build/release/libprobe.so:probe_getppid_4242"}}"#
        let checked = try Proc.aspectctl(["check", "--json", "--rule", absolute])
        #expect(checked.stdout.contains("\(dir)/build/release/libprobe.so"), "\(checked)")
    }

    /// The preload's own checks, for an object that changed after check: refused with an event
    /// and an ASPECTS_DEBUG line, and the call goes on to the original.
    @Test func theProcessRefusesWhatItCannotCall() throws {
        let dir = NSTemporaryDirectory() + "advice-refuse-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let object = dir + "/libswapped.so"
        try FileManager.default.copyItem(atPath: try Self.probe(), toPath: object)
        let rule = #"{"id":"v","symbol":"write","position":"instead","action":{"call":"\#(object):probe_describe"}}"#
        let t = try ScratchTable()
        try t.add(rule)
        // built for a major version this preload does not speak
        try FileManager.default.removeItem(atPath: object)
        let newer = try Proc.run("/usr/bin/env", ["cc", "-shared", "-fPIC", "-o", object, Fixture.path("advice_newer.c")])
        #expect(newer.status == 0, "\(newer)")
        var env = Proc.preload(table: t.name)
        env["ASPECTS_DEBUG"] = "1"
        let r = try Proc.run(try Self.host(), ["write"], environment: env)
        #expect(r.status == 0 && r.stdout == "hello world\n", "the original ran: \(r)")
        #expect(r.stderr.contains("libaspects: advice object \(object) was built with aspects_advice.h version 2.0; this libaspects.so runs major version 1: refused"), "\(r)")
        let events = t.table.events(from: 0).events
        #expect(events.map(\.kind) == ["unavailable"] && events[0].reason?.contains("another major version") == true, "\(events)")
        // gone altogether
        try FileManager.default.removeItem(atPath: object)
        _ = t.table.clearEvents()
        let gone = try Proc.run(try Self.host(), ["write"], environment: env)
        #expect(gone.stdout == "hello world\n" && gone.stderr.contains("libaspects: advice object \(object) not loaded: \(object) does not exist"), "\(gone)")
        let after = t.table.events(from: t.table.eventCursor).events
        #expect(after.map(\.kind) == ["unavailable"] && after[0].reason?.contains("could not be loaded") == true, "\(after)")
    }

    /// In a table shared with a group every member adds rules, and a `call` rule runs code: a
    /// member's process loads only an object that no one but its user or root could change.
    @Test(.tags(.realPrograms), .requires(SharedTableTests.canSwitchUsers, "needs root and setpriv"))
    func aSharedTableRunsOnlyTrustedAdvice() throws {
        let trusted = NSTemporaryDirectory() + "advice-trusted-\(UUID().uuidString)"
        let open = trusted + "/open"
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { TableSegments.removeScratch(trusted) }
        chmod(trusted, 0o755)
        chmod(open, 0o777) // anyone may replace what is in here
        for dir in [trusted, open] {
            try FileManager.default.copyItem(atPath: try Self.probe(), toPath: dir + "/libprobe.so")
            chmod(dir + "/libprobe.so", 0o644)
        }
        try FileManager.default.copyItem(atPath: try Self.host(), toPath: trusted + "/host")
        chmod(trusted + "/host", 0o755)
        func run(_ object: String) throws -> (Outcome, [TableEvent]) {
            let name = "test-advice-shared-\(getpid())"
            _ = try? Proc.aspectctl(["destroy", "--table", name])
            defer { _ = try? Proc.aspectctl(["destroy", "--table", name]) }
            #expect(try Proc.aspectctl(["create", "--table", name, "--share-with-group", String(SharedTableTests.gid)]).status == 0)
            let rule = #"{"id":"pp","symbol":"getppid","position":"instead","action":{"call":"\#(object):probe_getppid_4242"}}"#
            #expect(try Proc.aspectctl(["add", "--table", name, "--rule", rule]).status == 0)
            let r = try Proc.run("/usr/bin/setpriv", ["--reuid=\(SharedTableTests.uid)", "--regid=\(SharedTableTests.uid)",
                                                      "--groups=\(SharedTableTests.gid)", "--", "/usr/bin/env",
                                                      "LD_PRELOAD=\(try SharedTableTests.readableLibrary())", "ASPECTS_TABLE=\(name)", "ASPECTS_DEBUG=1",
                                                      trusted + "/host", "fork"])
            return (r, try AdviceTable.open(TableName(name)).events(from: 0).events)
        }
        let (ok, okEvents) = try run(trusted + "/libprobe.so")
        #expect(ok.stdout == "child: 4242 parent: 4242\n" && okEvents.allSatisfy { $0.kind == "fired" }, "\(ok)")
        let (refused, events) = try run(open + "/libprobe.so")
        #expect(Self.forkRanUnadvised(stdout: refused.stdout, stderr: refused.stderr), "\(refused)")
        #expect(refused.stderr.contains("libaspects: advice object \(open)/libprobe.so not loaded: \(open) is writable by group or others (the table is shared with a group"), "\(refused)")
        #expect(!events.isEmpty && events.allSatisfy { $0.kind == "unavailable" && $0.reason?.contains("shared with a group") == true }, "\(events)")
    }

    /// aspects_advice.h's version is the one check and the preload hold objects to.
    @Test(.tags(.fast)) func theHeadersVersionIsTheOneChecked() throws {
        let header = try String(contentsOfFile: Paths.root + "/Sources/CPreload/include/aspects_advice.h", encoding: .utf8)
        func macro(_ name: String) -> UInt32? {
            header.firstMatch(of: try! Regex("#define \(name) ([0-9]+)u"))
                .flatMap { UInt32(String($0.output[1].substring ?? "")) }
        }
        let major = try #require(macro("ASPECTS_ADVICE_VERSION_MAJOR")), minor = try #require(macro("ASPECTS_ADVICE_VERSION_MINOR"))
        #expect(AdviceObject.version == major << 16 | minor)
    }
}
