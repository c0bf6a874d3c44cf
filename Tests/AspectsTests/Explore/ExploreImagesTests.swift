import Foundation
import Testing
import AspectsCore
@testable import AspectsExplore
import AspectsRules
@testable import AspectsTable

/// Plans per program image (issue 21 item 2): a fault point fails call k of one function in
/// one image, counted over the whole process tree (`scope: table` with the image's path as a
/// literal `process` glob), so ONE call of ONE process fails and no call number is wasted on
/// processes that never reach it.
@Suite(.serialized) struct ExploreImagesTests {
    /// Each process's line: its path and the numbers of its failed writes.
    static func failures(_ stdout: String) -> [(program: String, failed: [Int])] {
        stdout.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.count >= 4, words[1] == "wrote", let at = words.firstIndex(of: "failed") else { return nil }
            return (String(words[0]), words[(at + 1)...].compactMap { Int($0) })
        }
    }

    func scratch() throws -> String {
        let dir = NSTemporaryDirectory() + "aspects-images-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    func run(_ rules: [String], _ command: [String], in dir: String) throws -> Outcome {
        let file = dir + "/rules-\(UUID().uuidString).json"
        try ("[" + rules.joined(separator: ",") + "]").write(toFile: file, atomically: true, encoding: .utf8)
        return try Proc.run(Paths.aspectctl, ["run", "--rules", file, "--"] + command, directory: dir)
    }

    /// The rule explore writes, by hand: three processes of one image write 3 times each; its
    /// 5th write of the tree fails, in one process, once. The default (process) scope counts
    /// per process: "nth 2" fails in all three.
    @Test func aTableScopeRuleOnOneImageFailsOneCallOfTheTree() throws {
        let bin = try Fixture.build("image_tree")
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let point = FaultPoint(function: "write", site: nil, nth: 5, errno: "EIO", image: ProcessGlob.realPath(bin)!)
        let r = try run([point.ruleJSON], [bin, "3", bin, bin], in: dir)
        #expect(r.status == 0, "\(r)")
        let lines = Self.failures(r.stdout)
        #expect(lines.count == 3, "\(r)")
        #expect(lines.flatMap(\.failed) == [2], "the tree's 5th write is the 2nd process's 2nd: \(r.stdout)")
        let perProcess = try run([#"{"symbol":"write","action":{"fail":"EIO"},"when":{"nth":2}}"#], [bin, "3", bin, bin], in: dir)
        #expect(Self.failures(perProcess.stdout).map(\.failed) == [[2], [2], [2]], "\(perProcess)")
    }

    /// A process of another image neither counts nor fires for a table-scope rule with a
    /// `process` condition — alone (the single-rule path) and beside another rule on the same
    /// function (the full path).
    @Test func anotherImageNeitherCountsNorFires() throws {
        let bin = try Fixture.build("image_tree")
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let other = dir + "/other/image_tree"
        try FileManager.default.createDirectory(atPath: dir + "/other", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: bin, toPath: other)
        let point = FaultPoint(function: "write", site: nil, nth: 1, errno: "EIO", image: ProcessGlob.realPath(bin)!)
        let log = #"{"id":"all","symbol":"write","position":"before","action":{"log":true}}"#
        for rules in [[point.ruleJSON], [log, point.ruleJSON]] {
            let r = try run(rules, [other, "4", bin], in: dir)
            #expect(r.status == 0, "\(r)")
            let lines = Self.failures(r.stdout)
            #expect(lines.map(\.program) == [other, bin] && lines.map(\.failed) == [[], [1]], "\(rules.count) rule(s): \(r)")
        }
    }

    /// An event names a pid and a time: its image is the latest of that pid's that attached
    /// before it — an exec'd image of the same pid, a fork child (no record of its own, its
    /// statistics entry names its parent's image) and a reused pid are each told apart.
    @Test(.tags(.fast)) func eventsAreTheirProcessImagesAtTheirTime() {
        func a(_ pid: Int32, _ at: UInt64, _ program: String, _ number: UInt64) -> AspectsTable.Attachment {
            AspectsTable.Attachment(pid: pid, parentPID: 1, uid: 0, hierarchy: 1, attachedNanoseconds: at, program: program, isRunning: false, number: number)
        }
        let attachments: [AspectsTable.Attachment] = [a(10, 100, "/bin/sh", 0), a(10, 200, "/usr/bin/git", 1), a(12, 300, "/usr/bin/gzip", 2), a(10, 500, "/usr/bin/tar", 3),
                           a(13, 600, "ng/a/very/long/build/directory/app", 4)]
        let r = ImageResolver(attachments: attachments, statistics: [(11, 1), (10, 1)], known: ["/work/building/a/very/long/build/directory/app"])
        #expect(r.program(ofPID: 10, at: 150) == "/bin/sh")
        #expect(r.program(ofPID: 10, at: 250) == "/usr/bin/git")
        #expect(r.program(ofPID: 11, at: 700) == "/bin/sh", "a fork child counts under its parent's image")
        #expect(r.program(ofPID: 10, at: 550) == "/usr/bin/tar", "a later process with the pid")
        #expect(r.program(ofPID: 99, at: 550) == "" && r.program(ofPID: 10, at: 50) == "")
        // (a statistics entry's image is the attachment's number + 1; 0: none, then the pid's latest)
        #expect(r.program(ofPID: 11, image: 2) == "/usr/bin/git" && r.program(ofPID: 11, image: 0) == "/bin/sh")
        #expect(r.program(ofPID: 13, at: 700) == "/work/building/a/very/long/build/directory/app", "a cut path completed")
        #expect(r.images.map(\.path) == ["/bin/sh", "/usr/bin/git", "/usr/bin/gzip", "/usr/bin/tar", "/work/building/a/very/long/build/directory/app"])
        #expect(r.images.first { $0.path == "/bin/sh" }?.processes == 2, "pid 10 and its fork child 11")
    }

    /// Runs `survey`'s passes as explore's baseline does, each in a table whose event ring
    /// holds `ring` calls (`run` starts the program under the table it is given), until nothing
    /// is pending or `maxPasses`; returns the passes made.
    static func runPasses(_ survey: inout CallSurvey, ring: Int, maxPasses: Int, _ run: (String) throws -> Void) throws -> Int {
        survey.eventCapacity = UInt64(ring)
        var passes = 0
        while !survey.pending.isEmpty && passes < maxPasses {
            let pending = survey.pending
            let scratch = try ScratchTable(events: ring, stats: 1024)
            try scratch.add(survey.rules(for: pending))
            try run(scratch.name)
            survey.record(scratch.table, pending: pending)
            passes += 1
        }
        return passes
    }

    /// The survey's passes count over the whole tree: a ring too small for the first pass
    /// (16 events, 30 calls in three processes) makes a second pass log the calls after the
    /// 16 the first saw — counted per process, no process had more than 10, so the second pass
    /// logged nothing and 14 calls' sites were never learned.
    @Test func theSurveyLearnsEveryCallOfTheTreeAndItsImage() throws {
        let bin = try Fixture.build("image_tree")
        let image = ProcessGlob.realPath(bin)!
        var survey = CallSurvey(functions: ["write"], preload: Paths.library)
        survey.knownPrograms = [image]
        let passes = try Self.runPasses(&survey, ring: 16, maxPasses: 4) {
            let r = try Proc.run(bin, ["10", bin, bin], environment: Proc.preload(table: $0))
            #expect(r.status == 0, "\(r)")
        }
        #expect(passes == 2 && survey.totals["write"] == 30)
        #expect(survey.sites["write"]?.values.reduce(0, +) == 30, "\(survey.sites)")
        #expect(survey.imageCalls["write"] == [image: 30], "\(survey.imageCalls)")
        #expect(survey.imageSites["write"]?[image]?.values.reduce(0, +) == 30, "\(survey.imageSites)")
        #expect(survey.images.map { "\($0.path) \($0.processes)" } == ["\(image) 3"], "\(survey.images)")
    }

    /// More calls than the ring holds: the first pass keeps only the latest (all from the third
    /// place), and the later passes log the calls before them window by window, each within
    /// the ring, until the first place's 3,000 calls and the second's one are known too.
    /// Before, every later pass logged from where the count stood to the end and kept the same
    /// latest calls again: the first two places were never learned.
    @Test func theSurveyLearnsTheEarlySitesOfMoreCallsThanTheRingHolds() throws {
        let bin = try Fixture.build("sites_in_order", flags: ["-O1"])
        var survey = CallSurvey(functions: ["getppid"], preload: Paths.library)
        let passes = try Self.runPasses(&survey, ring: 1024, maxPasses: 16) {
            let r = try Proc.run(bin, ["3000"], environment: Proc.preload(table: $0))
            #expect(r.status == 0 && r.stdout == "calls 6001\n", "\(r)")
        }
        #expect(passes == 6, "the tail, then 4,977 calls in windows of 1,024")
        #expect(survey.totals["getppid"] == 6001 && survey.unsurveyed.isEmpty, "\(survey.unsurveyed)")
        let counts = (survey.sites["getppid"] ?? [:]).values.sorted()
        #expect(counts == [1, 3000, 3000], "\(survey.sites)")
        // what passes leave unlearned (here none) is said before the plan
        var coverage = ExploreCoverage()
        coverage.addUnsurveyed(survey.unsurveyed, profiles: survey.profiles)
        #expect(coverage.notes.isEmpty)
        coverage.addUnsurveyed(["getppid": 977], profiles: survey.profiles)
        #expect(coverage.notes == ["sites not learned for getppid: 977 of 6001 calls (more calls than the survey's passes log: their sites are not planned; --strategy nth reaches them by number)"])
    }

    /// An image whose path holds glob metacharacters: the preload's matcher (glob.c) takes
    /// the escaped path as that path only, not as the pattern its characters would make.
    @Test func aPathWithGlobCharactersMatchesItselfOnly() throws {
        let bin = try Fixture.build("image_tree")
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let odd = dir + "/we[i]rd*dir?\\x/tree", plain = dir + "/weirdXdirYx/tree"
        for path in [odd, plain] {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: bin, toPath: path)
        }
        let point = FaultPoint(function: "write", site: nil, nth: 2, errno: "EIO", image: ProcessGlob.realPath(odd)!)
        let r = try run([point.ruleJSON], [plain, "3", odd], in: dir)
        #expect(r.status == 0, "\(r)")
        // the other path matches the odd one taken as a pattern ([i] is "i", * and ? anything, \x is x)
        #expect(ProcessGlob.matches(ProcessGlob.realPath(odd)!, image: ProcessGlob.realPath(plain)!))
        #expect(Self.failures(r.stdout).map(\.failed) == [[], [2]], "\(point.ruleJSON)\n\(r)")
    }

    struct Campaign {
        var result: Outcome
        var json: JSONNode
        var runs: [JSONNode]
        func str(_ n: JSONNode, _ k: String) -> String? { if case .string(let s)? = n[k]?.value { return s }; return nil }
        func outcomes(_ o: String) -> Int { runs.filter { str($0, "outcome") == o }.count }
        var images: [(path: String, processes: Int, calls: Int, planned: Bool)] {
            guard case .array(let list)? = json["images"]?.value else { return [] }
            return list.map { i in
                func int(_ k: String) -> Int { if case .number(let n)? = i[k]?.value { return Int(n) ?? -1 }; return -1 }
                let planned: Bool = { if case .bool(let b)? = i["planned"]?.value { return b }; return false }()
                return (str(i, "path") ?? "", int("processes"), int("calls"), planned)
            }
        }
    }

    func explore(_ options: [String], _ command: [String]) throws -> Campaign {
        let out = NSTemporaryDirectory() + "aspects-explore-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: out); try? FileManager.default.removeItem(atPath: out + ".json") }
        let r = try Proc.aspectctl(["explore", "--out", out, "--json", out + ".json", "-j", "2"] + options + ["--"] + command)
        let json = try JSONParser.parse(try String(contentsOfFile: out + ".json", encoding: .utf8))
        let schema = try JSONParser.parse(try String(contentsOfFile: Paths.root + "/config/explore.schema.json", encoding: .utf8))
        #expect(SchemaValidator(root: schema).validate(json).isEmpty, "\(SchemaValidator(root: schema).validate(json))")
        guard case .array(let runs)? = json["runs"]?.value else { throw Fixture.FixtureError(message: "no campaign: \(r)") }
        let c = Campaign(result: r, json: json, runs: runs)
        let names = runs.compactMap { c.str($0, "name") }
        #expect(names.count == runs.count && Set(names).count == names.count, "every run has its own stable name: \(names)")
        print("explore \(command.joined(separator: " ")): \(runs.count) run(s), not-reached \(c.outcomes("not-reached"))")
        return c
    }

    /// Three processes of one image, 3 writes each: 9 points, each failing one write of the
    /// tree. Counted per process, calls 4 to 9 were reached by no process.
    @Test func everyCallOfAnImageIsReachedWhereverItHappens() throws {
        let bin = try Fixture.build("image_tree")
        let c = try explore(["--function", "write", "--strategy", "nth"], [bin, "3", bin, bin])
        #expect(c.runs.count == 9 && c.outcomes("not-reached") == 0, "\(c.result.stdout)")
        let image = ProcessGlob.realPath(bin)!
        #expect(c.images.map { "\($0.path) \($0.processes) \($0.calls) \($0.planned)" } == ["\(image) 3 9 true"], "\(c.images)")
        #expect(c.runs.allSatisfy { c.str($0, "image") == image })
        #expect(c.runs.compactMap { c.str($0, "name") }.contains("\((image as NSString).lastPathComponent):write#9/error/ENOSPC"), "\(c.result.stdout)")
        if case .string(let id)? = c.json["planId"]?.value { #expect(id.count == 32 && c.result.stdout.contains("plan id \(id)")) }
        else { Issue.record("no planId") }
    }

    /// `--process`: only the images it matches are planned; the report says which were left
    /// out, with their calls.
    @Test func processGlobsLeaveOtherImagesOut() throws {
        let bin = try Fixture.build("image_tree")
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Two copies at paths an attachment record holds whole (the child's is not the
        // command, whose path explore would know).
        let other = dir + "/other/image_tree", child = dir + "/child/tree"
        for path in [other, child] {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: bin, toPath: path)
        }
        let image = ProcessGlob.realPath(child)!, otherImage = ProcessGlob.realPath(other)!
        let c = try explore(["--function", "write", "--strategy", "nth", "--process", ProcessGlob.literal(image)], [other, "4", child])
        #expect(c.runs.count == 4 && c.runs.allSatisfy { c.str($0, "image") == image } && c.outcomes("not-reached") == 0, "\(c.result.stdout)")
        #expect(c.images.map { "\($0.path) \($0.calls) \($0.planned)" } == ["\(otherImage) 4 false", "\(image) 4 true"], "\(c.images)")
        #expect(c.result.stdout.contains("coverage: left out by --process: \(otherImage) (1 process(es), 4 call(s))"), "\(c.result.stdout)")
        // a glob matching no image that made the calls tested nothing: exit 2, saying why
        let none = try Proc.aspectctl(["explore", "--function", "write", "--process", "*/nothing-like-it", "--out", dir + "/none", "--", other, "1"])
        #expect(none.status == 2 && none.stderr.contains("no image that called the functions matches --process */nothing-like-it")
                && none.stderr.contains(otherImage), "\(none)")
        // several images: the findings and runs name theirs
        let both = try explore(["--function", "write", "--strategy", "nth"], [other, "1", child])
        #expect(both.runs.count == 2 && both.outcomes("not-reached") == 0, "\(both.result.stdout)")
        #expect(both.result.stdout.contains("  \((otherImage as NSString).lastPathComponent): write any site call 1 fails with ENOSPC"), "\(both.result.stdout)")
    }

    static let gitCommand = ["sh", "-c", "git init -q && git add . && git -c user.email=a@b -c user.name=n commit -qm m"]
    static let gitSetup = "echo one > a; mkdir d; echo two > d/b"
    static var hasGit: Bool { ["/usr/bin/git", "/bin/git"].contains { FileManager.default.isExecutableFile(atPath: $0) } }

    /// git through sh (issue 21: 749 of 1,201 runs reached nothing when every process counted
    /// its own calls): at most 10% of the runs may be not-reached. `--process '*/git'` leaves
    /// the shell out.
    @Test(.tags(.realPrograms), .requires(hasGit, "needs git (.ci/run installs it)"))
    func gitThroughAShellWastesFewRuns() throws {
        let c = try explore(["--function", "write", "--function", "open", "--max-runs", "80", "--setup", Self.gitSetup], Self.gitCommand)
        #expect(c.result.status == 0 || c.result.status == 1, "\(c.result)")
        #expect(c.runs.count >= 40, "\(c.result.stdout)")
        #expect(c.outcomes("not-reached") * 10 <= c.runs.count, "\(c.outcomes("not-reached")) of \(c.runs.count) not reached:\n\(c.result.stdout)")
        let git = try explore(["--function", "write", "--function", "open", "--strategy", "nth", "--max-runs", "20",
                               "--process", "*/git", "--setup", Self.gitSetup], Self.gitCommand)
        #expect(git.runs.count == 20 && git.runs.allSatisfy { git.str($0, "image")?.hasSuffix("/git") == true }, "\(git.result.stdout)")
        #expect(git.images.contains { ($0.path as NSString).lastPathComponent.hasPrefix("dash") || $0.path.hasSuffix("/sh") }, "\(git.images)")
        #expect(git.images.filter { !$0.planned }.allSatisfy { !$0.path.hasSuffix("/git") } && git.images.contains { !$0.planned }, "\(git.images)")
        #expect(git.result.stdout.contains("coverage: left out by --process: "), "\(git.result.stdout)")
    }
}

