import Foundation
import Testing
import AspectsCore
import AspectsRules

/// strace's inject syntax as one-line rules: each term is exactly one JSON rule (docs/inject.md's
/// table of equivalences is these cases), errors point at the term's column, and run, add
/// and check take --inject.
@Suite struct InjectTermTests {
    static let equivalences: [(String, String)] = [
        ("write:error=ENOSPC:when=3", #"{"symbol":"write","position":"instead","action":{"fail":"ENOSPC"},"when":{"nth":3}}"#),
        ("write:retval=1:when=1..3", #"{"symbol":"write","position":"instead","action":{"return":1},"when":{"times":3}}"#),
        ("write:error=EIO:when=3..5", #"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"after":2,"times":3}}"#),
        ("write:error=EIO:when=3+", #"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"after":2}}"#),
        ("read,pread:error=EIO:when=3+2", #"{"symbol":["read","pread"],"position":"instead","action":{"fail":"EIO"},"when":{"every":2,"first":3}}"#),
        ("write:error=EIO:when=1+3", #"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"every":3,"first":1}}"#),
        ("write:error=EIO:when=2+2", #"{"symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"every":2}}"#),
        ("open(*.db):error=EACCES:when=1", #"{"symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{"nth":1,"args":[{"arg":0,"glob":"*.db"}]}}"#),
        ("open(*.db):error=EACCES", #"{"symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{"args":[{"arg":0,"glob":"*.db"}]}}"#),
        ("openat(*.db):error=EACCES", #"{"symbol":"openat","position":"instead","action":{"fail":"EACCES"},"when":{"args":[{"arg":1,"glob":"*.db"}]}}"#),
        ("connect:delay_enter=200000", #"{"symbol":"connect","position":"before","action":{"delay":"200000us"}}"#),
        ("close:delay_exit=5ms", #"{"symbol":"close","position":"after","action":{"delay":"5ms"}}"#),
        ("fclose:error=ENOSPC", #"{"symbol":"fclose","position":"after","action":{"fail":"ENOSPC"}}"#),
        ("write:error=EINTR:delay_enter=1s", #"{"symbol":"write","position":"instead","action":{"fail":"EINTR","delay":"1s"}}"#),
        ("getppid:signal=SIGUSR1", #"{"symbol":"getppid","position":"before","action":{"signal":"SIGUSR1"}}"#),
        ("read:error=EIO:signal=SIGSEGV:when=2", #"{"symbol":"read","position":"instead","action":{"fail":"EIO","signal":"SIGSEGV"},"when":{"nth":2}}"#),
        ("malloc:error=ENOMEM:p=0.01:seed=7", #"{"symbol":"malloc","position":"instead","action":{"fail":"ENOMEM"},"when":{"probability":0.01,"seed":7}}"#),
        ("open:error=EACCES:once=hierarchy:id=deny", #"{"id":"deny","symbol":"open","position":"instead","action":{"fail":"EACCES"},"once":"hierarchy"}"#),
        ("unlink:error=EPERM:autoremove", #"{"symbol":"unlink","position":"instead","action":{"fail":"EPERM"},"autoRemove":true}"#),
        ("write:error=28", #"{"symbol":"write","position":"instead","action":{"fail":"ENOSPC"}}"#),
        ("getppid:signal=10", #"{"symbol":"getppid","position":"before","action":{"signal":"SIGUSR1"}}"#),
        ("read:error=EIO:delay_enter=1ms:delay_exit=500", #"{"symbol":"read","position":"instead","action":{"fail":"EIO","delay":"1500us"}}"#),
    ]

    @Test(.tags(.fast)) func eachTermIsExactlyOneRule() throws {
        for (term, json) in Self.equivalences {
            let made = try InjectTerm(term).json()
            #expect(made.rendered() == (try JSONParser.parse(json).value.rendered()), "\(term) -> \(made.rendered())")
            // and it is a valid rule
            _ = try RuleCompiler().compile(try RuleDecoder(source: term).decode(made.rendered()))
        }
    }

    /// Every term of docs/inject.md's table is one of the equivalences proven above.
    @Test(.tags(.fast)) func theInjectPagesTableIsProven() throws {
        let page = try String(contentsOfFile: Paths.root + "/docs/inject.md", encoding: .utf8)
        let terms = page.split(separator: "\n").filter { $0.hasPrefix("| `") }.compactMap { $0.split(separator: "`").dropFirst().first.map(String.init) }
        #expect(terms.count >= 10, "\(terms)")
        let proven = Set(Self.equivalences.map(\.0))
        for t in terms { #expect(proven.contains(t), "docs/inject.md's term \(t) is not among the equivalences") }
    }

    @Test(.tags(.fast)) func errorsPointAtTheColumn() throws {
        func error(_ term: String) -> String {
            do { _ = try InjectTerm(term).json(); return "" } catch { return "\(error)" }
        }
        #expect(error("write:erorr=ENOSPC").hasPrefix("--inject:1:7: unknown setting \"erorr\""))
        #expect(error("write:error=ENOSPC:when=0+2").hasPrefix("--inject:1:20: \"0\" in when=0+2 is not a call number"))
        #expect(error("write(x").hasPrefix("--inject:1:6: \"(\" is not closed"))
        #expect(error("getppid(*.db):error=EIO").hasPrefix("--inject:1:8: getppid takes no path"))
        #expect(error("write:error=ENOSPC:error=EIO").hasPrefix("--inject:1:20: \"error\" is given twice"))
        #expect(error("write:when=5..2:error=EIO").contains("ends before it starts"))
        #expect(error("connect:delay_enter=fast").contains("\"fast\" is not a delay"))
        #expect(error("close:delay_enter=1:delay_exit=2").hasPrefix("--inject:1:32: delay_enter and delay_exit around a call that runs are two rules"))
        #expect(error("close:delay_enter=1:delay_exit=2").contains("--inject 'close:delay_enter=1us' --inject 'close:delay_exit=2us'"))
        #expect(error("write:error=4000").hasPrefix("--inject:1:13: no errno has the number 4000"))
        #expect(error("write").contains("nothing to inject"))
        #expect(error("write:p=2:error=EIO").contains("p takes a probability"))
    }

    /// Errors the rule's checks find (after the term's syntax is fine) point at the term too:
    /// the column of the part they are about, and the term itself.
    @Test(.tags(.fast)) func ruleErrorsPointAtTheTermsColumn() throws {
        func error(_ term: String) -> String {
            do { _ = try InjectTerm(term).rule(); return "" } catch { return "\(error)" }
        }
        let cases: [(term: String, prefix: String)] = [
            ("wirte:error=EIO", "--inject:1:1: wirte is not in the catalog in \"wirte:error=EIO\"; did you mean write?"),
            ("write,pwirte:error=EIO", "--inject:1:7: pwirte is not in the catalog"),
            ("write:error=ENOSPCX", "--inject:1:13: error: unknown errno name \"ENOSPCX\" in \"write:error=ENOSPCX\"; did you mean ENOSPC?"),
            ("write:error=ENOENT", "--inject:1:13: error: write cannot fail with ENOENT"),
            ("write:signal=SIGFOO", "--inject:1:14: signal: unknown signal \"SIGFOO\""),
            ("write:error=EIO:retval=3", "--inject:1:24: retval: \"fail\" already decides the return value and errno"),
            ("write:error=EIO:once=process:autoremove", "--inject:1:22: once: \"autoRemove\" already means one firing"),
            ("write:error=EIO:seed=3", "--inject:1:22: seed: \"seed\" only matters with \"probability\""),
            ("write:error=EIO:id=a b", "--inject:1:20: id: id \"a b\" is not a valid token"),
            ("write:error=EIO:when=3:when=2", "--inject:1:24: \"when\" is given twice"),
        ]
        for c in cases {
            let e = error(c.term)
            #expect(e.hasPrefix(c.prefix), "\(c.term): \(e)")
        }
        // a valid term gives the rule its JSON says, source kept for list --rules
        let rule = try InjectTerm("write:error=28:when=3").rule()
        #expect(rule.action.fail == .named("ENOSPC") && rule.when.nth == 3 && rule.source != nil)
    }

    @Test func runAddAndCheckTakeIt() throws {
        let dir = NSTemporaryDirectory() + "aspects-inject-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        // docs/inject.md's disk-full example, in one line
        let r = try Proc.aspectctl(["run", "--inject", "write:error=ENOSPC:when=3", "--", "dd", "if=/dev/zero", "of=\(dir)/disk.img", "bs=4k", "count=8", "status=none"])
        #expect(r.status == 1 && r.stderr.contains("No space left on device"), "\(r)")
        let check = try Proc.aspectctl(["check", "--json", "--inject", "open(*.db):error=EACCES:when=1"])
        let doc = try JSONParser.parse(check.stdout)
        guard case .array(let rules)? = doc["json"]?.value else { Issue.record("\(check)"); return }
        #expect(rules.count == 1 && rules[0]["symbol"]?.value == .string("open"))
        let t = try ScratchTable()
        let add = try Proc.aspectctl(["add", "--table", t.name, "--inject", "unlink:error=EPERM:id=nope"])
        #expect(add.status == 0 && add.stdout.hasPrefix("nope@"), "\(add)")
        #expect(t.table.rules().first?.source?.contains(#""fail":"EPERM""#) == true, "list --rules gives the JSON form back")
        let bad = try Proc.aspectctl(["check", "--inject", "write:erorr=ENOSPC"])
        #expect(bad.status == 65 && bad.stderr.contains("--inject:1:7:"), "\(bad)")
        // the rule's own errors too, in every command that takes --inject
        let unknown = try Proc.aspectctl(["check", "--inject", "write:error=EIO", "--inject", "wirte:error=EIO"])
        #expect(unknown.status == 65 && unknown.stderr.contains("error: --inject #2:1:1: wirte is not in the catalog"), "\(unknown)")
        let run = try Proc.aspectctl(["run", "--inject", "write:error=ENOSPCX", "--", "/bin/true"])
        #expect(run.status == 125 && run.stderr.contains("--inject:1:13: error: unknown errno name"), "\(run)")
    }
}
