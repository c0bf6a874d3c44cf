import Foundation
import Testing
@testable import AspectsTesting
import CAspectsABI
import AspectsCore
import AspectsRules

/// The Swift test library (AspectsTesting): typed rules encoded to the rule JSON and checked
/// by the same code, runs, live tables with tokens — and a package that depends on this one
/// by URL at a version tag builds and passes its own `swift test` with it.
@Suite(.serialized) struct AspectsTestingTests {
    @Test(.tags(.fast)) func typedRulesAreTheRuleLanguage() throws {
        let r = Rule.instead("write", .fail("ENOSPC"), when: .nth(3), .argFdPath(0, "*.img"), id: "disk")
        #expect(r.json == #"{"id":"disk","symbol":"write","position":"instead","action":{"fail":"ENOSPC"},"when":{"nth":3,"args":[{"arg":0,"fdpath":"*.img"}]}}"#)
        #expect(try r.compiled().count == 1)
        let family = Rule.after("read", .fail("EIO"), when: .result(min: 1), .every(2)).family("read").scope(.hierarchy)
        #expect(family.json.contains(#""family":"read""#) && family.json.contains(#""result":{"min":1}"#) && family.json.contains(#""scope":"hierarchy""#))
        _ = try family.compiled()
        let proto = Rule.instead("fx_add", .return(-7)).prototype("int fx_add(int a, int b)")
        _ = try proto.compiled()
        // what a file may not say, a Rule may not either: the same error
        #expect(throws: AspectsError.self) { try Rule.before("write", .fail("ENOSPC")).compiled() }
        #expect(throws: AspectsError.self) { try Rule.instead("wirte", .failDefault).compiled() }
    }

    /// A rule that only says "fail" takes the catalog's natural failure: fsync and close after
    /// their work, write instead of it, with the default error when none is named — no
    /// position to choose and no warning (`check` explains only a failure that cannot happen).
    @Test func aFailingRuleFailsTheFunctionAsItReallyFails() throws {
        let fsync = Rule.failing("fsync", .EIO)
        #expect(fsync.json == #"{"symbol":"fsync","action":{"fail":"EIO"}}"#)
        #expect(try fsync.compiled().map(\.position) == [UInt32(ASPECTS_POSITION_AFTER.rawValue)])
        #expect(try Rule.failing("close").compiled().map(\.position) == [UInt32(ASPECTS_POSITION_AFTER.rawValue)])
        #expect(try Rule.failing("write", .ENOSPC, when: .nth(3)).compiled().map(\.position) == [UInt32(ASPECTS_POSITION_INSTEAD.rawValue)])
        #expect(Rule.failing("write").family("write").json == #"{"family":"write","action":{"fail":true}}"#)
        let checked = try Proc.aspectctl(["check", "--rule", fsync.json])
        #expect(checked.status == 0 && checked.stdout.contains("after fsync") && !checked.stderr.contains("can never happen"), "\(checked)")
    }

    /// One case per field of the rule language: the typed rule, the JSON it encodes to, and
    /// that the rule language's own decoder and compiler accept it.
    struct FieldCase: Sendable {
        var field: String
        var rule: AspectsTesting.Rule
        var json: String
        init(_ field: String, _ rule: AspectsTesting.Rule, _ json: String) { self.field = field; self.rule = rule; self.json = json }
    }

