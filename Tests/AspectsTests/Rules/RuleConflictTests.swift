import Foundation
import Testing
import AspectsCore
import AspectsRules

/// Add-time checks, as Aspects checked at hook time: a rule that can never fire is said so
/// when it is added (a warning; `--strict` refuses it), in `check`, `add` and `run`.
@Suite struct RuleConflictTests {
    static let all = #"{"id":"all","symbol":"write","position":"instead","action":{"fail":"EIO"}}"#
    static let third = #"{"id":"third","symbol":"write","position":"instead","action":{"fail":"ENOSPC"},"when":{"nth":3}}"#
    static let log1 = #"{"id":"l1","symbol":"read","position":"before","action":{"log":true}}"#
    static let log2 = #"{"id":"l2","symbol":"read","position":"before","action":{"log":true}}"#

    func compile(_ json: String) throws -> [CompiledRule] { try RuleCompiler().compile(try RuleDecoder(source: "t").decode(json)) }

    @Test(.tags(.fast)) func theFindings() throws {
        let rules = try compile("[\(Self.all), \(Self.third), \(Self.log1), \(Self.log2)]")
        let found = RuleConflicts.find(rules, labels: ["rule \"all\"", "rule \"third\"", "rule \"l1\"", "rule \"l2\""])
        #expect(found.map(\.rule) == ["rule \"third\"", "rule \"l2\""], "\(found)")
        #expect(found[0].message.contains("can never fire: rule \"all\", added before it, is an instead rule on write without conditions"))
        #expect(found[1].message.contains("repeats rule \"l1\" exactly"))
        // an instead with a condition, a limit or another function shadows nothing
        for earlier in [#"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"times":1}}"#,
                        #"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"autoRemove":true}"#,
                        #"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"args":[{"arg":0,"eq":1}]}}"#,
                        #"{"symbol":"read","position":"instead","action":{"fail":"EIO"}}"#] {
            #expect(RuleConflicts.find(try compile("[\(earlier), \(Self.third)]"), labels: ["a", "b"]).isEmpty, "\(earlier)")
        }
        // a family rule on write|pwrite is not shadowed by a rule on write alone
        let family = #"{"symbol":["write","pwrite"],"position":"instead","action":{"fail":"ENOSPC"}}"#
        #expect(RuleConflicts.find(try compile("[\(Self.all), \(family)]"), labels: ["a", "b"]).isEmpty)
    }

    /// after rules that differ only in their condition on the result are two rules, not one twice
    @Test(.tags(.fast)) func resultConditionsTellRulesApart() throws {
        let short = #"{"symbol":"write","position":"after","action":{"fail":"EIO"},"when":{"result":{"min":0,"lt_arg":2}}}"#
        let succeeded = #"{"symbol":"write","position":"after","action":{"fail":"EIO"},"when":{"result":{"min":0}}}"#
        // (a short write satisfies both: that they replace the same result is another finding)
        #expect(!RuleConflicts.find(try compile("[\(short), \(succeeded)]"), labels: ["a", "b"]).contains { $0.message.contains("repeats") })
        #expect(RuleConflicts.find(try compile("[\(short), \(short)]"), labels: ["a", "b"]).filter { $0.message.contains("repeats") }.map(\.rule) == ["b"])
    }

