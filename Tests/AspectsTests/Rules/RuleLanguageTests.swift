import Foundation
import Testing
import AspectsCore
import AspectsRules

/// The rule language's promises under threads and processes (issue: the whole rule language).
@Suite struct RuleLanguageTests {
    static let getppid42 = #""symbol":"getppid","position":"instead","action":{"return":42}"#

    func firings(_ output: String) -> [Int] {
        output.split(separator: "\n").compactMap { line in line.split(separator: " ").last.flatMap { Int($0) } }
    }

    @Test func autoRemoveFiresExactlyOnceAcrossProcessesAndThreads() throws {
        let t = try ScratchTable(rules: 256, stats: 8192)
        let bin = try Fixture.build("hammer")
        for round in 1...200 {
            let id = "once-\(round)"
            try t.add(#"{"id":"\#(id)",\#(Self.getppid42),"autoRemove":true}"#)
            let r = try Proc.run(bin, ["16", "8", "20"], environment: Proc.preload(table: t.name))
            #expect(r.status == 0)
            let total = firings(r.stdout).reduce(0, +)
            #expect(firings(r.stdout).count == 16)
            #expect(total == 1, "round \(round): \(total) firings\n\(r.stdout)")
            let rule = try #require(t.table.rules(includeRemoved: true).first { $0.id == id })
            #expect(rule.state == .removed)
            #expect(rule.fired == 1)
            #expect(rule.removedByPID != nil && rule.removedByPID! > 0)
            if total != 1 { break }
        }
        // The writer tidied the fired rules away: none is active, all are listed as removed.
        #expect(t.table.rules().isEmpty)
    }

    @Test func listShowsAnAutoRemovedRuleAsRemovedWithThePidThatFiredIt() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"ar",\#(Self.getppid42),"autoRemove":true}"#)
        let bin = try Fixture.build("hammer")
        _ = try Proc.run(bin, ["1", "1", "3"], environment: Proc.preload(table: t.name))
        let active = try Proc.aspectctl(["list", "--table", t.name])
        #expect(active.stdout.hasPrefix("no rules\nattached: 1 process(es), 0 running\n  pid "), "\(active.stdout)")
        let all = try Proc.aspectctl(["list", "--table", t.name, "--all"])
        #expect(all.stdout.hasPrefix("ar  [removed by pid "), "\(all.stdout)")
        #expect(all.stdout.contains("autoRemove"))
        // Once fired the rule is skipped as if removed: the two later calls were not counted.
        let rule = try #require(t.table.rules(includeRemoved: true).first { $0.id == "ar" })
        #expect(rule.matched == 1)
        #expect(rule.fired == 1)
    }

