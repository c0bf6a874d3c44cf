import Foundation
import Testing

/// How decide_driver runs a case: natively under this machine's preload, or cross-built for
/// aarch64 under qemu with the aarch64 preload (`launcher`: the program and its arguments put
/// before the driver's path; Aarch64Tests).
struct DecideDriver {
    var path: String
    var launcher: [String] = []

    func run(_ args: [String], table: String) throws -> Outcome {
        guard let program = launcher.first else { return try Proc.run(path, args, environment: Proc.preload(table: table)) }
        return try Proc.run(program, Array(launcher.dropFirst()) + [path] + args, environment: ["ASPECTS_TABLE": table])
    }
}

/// A differential test of the preload's decision (issue 22, item 2): the preload decides
/// "count this call and decide whether a rule fires" on several paths — the wrapper stub's
/// gate, the filter, the single-rule path (plain, conditional, after), the several-rules path and the
/// full path (dispatch.c, dispatch_full.c, gate.c, filter.c). Seeded random rule sets and
/// call sequences run under a fresh table each, and every call's result, every rule's matched
/// and fired counts and the recorded events are compared with DecisionModel, the documented
/// semantics. A mismatch is shrunk (rules, then calls dropped while it still mismatches) and
/// printed as the rules' JSON and the call script, ready to replay with decide_driver.
@Suite struct DecisionDifferentialTests {
    /// The cases of one run: fixed, so every run decides the same cases.
    static let seeds: [UInt64] = Array(1...300)
    static let threadedSeeds: [UInt64] = Array(1001...1100)

