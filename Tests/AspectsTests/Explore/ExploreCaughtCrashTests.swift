import Foundation
import Testing
import AspectsCore
@testable import AspectsExplore
import AspectsRules

/// What explore calls a crash when the program has a say in how it ends (issue 31, items 4
/// and 3): a SIGSEGV its own handler caught and exited from is a crash with its stack, "caught
/// by the program's handler", never a check failure; a handler that returns made nothing of
/// it; and a writer killed by SIGPIPE when its reader went away ended as writers do, no crash.
@Suite(.serialized) struct ExploreCaughtCrashTests {
    final class Scratch {
        let path = NSTemporaryDirectory() + "aspects-caught-\(UUID().uuidString)"
        init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        deinit { TableSegments.removeScratch(path) }
    }

    func explore(_ mode: String, in s: Scratch, extra: [String] = []) throws -> (Outcome, JSONNode?) {
        let bin = try Fixture.build("explore_caught", flags: ["-g", "-O0"])
        return try ExploreCLI.run(["--function", "malloc", "--strategy", "sites"] + extra, [bin, mode], out: s.path + "/explore",
                                  json: s.path + "/explore.json", directory: s.path)
    }

    static func caught(_ n: JSONNode?) -> Bool { n?["caughtByHandler"]?.value == .bool(true) }
    static func outcomes(_ report: JSONNode?) -> [String] { ReportJSON.array(report, "runs").compactMap { ReportJSON.str($0, "outcome") } }

    /// m4's way: a handler prints "internal error detected" and _exit(1)s after the failed
    /// malloc's NULL is written to. One crash bug, keyed by where it crashed (the stack was
    /// recorded before the handler ran), said to be caught in every report, though the
    /// command exited 1 — with a check that fails on it too, the crash is what it is. Its
    /// script reproduces it from the recorder's files.
    @Test func aCrashCaughtByTheProgramsHandlerIsACrashWithItsStack() throws {
        let s = try Scratch()
        let (r, report) = try explore("caught", in: s, extra: ["--check", "[ \"$ASPECTS_EXPLORE_STATUS\" = 0 ]",
                                                                "--html", s.path + "/r.html", "--junit", s.path + "/r.xml"])
        #expect(r.status == 1, "\(r)")
        let bugs = ReportJSON.array(report, "bugs")
        #expect(bugs.count == 1 && ReportJSON.str(bugs.first, "outcome") == "crash", "\(r.stdout)")
        #expect(ReportJSON.str(bugs.first, "signature")?.hasPrefix("SIGSEGV in fill (explore_caught.c:") == true, "\(r.stdout)")
        #expect(Self.caught(bugs.first) && !ReportJSON.array(bugs.first, "stack").isEmpty, "\(r.stdout)")
        let crash = try #require(ReportJSON.array(report, "runs").first { ReportJSON.str($0, "outcome") == "crash" }, "\(r.stdout)")
        #expect(ReportJSON.int(crash["run"], "exitStatus") == 1 && Self.caught(ReportJSON.array(crash, "crashes").first), "\(crash.value.rendered())")
        #expect(!Self.outcomes(report).contains("check-failed"), "\(r.stdout)")
        #expect(r.stdout.contains("1. CRASH SIGSEGV in fill (explore_caught.c:") && r.stdout.contains("), caught by the program's handler\n"), "\(r.stdout)")
        for file in ["r.html", "r.xml"] {
            let text = try String(contentsOfFile: s.path + "/" + file, encoding: .utf8)
            #expect(text.contains("caught by the program&apos;s handler") || text.contains("caught by the program&#39;s handler")
                    || text.contains("caught by the program's handler"), "\(file)")
        }
        let script = try #require(ReportJSON.str(crash, "reproducerScript"))
        let again = try Proc.run("/bin/sh", [script], directory: s.path)
        #expect(again.status == 0 && again.stderr.contains("repro: reproduced"), "\(again)")
    }

    /// A handler that returns (a program that uses SIGSEGV routinely) leaves no crash behind:
    /// the failed malloc after it is handled, no finding.
    @Test func aHandlerThatReturnsIsNoCrash() throws {
        let s = try Scratch()
        let (r, report) = try explore("returns", in: s)
        #expect(r.status == 0 && ReportJSON.array(report, "bugs").isEmpty, "\(r.stdout)")
        #expect(Self.outcomes(report).sorted() == ["absorbed", "handled"], "\(r.stdout)")
        #expect(ReportJSON.array(report, "runs").allSatisfy { ReportJSON.array($0, "crashes").isEmpty }, "\(r.stdout)")
    }

    /// The reader of a pipe fails its malloc and exits; the writer is killed by SIGPIPE: the
    /// run is handled (its status 141 is not the baseline's), no crash and no bug.
    @Test func aWriterKilledBySIGPIPEIsNoCrash() throws {
        let s = try Scratch()
        let (r, report) = try explore("pipeline", in: s)
        #expect(r.status == 0 && ReportJSON.array(report, "bugs").isEmpty, "\(r.stdout)")
        let piped = try #require(ReportJSON.array(report, "runs").first { ReportJSON.int($0["run"], "signal") == Int(SIGPIPE) }, "\(r.stdout)")
        #expect(ReportJSON.str(piped, "outcome") == "handled", "\(piped.value.rendered())")
    }

    /// One definition: the command's signal is a crash's unless it is SIGPIPE.
    @Test(.tags(.fast)) func sigpipeIsNoCrashSignal() {
        var piped = RunRecord(exitStatus: nil, signal: SIGPIPE, timedOut: false, stdout: "", stderr: "", seconds: 0)
        let baseline = RunRecord(exitStatus: 0, signal: nil, timedOut: false, stdout: "", stderr: "", seconds: 0)
        #expect(piped.crashSignal == nil && piped.shellStatus == 141)
        #expect(piped.outcome(against: baseline, fired: true, checkPassed: false) == .checkFailed)
        piped.signal = SIGSEGV
        #expect(piped.crashSignal == SIGSEGV && piped.outcome(against: baseline, fired: true, checkPassed: nil) == .crash)
    }
}