    /// Two after rules that may replace the result of one call: the later one's wins, the
    /// earlier one's firing is never seen. Rules counting the same calls on different nth
    /// cannot meet.
    @Test func twoAfterRulesReplacingOneResult() throws {
        func after(_ action: String, _ when: String = "") -> String {
            #"{"symbol":"write","position":"after","action":\#(action)\#(when.isEmpty ? "" : #","when":"# + when)}"#
        }
        let replaced = { (rules: [String]) throws -> [String] in
            RuleConflicts.find(try compile("[" + rules.joined(separator: ",") + "]"), labels: ["a", "b"])
                .filter { $0.message.contains("replaces the result of write after the call, as a") }.map(\.rule)
        }
        #expect(try replaced([after(#"{"fail":"EIO"}"#), after(#"{"return":0}"#)]) == ["b"])
        #expect(try replaced([after(#"{"fail":"EIO"}"#, #"{"nth":2}"#), after(#"{"fail":"ENOSPC"}"#, #"{"nth":2}"#)]) == ["b"])
        // the same calls counted, another nth: they never meet
        #expect(try replaced([after(#"{"fail":"EIO"}"#, #"{"nth":2}"#), after(#"{"fail":"ENOSPC"}"#, #"{"nth":3}"#)]).isEmpty)
        // counted in other scopes, the numbers may meet
        #expect(try replaced([after(#"{"fail":"EIO"}"#, #"{"nth":2}"#), #"{"symbol":"write","position":"after","scope":"thread","action":{"fail":"ENOSPC"},"when":{"nth":3}}"#]) == ["b"])
        // a log, or a before rule, replaces nothing
        #expect(try replaced([after(#"{"fail":"EIO"}"#), after(#"{"log":true}"#)]).isEmpty)
        #expect(try replaced([#"{"symbol":"write","position":"before","action":{"log":true}}"#, after(#"{"fail":"EIO"}"#)]).isEmpty)
        // against the table's rules too, and through `check`
        let existing = try compile("[" + after(#"{"fail":"EIO"}"#) + "]")
        #expect(RuleConflicts.find(try compile("[" + after(#"{"return":3}"#) + "]"), labels: ["n"], after: existing).map(\.rule) == ["n"])
        let check = try Proc.aspectctl(["check", "--rule", after(#"{"fail":"EIO"}"#), "--rule", after(#"{"return":0}"#)])
        #expect(check.status == 0 && check.stderr.contains("replaces the result of write after the call"), "\(check)")
    }

    @Test func checkWarnsAndStrictRefuses() throws {
        let warn = try Proc.aspectctl(["check", "--rule", Self.all, "--rule", Self.third])
        #expect(warn.status == 0 && warn.stderr.contains("warning: rule \"third\": can never fire"), "\(warn)")
        let strict = try Proc.aspectctl(["check", "--strict", "--rule", Self.all, "--rule", Self.third])
        #expect(strict.status == 65 && strict.stderr.contains("error: rule \"third\": can never fire"), "\(strict)")
        let json = try Proc.aspectctl(["check", "--json", "--rule", Self.log1, "--rule", Self.log2])
        let schema = try JSONParser.parse(try String(contentsOfFile: Paths.root + "/config/check.schema.json", encoding: .utf8))
        let doc = try JSONParser.parse(json.stdout)
        #expect(SchemaValidator(root: schema).validate(doc).isEmpty)
        guard case .array(let warnings)? = doc["warnings"]?.value else { Issue.record("no warnings: \(json.stdout)"); return }
        #expect(warnings.count == 1 && warnings[0]["rule"]?.value == .string("rule \"l2\""))
    }

    @Test func addChecksAgainstTheTablesRules() throws {
        let t = try ScratchTable()
        #expect(try Proc.aspectctl(["add", "--table", t.name, "--rule", Self.all]).status == 0)
        let strict = try Proc.aspectctl(["add", "--table", t.name, "--strict", "--rule", Self.third])
        #expect(strict.status == 65 && strict.stderr.contains("can never fire: rule \"all\""), "\(strict)")
        #expect(t.table.rules().map(\.id) == ["all"], "nothing was added")
        let warned = try Proc.aspectctl(["add", "--table", t.name, "--rule", Self.third])
        #expect(warned.status == 0 && warned.stderr.contains("warning: rule \"third\": can never fire"), "\(warned)")
        #expect(t.table.rules().map(\.id) == ["all", "third"])
    }

    @Test func runSaysWhenAProcessGlobMissesTheCommand() throws {
        let r = try Proc.aspectctl(["run", "--rule", #"{"symbol":"write","position":"before","action":{"log":true},"when":{"process":"*/python*"}}"#, "--", "/bin/true"])
        #expect(r.stderr.contains("warning: rule: its process glob \"*/python*\" does not match the command /bin/true"), "\(r)")
        let fits = try Proc.aspectctl(["run", "--rule", #"{"symbol":"write","position":"before","action":{"log":true},"when":{"process":"*/true"}}"#, "--", "/bin/true"])
        #expect(!fits.stderr.contains("process glob"), "\(fits)")
    }

    static func logRule(process: String) -> String {
        #"{"symbol":"write","position":"before","action":{"log":true},"when":{"process":"\#(process)"}}"#
    }

    /// The programs a glob is checked against without a command: a directory standing for
    /// PATH with a program, a link to one, a script, and one more program only an absolute
    /// pattern finds.
    @Test(.tags(.fast)) func aProcessGlobIsCheckedAgainstTheProgramsOneCouldStart() throws {
        let dir = NSTemporaryDirectory() + "aspects-globs-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir + "/bin", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir + "/opt", withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let fm = FileManager.default
        try fm.copyItem(atPath: "/bin/true", toPath: dir + "/bin/server")
        try fm.createSymbolicLink(atPath: dir + "/bin/truth", withDestinationPath: "/bin/true")
        try "#!/bin/sh\nexit 0\n".write(toFile: dir + "/bin/deploy.sh", atomically: true, encoding: .utf8)
        try fm.copyItem(atPath: "/bin/true", toPath: dir + "/opt/worker")
        for f in ["bin/deploy.sh"] { chmod(dir + "/" + f, 0o755) }
        let shell = ProcessGlob.image(of: "/bin/sh"), truth = ProcessGlob.image(of: "/bin/true")
        func found(_ glob: String) throws -> [RuleConflicts.Finding] {
            RuleConflicts.processGlobsMatchingNothing(try compile(Self.logRule(process: glob)), labels: ["rule"], searchPath: dir + "/bin", directory: dir)
        }
        #expect(try found("server").isEmpty)
        #expect(try found("*/bin/serv*").isEmpty)
        #expect(try found(dir + "/opt/*").isEmpty, "an absolute pattern finds files off PATH")
        #expect(try found(truth).isEmpty, "the link's target is what runs")
        let typo = try found("srever")
        #expect(typo.count == 1 && typo[0].message.contains("\"srever\" matches no program on PATH or in the current directory"), "\(typo)")
        let link = try found("truth")
        #expect(link.count == 1 && link[0].message.contains("matches \(dir)/bin/truth, but that runs as \(truth)"), "\(link)")
        let script = try found("deploy.sh")
        #expect(script.count == 1 && script[0].message.contains("runs as \(shell)") && script[0].fix?.contains((shell as NSString).lastPathComponent) == true, "\(script)")
        #expect(ProcessGlob.image(of: dir + "/bin/deploy.sh") == shell)
    }

    @Test(.tags(.realPrograms)) func checkAddAndPreflightSayWhenAProcessGlobMatchesNoProgram() throws {
        let rule = Self.logRule(process: "no-such-program-\(getpid())*")
        let check = try Proc.aspectctl(["check", "--rule", rule])
        #expect(check.status == 0 && check.stderr.contains("warning: rule: its process glob \"no-such-program-"), "\(check)")
        let strictCheck = try Proc.aspectctl(["check", "--strict", "--rule", rule])
        #expect(strictCheck.status == 65 && strictCheck.stderr.contains("error: rule: its process glob"), "\(strictCheck)")
        let t = try ScratchTable()
        let strictAdd = try Proc.aspectctl(["add", "--table", t.name, "--strict", "--rule", rule])
        #expect(strictAdd.status == 65 && strictAdd.stderr.contains("matches no program"), "\(strictAdd)")
        #expect(t.table.rules().isEmpty, "nothing was added")
        let add = try Proc.aspectctl(["add", "--table", t.name, "--rule", rule])
        #expect(add.status == 0 && add.stderr.contains("warning: rule: its process glob"), "\(add)")
        let fits = try Proc.aspectctl(["check", "--strict", "--rule", Self.logRule(process: "*/cat")])
        #expect(fits.status == 0 && !fits.stderr.contains("process glob"), "\(fits)")
        // preflight knows its program: a glob that does not match it never fires there
        let pre = try Proc.aspectctl(["preflight", "--rule", Self.logRule(process: "*/python*"), "/bin/cat"])
        #expect(pre.status == 1 && pre.stdout.contains("warning: rule on write: can never fire in this program: its process glob \"*/python*\" does not match"), "\(pre)")
        let preFits = try Proc.aspectctl(["preflight", "--rule", Self.logRule(process: "cat"), "/bin/cat"])
        #expect(preFits.status == 0 && !preFits.stdout.contains("process glob"), "\(preFits)")
    }

    @Test func runStrictRefusesBeforeTheCommandStarts() throws {
        let refused = try Proc.aspectctl(["run", "--strict", "--rule", Self.logRule(process: "*/python*"), "--", "/bin/sh", "-c", "echo ran"])
        #expect(refused.status == 125 && !refused.stdout.contains("ran") && refused.stderr.contains("does not match the command /bin/sh"), "\(refused)")
        let shadowed = try Proc.aspectctl(["run", "--strict", "--rule", Self.all, "--rule", Self.third, "--", "/bin/sh", "-c", "echo ran"])
        #expect(shadowed.status == 125 && shadowed.stderr.contains("rule \"third\": can never fire"), "\(shadowed)")
        let clean = try Proc.aspectctl(["run", "--strict", "--rule", Self.logRule(process: "*"), "--", "/bin/sh", "-c", "echo ran"])
        #expect(clean.status == 0 && clean.stdout == "ran\n", "--strict is an option, not the command: \(clean)")
    }
}