    static let fields: [FieldCase] = [
        FieldCase("id", .instead("write", .fail(.ENOSPC), id: "disk"), #"{"id":"disk","symbol":"write","position":"instead","action":{"fail":"ENOSPC"}}"#),
        FieldCase("symbol (several)", AspectsTesting.Rule.instead("write", .fail("EIO")).alsoOn("pwrite"), #"{"symbol":["write","pwrite"],"position":"instead","action":{"fail":"EIO"}}"#),
        FieldCase("family", AspectsTesting.Rule.instead("write", .fail("EIO")).family("write"), #"{"family":"write","position":"instead","action":{"fail":"EIO"}}"#),
        FieldCase("prototype", AspectsTesting.Rule.instead("fx_add", .return(-7)).prototype("int fx_add(int a, int b)"),
         #"{"symbol":"fx_add","position":"instead","action":{"return":-7},"prototype":"int fx_add(int a, int b)"}"#),
        FieldCase("types, action.return (struct)", AspectsTesting.Rule.instead("mk_pair", .returnStruct([1.5, 2])).prototype("struct pair mk_pair(void)", types: ["struct pair": ["double", "int"]]),
         #"{"symbol":"mk_pair","position":"instead","action":{"return":[1.5,2]},"prototype":"struct pair mk_pair(void)","types":{"struct pair":["double","int"]}}"#),
        FieldCase("variadic", AspectsTesting.Rule.instead("fx_sum", .return(3)).prototype("int fx_sum(int n, ...)", variadic: ["int"]),
         #"{"symbol":"fx_sum","position":"instead","action":{"return":3},"prototype":"int fx_sum(int n, ...)","variadic":["int"]}"#),
        FieldCase("failure", AspectsTesting.Rule.instead("fx_open", .failDefault).prototype("int fx_open(const char *path)").failure(returns: -1, errno: .EACCES),
         #"{"symbol":"fx_open","position":"instead","action":{"fail":true},"prototype":"int fx_open(const char *path)","failure":{"return":-1,"errno":"EACCES"}}"#),
        FieldCase("scope", AspectsTesting.Rule.before("read", .log).scope(.hierarchy), #"{"symbol":"read","position":"before","action":{"log":true},"scope":"hierarchy"}"#),
        FieldCase("autoRemove", AspectsTesting.Rule.instead("unlink", .fail(.EPERM)).autoRemove(), #"{"symbol":"unlink","position":"instead","action":{"fail":"EPERM"},"autoRemove":true}"#),
        FieldCase("once", AspectsTesting.Rule.instead("open", .fail(.EACCES)).once(.hierarchy), #"{"symbol":"open","position":"instead","action":{"fail":"EACCES"},"once":"hierarchy"}"#),
        FieldCase("allowAnyErrno", AspectsTesting.Rule.instead("write", .fail(.ENOENT)).allowAnyErrno(), #"{"symbol":"write","position":"instead","action":{"fail":"ENOENT"},"allowAnyErrno":true}"#),
        FieldCase("comment", AspectsTesting.Rule.before("read", .log).comment("who reads?"), #"{"symbol":"read","position":"before","action":{"log":true},"comment":"who reads?"}"#),
        FieldCase("action.fail (string)", .instead("write", .fail("ENOSPC")), #"{"symbol":"write","position":"instead","action":{"fail":"ENOSPC"}}"#),
        FieldCase("action.fail (list), when.seed", .instead("write", .failWithOneOf([.EIO, "ENOSPC"]), when: .seed(7)),
         #"{"symbol":"write","position":"instead","action":{"fail":["EIO","ENOSPC"]},"when":{"seed":7}}"#),
        FieldCase("action.fail (default)", .instead("write", .failDefault), #"{"symbol":"write","position":"instead","action":{"fail":true}}"#),
        FieldCase("action.return, action.errno", .instead("write", .return(-1), .errno(.EINTR)), #"{"symbol":"write","position":"instead","action":{"return":-1,"errno":"EINTR"}}"#),
        FieldCase("action.return (double)", AspectsTesting.Rule.instead("fx_half", .returnDouble(0.5)).prototype("double fx_half(double x)"),
         #"{"symbol":"fx_half","position":"instead","action":{"return":0.5},"prototype":"double fx_half(double x)"}"#),
        FieldCase("action.delay", .before("connect", .delay("200ms")), #"{"symbol":"connect","position":"before","action":{"delay":"200ms"}}"#),
        FieldCase("action.signal", .before("getppid", .signal(.SIGUSR1)), #"{"symbol":"getppid","position":"before","action":{"signal":"SIGUSR1"}}"#),
        FieldCase("action.signal (number)", .before("getppid", .signal(10)), #"{"symbol":"getppid","position":"before","action":{"signal":10}}"#),
        FieldCase("action.log", .before("read", .log), #"{"symbol":"read","position":"before","action":{"log":true}}"#),
        FieldCase("action.args", .before("write", .setArgument(2, 1)), #"{"symbol":"write","position":"before","action":{"args":[{"arg":2,"value":1}]}}"#),
        FieldCase("action.call", .instead("getaddrinfo", .call(Self.callObject + ":probe_describe")),
         #"{"symbol":"getaddrinfo","position":"instead","action":{"call":"\#(Self.callObject):probe_describe"}}"#),
        FieldCase("action.corrupt, when.seed", .after("read", .corrupt(arg: 1, bits: 2), when: .seed(7)),
         #"{"symbol":"read","position":"after","action":{"corrupt":{"arg":1,"bits":2}},"when":{"seed":7}}"#),
        FieldCase("action.short", .before("send", .short), #"{"symbol":"send","position":"before","action":{"short":true}}"#),
        FieldCase("when.nth", .instead("write", .fail(.EIO), when: .nth(3)), #"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"nth":3}}"#),
        FieldCase("when.after, when.every", .instead("write", .fail(.EIO), when: .after(2), .every(2)), #"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"after":2,"every":2}}"#),
        FieldCase("when.first", .instead("write", .fail(.EIO), when: .every(2), .first(3)), #"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"every":2,"first":3}}"#),
        FieldCase("when.times", .instead("write", .fail(.EIO), when: .times(1)), #"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"times":1}}"#),
        FieldCase("when.probability", .instead("malloc", .fail(.ENOMEM), when: .probability(0.25), .seed(1)),
         #"{"symbol":"malloc","position":"instead","action":{"fail":"ENOMEM"},"when":{"probability":0.25,"seed":1}}"#),
        FieldCase("when.process", .before("write", .log, when: .process("*/dd")), #"{"symbol":"write","position":"before","action":{"log":true},"when":{"process":"*/dd"}}"#),
        FieldCase("when.caller", .before("write", .log, when: .caller("*libsqlite3*")), #"{"symbol":"write","position":"before","action":{"log":true},"when":{"caller":"*libsqlite3*"}}"#),
        FieldCase("when.site", .instead("write", .fail(.EIO), when: .site("dd+0x1a2b")), #"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"site":"dd+0x1a2b"}}"#),
        FieldCase("when.context", .instead("malloc", .fail(.ENOMEM), when: .context(["app+0x1379", "app+0x14b0"])), #"{"symbol":"malloc","position":"instead","action":{"fail":"ENOMEM"},"when":{"context":["app+0x1379","app+0x14b0"]}}"#),
        FieldCase("action.context", .before("malloc", .log, .recordContext), #"{"symbol":"malloc","position":"before","action":{"log":true,"context":true}}"#),
        FieldCase("when.result (min, max)", .after("read", .fail(.EIO), when: .result(min: 1, max: 4096)), #"{"symbol":"read","position":"after","action":{"fail":"EIO"},"when":{"result":{"min":1,"max":4096}}}"#),
        FieldCase("when.result (eq)", .after("read", .fail(.EIO), when: .resultEquals(0)), #"{"symbol":"read","position":"after","action":{"fail":"EIO"},"when":{"result":{"eq":0}}}"#),
        FieldCase("when.result (lt_arg)", .after("write", .fail(.EIO), when: .result(min: 0), .resultBelowArgument(2)),
         #"{"symbol":"write","position":"after","action":{"fail":"EIO"},"when":{"result":{"min":0,"lt_arg":2}}}"#),
        FieldCase("when.errno", .after("open", .fail(.EACCES), when: .failedWith(.ENOENT)), #"{"symbol":"open","position":"after","action":{"fail":"EACCES"},"when":{"errno":"ENOENT"}}"#),
        FieldCase("when.args eq", .instead("write", .fail(.EIO), when: .argEquals(0, 1)), #"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"args":[{"arg":0,"eq":1}]}}"#),
        FieldCase("when.args eq (flags)", .instead("open", .fail(.EACCES), when: .argEquals(1, "O_RDONLY")),
         #"{"symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{"args":[{"arg":1,"eq":"O_RDONLY"}]}}"#),
        FieldCase("when.args ne", .instead("write", .fail(.EIO), when: .argNotEquals(0, 2)), #"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"args":[{"arg":0,"ne":2}]}}"#),
        FieldCase("when.args min, max", .instead("write", .fail(.EIO), when: .argRange(2, min: 1, max: 4096)),
         #"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"args":[{"arg":2,"min":1,"max":4096}]}}"#),
        FieldCase("when.args mask", .instead("open", .fail(.EACCES), when: .argMask(1, "O_CREAT")), #"{"symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{"args":[{"arg":1,"mask":"O_CREAT"}]}}"#),
        FieldCase("when.args mask all", .instead("open", .fail(.EEXIST), when: .argMaskAll(1, "O_CREAT|O_EXCL")),
         #"{"symbol":"open","position":"instead","action":{"fail":"EEXIST"},"when":{"args":[{"arg":1,"mask":"O_CREAT|O_EXCL","all":true}]}}"#),
        FieldCase("when.args glob", .instead("open", .fail(.EACCES), when: .argGlob(0, "*.db")), #"{"symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{"args":[{"arg":0,"glob":"*.db"}]}}"#),
        FieldCase("when.args prefix", .instead("open", .fail(.EACCES), when: .argPrefix(0, "/etc/")), #"{"symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{"args":[{"arg":0,"prefix":"/etc/"}]}}"#),
        FieldCase("when.args fdpath", .instead("write", .fail(.ENOSPC), when: .argFdPath(0, "*.img")), #"{"symbol":"write","position":"instead","action":{"fail":"ENOSPC"},"when":{"args":[{"arg":0,"fdpath":"*.img"}]}}"#),
    ]

    /// Where the `call` case's object is: the advice probe, copied to a fixed path.
    static let callObject = Paths.build + "/fixtures/advice-field-case/libprobe.so"

    @Test(arguments: Self.fields.indices) func eachFieldEncodesToWhatTheLanguageAccepts(_ i: Int) throws {
        let c = Self.fields[i]
        if c.json.contains(Self.callObject), !FileManager.default.fileExists(atPath: Self.callObject) {
            try FileManager.default.createDirectory(atPath: Paths.build + "/fixtures/advice-field-case", withIntermediateDirectories: true)
            try? FileManager.default.copyItem(atPath: try AdviceCodeTests.probe(), toPath: Self.callObject)
        }
        #expect(c.rule.json == c.json, "\(c.field): \(c.rule.json)")
        // the same code as a rules file: decoded and compiled without an error
        let compiled = try c.rule.compiled()
        #expect(compiled.count == 1, "\(c.field)")
    }

    /// The cases above use every field the decoder knows, at every level.
    @Test(.tags(.fast)) func theCasesCoverEveryFieldOfTheLanguage() throws {
        var used: [String: Set<String>] = [:]
        func keys(_ n: JSONNode?) -> [String] { if case .object(let m)? = n?.value { return m.map(\.key) }; return [] }
        func items(_ n: JSONNode?) -> [JSONNode] { if case .array(let a)? = n?.value { return a }; return [] }
        for c in Self.fields {
            let doc = try JSONParser.parse(c.json)
            used["rule", default: []].formUnion(keys(doc))
            used["action", default: []].formUnion(keys(doc["action"]))
            used["failure", default: []].formUnion(keys(doc["failure"]))
            used["when", default: []].formUnion(keys(doc["when"]))
            used["result", default: []].formUnion(keys(doc["when"]?["result"]))
            for m in items(doc["when"]?["args"]) { used["matcher", default: []].formUnion(keys(m)) }
            for s in items(doc["action"]?["args"]) { used["argSet", default: []].formUnion(keys(s)) }
            used["corrupt", default: []].formUnion(keys(doc["action"]?["corrupt"]))
        }
        let language: [String: [String]] = [
            "rule": RuleDecoder.ruleFields, "action": RuleDecoder.actionFields, "failure": RuleDecoder.failureFields,
            "when": RuleDecoder.whenFields, "result": RuleDecoder.resultFields, "matcher": RuleDecoder.matcherFields,
            "argSet": RuleDecoder.argSetFields, "corrupt": RuleDecoder.corruptFields,
        ]
        for (level, fields) in language {
            let missing = Set(fields).subtracting(used[level] ?? [])
            #expect(missing.isEmpty, "no typed case encodes \(level) field(s) \(missing.sorted())")
        }
    }

    /// The typed errno and signal constants are exactly the names the rule language knows.
    @Test(.tags(.fast)) func typedErrnosAndSignalsAreTheLanguagesNames() throws {
        typealias R = AspectsTesting.Rule
        #expect(R.Errno.all.map(\.name) == ErrorNames.errnos.map(\.name))
        #expect(R.Signal.all == ErrorNames.signals.map { R.Signal.named($0.name) })
        #expect(R.instead("write", .fail(.ENOSPC)).json == R.instead("write", .fail("ENOSPC")).json)
        // a name the language does not know is refused where a file's would be
        #expect(throws: AspectsError.self) { try R.instead("write", .fail(R.Errno("ENOSPCX"))).compiled() }
        #expect(throws: AspectsError.self) { try R.before("getppid", .signal(99)).compiled() }
    }

    @Test(.tags(.realPrograms)) func aRunAndALiveTable() throws {
        let dir = NSTemporaryDirectory() + "aspects-testing-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let r = try Aspects.run(["dd", "if=/dev/zero", "of=\(dir)/disk.img", "bs=4k", "count=8", "status=none"],
                                rules: [.instead("write", .fail("ENOSPC"), when: .nth(3), .argFdPath(0, "*.img"), id: "disk")])
        #expect(r.status == 1 && r.stderr.contains("No space left on device"), "\(r.stderr)")
        #expect(r.fired("disk") == 1 && r.matched("disk") == 3 && r.attached.count == 1)
        // the firing's call site: dd's own call of write
        let sites = try #require(r.sites["disk"])
        #expect(sites.sites.map(\.site.object) == ["dd"] && sites.sites.map(\.fired) == [1] && sites.firedWithoutSite == 0, "\(sites)")

        let table = try LiveTable()
        defer { table.destroy() }
        let tokens = try table.add([.instead("open", .fail("EACCES"), when: .argGlob(0, "/etc/hostname"), id: "deny")])
        let env = try table.environment()
        let denied = try Proc.run("/bin/cat", ["/etc/hostname"], environment: env.mapValues { Optional($0) })
        #expect(denied.status == 1 && denied.stderr.contains("Permission denied"), "\(denied)")
        try tokens[0].remove()
        let allowed = try Proc.run("/bin/cat", ["/etc/hostname"], environment: env.mapValues { Optional($0) })
        #expect(allowed.status == 0)
        #expect(table.stats()["deny"]?.fired == 1)
    }

    /// A consumer package, depending on this repository by the line docs/testing.md shows (its
    /// URL made a local clone's), writes a test with AspectsTesting and nothing else: `swift test`
    /// passes. The clone carries the repository's version tags; a clone made without them (a CI
    /// checkout of one branch) gets the version the docs name. SwiftPM builds no target with
    /// unsafe flags there (CPreload has them): the library compiles the preload itself with cc.
    /// The consumer builds only the layers AspectsTesting uses, not explore or code generation.
    @Test(.tags(.realPrograms)) func aPackageDependingOnThisOneByURLRunsItsOwnTests() throws {
        let dir = NSTemporaryDirectory() + "aspects-consumer-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        // the repository as it is committed, with its tags
        #expect(try Proc.run("/usr/bin/git", ["clone", "-q", Paths.root, dir + "/aspects"]).status == 0)
        let requirement = try Self.documentedRequirement()
        if let version = requirement.version {
            let tags = try Proc.run("/usr/bin/git", ["-C", dir + "/aspects", "tag", "--list", version])
            if !tags.stdout.split(separator: "\n").contains(Substring(version)) {
                #expect(try Proc.run("/usr/bin/git", ["-C", dir + "/aspects", "tag", version]).status == 0)
            }
        }
        let consumer = dir + "/consumer"
        try FileManager.default.createDirectory(atPath: consumer + "/Tests/ConsumerTests", withIntermediateDirectories: true)
        try """
        // swift-tools-version:6.0
        import PackageDescription
        let package = Package(
            name: "consumer",
            dependencies: [.package(url: "file://\(dir)/aspects", \(requirement.text))],
            targets: [.testTarget(name: "ConsumerTests", dependencies: [.product(name: "AspectsTesting", package: "aspects")])]
        )
        """.write(toFile: consumer + "/Package.swift", atomically: true, encoding: .utf8)
        try """
        import Foundation
        import Testing
        import AspectsTesting

        @Test func theThirdWriteFails() throws {
            let dir = NSTemporaryDirectory() + "consumer-\\(getpid())"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let r = try Aspects.run(["dd", "if=/dev/zero", "of=\\(dir)/disk.img", "bs=4k", "count=8", "status=none"],
                                    rules: [.instead("write", .fail("ENOSPC"), when: .nth(3), id: "disk")])
            #expect(r.status == 1 && r.fired("disk") == 1, "\\(r.stderr)")
        }
        """.write(toFile: consumer + "/Tests/ConsumerTests/ConsumerTests.swift", atomically: true, encoding: .utf8)
        let cache = dir + "/cache"
        let r = try Proc.run("/usr/bin/env", ["swift", "test", "--package-path", consumer, "--scratch-path", consumer + "/.build"],
                             environment: ["XDG_CACHE_HOME": cache, "ASPECTS_PRELOAD": nil])
        #expect(r.status == 0, "\(r.stdout.suffix(3000))\n\(r.stderr.suffix(3000))")
        #expect(r.stdout.contains("theThirdWriteFails") || r.stderr.contains("theThirdWriteFails"), "\(r.stdout.suffix(2000))")
        let built = (try? FileManager.default.contentsOfDirectory(atPath: cache + "/aspects")) ?? []
        #expect(built.contains { $0.hasPrefix("libaspects-") && $0.hasSuffix(".so") }, "the preload was built from the package's sources: \(built)")
        #expect(!built.contains { $0.hasPrefix("build-") }, "the preload's objects were left in the cache: \(built)")
        let modules = Set(
            ((try? FileManager.default.contentsOfDirectory(atPath: consumer + "/.build/debug/Modules")) ?? [])
                .filter { $0.hasSuffix(".swiftmodule") }.map { String($0.dropLast(".swiftmodule".count)) })
        #expect(modules.isSuperset(of: ["AspectsTesting", "AspectsTable", "AspectsRules", "AspectsCore"]), "\(modules.sorted())")
        #expect(
            modules.isDisjoint(with: ["AspectsExplore", "AspectsPreflight", "AspectsCodegen", "ArgumentParser"]),
            "the consumer built layers AspectsTesting does not use: \(modules.sorted())")
    }

    /// The requirement of the dependency line docs/testing.md shows (`from: "0.1.0"`), and its
    /// version when it names one.
    static func documentedRequirement() throws -> (text: String, version: String?) {
        let doc = try String(contentsOfFile: Paths.root + "/docs/testing.md", encoding: .utf8)
        let line = try #require(
            doc.split(separator: "\n").first { $0.contains(".package(url:") && $0.contains("/aspects\"") },
            "docs/testing.md shows no dependency line on aspects")
        let url = try #require(line.range(of: "/aspects\", "), "\(line)")
        let text = String(line[url.upperBound...].prefix { $0 != ")" })
        let version = text.hasPrefix("from: \"") ? String(text.dropFirst("from: \"".count).prefix { $0 != "\"" }) : nil
        return (text, version)
    }

    /// Aspects.explore: a campaign from a test, its bugs typed (driving the aspectctl built
    /// beside this package). explore_ledger crashes when
    /// its one malloc fails (one bug, with its stack and reproducer) and handles every
    /// failure of open (no bug).
    @Test func exploreReturnsTheBugsOfACampaign() throws {
        let ledger = try Fixture.build("explore_ledger", flags: ["-g"])
        let out = NSTemporaryDirectory() + "aspects-testing-explore-\(UUID().uuidString)"
        defer { TableSegments.removeScratch(out) }
        let setup = "echo 'total 42' > ledger.db"
        let c = try Aspects.explore([ledger], functions: ["malloc"], strategy: .sites, setup: setup, out: out)
        #expect(c.status == 1, "\(c.text)")
        #expect(c.crashes.count == 1 && c.bugs.count == 1, "\(c.text)")
        let bug = try #require(c.crashes.first)
        #expect(bug.signature.hasPrefix("SIGSEGV in "), "\(bug.signature)")
        #expect(bug.stack.contains { $0.file == "explore_ledger.c" && $0.line != nil }, "\(bug.stack)")
        let point = try #require(bug.faultPoints.first)
        #expect(bug.faultPoints.count == 1 && point.function == "malloc" && point.errno == "ENOMEM" && point.fault == .error && point.nth == 1)
        #expect(point.site?.hasPrefix(URL(fileURLWithPath: ledger).lastPathComponent + "+0x") == true, "\(point)")
        let name = URL(fileURLWithPath: ledger).lastPathComponent
        #expect(point.image.hasSuffix("/" + name) && point.name.hasPrefix("\(name):malloc@\(name)+0x") && point.name.hasSuffix("#1/error/ENOMEM"), "\(point)")
        let reproducer = try #require(bug.reproducer)
        #expect(reproducer.hasPrefix(out + "/") && FileManager.default.fileExists(atPath: reproducer))
        #expect(bug.reproduce?.contains("aspectctl run --rules ") == true)
        #expect(!bug.caughtByHandler)
        // a crash the program's own handler caught and exited from is one all the same
        let caught = try Aspects.explore([try Fixture.build("explore_caught", flags: ["-g", "-O0"]), "caught"], functions: ["malloc"],
                                         strategy: .sites, out: out + "-caught")
        defer { TableSegments.removeScratch(out + "-caught") }
        #expect(caught.crashes.count == 1 && caught.crashes.first?.caughtByHandler == true, "\(caught.text)")
        #expect(c.outcomes[.crash] == 1 && c.outcomes.values.reduce(0, +) == c.runs)

        let handled = try Aspects.explore([ledger], functions: ["open"], setup: setup)
        defer { TableSegments.removeScratch(handled.out) }
        #expect(handled.status == 0 && handled.bugs.isEmpty, "\(handled.text)")
        #expect(handled.runs >= 2 && handled.outcomes == [.handled: handled.runs], "\(handled.text)")

        // processes: explore's --process; a glob matching no image tested nothing
        do {
            let none = try Aspects.explore([ledger], functions: ["open"], processes: ["*/nothing-like-it"], setup: setup)
            Issue.record("a campaign of no image returned \(none.bugs)")
        } catch let e as Aspects.ExploreError {
            #expect(e.status == 2 && e.message.contains("matches --process */nothing-like-it"), "\(e)")
        }
    }

    /// A campaign that tested nothing is an error, never an empty list of bugs.
    @Test func exploreThatTestsNothingThrows() throws {
        func own() throws -> Set<String> {
            Set(try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix(Aspects.defaultOutPrefix) })
        }
        let before = try own()
        do {
            let c = try Aspects.explore(["/bin/true"], functions: ["fsync"])
            Issue.record("a campaign that planned no run returned \(c.bugs)")
        } catch let e as Aspects.ExploreError {
            #expect(e.status == 2 && e.message.contains("never called fsync"), "\(e)")
        }
        #expect(try own().subtracting(before).isEmpty, "a refused campaign left its own --out directory")
    }
}
