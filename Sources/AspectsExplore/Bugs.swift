import Foundation
import AspectsRules

/// Findings told apart by the bug behind them (`BugCause`): a crash by the place it happened,
/// a hang or a failed check by its symptom, so the same NULL dereference reached through four
/// fault points (two strategies, two callers) is one bug with four fault points.
package struct ExploreBug: Sendable {
    package var outcome: ExploreOutcome
    package var signature: String
    /// The crashing thread's stack, symbolized (empty for hangs and check failures).
    package var stack: [StackFrame]
    /// Its crash was caught by a handler of the program's (`ProcessCrash.caughtByHandler`):
    /// said beside the signature, which it is not part of — where it crashed is the bug.
    package var caughtByHandler = false
    /// The findings of this bug, in run order.
    package var findings: [ExploreResult]
    /// The finding the bug was reproduced by (its first point, or the first that reproduced
    /// when that one did not); the others are the same bug, not run again.
    package var witness: ExploreResult? { findings.first { $0.reproduced == true } ?? findings.first }
    /// The witness's reproducer.
    package var reproducer: String? { witness?.reproducer ?? findings.first { $0.reproducer != nil }?.reproducer }
    /// The signature as the reports head the bug with: `SIGSEGV in f (x.c:9), caught by the
    /// program's handler`.
    package var title: String { signature + (caughtByHandler ? ", " + ProcessCrash.caughtLabel : "") }
}

extension ExploreBug {
    /// The bug a finding is, as a key (outcome and signature) and what the report shows.
    static func cause(of r: ExploreResult, baseline: RunRecord) -> (key: String, signature: String, stack: [StackFrame], caught: Bool) {
        let crash = ExploreReport.crash(of: r, baseline: baseline)
        let caught = r.outcome == .crash && crash?.caughtByHandler == true
        if r.outcome == .crash, let c = crash, let s = BugCause.crashSignature(signal: c.signal, stack: c.stack) {
            return (r.outcome.rawValue + "\t" + s, s, c.stack, caught)
        }
        let s = BugCause.symptom(r, crash: crash, baseline: baseline)
        return (r.outcome.rawValue + "\t" + s, s, [], caught)
    }

    /// Findings grouped into bugs, crashes first, then in order of first appearance.
    package static func group(_ findings: [ExploreResult], baseline: RunRecord) -> [ExploreBug] {
        var order: [String] = [], groups: [String: ExploreBug] = [:]
        for r in findings.sorted(by: { $0.index < $1.index }) {
            let (key, signature, stack, caught) = cause(of: r, baseline: baseline)
            if groups[key] == nil {
                order.append(key)
                groups[key] = ExploreBug(outcome: r.outcome, signature: signature, stack: stack, caughtByHandler: caught, findings: [])
            }
            groups[key]!.findings.append(r)
        }
        return order.map { groups[$0]! }.enumerated().sorted { ($0.element.outcome, $0.offset) < ($1.element.outcome, $1.offset) }.map(\.element)
    }
}

extension ExploreReport {
    /// The crash of a finding that explains it: the first process of its tree that crashed
    /// beyond the baseline's, with a stack when one has it.
    static func crash(of r: ExploreResult, baseline: RunRecord) -> ProcessCrash? {
        let crashes = r.record.newCrashes(against: baseline)
        return crashes.first { !$0.stack.isEmpty } ?? crashes.first
    }

    func crash(of r: ExploreResult) -> ProcessCrash? { Self.crash(of: r, baseline: baseline) }

    /// The findings grouped into bugs, crashes first, then in order of first appearance.
    package var bugs: [ExploreBug] { ExploreBug.group(findings, baseline: baseline) }

    /// Symbolizes the stacks of the crashes of `results` (the other runs' are not shown): all
    /// their frames in one call, so that each object's tables (libc's debug file) are read once.
    static func symbolizeCrashStacks(_ results: inout [ExploreResult]) {
        var places: [(result: Int, crash: Int, count: Int)] = []
        var frames: [StackFrame] = []
        for k in results.indices where results[k].outcome == .crash {
            for c in results[k].record.crashes.indices where !results[k].record.crashes[c].stack.isEmpty {
                places.append((k, c, results[k].record.crashes[c].stack.count))
                frames += results[k].record.crashes[c].stack
            }
        }
        var symbolized = SiteSymbolizer.symbolize(frames)[...]
        for (k, c, count) in places {
            results[k].record.crashes[c].stack = Array(symbolized.prefix(count))
            symbolized = symbolized.dropFirst(count)
        }
    }
}
