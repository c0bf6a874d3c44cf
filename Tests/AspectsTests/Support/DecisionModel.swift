import Foundation
import AspectsRules

/// The documented semantics of rule decisions (docs/rules.md) as a reference model: given
/// rules in table order and a sequence of calls made by one thread of one process, what each
/// call returns, each rule's matched and fired counts, and the events the table records.
/// DecisionDifferentialTests compares the preload's paths (gate, filter, single, several-rules, full)
/// with it. It covers the rules the differential test generates: rules on `write` and
/// `getppid`, `before` rules that only log, `instead` and `after` rules that return a marker,
/// rules that run a signal handler (whose writes are calls of their own), one thread or
/// several making the same calls, and rules added or removed between calls (DecisionSession).
struct ModelRule: Sendable {
    enum Position: String, Sendable { case before, instead, after }
    /// An argument matcher on write's count (argument 2).
    enum CountTest: Sendable {
        case eq(Int), ne(Int), min(Int), max(Int)

        func holds(_ n: Int) -> Bool {
            switch self {
            case .eq(let a): return n == a
            case .ne(let a): return n != a
            case .min(let a): return n >= a
            case .max(let a): return n <= a
            }
        }

        var json: String {
            switch self {
            case .eq(let a): return #"{"arg":2,"eq":\#(a)}"#
            case .ne(let a): return #"{"arg":2,"ne":\#(a)}"#
            case .min(let a): return #"{"arg":2,"min":\#(a)}"#
            case .max(let a): return #"{"arg":2,"max":\#(a)}"#
            }
        }
    }

    var id: String
    var symbol: String
    var position: Position
    /// What an `instead` or `after` rule makes the call return (none for `before`: it logs).
    var marker: Int64?
    var nth: UInt64?
    var after: UInt64?
    var every: UInt64?
    var first: UInt64?
    var times: UInt64?
    var probability: Double?
    var seed: UInt64?
    var args: [CountTest] = []
    /// An `after` rule's condition on the result: in `min...max` (either end open).
    var resultMin: Int64?
    var resultMax: Int64?
    var scope = "process"
    var autoRemove = false
    var once: String?
    /// `"signal": "SIGUSR1"`: a firing runs the program's handler, whose calls "are advised as
    /// their own" (README), inside this call.
    var signal = false
    /// `"call": ADVICE`: a firing runs the user's advice, which raises SIGUSR1 (advice_raise.c):
    /// the handler runs inside the advice, and its calls are the program's calls all the same.
    var raisingAdvice: String?
    /// A firing runs SIGUSR1's handler, by either action.
    var runsHandler: Bool { signal || raisingAdvice != nil }

