import Foundation
import Testing
import AspectsCore
import AspectsRules

/// `run`'s own output kept apart from the program's: --report-file, --report-fd, and the whole
/// run as JSON (--report-json, config/run-report.schema.json); counts named by program.
@Suite struct RunReportTests {
    static let schema = try! JSONParser.parse(try! String(contentsOfFile: Paths.root + "/config/run-report.schema.json", encoding: .utf8))

    func scratch() throws -> String {
        let dir = NSTemporaryDirectory() + "aspects-report-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    static let failSecondWrite = #"{"id":"w2","symbol":"write","position":"instead","action":{"fail":"ENOSPC"},"when":{"nth":2}}"#
    static let neverMatches = #"{"id":"never","symbol":"unlink","position":"before","action":{"log":true}}"#
    static let drawsASeed = #"{"id":"maybe","symbol":"getppid","position":"before","action":{"log":true},"when":{"probability":0.5}}"#

    @Test func theReportGoesToItsFileAndTheProgramsStderrStaysItsOwn() throws {
        let dir = try scratch()
        defer { TableSegments.removeScratch(dir) }
        let r = try Proc.aspectctl(["run", "--report", "--report-file", dir + "/report.txt", "--rule", Self.neverMatches, "--rule", Self.drawsASeed,
                                    "--", "/bin/sh", "-c", "echo from-the-program >&2"])
        #expect(r.status == 0)
        #expect(r.stderr == "from-the-program\n", "nothing of aspectctl's in the program's stderr: \(r.stderr)")
        let report = try String(contentsOfFile: dir + "/report.txt", encoding: .utf8)
        #expect(report.contains("aspectctl: rule maybe: seed ") && report.contains("(drawn;"), "\(report)")
        #expect(report.contains("rule \"never\" never matched a call"), "\(report)")
        #expect(report.contains("aspectctl: report for /bin/sh (exit status 0)") && report.contains("never  unlink"), "\(report)")
    }

    @Test func theReportGoesToAnInheritedDescriptorNotToTheCommand() throws {
        let dir = try scratch()
        defer { TableSegments.removeScratch(dir) }
        // fd 3 is aspectctl's report; the command must not inherit it.
        let probe = "test -e /proc/$$/fd/3 && echo inherited || echo not-inherited"
        let r = try Proc.run("/bin/sh", ["-c", "'\(Paths.aspectctl)' run --report-fd 3 --rule '\(Self.neverMatches)' -- /bin/sh -c '\(probe)' 3>'\(dir)/fd3.txt'"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.isEmpty, "\(r)")
        #expect(r.stdout == "not-inherited\n", "\(r)")
        let report = try String(contentsOfFile: dir + "/fd3.txt", encoding: .utf8)
        #expect(report.contains("rule \"never\" never matched a call"), "\(report)")
        let bad = try Proc.aspectctl(["run", "--report-fd", "9", "--rule", Self.neverMatches, "--", "/bin/true"])
        #expect(bad.status == 125 && bad.stderr.contains("descriptor 9 is not open for writing"), "\(bad)")
        let both = try Proc.aspectctl(["run", "--report-fd", "2", "--report-file", dir + "/x", "--rule", Self.neverMatches, "--", "/bin/true"])
        #expect(both.status == 125, "\(both)")
    }

    @Test func theWholeRunAsJSON() throws {
        let dir = try scratch()
        defer { TableSegments.removeScratch(dir) }
        let r = try Proc.aspectctl(["run", "--report-json", dir + "/run.json", "--rule", Self.failSecondWrite, "--rule", Self.neverMatches,
                                    "--", "/bin/sh", "-c", "echo a; echo b; /bin/sh -c 'echo c'"])
        #expect(r.status == 0, "\(r)")
        let doc = try JSONParser.parse(try String(contentsOfFile: dir + "/run.json", encoding: .utf8))
        #expect(SchemaValidator(root: Self.schema).validate(doc).isEmpty, "\(SchemaValidator(root: Self.schema).validate(doc))")
        func int(_ n: JSONNode?, _ k: String) -> Int? { if case .number(let t)? = n?[k]?.value { return Int(t) }; return nil }
        func str(_ n: JSONNode?, _ k: String) -> String? { if case .string(let s)? = n?[k]?.value { return s }; return nil }
        #expect(int(doc, "status") == 0)
        guard case .array(let attached)? = doc["attached"]?.value, case .array(let rules)? = doc["rules"]?.value,
              case .array(let warnings)? = doc["warnings"]?.value, case .array(let events)? = doc["events"]?.value else {
            Issue.record("shape"); return
        }
        #expect(attached.count == 2, "the shell and the inner shell")
        let w2 = try #require(rules.first { str($0, "id") == "w2" })
        #expect(int(w2, "fired") == 1)
        guard case .array(let byProgram)? = w2["byProgram"]?.value else { Issue.record("byProgram"); return }
        #expect(byProgram.count == 1 && int(byProgram[0], "processes") == 2 && str(byProgram[0], "program")?.hasSuffix("sh") == true
                || byProgram.count == 2, "\(byProgram)")
        #expect(warnings.count == 1 && (warnings.first.map { if case .string(let s) = $0.value { return s.contains("never") } else { return false } } ?? false))
        #expect(events.count == 1 && str(events[0], "symbol") == "write" && str(events[0], "errno") == "ENOSPC")
    }

    /// Counts by program and by hierarchy, named by the executable's path.
    @Test func statsNameProgramsNotOnlyPids() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"gp","symbol":"getppid","position":"before","action":{"log":true}}"#)
        // dash calls getppid at start-up (for $PPID): the outer shell and two inner ones
        let r = try Proc.run("/bin/sh", ["-c", "/bin/sh -c true; /bin/sh -c true"], environment: Proc.preload(table: t.name))
        #expect(r.status == 0)
        let stats = try Proc.aspectctl(["stats", "--table", t.name])
        #expect(stats.status == 0)
        let text = try Proc.aspectctl(["stats", "--table", t.name, "--json"])
        let doc = try JSONParser.parse(text.stdout)
        guard case .array(let rules)? = doc["rules"]?.value, let gp = rules.first, case .array(let programs)? = gp["byProgram"]?.value,
              case .array(let hierarchies)? = gp["byHierarchy"]?.value else { Issue.record("shape: \(text.stdout)"); return }
        let names = programs.compactMap { if case .string(let s)? = $0["program"]?.value { return s }; return nil }
        let processes = programs.compactMap { if case .number(let n)? = $0["processes"]?.value { return Int(n) }; return nil }
        #expect(names.count == 1 && names[0].hasPrefix("/") && names[0].hasSuffix("dash") && processes == [3], "\(programs)")
        #expect(hierarchies.count == 1, "one hierarchy: \(hierarchies)")
        #expect(stats.stdout.contains("by program:\n  gp  \(names[0]): 3 process(es) in hierarchy "), "\(stats.stdout)")
    }

    /// A process that executes another program keeps its pid: each image counts apart, so
    /// the counts are named by the program that made the calls.
    @Test(.tags(.realPrograms), .requires(FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs python3"))
    func aProcessThatExecsAnotherProgramIsCountedPerProgram() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"gp","symbol":"getppid","position":"before","action":{"log":true}}"#)
        let r = try Proc.run("/bin/sh", ["-c", "exec /usr/bin/python3 -c 'import os; os.getppid(); os.getppid()'"], environment: Proc.preload(table: t.name))
        #expect(r.status == 0, "\(r)")
        let rule = try #require(t.table.rules().first)
        #expect(Set(rule.byProcess.map(\.pid)).count == 1 && rule.byProcess.count == 2, "one pid, two images: \(rule.byProcess)")
        let stats = try Proc.aspectctl(["stats", "--table", t.name]).stdout
        #expect(stats.contains("gp  /usr/bin/dash: 1 process(es)"), "\(stats)")
        #expect(stats.contains("gp  /usr/bin/python3"), "\(stats)")
    }

    /// stats says where a rule's firings came from (the caller's object and offset, as events
    /// and the site condition write it), and that they are firings: two_sites writes twice
    /// from each of two places.
    @Test func statsByCallSite() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"o","symbol":"write","position":"before","action":{"log":true}}"#)
        let bin = try Fixture.build("two_sites")
        _ = try Proc.run(bin, [], environment: Proc.preload(table: t.name))
        let text = try Proc.aspectctl(["stats", "--table", t.name]).stdout
        let object = (bin as NSString).lastPathComponent
        #expect(text.contains("by call site (firings, from the events the ring holds; a call that matched without firing has no site):\n  o  \(object)+0x"), "\(text)")
        #expect(text.components(separatedBy: ": fired 2\n").count == 3, "\(text)")
        let doc = try JSONParser.parse(try Proc.aspectctl(["stats", "--table", t.name, "--json"]).stdout)
        guard case .array(let rules)? = doc["rules"]?.value, case .array(let sites)? = rules.first?["bySite"]?.value else { Issue.record("shape"); return }
        #expect(sites.count == 2 && sites.allSatisfy { $0["fired"]?.value == .number("2") && $0["shadowed"]?.value == .number("0") }, "two sites, two writes each: \(sites)")
        #expect(sites.allSatisfy { CallSite({ if case .string(let s)? = $0["site"]?.value { return s }; return "" }($0))?.object == object }, "\(sites)")
        #expect(rules.first?["firedWithoutSite"]?.value == .number("0"))
    }

    /// With a ring of 16 records for 40 firings, at most 16 are placed and the rest are said
    /// to be no longer placed: the lines add up to the rule's fired count.
    @Test func firingsTheRingNoLongerPlacesAreCounted() throws {
        let t = try ScratchTable(events: 16)
        try t.add(#"{"id":"o","symbol":"write","position":"before","action":{"log":true}}"#)
        let r = try Proc.run("/bin/sh", ["-c", "i=0; while [ $i -lt 40 ]; do echo $i; i=$((i+1)); done"], environment: Proc.preload(table: t.name))
        #expect(r.status == 0)
        let rules = t.table.rules()
        let sites = try #require(t.table.sites(of: rules)["o"])
        let placed = sites.sites.reduce(UInt64(0)) { $0 + $1.fired }
        #expect(rules.first?.fired == 40 && placed <= 16 && placed + sites.firedWithoutSite == 40, "\(sites)")
        let text = try Proc.aspectctl(["stats", "--table", t.name]).stdout
        #expect(text.contains("o  (site no longer recorded): fired \(sites.firedWithoutSite)\n"), "\(text)")
    }

    /// run --report, --report-json and the Swift API give the same by-site numbers; an
    /// instead rule behind another shows its calls as shadowed, not fired.
    @Test func runReportsByCallSite() throws {
        let dir = try scratch()
        defer { TableSegments.removeScratch(dir) }
        let bin = try Fixture.build("two_sites")
        let object = (bin as NSString).lastPathComponent
        let first = #"{"id":"first","symbol":"write","position":"instead","action":{"fail":"EIO"},"when":{"args":[{"arg":0,"fdpath":"/dev/null"}]}}"#
        let second = #"{"id":"second","symbol":"write","position":"instead","action":{"fail":"ENOSPC"},"when":{"args":[{"arg":0,"fdpath":"/dev/null"}]}}"#
        let r = try Proc.aspectctl(["run", "--report", "--report-json", dir + "/run.json", "--rule", first, "--rule", second, "--", bin])
        #expect(r.status == 0 && r.stdout.hasPrefix("a -1 EIO b -1 EIO"), "\(r)")
        #expect(r.stderr.contains("by call site (firings, from the events the ring holds; a call that matched without firing has no site):\n  first  \(object)+0x"), "\(r.stderr)")
        #expect(r.stderr.contains(": fired 0, shadowed 2"), "\(r.stderr)")
        let doc = try JSONParser.parse(try String(contentsOfFile: dir + "/run.json", encoding: .utf8))
        #expect(SchemaValidator(root: Self.schema).validate(doc).isEmpty, "\(SchemaValidator(root: Self.schema).validate(doc))")
        guard case .array(let rules)? = doc["rules"]?.value else { Issue.record("shape"); return }
        func sites(_ id: String) -> [JSONNode] {
            guard case .array(let s)? = rules.first(where: { $0["id"]?.value == .string(id) })?["bySite"]?.value else { return [] }
            return s
        }
        #expect(sites("first").count == 2 && sites("first").allSatisfy { $0["fired"]?.value == .number("2") }, "\(sites("first"))")
        #expect(sites("second").count == 2 && sites("second").allSatisfy { $0["fired"]?.value == .number("0") && $0["shadowed"]?.value == .number("2") }, "\(sites("second"))")
    }
}