    @Test func everyPathDecidesAsTheDocumentedSemantics() throws {
        let driver = DecideDriver(path: try Fixture.build("decide_driver"))
        let cases = Self.seeds.map { DecisionCase.generate(seed: $0) }
        var byPath: [String: Int] = [:]
        for c in cases { for path in c.paths { byPath[path, default: 0] += 1 } }
        let mismatches = try Self.disagreements(cases, driver: driver).map(\.report)
        print("DecisionDifferentialTests: \(Self.seeds.count) cases; paths reached (cases each): "
              + byPath.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        let failed = mismatches.count
        #expect(failed == 0, "\(failed) case(s) decided unlike the model; the first:\n\(mismatches.prefix(5).joined(separator: "\n\n"))")
        // The generator keeps reaching every path (a path no case reaches is not tested).
        for path in DecisionCase.allPaths { #expect(byPath[path, default: 0] >= 5, "only \(byPath[path, default: 0]) case(s) reach \(path)") }
    }

    /// The same with four threads making the script at once: counts and firings (not which
    /// thread's call got which number) against the model, for rules that decide independently.
    @Test func everyPathCountsAlikeUnderThreads() throws {
        let driver = DecideDriver(path: try Fixture.build("decide_driver"))
        let cases = Self.threadedSeeds.map { DecisionCase.generate(seed: $0).threaded(4) }
        let mismatches = try Self.disagreements(cases, driver: driver).map(\.report)
        let failed = mismatches.count
        #expect(failed == 0, "\(failed) case(s) counted unlike the model; the first:\n\(mismatches.prefix(5).joined(separator: "\n\n"))")
    }

    /// A handler that interrupts the user's `call` advice: its calls are the program's calls,
    /// "advised as its own" (README), as when the `signal` action runs it. The advice runs in
    /// an ADVICE frame, where calls are not advised, but the handler runs behind the signal
    /// trampoline on a fresh level of the invocation stack (signals.c). (Before it, the
    /// handler's write went to the original uncounted by the dispatcher, and under a gated
    /// rule the stub had already taken its number: that firing was lost.) The minimal case by
    /// hand, then generated cases whose handlers are run by advice instead of the `signal`
    /// action.
    @Test func aHandlerInsideCallAdviceIsAdvisedAsItsOwnCall() throws {
        let driver = DecideDriver(path: try Fixture.build("decide_driver"))
        let advice = try Fixture.library("advice_raise", soname: "advice_raise", flags: ["-I", Paths.root + "/Sources/CPreload/include"])
            + "/libadvice_raise.so:raise_usr1"
        var raiser = ModelRule(id: "g", symbol: "getppid", position: .before)
        raiser.raisingAdvice = advice
        let minimal = DecisionCase(seed: 0, rules: [raiser, ModelRule(id: "w", symbol: "write", position: .instead, marker: 7001, nth: 2)],
                                   calls: [.write(1), .getppid, .write(1)], handler: [.write(1)])
        let found = try Self.mismatch(minimal, driver: driver)
        #expect(found == nil, "\(found ?? "")\n\(minimal.reproducer)")
        let cases = Self.seeds.map { DecisionCase.generate(seed: $0).raisingFromAdvice(advice) }.filter { !$0.handler.isEmpty }
        #expect(cases.count >= 25)
        let mismatches = try Self.disagreements(cases, driver: driver).map(\.report)
        let failed = mismatches.count
        #expect(failed == 0, "\(failed) of \(cases.count) case(s):\n\(mismatches.prefix(3).joined(separator: "\n\n"))")
    }

    /// Calls nested in a call of the same function: write rules with the `signal` action run
    /// the handler, whose writes (of 10 to 19 bytes, which those rules' `"max": 9` leaves out)
    /// happen inside the outer write, before its original. Every path must number them alike:
    /// on entry, every rule before any decides, for every position (DecisionModel). (The full
    /// path once numbered an `after` rule's calls at their return, after the calls nested in
    /// them.)
    @Test func aHandlerNestedInAnAdvisedWriteIsNumberedAsItsOwnCall() throws {
        let driver = DecideDriver(path: try Fixture.build("decide_driver"))
        var outer = ModelRule(id: "s", symbol: "write", position: .instead, marker: 7002, nth: 1)
        outer.signal = true
        outer.args = [.max(9)]
        let minimal = DecisionCase(seed: 0, rules: [ModelRule(id: "a", symbol: "write", position: .after, marker: 8001, nth: 2), outer],
                                   calls: [.write(1)], handler: [.write(10)])
        let found = try Self.mismatch(minimal, driver: driver)
        #expect(found == nil, "\(found ?? "")\n\(minimal.reproducer)")
        // The rule that runs the handler comes first in the table: the outer write is still
        // the second rule's call 1 (numbered before the first rule's signal ran the handler),
        // the handler's write its call 2, which the rule replaces.
        var first = ModelRule(id: "s", symbol: "write", position: .before, nth: 1)
        first.signal = true
        first.args = [.max(9)]
        let tableOrder = DecisionCase(seed: 0, rules: [first, ModelRule(id: "b", symbol: "write", position: .instead, marker: 8002, nth: 2)],
                                      calls: [.write(1)], handler: [.write(10)])
        let inOrder = try Self.mismatch(tableOrder, driver: driver)
        #expect(inOrder == nil, "\(inOrder ?? "")\n\(tableOrder.reproducer)")
        let cases = Self.seeds.map { DecisionCase.generate(seed: $0).nestingWrites() }.filter { !$0.handler.isEmpty }
        #expect(cases.count >= 100)
        let failures = try Self.disagreements(cases, driver: driver).map(\.report)
        let failed = failures.count
        #expect(failed == 0, "\(failed) of \(cases.count) case(s):\n\(failures.prefix(4).joined(separator: "\n\n"))")
    }

    /// Rules added and removed while the program runs: "running programs see them on their
    /// next call", a new rule counts from zero, a removed one keeps its counts. The gates and
    /// rule copies are remade at each change; every path must decide the next call as the
    /// model does, with the rules the table has then.
    @Test func rulesChangedWhileTheProgramRunsDecideAsTheModel() throws {
        let driver = try Fixture.build("decide_driver")
        var mismatches: [String] = []
        for seed in Self.liveSeeds {
            let c = LiveDecisionCase.generate(seed: seed)
            if let found = try Self.mismatch(c, driver: driver) { mismatches.append("seed \(seed): \(found)\n\(c.reproducer)") }
        }
        let failed = mismatches.count
        #expect(failed == 0, "\(failed) of \(Self.liveSeeds.count) case(s):\n\(mismatches.prefix(3).joined(separator: "\n\n"))")
    }

    static let liveSeeds: [UInt64] = Array(2001...2100)

    /// How the preload's outcome of a live case differs from the model's (nil: it does not).
    static func mismatch(_ c: LiveDecisionCase, driver: String) throws -> String? {
        let t = try ScratchTable(rules: 32, events: 4096, stats: 256)
        if !c.rules.isEmpty { try t.add("[" + c.rules.map(\.json).joined(separator: ",") + "]") }
        let live = try LiveProcess(driver, ["-", "1"] + (c.handler.isEmpty ? [] : [c.handler.map(\.token).joined(separator: " ")]), table: t.name)
        guard let ppid = Int64(live.send("ppid")) else { return "decide_driver did not answer its parent's pid" }
        let session = DecisionSession(rules: c.rules, ppid: ppid, handler: c.handler)
        var out: [String] = []
        var results: [Int64] = []
        for (n, phase) in c.phases.enumerated() {
            for change in phase.changes {
                switch change {
                case .add(let r):
                    try t.add(r.json)
                    session.rules.append(r)
                case .remove(let id):
                    _ = try t.table.remove(ids: [id])
                    session.rules.removeAll { $0.id == id }
                }
            }
            let seen = live.send(phase.calls.map(\.token).joined(separator: " ")).split(separator: " ").compactMap { Int64($0) }
            let expected = phase.calls.map { session.perform($0) }
            results += expected
            if seen != expected { out.append("phase \(n + 1): preload \(seen), model \(expected)") }
        }
        #expect(try live.finish() == 0)
        let model = session.outcome(results: results)
        let rows = t.table.rules(includeRemoved: true)
        for id in model.matched.keys.sorted() {
            let row = rows.first { $0.id == id }
            if row?.matched != model.matched[id] || row?.fired != model.fired[id] {
                out.append("rule \(id): preload matched \(row.map { String($0.matched) } ?? "-") fired \(row.map { String($0.fired) } ?? "-"), "
                           + "model matched \(model.matched[id] ?? 0) fired \(model.fired[id] ?? 0)")
            }
        }
        let events = t.table.events(from: 0).events.map { ModelEvent(kind: $0.kind, rule: $0.rule, call: $0.callNumber) }.sorted()
        if events != model.events {
            let extra = Set(events).subtracting(model.events).sorted(), missing = Set(model.events).subtracting(events).sorted()
            out.append("events: preload only \(extra.prefix(8)), model only \(missing.prefix(8))")
        }
        return out.isEmpty ? nil : out.joined(separator: "\n")
    }

    /// The model itself on cases worked out by hand from docs/rules.md.
    @Test func theModelFollowsTheDocumentedExamples() {
        let w = [ModelCall](repeating: .write(1), count: 8)
        var r = ModelRule(id: "a", symbol: "write", position: .instead, marker: 7000)
        r.every = 2
        r.first = 3
        #expect(DecisionModel.run(rules: [r], calls: w, ppid: 1).results == [1, 1, 7000, 1, 7000, 1, 7000, 1])
        // A later instead that would fire is counted and shadowed; the after rule replaces both.
        let first = ModelRule(id: "a", symbol: "write", position: .instead, marker: 7000, nth: 2)
        let second = ModelRule(id: "b", symbol: "write", position: .instead, marker: 7001, after: 1)
        let after = ModelRule(id: "c", symbol: "write", position: .after, marker: 8000, nth: 3)
        let o = DecisionModel.run(rules: [first, second, after], calls: Array(w.prefix(3)), ppid: 1)
        #expect(o.results == [1, 7000, 8000])
        #expect(o.matched == ["a": 3, "b": 3, "c": 3] && o.fired == ["a": 1, "b": 1, "c": 1])
        #expect(o.events.contains(ModelEvent(kind: "shadowed", rule: "b", call: 2)))
        // Counted only when the argument matchers hold: the 2nd write of 5 bytes.
        var five = ModelRule(id: "a", symbol: "write", position: .instead, marker: 7000, nth: 2)
        five.args = [.eq(5)]
        #expect(DecisionModel.run(rules: [five], calls: [.write(5), .write(1), .write(5)], ppid: 1).results == [5, 1, 7000])
        // A handler's write inside a write is the next call on entry, for `after` rules too.
        var outer = ModelRule(id: "s", symbol: "write", position: .instead, marker: 7002, nth: 1)
        outer.signal = true
        let nested = DecisionModel.run(rules: [ModelRule(id: "a", symbol: "write", position: .after, marker: 8001, nth: 2), outer],
                                       calls: [.write(1)], ppid: 1, handler: [.write(10)])
        #expect(nested.results == [7002] && nested.handlerResults == [8001])
        // Four threads: a thread-scope rule fires in each, a process-scope one on the process's count.
        var perThread = ModelRule(id: "t", symbol: "getppid", position: .before, nth: 2)
        perThread.scope = "thread"
        let shared = ModelRule(id: "p", symbol: "getppid", position: .before, every: 3)
        let threads = DecisionModel.run(rules: [perThread, shared], calls: [.getppid, .getppid], ppid: 1, threads: 4)
        #expect(threads.fired == ["t": 4, "p": 2] && threads.matched == ["t": 8, "p": 8])
    }

    // MARK: running a case

    /// What the preload did with a case: the results, each rule's counts and the events.
    static func observe(_ c: DecisionCase, driver: DecideDriver) throws -> (ModelOutcome, ppid: Int64) {
        let t = try ScratchTable(rules: 16, events: 4096, stats: 256)
        if !c.rules.isEmpty { try t.add("[" + c.rules.map(\.json).joined(separator: ",") + "]") }
        let r = try driver.run([c.script, String(c.threads)] + (c.handler.isEmpty ? [] : [c.handlerScript]), table: t.name)
        guard r.status == 0 else { throw Fixture.FixtureError(message: "decide_driver failed: \(r)\n\(c.reproducer)") }
        var lines = r.stdout.split(separator: "\n")
        guard let head = lines.first, head.hasPrefix("ppid "), let ppid = Int64(head.dropFirst(5)) else {
            throw Fixture.FixtureError(message: "decide_driver printed no ppid line: \(r)")
        }
        lines.removeFirst()
        let split = lines.firstIndex(of: "handler") ?? lines.endIndex
        let results = lines[..<split].compactMap { Int64($0) }
        let handlerResults = lines[split...].dropFirst().compactMap { Int64($0) }
        let rows = t.table.rules(includeRemoved: true)
        var matched: [String: UInt64] = [:], fired: [String: UInt64] = [:]
        for row in rows {
            matched[row.id] = row.matched
            fired[row.id] = row.fired
        }
        let read = t.table.events(from: 0)
        let events = read.events.map { ModelEvent(kind: $0.kind, rule: $0.rule, call: $0.callNumber) }.sorted()
        let observed = ModelOutcome(results: results, matched: matched, fired: fired, events: events, handlerResults: Array(handlerResults))
        return (observed, ppid)
    }

    /// The cases the preload decides unlike the model, each with a report: how, and the
    /// minimal case that still does.
    static func disagreements(_ cases: [DecisionCase], driver: DecideDriver) throws -> [(case: DecisionCase, report: String)] {
        var out: [(case: DecisionCase, report: String)] = []
        for c in cases {
            guard let first = try mismatch(c, driver: driver) else { continue }
            let small = try shrink(c, driver: driver)
            out.append((c, "seed \(c.seed): \(first)\nminimal case:\n\(small.reproducer)\n\(try mismatch(small, driver: driver) ?? "")"))
        }
        return out
    }

    /// How the preload's outcome differs from the model's (nil: it does not).
    static func mismatch(_ c: DecisionCase, driver: DecideDriver) throws -> String? {
        let (seen0, ppid) = try observe(c, driver: driver)
        var seen = seen0
        var model: ModelOutcome
        if c.threads == 1 {
            model = DecisionModel.run(rules: c.rules, calls: c.calls, ppid: ppid, handler: c.handler)
        } else {
            model = DecisionModel.run(rules: c.rules, calls: c.calls, ppid: ppid, threads: c.threads)
            // Which calls a claim (times, once) goes to depends on the threads' order: only
            // the counts of such a rule are compared.
            let claiming = Set(c.rules.filter { $0.times != nil || $0.once != nil }.map(\.id))
            seen.results = []
            seen.events = seen.events.filter { !claiming.contains($0.rule) }
            model.events.removeAll { claiming.contains($0.rule) }
        }
        var out: [String] = []
        if seen.results != model.results {
            let diffs = zip(seen.results, model.results).enumerated().filter { $0.element.0 != $0.element.1 }
            out.append("results differ (\(seen.results.count) vs \(model.results.count) calls): "
                       + diffs.prefix(8).map { "call \($0.offset + 1) \(c.calls[$0.offset].token): preload \($0.element.0), model \($0.element.1)" }
                           .joined(separator: "; "))
        }
        if seen.handlerResults != model.handlerResults {
            out.append("SIGUSR1's handler: preload results \(seen.handlerResults.prefix(12)) (\(seen.handlerResults.count)), "
                       + "model \(model.handlerResults.prefix(12)) (\(model.handlerResults.count))")
        }
        for r in c.rules where seen.matched[r.id] != model.matched[r.id] || seen.fired[r.id] != model.fired[r.id] {
            out.append("rule \(r.id): preload matched \(seen.matched[r.id].map(String.init) ?? "-") fired \(seen.fired[r.id].map(String.init) ?? "-"), "
                       + "model matched \(model.matched[r.id] ?? 0) fired \(model.fired[r.id] ?? 0)")
        }
        if seen.events != model.events {
            let extra = Set(seen.events).subtracting(model.events).sorted(), missing = Set(model.events).subtracting(seen.events).sorted()
            out.append("events: preload only \(extra.prefix(8)), model only \(missing.prefix(8))")
        }
        return out.isEmpty ? nil : out.joined(separator: "\n")
    }

    /// The smallest case found that still mismatches: rules dropped one at a time, then calls
    /// (halves, quarters, ... down to one at a time).
    static func shrink(_ c: DecisionCase, driver: DecideDriver) throws -> DecisionCase {
        var best = c
        var i = 0
        while i < best.rules.count, best.rules.count > 1 {
            var smaller = best
            smaller.rules.remove(at: i)
            if try mismatch(smaller, driver: driver) != nil { best = smaller } else { i += 1 }
        }
        var chunk = max(1, best.calls.count / 2)
        while true {
            var start = 0
            while start < best.calls.count, best.calls.count > 1 {
                var smaller = best
                smaller.calls.removeSubrange(start..<min(start + chunk, best.calls.count))
                if try mismatch(smaller, driver: driver) != nil { best = smaller } else { start += chunk }
            }
            if chunk == 1 { break }
            chunk /= 2
        }
        return best
    }
}

/// One generated case: rules in table order and the calls of one thread.
struct DecisionCase: Sendable {
    var seed: UInt64
    var rules: [ModelRule]
    var calls: [ModelCall]
    /// Threads that each make the calls (decide_driver's second argument).
    var threads = 1
    /// The writes SIGUSR1's handler makes, run by rules with a `signal` action.
    var handler: [ModelCall] = []
    var handlerScript: String { handler.map(\.token).joined(separator: " ") }

    var script: String { calls.map(\.token).joined(separator: " ") }
    var reproducer: String {
        "rules: [" + rules.map(\.json).joined(separator: ",\n  ") + "]\ncalls: decide_driver '\(script)' \(threads)" + (handler.isEmpty ? "" : " '\(handlerScript)'")
    }

    /// The shapes a case is drawn from, each aimed at one of the preload's paths.
    enum Profile: CaseIterable { case singlePlain, singleConditional, singleAfter, several, full, mixed }

    static func generate(seed: UInt64) -> DecisionCase {
        var g = SeededGenerator(seed: seed)
        let profile = Profile.allCases[Int(g.below(UInt64(Profile.allCases.count)))]
        let focus = g.chance(0.6) ? "write" : "getppid"
        var rules: [ModelRule] = []
        func add(_ symbol: String, _ position: ModelRule.Position, simple: Bool) {
            let i = rules.count
            var r = ModelRule(id: "d\(i + 1)", symbol: symbol, position: position,
                              marker: position == .before ? nil : (position == .instead ? 7000 : 8000) + Int64(i))
            r.drawConditions(&g, simple: simple)
            rules.append(r)
        }
        switch profile {
        case .singlePlain:
            add(focus, g.chance(0.5) ? .instead : .before, simple: false)
            rules[0].args = []
            rules[0].autoRemove = false
            if rules[0].scope == "thread" { rules[0].scope = "process" }
        case .singleConditional:
            add(focus, g.chance(0.5) ? .instead : .before, simple: false)
            switch g.below(3) {
            case 0: rules[0].symbol = "write"; if rules[0].args.isEmpty { rules[0].args = [ModelRule.CountTest.draw(&g)] }
            case 1: rules[0].scope = "thread"
            default: rules[0].autoRemove = true; rules[0].once = nil
            }
        case .singleAfter:
            add(focus, .after, simple: false)
        case .several:
            for _ in 0..<(2 + Int(g.below(4))) { add(focus, g.chance(0.6) ? .instead : .before, simple: true) }
        case .full:
            for _ in 0..<(2 + Int(g.below(4))) { add(focus, [.before, .instead, .instead, .after][Int(g.below(4))], simple: false) }
        case .mixed:
            for _ in 0..<(1 + Int(g.below(5))) {
                add(g.chance(0.5) ? "write" : "getppid", [.before, .instead, .after][Int(g.below(3))], simple: g.chance(0.3))
            }
        }
        for i in rules.indices where rules[i].symbol != "write" { rules[i].args = [] }
        let count = 20 + Int(g.below(181))
        let calls: [ModelCall] = (0..<count).map { _ in g.chance(0.7) ? .write(Int(g.below(10))) : .getppid }
        // A signal handler's calls, run from inside an advised getppid on whatever path its
        // rules take, as calls of their own on the write rules' path.
        var handler: [ModelCall] = []
        if g.chance(0.25), rules.contains(where: { $0.symbol == "getppid" }) {
            handler = (0..<(1 + Int(g.below(3)))).map { _ in .write(Int(g.below(10))) }
            for i in rules.indices where rules[i].symbol == "getppid" && g.chance(0.6) { rules[i].signal = true }
        }
        return DecisionCase(seed: seed, rules: rules, calls: calls, handler: handler)
    }

    /// The case for `n` threads: rules that decide independently of each other, as
    /// DecisionModel's threaded run takes them. A second `instead` on a function becomes a
    /// `before` (which call is shadowed depends on the threads' order), result conditions go
    /// (an `instead` firing on another thread's call changes them), and so do autoRemove (a
    /// call that passed the check before another thread's firing is still counted) and `once`
    /// under thread scope.
    func threaded(_ n: Int) -> DecisionCase {
        var c = self
        c.threads = n
        c.handler = []
        var hasInstead: Set<String> = []
        for i in c.rules.indices {
            if c.rules[i].position == .instead && !hasInstead.insert(c.rules[i].symbol).inserted {
                c.rules[i].position = .before
                c.rules[i].marker = nil
            }
            c.rules[i].resultMin = nil
            c.rules[i].resultMax = nil
            c.rules[i].autoRemove = false
            c.rules[i].signal = false
            if c.rules[i].scope == "thread" { c.rules[i].once = nil }
        }
        return c
    }

    /// The case with its handler run by `call` advice that raises SIGUSR1 (advice_raise.c)
    /// where its rules have the `signal` action.
    func raisingFromAdvice(_ advice: String) -> DecisionCase {
        var c = self
        for i in c.rules.indices where c.rules[i].signal {
            c.rules[i].signal = false
            c.rules[i].raisingAdvice = advice
        }
        return c
    }

    /// The case with write rules that run SIGUSR1's handler, whose writes (10 to 19 bytes) are
    /// then nested in an advised write; each such rule gets `"max": 9`, so that the handler's
    /// own writes never run it again.
    func nestingWrites() -> DecisionCase {
        var c = self
        var g = SeededGenerator(seed: seed ^ 0x5eed)
        var any = false
        for i in c.rules.indices where c.rules[i].symbol == "write" && g.chance(0.5) {
            c.rules[i].signal = true
            c.rules[i].args.append(.max(9))
            any = true
        }
        if any || c.rules.contains(where: \.signal) {
            c.handler = (0..<(1 + Int(g.below(2)))).map { _ in .write(10 + Int(g.below(10))) }
        }
        return c
    }

    static let allPaths = ["gate", "filter", "single (conditional)", "single after", "several", "full", "signal handler"]

    /// The paths this case's calls take, from the rules' shapes as rulecache.c (asp_views_path,
    /// asp_view_from_slot's `plain`) and gate.c (asp_gateable, asp_filterable) choose them. For
    /// the report of what the cases reach; the comparison never depends on it.
    var paths: Set<String> {
        var out: Set<String> = []
        if !handler.isEmpty && rules.contains(where: \.runsHandler) { out.insert("signal handler") }
        for symbol in ["write", "getppid"] {
            let mine = rules.filter { $0.symbol == symbol }
            guard !mine.isEmpty, calls.contains(where: { $0.symbol == symbol }) else { continue }
            if mine.count > 1 {
                let several = mine.allSatisfy {
                    $0.position != .after && $0.scope == "process" && $0.times == nil && $0.probability == nil && $0.once == nil
                        && !$0.autoRemove && $0.first == nil && !$0.runsHandler
                }
                out.insert(several ? "several" : "full")
                continue
            }
            let r = mine[0]
            let stubCounts = r.scope != "thread"
            if r.args.isEmpty && stubCounts { out.insert("gate") }
            if !r.args.isEmpty { out.insert("filter") }
            if r.position == .after { out.insert("single after") }
            else if !r.args.isEmpty || !stubCounts || r.autoRemove { out.insert("single (conditional)") }
        }
        return out
    }
}

extension ModelRule {
    /// Random counting conditions, scope and claims; `simple`: only what the several-rules path takes
    /// (nth, after, every, argument matchers; process scope).
    mutating func drawConditions(_ g: inout SeededGenerator, simple: Bool) {
        if g.chance(0.3) { nth = 1 + g.below(12) }
        if g.chance(0.25) {
            let a = g.below(10)
            if nth.map({ $0 > a }) ?? true { after = a }
        }
        if g.chance(0.3) {
            every = 1 + g.below(5)
            if !simple, nth == nil, after == nil, g.chance(0.4) { first = 1 + g.below(6) }
        }
        if symbol == "write", g.chance(0.35) { args = (0..<(1 + Int(g.below(2)))).map { _ in CountTest.draw(&g) } }
        guard !simple else { return }
        if position == .after, g.chance(0.35) {
            // A write returns its count (0-9) unless an `instead` rule returned its marker
            // (7000 and up); getppid the parent's pid, or a marker.
            switch g.below(4) {
            case 0: resultMin = symbol == "write" ? Int64(g.below(10)) : 1
            case 1: resultMax = symbol == "write" ? Int64(g.below(10)) : 7999
            case 2: resultMin = 7000
            default: let v = Int64(g.below(10)); resultMin = v; resultMax = v
            }
        }
        if g.chance(0.25) { times = 1 + g.below(3) }
        if g.chance(0.12) {
            probability = [0.3, 0.5, 0.8][Int(g.below(3))]
            seed = 1 + g.below(1000)
        }
        scope = ["process", "process", "process", "thread", "table", "hierarchy"][Int(g.below(6))]
        if g.chance(0.1) { autoRemove = true } else if g.chance(0.1) { once = g.chance(0.5) ? "process" : "hierarchy" }
    }
}

extension ModelRule.CountTest {
    static func draw(_ g: inout SeededGenerator) -> Self {
        let v = Int(g.below(10))
        switch g.below(4) {
        case 0: return .eq(v)
        case 1: return .ne(v)
        case 2: return .min(v)
        default: return .max(v)
        }
    }
}

/// A case whose table changes while the program runs: the first rules, then phases, each of
/// some changes (a rule added last in table order, or one removed) and then some calls.
struct LiveDecisionCase: Sendable {
    enum Change: Sendable {
        case add(ModelRule)
        case remove(String)
    }

    var seed: UInt64
    var rules: [ModelRule]
    var phases: [(changes: [Change], calls: [ModelCall])]
    var handler: [ModelCall]

    var reproducer: String {
        var lines = ["rules: [" + rules.map(\.json).joined(separator: ",\n  ") + "]"]
        for (n, p) in phases.enumerated() {
            for change in p.changes {
                switch change {
                case .add(let r): lines.append("phase \(n + 1): add \(r.json)")
                case .remove(let id): lines.append("phase \(n + 1): remove \(id)")
                }
            }
            lines.append("phase \(n + 1): calls '\(p.calls.map(\.token).joined(separator: " "))'")
        }
        if !handler.isEmpty { lines.append("SIGUSR1's handler: '\(handler.map(\.token).joined(separator: " "))'") }
        return lines.joined(separator: "\n")
    }

    /// A generated case's rules and calls, the calls cut into 2 to 4 phases, with one or two
    /// changes before each phase but the first.
    static func generate(seed: UInt64) -> LiveDecisionCase {
        let base = DecisionCase.generate(seed: seed)
        var g = SeededGenerator(seed: seed ^ 0x11fe)
        let count = 2 + Int(g.below(3))
        var cuts = (0..<(count - 1)).map { _ in Int(g.below(UInt64(base.calls.count))) }.sorted()
        cuts = [0] + cuts + [base.calls.count]
        // removable: an autoRemove rule that fired has left the table already
        var active = base.rules.filter { !$0.autoRemove }.map(\.id)
        var added = 0
        var phases: [(changes: [Change], calls: [ModelCall])] = []
        for n in 0..<count {
            var changes: [Change] = []
            if n > 0 {
                for _ in 0..<(1 + Int(g.below(2))) {
                    if !active.isEmpty && g.chance(0.4) {
                        changes.append(.remove(active.remove(at: Int(g.below(UInt64(active.count))))))
                    } else {
                        added += 1
                        let symbol = g.chance(0.6) ? "write" : "getppid"
                        let position = [ModelRule.Position.before, .instead, .after][Int(g.below(3))]
                        var r = ModelRule(id: "n\(added)", symbol: symbol, position: position,
                                          marker: position == .before ? nil : (position == .instead ? 7100 : 8100) + Int64(added))
                        r.drawConditions(&g, simple: g.chance(0.4))
                        changes.append(.add(r))
                        if !r.autoRemove { active.append(r.id) }
                    }
                }
            }
            phases.append((changes, Array(base.calls[cuts[n]..<cuts[n + 1]])))
        }
        return LiveDecisionCase(seed: seed, rules: base.rules, phases: phases, handler: base.handler)
    }
}