    /// The rule as JSON for the table. `instead` rules log too, so that a shadowed one is
    /// reported ("with log, reported as shadowed").
    var json: String {
        var action: [String] = []
        if let marker { action.append(#""return":\#(marker)"#) }
        if position != .after { action.append(#""log":true"#) }
        if signal { action.append(#""signal":"SIGUSR1""#) }
        if let raisingAdvice { action.append(#""call":"\#(raisingAdvice)""#) }
        var when: [String] = []
        if let nth { when.append(#""nth":\#(nth)"#) }
        if let after { when.append(#""after":\#(after)"#) }
        if let every { when.append(#""every":\#(every)"#) }
        if let first { when.append(#""first":\#(first)"#) }
        if let times { when.append(#""times":\#(times)"#) }
        if let probability { when.append(#""probability":\#(probability),"seed":\#(seed ?? 0)"#) }
        if !args.isEmpty { when.append(#""args":[\#(args.map(\.json).joined(separator: ","))]"#) }
        if resultMin != nil || resultMax != nil {
            let bounds = [resultMin.map { #""min":\#($0)"# }, resultMax.map { #""max":\#($0)"# }].compactMap { $0 }
            when.append(#""result":{\#(bounds.joined(separator: ","))}"#)
        }
        var fields = [#""id":"\#(id)""#, #""symbol":"\#(symbol)""#, #""position":"\#(position.rawValue)""#,
                      #""action":{\#(action.joined(separator: ","))}"#, #""scope":"\#(scope)""#]
        if !when.isEmpty { fields.append(#""when":{\#(when.joined(separator: ","))}"#) }
        if autoRemove { fields.append(#""autoRemove":true"#) }
        if let once { fields.append(#""once":"\#(once)""#) }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// Its argument conditions on a call (a rule on getppid has none).
    func argumentsHold(_ call: ModelCall) -> Bool {
        guard case .write(let n) = call else { return true }
        return args.allSatisfy { $0.holds(n) }
    }

    /// An `after` rule's result condition on `result`, what the call returned before any
    /// `after` rule changed it ("conditions on the result are on what the original did"). When
    /// an `instead` rule replaced the call the original did nothing; the docs do not say what
    /// the condition then sees: the model takes the `instead` rule's result, the result the
    /// call had when the `after` rules began.
    var hasResultCondition: Bool { resultMin != nil || resultMax != nil }

    func resultHolds(_ result: Int64) -> Bool {
        if let resultMin, result < resultMin { return false }
        if let resultMax, result > resultMax { return false }
        return true
    }

    /// Whether the counting conditions hold for its k-th matching call ("all of which must
    /// hold"): `nth` exactly the k-th; `after` every call past it; `every` the multiples, or
    /// with `first` the calls first, first + every, ...; `probability` the seeded schedule's
    /// calls, a pure function of (seed, id, k). The claims (`times`, `once`, `autoRemove`)
    /// are the model's state, in DecisionModel.
    func countingConditionsHold(_ k: UInt64) -> Bool {
        if let nth, k != nth { return false }
        if let after, k <= after { return false }
        if let every {
            if let first {
                if k < first || (k - first) % every != 0 { return false }
            } else if k % every != 0 { return false }
        }
        if let probability {
            let schedule = FiringSchedule(threshold: SplitMix64.threshold(probability))
            if !schedule.fires(seed: seed ?? 0, ruleKey: SplitMix64.ruleKey(id: id), call: k) { return false }
        }
        return true
    }
}

enum ModelCall: Sendable, Equatable {
    case write(Int)
    case getppid

    var symbol: String { if case .write = self { "write" } else { "getppid" } }
    var token: String { if case .write(let n) = self { "w\(n)" } else { "p" } }
}

struct ModelEvent: Hashable, Comparable, Sendable, CustomStringConvertible {
    var kind: String
    var rule: String
    var call: UInt64
    static func < (a: ModelEvent, b: ModelEvent) -> Bool { (a.rule, a.call, a.kind) < (b.rule, b.call, b.kind) }
    var description: String { "\(kind) \(rule)#\(call)" }
}

struct ModelOutcome: Equatable, Sendable {
    var results: [Int64]
    /// By rule id.
    var matched: [String: UInt64]
    var fired: [String: UInt64]
    /// Sorted: the comparison is of which rule fired (or was shadowed) on which of its calls.
    var events: [ModelEvent]
    /// The results of the calls SIGUSR1's handler made, run after run.
    var handlerResults: [Int64] = []
}

/// One process of the model, whose table may change between calls: the rules active now in
/// table order, and each rule's counts and claims by id (a rule added later counts from zero,
/// a removed one keeps the counts it had).
final class DecisionSession {
    private struct RuleState {
        var calls: UInt64 = 0
        var fired: UInt64 = 0
        var timesUsed: UInt64 = 0
        var onceUsed = false
        /// An autoRemove rule that fired has left the table: later calls are not its calls.
        var gone = false
    }

    /// The table's rules, in table order (a rule added later is last).
    var rules: [ModelRule] {
        didSet { register() }
    }
    let ppid: Int64
    let handler: [ModelCall]
    private var state: [String: RuleState] = [:]
    private var order: [String] = []
    private(set) var handlerResults: [Int64] = []
    private(set) var events: [ModelEvent] = []

    /// One thread of one process, so every scope (thread, process, hierarchy, table) counts
    /// the same calls. `ppid` is what getppid returns unadvised; a write of n to /dev/null
    /// returns n. `handler`: the calls SIGUSR1's handler makes, each time a rule that runs it
    /// fires: calls of their own, counted and decided like the program's, made while the rule
    /// fires.
    init(rules: [ModelRule], ppid: Int64, handler: [ModelCall] = []) {
        self.rules = []
        self.ppid = ppid
        self.handler = handler
        self.rules = rules
        register() // observers do not run in an initializer
    }

    /// Counts from zero for a rule the table did not have.
    private func register() {
        for r in rules where state[r.id] == nil {
            state[r.id] = RuleState()
            order.append(r.id)
        }
    }

    /// Each rule's counts so far, every rule the table has had included.
    func outcome(results: [Int64]) -> ModelOutcome {
        var matched: [String: UInt64] = [:], fired: [String: UInt64] = [:]
        for id in order {
            matched[id] = state[id]?.calls ?? 0
            fired[id] = state[id]?.fired ?? 0
        }
        return ModelOutcome(results: results, matched: matched, fired: fired, events: events.sorted(), handlerResults: handlerResults)
    }

    private func count(_ r: ModelRule) -> UInt64 {
        state[r.id, default: RuleState()].calls += 1
        return state[r.id]!.calls
    }

    /// Whether r fires on its k-th call; claims are taken last (times, then once, then
    /// autoRemove), which only matters for rules that combine them.
    private func decide(_ r: ModelRule, _ k: UInt64) -> Bool {
        guard r.countingConditionsHold(k) else { return false }
        if let times = r.times {
            if state[r.id]!.timesUsed >= times { return false }
            state[r.id]!.timesUsed += 1
        }
        if r.once != nil {
            if state[r.id]!.onceUsed { return false }
            state[r.id]!.onceUsed = true
        }
        if r.autoRemove {
            // fired meanwhile by a call nested in this one (a handler's)
            if state[r.id]!.gone { return false }
            state[r.id]!.gone = true
        }
        state[r.id]!.fired += 1
        return true
    }

    private func fire(_ r: ModelRule, _ k: UInt64) {
        events.append(ModelEvent(kind: "fired", rule: r.id, call: k))
        if r.runsHandler { for h in handler { handlerResults.append(perform(h)) } }
    }

    private func live(_ r: ModelRule, _ call: ModelCall) -> Bool { !state[r.id]!.gone && r.argumentsHold(call) }

    /// One call: what it returns.
    func perform(_ call: ModelCall) -> Int64 {
        let mine = rules.filter { $0.symbol == call.symbol }
        // Every rule numbers the call on entry, before any rule decides, whatever its
        // position, so that a call nested in this one (a signal handler's, run by this call's
        // advice) takes the next number of every rule; an `after` rule with a result
        // condition counts at the return, the calls whose result matched ("nth then counts
        // those calls"). (docs/rules.md, "Numbering"; issue 22, item 2.)
        var numberedOnEntry: [String: UInt64] = [:]
        for r in mine where !(r.position == .after && r.hasResultCondition) && live(r, call) {
            numberedOnEntry[r.id] = count(r)
        }
        // "every firing before, then the first firing instead (a later instead that would
        // fire is counted as matched and, with log, reported as shadowed), or the
        // original, then every firing after". The docs are silent on a later `instead`
        // that matches but would not fire; the model reports it as shadowed as well
        // (it is counted like the others, and the preload records every shadowed call).
        var chosen: (rule: ModelRule, k: UInt64)?
        for r in mine where r.position != .after {
            guard let k = numberedOnEntry[r.id] else { continue }
            if r.position == .instead && chosen != nil {
                events.append(ModelEvent(kind: "shadowed", rule: r.id, call: k))
                continue
            }
            guard decide(r, k) else { continue }
            if r.position == .instead { chosen = (r, k) } else { fire(r, k) }
        }
        var result: Int64
        if let chosen {
            fire(chosen.rule, chosen.k)
            result = chosen.rule.marker ?? 0
        } else {
            switch call {
            case .write(let n): result = Int64(n)
            case .getppid: result = ppid
            }
        }
        // Two after rules that both fire: "the later one's is returned".
        let before = result
        for r in mine where r.position == .after {
            let k: UInt64
            if let entry = numberedOnEntry[r.id] {
                k = entry
            } else {
                guard r.hasResultCondition, live(r, call), r.resultHolds(before) else { continue }
                k = count(r)
            }
            guard decide(r, k) else { continue }
            fire(r, k)
            if let marker = r.marker { result = marker }
        }
        return result
    }
}

enum DecisionModel {
    /// The calls of one thread under rules that do not change (DecisionSession).
    static func run(rules: [ModelRule], calls: [ModelCall], ppid: Int64, handler: [ModelCall] = []) -> ModelOutcome {
        let session = DecisionSession(rules: rules, ppid: ppid, handler: handler)
        return session.outcome(results: calls.map { session.perform($0) })
    }

    /// `threads` threads that each make `calls`, for rules that decide independently of each
    /// other (at most one `instead` rule per function, no result conditions, no autoRemove;
    /// no `once` under thread scope): a thread-scope rule counts each thread's calls apart, as
    /// one thread `threads` times over; any other scope numbers all the threads' matching calls
    /// 1, 2, 3, ... in some order, and since a call's fate depends only on its number (a claim
    /// aside), as one thread making them all. The results depend on that order: none here.
    static func run(rules: [ModelRule], calls: [ModelCall], ppid: Int64, threads: Int) -> ModelOutcome {
        let shared = run(rules: rules, calls: Array([[ModelCall]](repeating: calls, count: threads).joined()), ppid: ppid)
        let alone = run(rules: rules, calls: calls, ppid: ppid)
        var out = ModelOutcome(results: [], matched: [:], fired: [:], events: [])
        for r in rules {
            if r.scope == "thread" {
                out.matched[r.id] = (alone.matched[r.id] ?? 0) * UInt64(threads)
                out.fired[r.id] = (alone.fired[r.id] ?? 0) * UInt64(threads)
                for _ in 0..<threads { out.events += alone.events.filter { $0.rule == r.id } }
            } else {
                out.matched[r.id] = shared.matched[r.id]
                out.fired[r.id] = shared.fired[r.id]
                out.events += shared.events.filter { $0.rule == r.id }
            }
        }
        out.events.sort()
        return out
    }
}
