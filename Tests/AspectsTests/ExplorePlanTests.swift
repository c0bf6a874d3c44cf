import Testing
@testable import AspectConfig

/// explore's plan: which faults a campaign runs, in which order, within its budget.
@Suite struct ExplorePlanTests {
    let a = CallSite(object: "app", offset: 0x1a2b), b = CallSite(object: "app", offset: 0x1c00), c = CallSite(object: "libz.so.1", offset: 0x40)

    var profiles: [FunctionProfile] {
        [FunctionProfile(function: "write", calls: 5, sites: [b: 3, a: 2]),
         FunctionProfile(function: "malloc", calls: 1000, sites: [c: 1000]),
         FunctionProfile(function: "close", calls: 0, sites: [:])]
    }

    @Test func callSitesParseAndPrintAsEventsShowThem() {
        #expect(CallSite("ledger+0x1a2b") == CallSite(object: "ledger", offset: 0x1a2b))
        #expect(CallSite("libc.so.6+0x0")?.description == "libc.so.6+0x0")
        for bad in ["ledger", "ledger+1a2b", "+0x10", "/bin/ledger+0x10", "x+0x", "x+0x12345678901234567"] { #expect(CallSite(bad) == nil, "\(bad)") }
    }

    @Test func sitesComeFirstThenEveryCallNumberInNameOrder() {
        let plan = ExplorePlan.make(profiles: profiles, strategy: .both, errnos: { $0 == "write" ? ["ENOSPC"] : ["ENOMEM"] }, maxRuns: 2000, seed: 0)
        let sites = plan.points.prefix(3).map { "\($0.function) \($0.site!) \($0.nth)" }
        #expect(sites == ["malloc libz.so.1+0x40 1", "write app+0x1a2b 1", "write app+0x1c00 1"])
        let nth = plan.points.dropFirst(3)
        #expect(nth.count == 1005)
        #expect(nth.prefix(1000).map(\.nth) == Array(1...1000))
        #expect(nth.suffix(5).map(\.nth) == [1, 2, 3, 4, 5] && nth.last?.errno == "ENOSPC")
        #expect(!plan.spread && plan.candidates == 1008)
    }

    @Test func aSmallBudgetSpreadsCallNumbersEvenlyAndSaysSo() {
        let plan = ExplorePlan.make(profiles: profiles, strategy: .nth, errnos: { _ in ["EIO"] }, maxRuns: 55, seed: 0)
        #expect(plan.points.count == 55 && plan.spread)
        let write = plan.points.filter { $0.function == "write" }.map(\.nth)
        let malloc = plan.points.filter { $0.function == "malloc" }.map(\.nth)
        #expect(write == [1, 2, 3, 4, 5])   // needs less than its share: all of it
        #expect(malloc.count == 50 && malloc.first == 1 && malloc == malloc.sorted())
        #expect(zip(malloc, malloc.dropFirst()).allSatisfy { $1 - $0 == 20 })
    }

    @Test func theSameSeedGivesTheSamePlanAndAnotherSeedAnotherSpread() {
        let one = ExplorePlan.make(profiles: profiles, strategy: .nth, errnos: { _ in ["EIO"] }, maxRuns: 30, seed: 7)
        let again = ExplorePlan.make(profiles: profiles, strategy: .nth, errnos: { _ in ["EIO"] }, maxRuns: 30, seed: 7)
        let other = ExplorePlan.make(profiles: profiles, strategy: .nth, errnos: { _ in ["EIO"] }, maxRuns: 30, seed: 8)
        #expect(one == again)
        #expect(one.points != other.points)
        // still one call in each stride of 1000/25 = 40 calls
        let malloc = one.points.filter { $0.function == "malloc" }.map(\.nth)
        #expect(malloc.count == 25)
        for (j, k) in malloc.enumerated() { #expect(k > UInt64(j) * 40 && k <= UInt64(j + 1) * 40, "\(k) in stride \(j)") }
    }

    @Test func theSitesStrategyAloneStopsAtTheBudget() {
        let plan = ExplorePlan.make(profiles: profiles, strategy: .sites, errnos: { _ in ["EIO", "ENOSPC"] }, maxRuns: 4, seed: 0)
        #expect(plan.points.count == 4 && plan.candidates == 6 && plan.sitesSampled)
        #expect(plan.points.allSatisfy { $0.site != nil && $0.nth == 1 })
        // Round-robin over the functions: write (last in name order) is not left out.
        let two = ExplorePlan.make(profiles: profiles, strategy: .sites, errnos: { _ in ["EIO"] }, maxRuns: 2, seed: 0)
        #expect(two.points.map { "\($0.function) \($0.site!)" } == ["malloc libz.so.1+0x40", "write app+0x1a2b"])
        let all = ExplorePlan.make(profiles: profiles, strategy: .sites, errnos: { _ in ["EIO"] }, maxRuns: 3, seed: 0)
        #expect(all.points.count == 3 && !all.sitesSampled)
    }

    @Test func aFaultIsOneRuleOnOneCall() {
        let p = FaultPoint(function: "write", site: a, nth: 1, errno: "ENOSPC")
        #expect(p.ruleJSON == #"{"id":"explore","symbol":"write","action":{"fail":"ENOSPC"},"when":{"site":"app+0x1a2b","nth":1}}"#)
        #expect(p.description == "write from app+0x1a2b, call 1 fails with ENOSPC")
    }

    @Test func outcomesAreClassifiedAgainstTheBaseline() {
        let base = RunRecord(exitStatus: 0, signal: nil, timedOut: false, stdout: "ok\n", stderr: "", seconds: 0.1)
        func run(_ status: Int32?, _ signal: Int32? = nil, out: String = "ok\n", timedOut: Bool = false) -> RunRecord {
            RunRecord(exitStatus: status, signal: signal, timedOut: timedOut, stdout: out, stderr: "", seconds: 0.1)
        }
        #expect(run(0).outcome(against: base, fired: true, checkPassed: nil) == .absorbed)
        #expect(run(1).outcome(against: base, fired: true, checkPassed: nil) == .handled)
        #expect(run(0, out: "").outcome(against: base, fired: true, checkPassed: nil) == .handled)
        #expect(run(nil, 11).outcome(against: base, fired: true, checkPassed: nil) == .crash)
        #expect(run(nil, 9, timedOut: true).outcome(against: base, fired: true, checkPassed: nil) == .hang)
        #expect(run(0).outcome(against: base, fired: true, checkPassed: false) == .checkFailed)
        #expect(run(nil, 11).outcome(against: base, fired: false, checkPassed: nil) == .notReached)
        #expect(ExploreOutcome.allCases.filter(\.isFinding) == [.crash, .hang, .checkFailed])
    }

    /// A crash the recorder saw anywhere in the tree is a crash, unless the baseline's tree
    /// had the same one (per program and signal): then the fault did not cause it.
    @Test func aRecordedCrashInTheTreeIsACrashUnlessTheBaselineHadIt() {
        let base = RunRecord(exitStatus: 0, signal: nil, timedOut: false, stdout: "ok\n", stderr: "", seconds: 0.1)
        var run = RunRecord(exitStatus: 139, signal: nil, timedOut: false, stdout: "", stderr: "Segmentation fault\n", seconds: 0.1)
        #expect(run.outcome(against: base, fired: true, checkPassed: nil) == .handled)
        run.crashes = [ProcessCrash(pid: 42, program: "/opt/app/ledger", signal: 11)]
        #expect(run.outcome(against: base, fired: true, checkPassed: nil) == .crash)
        #expect(run.newCrashes(against: base).map(\.description) == ["signal 11 (SIGSEGV) in ledger (pid 42)"])
        var crashy = base
        crashy.crashes = [ProcessCrash(pid: 7, program: "/opt/app/ledger", signal: 11)]
        #expect(run.outcome(against: crashy, fired: true, checkPassed: nil) == .handled)
        run.crashes.append(ProcessCrash(pid: 43, program: "/opt/app/ledger", signal: 11))
        #expect(run.outcome(against: crashy, fired: true, checkPassed: nil) == .crash, "one more than the baseline's")
        #expect(run.outcome(against: crashy, fired: false, checkPassed: nil) == .notReached)
    }
}