    /// The single-rule path under threads: process-scope nth, every and times count each
    /// process's calls exactly (one atomic counter word per process), whatever the interleaving.
    @Test func processScopeCountsExactlyUnderThreads() throws {
        let bin = try Fixture.build("hammer")
        let cases: [(String, Int)] = [
            (#""when":{"nth":333}"#, 1),        // one firing per process
            (#""when":{"every":100}"#, 8),      // 800 calls per process
            (#""when":{"after":790}"#, 10),
            (#""when":{"every":2,"times":5}"#, 5),
        ]
        for (when, perProcess) in cases {
            let t = try ScratchTable()
            try t.add(#"{"id":"p",\#(Self.getppid42),\#(when)}"#)
            let r = try Proc.run(bin, ["3", "8", "100"], environment: Proc.preload(table: t.name))
            #expect(firings(r.stdout) == [perProcess, perProcess, perProcess], "\(when)\n\(r)")
            let rule = t.table.rules()[0]
            #expect(rule.matched == 2400)
            #expect(rule.fired == UInt64(3 * perProcess))
        }
    }

    @Test func scopeTableWithNthFiresOnceAcrossProcessesAndThreads() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"n",\#(Self.getppid42),"scope":"table","when":{"nth":1000}}"#)
        let bin = try Fixture.build("hammer")
        let r = try Proc.run(bin, ["4", "4", "100"], environment: Proc.preload(table: t.name))
        #expect(firings(r.stdout).reduce(0, +) == 1)
        let rule = t.table.rules()[0]
        #expect(rule.matched == 1600)
        #expect(rule.fired == 1)
        #expect(rule.byProcess.count == 4)
        #expect(rule.byProcess.allSatisfy { $0.matched == 400 })
    }

    @Test func processScopeCountsEachProcessFromZero() throws {
        let t = try ScratchTable()
        try t.add(#"{\#(Self.getppid42),"when":{"nth":5}}"#)
        let bin = try Fixture.build("hammer")
        let r = try Proc.run(bin, ["3", "1", "10"], environment: Proc.preload(table: t.name))
        #expect(firings(r.stdout) == [1, 1, 1])
    }

    @Test func threadScopeCountsEachThreadFromZero() throws {
        let t = try ScratchTable()
        try t.add(#"{\#(Self.getppid42),"scope":"thread","when":{"nth":3}}"#)
        let bin = try Fixture.build("hammer")
        let r = try Proc.run(bin, ["2", "4", "10"], environment: Proc.preload(table: t.name))
        #expect(firings(r.stdout) == [4, 4])
    }

    @Test func oncePerHierarchyFiresOncePerTree() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"h",\#(Self.getppid42),"once":"hierarchy"}"#)
        let bin = try Fixture.build("tree")
        // Two independent trees on one table: each root becomes a hierarchy of its own.
        for tree in 1...2 {
            let r = try Proc.run(bin, ["5"], environment: Proc.preload(table: t.name))
            let lines = r.stdout.split(separator: "\n").map(String.init)
            #expect(Set(lines.map { $0.components(separatedBy: " ")[0] }) == ["root", "child1", "child2", "child3", "grandchild"], "\(r)")
            #expect(firings(r.stdout).reduce(0, +) == 1, "tree \(tree): \(r.stdout)")
            #expect(lines.first == "root fired 1")
        }
        #expect(t.table.rules()[0].fired == 2)
    }

    @Test func hierarchyScopeCountsTheTreeTogether() throws {
        let t = try ScratchTable()
        // 5 processes × 5 calls: the 12th call of the tree is child2's 2nd.
        try t.add(#"{\#(Self.getppid42),"scope":"hierarchy","when":{"nth":12}}"#)
        let bin = try Fixture.build("tree")
        let r = try Proc.run(bin, ["5"], environment: Proc.preload(table: t.name))
        #expect(r.stdout.contains("child3 fired 1") == false)
        #expect(firings(r.stdout).reduce(0, +) == 1, "\(r.stdout)")
        #expect(r.stdout.contains("child2 fired 1"), "\(r.stdout)")
    }

    @Test func aspectctlRunStartsANewHierarchyEachTime() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"h",\#(Self.getppid42),"once":"hierarchy"}"#)
        let bin = try Fixture.build("tree")
        for _ in 1...2 {
            let r = try Proc.aspectctl(["run", "--table", t.name, "--", bin, "3"])
            #expect(firings(r.stdout).reduce(0, +) == 1, "\(r)")
        }
    }

    @Test func oncePerProcessFiresOncePerProcess() throws {
        let t = try ScratchTable()
        try t.add(#"{\#(Self.getppid42),"once":"process"}"#)
        let bin = try Fixture.build("tree")
        let r = try Proc.run(bin, ["4"], environment: Proc.preload(table: t.name))
        // A process is a program image: like process-scope counters, `once: process` starts
        // afresh after exec (the grandchild is child2's pid running a new image).
        #expect(r.stdout.split(separator: "\n").sorted() == ["child1 fired 1", "child2 fired 1", "child3 fired 1", "grandchild fired 1", "root fired 1"])
    }

    @Test func seededProbabilityIsReproducibleAndPredictable() throws {
        let bin = try Fixture.build("draws")
        func failures(seed: Int) throws -> String {
            let t = try ScratchTable()
            try t.add(#"{"id":"flaky","symbol":"write","position":"instead","action":{"fail":["EIO","ENOSPC"]},"when":{"probability":0.01,"seed":\#(seed),"args":[{"arg":0,"min":3}]}}"#)
            let r = try Proc.run(bin, ["10000"], environment: Proc.preload(table: t.name))
            #expect(r.stderr.hasSuffix("done\n"))
            return r.stderr
        }
        let runs = try (1...3).map { _ in try failures(seed: 7) }
        #expect(runs[0] == runs[1] && runs[1] == runs[2])
        let count = runs[0].split(separator: "\n").count - 1
        #expect(count > 50 && count < 160, "\(count) failures for p = 0.01")
        #expect(try failures(seed: 8) != runs[0])
        // The exact set follows from (seed, rule id, call number), as AspectConfig computes it.
        var predicted = ""
        for k in UInt64(1)...10000 where SplitMix64.fires(seed: 7, id: "flaky", call: k, probability: 0.01) {
            predicted += "\(k) \(["EIO", "ENOSPC"][SplitMix64.choice(seed: 7, id: "flaky", call: k, count: 2)])\n"
        }
        #expect(runs[0] == predicted + "done\n")
    }

    @Test func aDrawnSeedIsPrintedStoredAndListed() throws {
        let t = try ScratchTable()
        let r = try Proc.aspectctl(["add", "--table", t.name, "--rule",
                                    #"{"id":"p","symbol":"close","position":"after","action":{"fail":true},"when":{"probability":0.5}}"#])
        #expect(r.stdout == "p@1\n")
        let seed = try #require(t.table.rules()[0].seed)
        #expect(r.stderr == "aspectctl: rule p: seed \(seed) (drawn; add \"seed\": \(seed) to \"when\" to repeat this run)\n")
        #expect(try Proc.aspectctl(["list", "--table", t.name]).stdout.contains("probability 0.5 seed \(seed)"))
    }

    @Test func preloadAndSwiftDrawTheSameNumbers() throws {
        let bin = try Fixture.build("prng_vectors", flags: Paths.preloadIncludes)
        let lines = try Proc.run(bin).stdout.split(separator: "\n")
        let draws = lines.filter { $0.first?.isNumber == true }
        let schedules = lines.filter { $0.hasPrefix("S ") }, fires = lines.filter { $0.hasPrefix("F ") }
        #expect(draws.count == 75 && schedules.count == 72 && fires.count == 72 * 40)
        for line in draws {
            let f = line.split(separator: " ").map { UInt64($0)! }
            #expect(SplitMix64.draw(seed: f[0], ruleKey: f[1], call: f[2]) == f[3])
        }
        // The firing schedule of probability rules: the same firings, walked the same way.
        for line in schedules {
            let f = line.split(separator: " ").dropFirst().map { UInt64($0)! }
            let schedule = FiringSchedule(threshold: f[0])
            var k: UInt64 = 0, walked: [UInt64] = []
            while walked.count < 12 && k != UInt64.max {
                k = schedule.next(seed: f[1], ruleKey: f[2], after: k)
                walked.append(k)
            }
            #expect(walked == Array(f[3...]), "\(line)")
        }
        for line in fires {
            let f = line.split(separator: " ").dropFirst().map { UInt64($0)! }
            #expect(FiringSchedule(threshold: f[0]).fires(seed: f[1], ruleKey: f[2], call: f[3]) == (f[4] == 1), "\(line)")
        }
    }

    /// The schedule is a Bernoulli(p) set: about p of the calls fire, and every firing `next`
    /// walks to is one `fires` confirms, with none skipped in between.
    @Test(.tags(.fast)) func theFiringScheduleHasTheRateItWasGivenAndNextSkipsNoFiring() {
        for p in [0.5, 0.1, 0.01, 0.001] {
            let s = FiringSchedule(threshold: SplitMix64.threshold(p))
            let n: UInt64 = 200_000
            var fired: [UInt64] = []
            for k in 1...n where s.fires(seed: 42, ruleKey: 9, call: k) { fired.append(k) }
            let expected = p * Double(n), sd = (Double(n) * p * (1 - p)).squareRoot()
            #expect(abs(Double(fired.count) - expected) < 5 * sd, "p \(p): \(fired.count) firings, expected \(expected)")
            var walked: [UInt64] = [], k: UInt64 = 0
            while true {
                k = s.next(seed: 42, ruleKey: 9, after: k)
                if k > n { break }
                if s.fires(seed: 42, ruleKey: 9, call: k) { walked.append(k) }
            }
            #expect(walked == fired, "p \(p)")
        }
    }

    @Test func everyMatcherKind() throws {
        let t = try ScratchTable()
        let file = t.directory + "/data.db"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        let bin = try Fixture.build("open_calls")
        // Each case: a rule, the flags open_calls passes, whether the open fails.
        let cases: [(String, Int, Bool)] = [
            (#"{"arg":0,"glob":"*.db"}"#, 0, true),
            (#"{"arg":0,"glob":"*.txt"}"#, 0, false),
            (#"{"arg":0,"prefix":"\#(t.directory)/"}"#, 0, true),
            (#"{"arg":0,"prefix":"/etc/"}"#, 0, false),
            (#"{"arg":1,"eq":"O_WRONLY"}"#, 1, true),
            (#"{"arg":1,"eq":"O_WRONLY"}"#, 0, false),
            (#"{"arg":1,"ne":0}"#, 2, true),
            (#"{"arg":1,"ne":0}"#, 0, false),
            (#"{"arg":1,"mask":"O_WRONLY|O_RDWR"}"#, 2, true),
            (#"{"arg":1,"mask":"O_WRONLY|O_RDWR"}"#, 0, false),
            (#"{"arg":1,"mask":"O_RDWR|O_APPEND","all":true}"#, 2 | 0o2000, true),
            (#"{"arg":1,"mask":"O_RDWR|O_APPEND","all":true}"#, 2, false),
            (#"{"arg":1,"min":1,"max":2}"#, 1, true),
            (#"{"arg":1,"min":1,"max":2}"#, 0, false),
        ]
        for (i, (matcher, flags, fails)) in cases.enumerated() {
            try t.table.removeAll()
            try t.add(#"{"id":"m\#(i)","symbol":"open","position":"instead","action":{"fail":"EPERM"},"when":{"args":[\#(matcher)]}}"#)
            let r = try Proc.run(bin, [file, "1", String(flags)], environment: Proc.preload(table: t.name))
            #expect(r.stdout == (fails ? "open 1: -1 EPERM\n" : "open 1: ok\n"), "\(matcher) with flags \(flags)")
        }
    }

    @Test(.tags(.realPrograms)) func processAndCallerConditions() throws {
        let t = try ScratchTable()
        let bin = try Fixture.build("open_calls")
        let name = (bin as NSString).lastPathComponent
        let cases: [(String, Bool)] = [
            (#""process":"open_calls-*""#, true),
            (#""process":"cat""#, false),
            (#""process":"\#(Paths.build)/fixtures/*""#, true),
            (#""caller":"open_calls-*""#, true),
            (#""caller":"libc.so*""#, false),
        ]
        for (i, (condition, fails)) in cases.enumerated() {
            try t.table.removeAll()
            try t.add(#"{"id":"c\#(i)","symbol":"open","position":"instead","action":{"fail":"EPERM"},"when":{\#(condition)}}"#)
            let r = try Proc.run(bin, ["/etc/hostname", "1"], environment: Proc.preload(table: t.name))
            #expect(r.stdout == (fails ? "open 1: -1 EPERM\n" : "open 1: ok\n"), "\(condition) for \(name)")
        }
    }

    /// A `caller` rule answers per call site: the same function called alternately from the
    /// program and from a library it links is advised only where the glob matches, in any
    /// position (an `after` rule reads the caller before the original runs).
    @Test func callerConditionsAnswerPerCallSite() throws {
        let libDir = try Fixture.library("caller_lib", soname: "callerlib")
        let bin = try Fixture.build("caller_mix", flags: ["-L", libDir, "-lcallerlib", "-Wl,-rpath," + libDir])
        let cases: [(String, String)] = [
            (#""position":"instead","action":{"return":42},"when":{"caller":"caller_mix-*"}"#, "exe 42 lib real"),
            (#""position":"instead","action":{"return":42},"when":{"caller":"libcallerlib.so"}"#, "exe real lib 42"),
            (#""position":"after","action":{"return":42},"when":{"caller":"libcallerlib.so"}"#, "exe real lib 42"),
        ]
        for (i, (rule, line)) in cases.enumerated() {
            let t = try ScratchTable()
            try t.add(#"{"id":"k\#(i)","symbol":"getppid",\#(rule)}"#)
            let r = try Proc.run(bin, ["4"], environment: Proc.preload(table: t.name))
            #expect(r.stdout == String(repeating: line + "\n", count: 4), "\(rule)\n\(r)")
            #expect(t.table.rules()[0].matched == 4)
        }
    }

    @Test func signalAndDelayActions() throws {
        let t = try ScratchTable()
        try t.add(#"{"symbol":"close","position":"before","action":{"signal":"SIGUSR1","delay":"150ms"},"when":{"args":[{"arg":0,"eq":-1}]}}"#)
        let bin = try Fixture.build("signal_raise")
        let r = try Proc.run(bin, environment: Proc.preload(table: t.name))
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.first == "handler ran: yes", "\(r)")
        #expect(lines.dropFirst().first == "close: -1 errno=9")
        let ms = Int(lines.last!.split(separator: " ").last!)!
        #expect(ms >= 150, "the delay is a lower bound: \(ms) ms")
        // A signal that kills: the process dies of it, as a crash would.
        try t.table.removeAll()
        try t.add(#"{"id":"crash","symbol":"close","position":"before","action":{"signal":"SIGSEGV"},"when":{"args":[{"arg":0,"eq":-1}]}}"#)
        #expect(try Proc.run(bin, environment: Proc.preload(table: t.name)).status == 128 + 11)
        // The firing was recorded before the signal ended the process.
        #expect(t.table.events(from: 0).events.contains { $0.rule == "crash" && $0.kind == "fired" })
    }

    @Test func beforeInsteadAndAfterRunInOrder() throws {
        let t = try ScratchTable()
        try t.add(#"""
        {"rules": [
          {"id": "a", "symbol": "close", "position": "after", "action": {"log": true}},
          {"id": "i", "symbol": "close", "position": "instead", "action": {"return": 0}},
          {"id": "b", "symbol": "close", "position": "before", "action": {"log": true}}
        ]}
        """#)
        let bin = try Fixture.build("signal_raise")
        let r = try Proc.run(bin, environment: Proc.preload(table: t.name))
        #expect(r.stdout.contains("close: 0 errno=0") || r.stdout.contains("close: 0 errno="), "\(r)")
        let events = t.table.events(from: 0).events.filter { $0.arguments == ["-1"] }
        #expect(events.map(\.rule) == ["b", "i", "a"])
        #expect(events.map(\.returnValue) == [0, 0, 0])
    }

    @Test func aRuleOnAnyNameOfAGroupAppliesToAll() throws {
        let t = try ScratchTable()
        try t.add(#"{"symbol":"__open64_2","position":"instead","action":{"fail":"EPERM"},"when":{"args":[{"arg":0,"glob":"*hostname"}]}}"#)
        for flags in [[String](), ["-O2", "-D_FORTIFY_SOURCE=2"], ["-D_FILE_OFFSET_BITS=64"]] {
            let bin = try Fixture.build("open_calls", flags: flags)
            let r = try Proc.run(bin, ["/etc/hostname", "1", "0"], environment: Proc.preload(table: t.name))
            #expect(r.stdout == "open 1: -1 EPERM\n", "\(flags)")
        }
    }

    @Test func aSecondCopyOfTheLibraryDoesNotAdviseTwice() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"n","symbol":"open","position":"instead","action":{"fail":"EPERM"},"when":{"nth":2,"args":[{"arg":0,"glob":"*hostname"}]}}"#)
        let copy = t.directory + "/libaspects-copy.so"
        try FileManager.default.copyItem(atPath: Paths.library, toPath: copy)
        let bin = try Fixture.build("open_calls")
        let r = try Proc.run(bin, ["/etc/hostname", "3"], environment: ["LD_PRELOAD": "\(Paths.library) \(copy)", "ASPECTS_TABLE": t.name])
        #expect(r.stdout == "open 1: ok\nopen 2: -1 EPERM\nopen 3: ok\n")
        #expect(t.table.rules()[0].matched == 3)
    }

    @Test func eventRingOverrunCountsWhatWasLost() throws {
        let t = try ScratchTable(events: 64)
        try t.add(#"{"id":"w","symbol":"write","position":"after","action":{"log":true},"when":{"args":[{"arg":0,"min":3}]}}"#)
        let bin = try Fixture.build("draws")
        _ = try Proc.run(bin, ["1000"], environment: Proc.preload(table: t.name))
        let batch = t.table.events(from: 0)
        #expect(batch.events.count == 64)
        #expect(batch.dropped == 1000 - 64)
        #expect(batch.events.first?.callNumber == 1000 - 63)
        #expect(batch.events.last?.callNumber == 1000)
        let json = try Proc.aspectctl(["events", "--table", t.name, "--json"])
        let lines = json.stdout.split(separator: "\n")
        #expect(lines.count == 65)
        #expect(lines.first == #"{"kind":"dropped","index":0,"count":936}"#)
        for line in lines.dropFirst() {
            let node = try JSONParser.parse(String(line))
            #expect(node["rule"]?.value == .string("w"))
            #expect(node["symbol"]?.value == .string("write"))
            #expect(node["return"]?.value == .number("1"))
        }
    }

    @Test func statsCountPerProcess() throws {
        let t = try ScratchTable()
        try t.add(#"{"id":"s",\#(Self.getppid42),"when":{"every":2}}"#)
        let bin = try Fixture.build("hammer")
        _ = try Proc.run(bin, ["3", "2", "10"], environment: Proc.preload(table: t.name))
        let r = try Proc.aspectctl(["stats", "--table", t.name, "--json"])
        let node = try JSONParser.parse(r.stdout)
        guard case .array(let rules)? = node["rules"]?.value, case .array(let procs)? = rules.first?["byProcess"]?.value else {
            Issue.record("unexpected stats: \(r.stdout)")
            return
        }
        #expect(procs.count == 3)
        for p in procs {
            #expect(p["matched"]?.value == .number("20"))
            #expect(p["fired"]?.value == .number("10"))
        }
        #expect(rules[0]["matched"]?.value == .number("60"))
    }
}
