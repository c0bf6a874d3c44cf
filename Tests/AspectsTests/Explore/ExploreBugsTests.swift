import CAspectsABI
import Foundation
import Testing
import AspectsCore
import AspectsExplore
import AspectsRules

/// Findings grouped into bugs, each crash with the crashing thread's stack (crash.c records
/// it, CrashStack unwinds it, SiteSymbolizer names its frames): one bug per cause however many
/// fault points reach it, and a symbolized stack that says where.
@Suite(.serialized) struct ExploreBugsTests {
    struct Campaign {
        var result: Outcome
        var root: JSONNode
        var bugs: [JSONNode]
        var html: String?
    }


    func explore(_ options: [String], _ command: [String], html: Bool = false) throws -> Campaign {
        let out = NSTemporaryDirectory() + "aspects-bugs-\(UUID().uuidString)"
        defer {
            for p in [out, out + ".json", out + ".html"] { TableSegments.removeScratch(p) }
        }
        let r = try Proc.aspectctl(["explore", "--out", out, "--json", out + ".json"] + (html ? ["--html", out + ".html"] : [])
                                   + options + ["--"] + command)
        let root = try JSONParser.parse(try String(contentsOfFile: out + ".json", encoding: .utf8))
        let schema = try JSONParser.parse(try String(contentsOfFile: Paths.root + "/config/explore.schema.json", encoding: .utf8))
        let problems = SchemaValidator(root: schema).validate(root)
        #expect(problems.isEmpty, "\(problems)")
        let page = html ? try String(contentsOfFile: out + ".html", encoding: .utf8) : nil
        return Campaign(result: r, root: root, bugs: ReportJSON.array(root, "bugs"), html: page)
    }

    static func frames(_ bug: JSONNode) -> [JSONNode] { ReportJSON.array(bug, "stack") }

    /// `file:line (symbol)` of each frame that has them.
    static func places(_ bug: JSONNode) -> [String] {
        frames(bug).map { "\(ReportJSON.str($0, "file") ?? "?"):\(ReportJSON.int($0, "line") ?? 0) (\(ReportJSON.str($0, "symbol") ?? "?"))" }
    }

