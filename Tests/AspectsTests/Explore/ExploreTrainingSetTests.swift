import Foundation
import Testing
import AspectsExplore
import AspectsRules

/// explore's verdicts on the training set (docs/bugs.md): programs nobody here wrote, from
/// Debian 12, each campaign the one scripts/training-campaigns.sh runs. A finding is a claim
/// about someone else's program, so each test says what the program's maintainer would find
/// true: the bugs confirmed by hand (gdb, and strace for system-call faults), each reported
/// once, and no report where the program is right.
@Suite(.serialized, .tags(.realPrograms)) struct ExploreTrainingSetTests {
    static func installed(_ programs: String...) -> Bool {
        programs.allSatisfy { FileManager.default.isExecutableFile(atPath: "/usr/bin/" + $0) }
    }

    struct Campaign {
        var report: ExploreReport
        var output: Outcome
        var bugs: [ExploreBug] { report.bugs }
        var signatures: [String] { report.bugs.map(\.signature) }
    }

    /// One campaign in a scratch directory: `inputs` are written there first and copied into
    /// each run's directory by --setup.
    func explore(_ options: [String], _ command: [String], inputs: [String: String]) throws -> Campaign {
        let dir = NSTemporaryDirectory() + "aspects-training-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir + "/in", withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        for (name, text) in inputs { try text.write(toFile: dir + "/in/" + name, atomically: false, encoding: .utf8) }
        let r = try Proc.aspectctl(["explore", "--out", dir + "/out", "--json", dir + "/report.json", "--setup", "cp '\(dir)/in/'* ."]
                                   + options + ["--"] + command)
        let report = try ExploreReport.decode(try String(contentsOfFile: dir + "/report.json", encoding: .utf8), source: dir + "/report.json")
        print("explore \(command.joined(separator: " ")): \(report.results.count) run(s), \(report.findings.count) finding(s), \(report.bugs.count) bug(s): \(report.bugs.map(\.signature))")
        return Campaign(report: report, output: r)
    }

    static let memory = ["--function", "malloc", "--function", "calloc", "--function", "realloc"]

    /// sed 4.9's two real bugs, each once, found without a check: when glibc's regex matcher
    /// runs out of memory sed takes it for "no match" and rewrites the file unsubstituted, and
    /// when getdelim's first allocation fails sed takes it for end of file and empties the
    /// file — both exit 0, nothing said. Its deliberate "memory exhausted" stops are fail-fast.
    @Test(.requires(installed("sed"), "needs sed"))
    func sedReportsExactlyItsTwoRealBugs() throws {
        let c = try explore(Self.memory + ["--strategy", "sites", "--process", "sed"], ["sed", "-i", "s/foo/baz/g", "f.txt"],
                            inputs: ["f.txt": "foo bar\nsecond foo line\nthird\n"])
        #expect(c.bugs.count == 2, "\(c.signatures)\n\(c.output.stdout)")
        #expect(c.bugs.allSatisfy { $0.outcome == .silentDifference }, "\(c.signatures)")
        #expect(c.signatures.contains { $0.contains("f.txt (changed)") } && c.signatures.contains { $0.contains("f.txt (emptied)") }, "\(c.signatures)")
        let emptied = try #require(c.bugs.first { $0.signature.contains("emptied") })
        #expect(emptied.findings.map(\.point.function) == ["malloc"], "\(emptied.findings.map(\.point.name))")
        #expect(emptied.findings.allSatisfy { c.report.locations[$0.point.site!]?.contains("getdelim") == true },
                "\(emptied.findings.map(\.point.name))")
        #expect(!c.report.failFastStops.isEmpty, "sed's memory exhausted stops")
    }

    /// jq 1.6: its allocation wrapper's "cannot allocate memory" abort is fail-fast by design,
    /// never a bug; what is reported are its 4 real crashes (an assertion in
    /// block_bind_subblock, strcmp and strlen given the NULL of a failed strdup, and
    /// jv_parser_free of a parser whose allocation failed), each once.
    @Test(.tags(.slow), .requires(installed("jq"), "needs jq"))
    func jqReportsItsCrashesAndNoFailFastBug() throws {
        let c = try explore(Self.memory + ["--strategy", "context", "--process", "jq", "--max-runs", "400"], ["jq", "-c", ".a", "in.json"],
                            inputs: ["in.json": #"{"a":[1,2,{"b":"foo"}],"c":"bar","d":{"e":null}}"# + "\n"])
        #expect(c.bugs.allSatisfy { $0.outcome == .crash }, "\(c.signatures)")
        #expect(c.bugs.count == 4, "\(c.signatures)\n\(c.output.stdout)")
        #expect(!c.report.failFastStops.isEmpty && c.report.failFastStops.allSatisfy { $0.message.contains("memory") },
                "\(c.report.failFastStops.map(\.message))")
        #expect(c.report.findings.allSatisfy { !$0.record.stderr.contains("error: cannot allocate memory") }, "a fail-fast stop became a finding")
    }

    /// bison 3.8.2: when its m4 child cannot read m4sugar.m4 (fopen fails), bison goes on with
    /// m4's partial output and fails its own assertion in location_print — one bug.
    @Test(.requires(installed("bison", "m4"), "needs bison and m4"))
    func bisonsAssertionWhenM4FailsIsOneBug() throws {
        let c = try explore(["--function", "fopen", "--strategy", "sites", "--process", "bison", "--process", "m4"],
                            ["bison", "-d", "-o", "calc.c", "calc.y"], inputs: ["calc.y": Self.calc])
        #expect(c.bugs.count == 1 && c.bugs.first?.outcome == .crash, "\(c.signatures)\n\(c.output.stdout)")
        #expect(c.report.findings.allSatisfy { $0.record.stderr.contains("location_print: Assertion") }, "\(c.output.stdout)")
    }

    /// bison 3.8.2 with m4 1.4.19 under allocation faults in both: bison exits 0 when m4 fails
    /// (m4 says so, bison warns about m4's broken output and leaves it as calc.c/calc.h) — one
    /// bug, whichever files it left wrong; m4's SIGSEGV that its own handler catches ("internal
    /// error detected") is a crash with its stack, not bison's check failure.
    @Test(.tags(.slow), .requires(installed("bison", "m4"), "needs bison and m4"))
    func bisonsLostM4FailureIsOneBugAndM4sCaughtCrashACrash() throws {
        let c = try explore(Self.memory + ["--strategy", "sites", "--process", "bison", "--process", "m4"],
                            ["bison", "-d", "-o", "calc.c", "calc.y"], inputs: ["calc.y": Self.calc])
        let silent = c.bugs.filter { $0.outcome == .silentDifference }
        #expect(silent.count == 1 && silent.first?.signature.contains("exit 0 as the baseline, though it wrote to stderr") == true,
                "\(c.signatures)\n\(c.output.stdout)")
        #expect(c.bugs.contains { $0.outcome == .crash && $0.caughtByHandler && $0.signature.hasPrefix("SIGSEGV") && !$0.stack.isEmpty },
                "\(c.signatures)")
        #expect(!c.bugs.contains { $0.outcome == .checkFailed }, "\(c.signatures)")
    }

    /// cflow 1.7 ignores the error of closing its output: on ENOSPC at fclose it exits 0 with
    /// an empty file (as a real ENOSPC injected by strace under that close's write does).
    @Test(.requires(installed("cflow"), "needs cflow"))
    func cflowsLostOutputIsOneSilentDifference() throws {
        let c = try explore(["--function", "fclose", "--function", "fwrite", "--function", "fputs", "--strategy", "sites", "--process", "cflow"],
                            ["cflow", "-o", "out", "f.c"], inputs: ["f.c": "int square(int x) { return x * x; }\nint main(void) { return square(2); }\n"])
        #expect(c.bugs.count == 1 && c.bugs.first?.outcome == .silentDifference && c.bugs.first?.signature.contains("out (emptied)") == true,
                "\(c.signatures)\n\(c.output.stdout)")
    }

    /// diff exits 1 when the files differ: explored as it is, without a wrapper, and its error
    /// handling is sound (0 findings); xz and bzip2 likewise report nothing, their I/O faults
    /// handled as a real read or write error is.
    @Test(.requires(installed("diff", "xz", "bzip2"), "needs diff, xz and bzip2"))
    func diffXzAndBzip2ReportNothing() throws {
        let diff = try explore(Self.memory + ["--strategy", "sites", "--process", "diff"], ["diff", "a.txt", "b.txt"],
                               inputs: ["a.txt": "one\ntwo\nthree\n", "b.txt": "one\n2\nthree\nfour\n"])
        #expect(diff.report.baseline.exitStatus == 1 && !diff.report.results.isEmpty && diff.report.findings.isEmpty, "\(diff.output.stdout)")
        let data = (1...4000).map(String.init).joined(separator: "\n")
        for program in ["xz", "bzip2"] {
            let c = try explore(["--function", "read", "--function", "write", "--function", "fread", "--function", "fwrite", "--function", "close",
                                 "--function", "fclose", "--strategy", "sites", "--process", program], [program, "data"], inputs: ["data": data])
            #expect(!c.report.results.isEmpty && c.report.findings.isEmpty, "\(program): \(c.output.stdout)")
        }
    }

    static let calc = """
    %{
    #include <stdio.h>
    int yylex(void);
    void yyerror(const char *s);
    %}
    %token NUM
    %left '+' '-'
    %%
    input: %empty | input line ;
    line: '\\n' | exp '\\n' { printf("%d\\n", $1); } ;
    exp: NUM | exp '+' exp { $$ = $1 + $3; } | exp '-' exp { $$ = $1 - $3; } ;
    %%

    """
}