/// `--strategy context` is planned per image as every strategy is (issue 31 item 5): in
/// `sh -c 'a produce | b consume'` with `--process b`, every point is b's — named `b:`, its
/// rule with b's `process` glob, so neither a nor the shell ever has a call failed — its
/// frames keep their file:line, and no context names glibc's start-up below main.
@Suite(.serialized) struct ExploreContextImagesTests {
    @Test func contextPointsAreTheImagesProcessAsksFor() throws {
        let bin = try Fixture.build("explore_pipe", flags: ["-g", "-O0"])
        let dir = NSTemporaryDirectory() + "aspects-ctx-images-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { TableSegments.removeScratch(dir) }
        let (a, b) = (dir + "/a", dir + "/b")
        try FileManager.default.copyItem(atPath: bin, toPath: a)
        try FileManager.default.copyItem(atPath: bin, toPath: b)
        let (r, report) = try ExploreCLI.run(["--function", "malloc", "--strategy", "context", "--process", "b"],
                                             ["/bin/sh", "-c", "\(a) produce 20 | \(b) consume"],
                                             out: dir + "/explore", json: dir + "/explore.json", directory: dir)
        #expect(r.status == 0, "\(r)")
        let runs = ReportJSON.array(report, "runs")
        #expect(runs.count >= 2, "\(r.stdout)")
        for run in runs {
            #expect(ReportJSON.str(run, "image") == b && ReportJSON.str(run, "name")?.hasPrefix("b:malloc@") == true, "\(run.value.rendered())")
            #expect(!ReportJSON.array(run, "context").isEmpty, "a context point: \(run.value.rendered())")
        }
        // each rule keeps to b: a failed in a would print "no memory" and the pipeline, b's
        // status, exit 0 with fewer lines; failed in b, it exits 1
        for run in runs where ReportJSON.str(run["run"], "stderrTail")?.contains("no memory") == true {
            #expect(ReportJSON.int(run["run"], "exitStatus") == 1, "a fault outside b: \(run.value.rendered())")
        }
        #expect(runs.contains { ReportJSON.str($0["run"], "stderrTail")?.contains("no memory") == true }, "b's wrapper failed: \(r.stdout)")
        let lines = runs.flatMap { ReportJSON.array($0, "contextLocations").compactMap { ReportJSON.str($0, "location") } }
        #expect(lines.contains { $0.hasPrefix("explore_pipe.c:") && $0.hasSuffix("(main)") }, "file:line kept: \(lines)")
        #expect(!lines.contains { $0.contains("__libc_start") }, "no start-up frame in a context: \(lines)")
        let images = ReportJSON.array(report, "images").map { (ReportJSON.str($0, "path") ?? "", $0["planned"]?.value == .bool(true)) }
        #expect(images.contains { $0.0 == a && !$0.1 } && images.contains { $0.0 == b && $0.1 }, "\(images)")
        #expect(r.stdout.contains("other runs:\n  b: malloc via "), "\(r.stdout)")
    }

    /// A context is cut before the first start-up frame; the site always stays.
    @Test(.tags(.fast)) func aContextStopsBeforeStartUp() {
        let start = CallSite(object: "libc.so.6", offset: 0x2724a)
        let context = CallContext([CallSite(object: "b", offset: 0x10), CallSite(object: "b", offset: 0x20), start])
        #expect(context.before([start]).frames == Array(context.frames.prefix(2)))
        #expect(CallContext([start]).before([start]).frames == [start])
    }
}