    /// One NULL dereference reached through two fault points (two mallocs whose results both go
    /// to fill_record) is one bug, with a stack naming the function and its line.
    @Test func oneCrashThroughTwoFaultPointsIsOneBugWithItsStack() throws {
        let bin = try Fixture.build("explore_bugs", flags: ["-g", "-O0"])
        let c = try explore(["--function", "malloc", "--strategy", "sites"], [bin, "same"])
        #expect(c.result.status == 1, "\(c.result)")
        #expect(c.bugs.count == 1, "\(c.result.stdout)")
        let bug = try #require(c.bugs.first)
        #expect(ReportJSON.str(bug, "outcome") == "crash")
        #expect(ReportJSON.array(bug, "faultPoints").count == 2, "\(c.result.stdout)")
        #expect(ReportJSON.str(bug, "signature") == "SIGSEGV in fill_record (explore_bugs.c:24)", "\(ReportJSON.str(bug, "signature") ?? "")")
        let top = try #require(Self.frames(bug).first)
        #expect(ReportJSON.str(top, "symbol") == "fill_record" && ReportJSON.str(top, "file") == "explore_bugs.c" && ReportJSON.int(top, "line") == 24,
                "\(Self.places(bug))")
        #expect(ReportJSON.str(top, "object") == bin)
        #expect(Self.places(bug).contains { $0.hasPrefix("explore_bugs.c:") && $0.hasSuffix("(main)") }, "\(Self.places(bug))")
        #expect(ReportJSON.str(bug, "reproducer")?.hasSuffix("repro-00000.json") == true)
        // The text leads with the bugs, then the findings.
        let bugsAt = try #require(c.result.stdout.range(of: "bugs: 1 (from 2 finding(s))"))
        let findingsAt = try #require(c.result.stdout.range(of: "\nfindings:"))
        #expect(bugsAt.lowerBound < findingsAt.lowerBound, "\(c.result.stdout)")
        #expect(c.result.stdout.contains("at explore_bugs.c:24 (fill_record) explore_bugs-"), "\(c.result.stdout)")
    }

    /// Two mallocs whose NULLs crash in two different places — the program's own store, and
    /// libc's memset called from another function — are two bugs.
    @Test func twoCrashSitesAreTwoBugs() throws {
        let bin = try Fixture.build("explore_bugs", flags: ["-g", "-O0"])
        let c = try explore(["--function", "malloc", "--strategy", "sites"], [bin, "two"], html: true)
        #expect(c.result.status == 1, "\(c.result)")
        let signatures = c.bugs.compactMap { ReportJSON.str($0, "signature") }
        #expect(signatures.count == 2, "\(c.result.stdout)")
        #expect(signatures.contains("SIGSEGV in store_name (explore_bugs.c:13)"), "\(signatures)")
        // memset's own frame first (a libc symbol), then its caller outside libc with its line:
        // the bad argument is that caller's
        let memset = try #require(c.bugs.first { ReportJSON.str($0, "signature")?.hasSuffix("← store_value (explore_bugs.c:19)") == true }, "\(signatures)")
        #expect(Self.places(memset).contains("explore_bugs.c:19 (store_value)"), "\(Self.places(memset))")
        #expect(c.bugs.allSatisfy { ReportJSON.array($0, "faultPoints").count == 1 })
        // The HTML page leads with the bugs; the matrix stays, after them.
        let page = try #require(c.html)
        let bugsAt = try #require(page.range(of: "<section class=\"bugs\""))
        let matrixAt = try #require(page.range(of: "<table id=\"matrix\""))
        #expect(bugsAt.lowerBound < matrixAt.lowerBound)
        #expect(page.contains("store_name") && page.contains("explore_bugs.c:13"), "the stack is on the page")
    }

    /// One NULL dereference behind three callers of an unchecked wrapper (the site point and
    /// the wrapper's calls 1-3) is one bug, named by where it crashed and not by the callers
    /// above; it is run again once (one `again-` run), not once per point.
    @Test func aCrashReachedThroughSeveralCallersIsOneBugNamedByWhereItCrashed() throws {
        let bin = try Fixture.build("explore_causes", flags: ["-g", "-O0"])
        let out = NSTemporaryDirectory() + "aspects-causes-\(UUID().uuidString)"
        defer { for p in [out, out + ".json"] { TableSegments.removeScratch(p) } }
        let r = try Proc.aspectctl(["explore", "--function", "malloc", "--strategy", "both", "--out", out, "--json", out + ".json", "--", bin, "crash"])
        #expect(r.status == 1, "\(r)")
        let root = try JSONParser.parse(try String(contentsOfFile: out + ".json", encoding: .utf8))
        let bugs = ReportJSON.array(root, "bugs")
        #expect(bugs.count == 1, "\(r.stdout)")
        #expect(ReportJSON.str(bugs.first, "signature") == "SIGSEGV in put (explore_causes.c:16)", "\(r.stdout)")
        let points = ReportJSON.array(try #require(bugs.first), "faultPoints")
        #expect(points.count == 4, "the site point and calls 1, 2, 3: \(r.stdout)")
        // the callers differ: first, second, third
        let callers = Set(ReportJSON.array(root, "runs").compactMap { run in
            ReportJSON.array(ReportJSON.array(run["run"], "crashes").first, "stack").dropFirst().first.flatMap { ReportJSON.str($0, "symbol") } })
        #expect(callers == ["first", "second", "third"], "\(callers)")
        let again = try FileManager.default.contentsOfDirectory(atPath: out + "/work").filter { $0.hasPrefix("again-") && !$0.contains(".") }
        #expect(again.count == 1, "one bug, one re-run: \(again)")
        #expect(r.stdout.contains("[reproduced]") && r.stdout.contains("[the bug of run "), "\(r.stdout)")
    }

    /// Check failures are known by their symptom: four allocations whose failure each skips a
    /// record with "skipped record N" and exits 0 are one bug with four points; the fopen
    /// failure inside libc (exit 2, which the check's idiom accepts as reported) is none.
    @Test func checkFailuresWithOneSymptomAreOneBug() throws {
        let bin = try Fixture.build("explore_causes", flags: ["-g", "-O0"])
        let c = try explore(["--function", "malloc", "--strategy", "sites",
                             "--check", #"[ "$ASPECTS_EXPLORE_STATUS" != 0 ] || [ "$(wc -l < records.txt)" = 4 ]"#], [bin, "quiet"])
        #expect(c.result.status == 1, "\(c.result)")
        #expect(c.bugs.count == 1, "\(c.result.stdout)")
        let signature = try #require(ReportJSON.str(c.bugs.first, "signature"))
        #expect(signature.hasSuffix(#": exit 0; the check failed; stderr: "skipped record N""#), "\(signature)")
        #expect(ReportJSON.array(try #require(c.bugs.first), "faultPoints").count == 4, "\(c.result.stdout)")
    }

    /// What two runs of one bug print differently is made alike: the run's own directory,
    /// addresses, numbers.
    @Test func aSymptomsLastLineIsNormalized() {
        #expect(BugCause.normalized("cannot open /tmp/x/aspects-explore/work/run-00012/f.txt at 0x7ffd12ab: 17 bytes")
                == "cannot open <run>/f.txt at <addr>: N bytes")
        #expect(BugCause.normalized("again: /o/work/again-3/out") == "again: <run>/out")
        #expect(SymptomLine.shaped("first\nsecond\n\n") == ["first", "second"])
    }

    /// Debian 12's sqlite3 shell under malloc faults (issue 21): glibc 2.36's NSS code under
    /// getpwuid crashes two ways — a NULL dereference in nss_database_check_reload_and_get
    /// (nss_database.c:402) and the assertion `ret > 0` in nss_database_reload_1 — reached by
    /// four findings (site and nth strategies). Exactly two bugs, each with its stack
    /// symbolized from libc's separate debug file (libc6-dbg).
    @Test(.tags(.slow, .realPrograms), .requires(FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")
                   && FileManager.default.fileExists(atPath: "/usr/share/doc/libc6-dbg"), "needs sqlite3 and libc6-dbg"))
    func sqlite3ShellGivesExactlyTheTwoNSSCrashBugs() throws {
        let c = try explore(["--function", "malloc"], ["/usr/bin/sqlite3", ":memory:", "select 1;"])
        #expect(c.result.status == 1, "\(c.result)")
        let findings = ReportJSON.array(c.root, "runs").filter { ReportJSON.str($0, "outcome") == "crash" }
        print("sqlite3: \(findings.count) crash finding(s), \(c.bugs.count) bug(s): \(c.bugs.compactMap { ReportJSON.str($0, "signature") })")
        #expect(c.bugs.count == 2, "\(c.result.stdout)")
        #expect(findings.count > c.bugs.count, "several fault points reach each bug")
        let segv = try #require(c.bugs.first { ReportJSON.str($0, "signature")?.hasPrefix("SIGSEGV in ") == true }, "\(c.result.stdout)")
        let top = try #require(Self.frames(segv).first)
        #expect(ReportJSON.str(top, "file") == "nss_database.c" && ReportJSON.str(top, "symbol") == "nss_database_check_reload_and_get",
                "\(Self.places(segv))")
        // the assertion is in nss_database_reload_1, inlined: frames are named by the symbol
        // table's function that contains them (SiteSymbolizer.symbolize)
        let abrt = try #require(
            c.bugs.first { ReportJSON.str($0, "signature")?.hasPrefix("SIGABRT in nss_database_check_reload_and_get") == true },
            "\(c.result.stdout)")
        #expect(
            Self.places(abrt).contains { $0.hasPrefix("nss_database.c:") && $0.hasSuffix("(nss_database_check_reload_and_get)") },
            "\(Self.places(abrt))")
        for bug in [segv, abrt] {
            // down to getpwuid and into the shell itself
            #expect(Self.frames(bug).contains { ReportJSON.str($0, "symbol") == "getpwuid" }, "\(Self.places(bug))")
            #expect(Self.frames(bug).contains { ReportJSON.str($0, "object") == "/usr/bin/sqlite3" }, "\(Self.places(bug))")
        }
        #expect(Set(c.bugs.flatMap { ReportJSON.array($0, "faultPoints") }.compactMap { ReportJSON.int($0, "run") }).count == findings.count,
                "every crash finding is in one bug")
    }

    /// Without debug information a frame is named only by a symbol that contains it: in a
    /// stripped program (its exported functions in the dynamic table), the static fill_record
    /// keeps object+offset rather than taking the name of the exported function before it,
    /// and its caller is still main.
    @Test func aFrameWithoutASymbolOfItsOwnIsNotGivenANeighboursName() throws {
        let bin = try Fixture.build("explore_bugs", flags: ["-O0", "-rdynamic", "-s"])
        let c = try explore(["--function", "malloc", "--strategy", "sites"], [bin, "same"])
        #expect(c.bugs.count == 1, "\(c.result.stdout)")
        let stack = Self.frames(try #require(c.bugs.first))
        #expect(stack.count >= 2, "\(c.result.stdout)")
        #expect(ReportJSON.str(stack.first, "symbol") == nil, "\(Self.places(c.bugs[0]))")
        #expect(ReportJSON.str(stack.dropFirst().first, "symbol") == "main", "\(Self.places(c.bugs[0]))")
        let name = (bin as NSString).lastPathComponent
        #expect(ReportJSON.str(c.bugs.first, "signature")?.hasPrefix("SIGSEGV in \(name)+0x") == true, "\(c.result.stdout)")
    }

    /// The preload's side (crash.c): with ASPECTS_CRASH_DIR a crashing process leaves its
    /// stack and mappings there and dies as before; the stack unwinds to the faulting function
    /// and on to main. A fork child that faults leaves its own pair, named by its pid.
    @Test func aCrashLeavesItsStackInTheCrashDirectoryAndDiesAsBefore() throws {
        let t = try ScratchTable()
        let bin = try Fixture.build("crash_tree", flags: ["-g"])
        let dir = NSTemporaryDirectory() + "aspects-crashdir-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let env = Proc.preload(table: t.name).merging(["ASPECTS_RECORD_CRASH": "1", "ASPECTS_CRASH_DIR": dir]) { $1 }
        let r = try Proc.run(bin, ["segv"], environment: env)
        #expect(r.status == 128 + 11, "\(r)")
        let pid = try #require(t.table.attachments().first?.crashPID)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(files == ["crash-\(pid).maps", "crash-\(pid).stack"], "\(files)")
        let frames = SiteSymbolizer.symbolize(CrashStack.read(directory: dir, pid: Int32(pid)))
        #expect(frames.first?.symbol == "fault" && frames.first?.isReturnAddress == false, "\(frames.map(\.description))")
        #expect(frames.dropFirst().first?.symbol == "main", "\(frames.map(\.description))")

        let child = try Proc.run(bin, ["child-segv"], environment: env)
        #expect(child.status == 0 && child.stdout == "child: signal 11\n", "\(child)")
        let childPID = try #require(t.table.attachments().compactMap(\.crashPID).first { $0 != pid })
        #expect(FileManager.default.fileExists(atPath: dir + "/crash-\(childPID).stack"))
    }

    /// Without an absolute ASPECTS_CRASH_DIR, or with one that cannot be written, the crash is
    /// recorded (the signal) and the process dies the same: no stack, no other effect.
    @Test(arguments: ["relative/dir", "/nonexistent/aspects-crash-dir"])
    func aCrashDirectoryThatCannotBeUsedChangesNothing(_ dir: String) throws {
        let t = try ScratchTable()
        let bin = try Fixture.build("crash_tree")
        let env = Proc.preload(table: t.name).merging(["ASPECTS_RECORD_CRASH": "1", "ASPECTS_CRASH_DIR": dir]) { $1 }
        let r = try Proc.run(bin, ["abort"], environment: env)
        #expect(r.status == 128 + 6, "\(r)")
        #expect(t.table.attachments().first?.crashSignal == 6)
    }

    /// The HTML page in a real browser: it opens without a console message, the bugs come
    /// before the matrix, and a bug's fault point links to its cell of the matrix.
    @Test(.tags(.realPrograms), .requires(HeadlessBrowser.chromium != nil, "needs chromium (.ci/run installs it)"))
    func theHTMLPageLeadsWithTheBugsInABrowser() throws {
        let bin = try Fixture.build("explore_bugs", flags: ["-g", "-O0"])
        let html = NSTemporaryDirectory() + "aspects-bugs-\(UUID().uuidString).html"
        let out = html + ".out"
        defer { TableSegments.removeScratch(html); TableSegments.removeScratch(out) }
        let r = try Proc.aspectctl(["explore", "--function", "malloc", "--strategy", "sites", "--out", out, "--html", html, "--", bin, "same"])
        #expect(r.status == 1, "\(r)")
        let page = try HeadlessBrowser.load(html)
        #expect(page.console.isEmpty, "\(page.console)")
        #expect(page.dom.contains("data-ready=\"1\""))
        let bugs = try #require(page.dom.range(of: "<section class=\"bugs\""))
        let matrix = try #require(page.dom.range(of: "<table id=\"matrix\""))
        #expect(bugs.lowerBound < matrix.lowerBound)
        let end = try #require(page.dom[bugs.lowerBound...].range(of: "</section>"))
        let section = page.dom[bugs.lowerBound..<end.upperBound]
        #expect(section.contains("1 bug(s) from 2 finding(s)") && section.contains("explore_bugs.c:24 (fill_record)"), "\(section)")
        let links = section.matches(of: #/<a href="#(cell-[a-z0-9]+-[0-9]+)">/#).map { String($0.1) }
        #expect(links.count == 2 && links.allSatisfy { page.dom.contains("id=\"\($0)\"") }, "\(links)")
    }

    /// The unwinder on what a dead process left: nothing from a file that is not a stack dump,
    /// and the scan stops at the end of the copied stack.
    @Test func aStackFileThatIsNotOneGivesNoFrames() {
        #expect(CrashStack.frames(stack: Array("not a stack".utf8), maps: "").isEmpty)
        let dump = CrashStackDumpTests.dump(machine: ASPECTS_ELF_MACHINE_X86_64, pc: 0x1000, sp: 0x7000, fp: 0, lr: 0, stack: [])
        #expect(CrashStack.frames(stack: dump, maps: "00001000-00002000 r-xp 00000000 00:00 0 /nonexistent\n").count == 1)
    }
}
