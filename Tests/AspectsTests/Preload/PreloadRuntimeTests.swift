import Foundation
import Testing
import CAspectsABI

/// The preload's runtime under threads, trees and a hostile host: caller conditions exact on every thread, hierarchy rules
/// past their fixed slots, a table's file truncated under a host that blocks every signal.
@Suite struct PreloadRuntimeTests {
    /// Two threads start writing together from the program, under a `caller` rule that matches
    /// it: the first lookup of the calling object (reading /proc/self/maps) is under way on one
    /// thread while the other decides its own calls. Each of them is advised, on every run
    /// (before, the thread that did not read the maps found the caller "not known" and lost
    /// every call it made meanwhile: 30 of 30 runs advised 5 of 10 here).
    @Test func aCallerConditionAdvisesEveryCallOfEveryThread() throws {
        let t = try ScratchTable()
        try t.add(#"{"symbol":"write","position":"instead","action":{"return":4242},"when":{"caller":"caller_threads-*"}}"#)
        let bin = try Fixture.build("caller_threads")
        var outcomes: [String: Int] = [:]
        for _ in 0..<30 {
            let r = try Proc.run(bin, ["5"], environment: Proc.preload(table: t.name))
            outcomes[r.status == 0 ? r.stdout : "\(r)", default: 0] += 1
        }
        #expect(outcomes == ["advised 10 of 10\n": 30])
        #expect(t.table.rules()[0].matched == 300)
    }

    /// A `once: "hierarchy"` rule that fails the first open of `path` in each process tree.
    func hierarchyRule(_ t: ScratchTable) throws -> String {
        let path = t.directory + "/target"
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        try t.add(#"{"id":"tree","symbol":"open","position":"instead","action":{"fail":"ENOENT"},"when":{"args":[{"arg":0,"glob":"\#(path)"}]},"once":"hierarchy"}"#)
        return path
    }

    /// Twenty independent process trees, one after another, on one long-lived table: each
    /// fires once (before, the rule's 8 per-hierarchy entries were never given back, and the
    /// 9th tree on was silently not advised).
    @Test func aOncePerHierarchyRuleFiresInEveryProcessTreeOneAfterAnother() throws {
        let t = try ScratchTable()
        let path = try hierarchyRule(t)
        let bin = try Fixture.build("live_loop")
        var outputs: [String] = []
        for _ in 0..<20 {
            let r = try Proc.run(bin, [path], environment: Proc.preload(table: t.name), stdin: "x\nx\n")
            outputs.append(r.status == 0 ? r.stdout : "\(r)")
        }
        #expect(outputs == Array(repeating: "ENOENT\nok\n", count: 20))
        #expect(t.table.rules()[0].fired == 20)
        #expect(t.table.rules()[0].hierarchiesFull == 0)
    }

    /// With every entry taken by a process tree still running, another tree is not advised,
    /// and `stats` says so; once those trees have ended, their entries serve new ones.
    @Test func hierarchySlotsFullOfRunningTreesAreReported() throws {
        let t = try ScratchTable()
        let path = try hierarchyRule(t)
        let bin = try Fixture.build("live_loop")
        var running: [LiveProcess] = []
        for _ in 0..<Int(ASPECTS_HIERARCHY_SLOTS) {
            let live = try LiveProcess(bin, [path], table: t.name)
            #expect(live.call() == "ENOENT")
            running.append(live)
        }
        let unadvised = try Proc.run(bin, [path], environment: Proc.preload(table: t.name), stdin: "x\nx\n")
        #expect(unadvised.stdout == "ok\nok\n", "\(unadvised)")
        #expect(t.table.rules()[0].hierarchiesFull == 1)
        let stats = try Proc.aspectctl(["stats", "--table", t.name])
        #expect(stats.stdout.contains("tree  hierarchy slots full: 1 process(es) not advised"), "\(stats)")
        let json = try Proc.aspectctl(["stats", "--table", t.name, "--json"])
        #expect(json.stdout.contains(#""hierarchiesFull": 1"#), "\(json)")
        for live in running { #expect(try live.finish() == 0) }
        let later = try Proc.run(bin, [path], environment: Proc.preload(table: t.name), stdin: "x\nx\n")
        #expect(later.stdout == "ENOENT\nok\n", "\(later)")
    }

    /// A host that blocks every signal in every thread, its table's file truncated while it
    /// runs (to nothing, and to a page): it runs on. A fault on a truncated shared file
    /// mapping is a synchronous SIGBUS, delivered with the default action to a thread that
    /// blocks it (16 of 16 runs died when the file was the table's memory); the table is now a
    /// segment nobody can shrink, and the file only its anchor (aspects_abi.h).
    @Test(arguments: [0, 4096])
    func aHostBlockingEverySignalSurvivesItsTableTruncated(size: Int) throws {
        let bin = try Fixture.build("blocked_sigbus")
        var survived = 0
        let runs = 4
        for _ in 0..<runs {
            // a table of its own per run; the test never touches it again once truncated
            let t = try ScratchTable()
            try t.add(#"{"symbol":"getppid","position":"before","action":{"log":true},"when":{"nth":1000000000}}"#)
            let live = try LiveProcess(bin, ["4", "1000"], table: t.name)
            guard live.send("start") == "ready" else { continue }
            #expect(truncate(t.name, off_t(size)) == 0)
            if live.send("go") == "done", try live.finish() == 0 { survived += 1 }
        }
        #expect(survived == runs)
    }
}