/// A failed check is known by the first line of stderr its baseline did not write (issue 31,
/// item 2): under bison, m4's one "bad regular expression … Memory exhausted" is followed by
/// lines that differ with where the fault struck (the regex, the skeleton's line, "undefined
/// macro" lines, bison's warnings about the broken output); those are one bug. m4's "memory
/// exhausted" and its exit 1, which bison ignores, is another.
@Suite struct ExploreSymptomLineTests {
    static func failed(_ i: Int, _ stderr: String) -> ExploreResult {
        let point = FaultPoint(function: "malloc", site: CallSite("m4+0x\(String(0x1000 + i, radix: 16))"), nth: 1, errno: "ENOMEM",
                               image: "/usr/bin/m4", imageName: "m4")
        return ExploreResult(index: i, point: point, outcome: .checkFailed,
                             record: RunRecord(exitStatus: 0, signal: nil, timedOut: false, stdout: "", stderr: stderr, seconds: 0),
                             reproducer: nil, reproduced: nil)
    }

    @Test(.tags(.fast)) func aFailedCheckIsKnownByTheFirstNewLineOfStderr() {
        let baseline = RunRecord(exitStatus: 0, signal: nil, timedOut: false, stdout: "", stderr: "calc.y: warning: 1 nonterminal useless\n", seconds: 0)
        let m4 = "/usr/bin/m4:/usr/share/bison/skeletons/"
        let findings = [
            Self.failed(1, "calc.y: warning: 2 nonterminal useless\n\(m4)bison.m4:1112: bad regular expression `[-.]': Memory exhausted\n"
                        + "\(m4)yacc.c:420: undefined macro `b4_symbol(0, number)'\ncalc.c:473: warning: suspicious sequence in the output: b4_translate [-Wother]\n"),
            Self.failed(2, "\(m4)yacc.c:441: bad regular expression `^.*/\\([^/]+\\)/*$\n\\(.\\)': Memory exhausted\n"),
            Self.failed(3, "\(m4)yacc.c:420: bad regular expression `[\t ]+': Memory exhausted\n"),
            Self.failed(4, "/usr/bin/m4: memory exhausted\n"),
            Self.failed(5, "/usr/bin/m4: memory exhausted\n"),
        ]
        let bugs = ExploreBug.group(findings, baseline: baseline)
        #expect(bugs.map { $0.findings.map(\.index) } == [[1, 2, 3], [4, 5]], "\(bugs.map(\.signature))")
        #expect(bugs.first?.signature == #"m4: exit 0; the check failed; stderr: "/usr/bin/mN:<at>: bad regular expression <q>: Memory exhausted""#)
        #expect(bugs.last?.signature == #"m4: exit 0; the check failed; stderr: "/usr/bin/mN: memory exhausted""#)
    }

    /// Made alike: quoted text in its four forms and an input position; an apostrophe in a
    /// word is no quotation.
    @Test(.tags(.fast)) func whatAMessageIsAboutIsMadeAlike() {
        #expect(SymptomLine.shape("prog: can't open 'a b.txt': No such file") == "prog: can't open <q>: No such file")
        #expect(SymptomLine.shape("x: ‘f’ and \"g h\" and `i'") == "x: <q> and <q> and <q>")
        #expect(SymptomLine.shape("calc.y:3.1-5: error: syntax error") == "<at>: error: syntax error")
        #expect(SymptomLine.firstNew(in: "same\nnew 12\nlater\n", baseline: "same\n") == "new N")
        #expect(SymptomLine.firstNew(in: "same 1\n", baseline: "same 2\n") == "")
        #expect(SymptomLine.firstNew(in: "of a line\nsame\nnew\n", baseline: "same\n", cut: true) == "new", "a tail's first piece")
    }
}
