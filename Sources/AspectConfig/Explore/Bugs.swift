import Foundation

/// Findings told apart by the bug behind them: the same NULL dereference reached through four
/// fault points (two strategies, two callers) is one bug with four fault points.
///
/// A crash is known by its signal and the top frames of the crashing thread's stack, past the
/// frames that only carry the crash out (libaspects.so's own, and libc's abort, raise and
/// assertion machinery, which every assertion and every abort share); a frame is named by its
/// symbol, else by object+offset. A crash with no stack recorded falls back to its signal and
/// fault site. Hangs and check failures have no stack of their own: they are known by their
/// fault site (the reproducer's, which names the call even for a k-th call point).
public struct ExploreBug: Sendable {
    public var outcome: ExploreOutcome
    public var signature: String
    /// The crashing thread's stack, symbolized (empty for hangs and check failures).
    public var stack: [StackFrame]
    /// The findings of this bug, in run order.
    public var findings: [ExploreResult]
    /// The first finding's reproducer.
    public var reproducer: String? { findings.first { $0.reproducer != nil }?.reproducer }
}

extension ExploreBug {
    /// How many top frames tell crashes apart.
    static let signatureFrames = 3

    /// Symbols of the code that carries a crash out rather than causes it (glibc's names).
    static let crashMachinery: Set<String> = [
        "raise", "abort", "__GI_raise", "__GI_abort", "pthread_kill", "__pthread_kill", "__pthread_kill_implementation",
        "__pthread_kill_internal", "__assert_fail", "__assert_fail_base", "__GI___assert_fail", "__assert_perror_fail",
        "__libc_message", "__libc_fatal", "__malloc_assert", "malloc_printerr", "__fortify_fail", "__chk_fail",
        "__stack_chk_fail", "__libc_message_impl",
    ]

    /// The frames that say where a crash happened: the stack past the last frame of the
    /// crash machinery near its top (a frame scanned in between can be stale), without the
    /// preload's own frames (its trampolines sit between a program and the functions it calls).
    static func causalFrames(_ stack: [StackFrame]) -> [StackFrame] {
        let top = stack.prefix(machineryDepth)
        let start = top.lastIndex { $0.symbol.map { crashMachinery.contains($0) } == true }.map { $0 + 1 } ?? 0
        return stack[start...].filter { !$0.site.object.hasPrefix("libaspects") }
    }

    /// How deep the crash machinery can reach: abort ← raise ← pthread_kill and the assertion's
    /// two frames, with room for a stale frame or two.
    static let machineryDepth = 8

    /// A crash's signature: `SIGSEGV in f ← g ← h` (innermost first).
    static func crashSignature(signal: Int32, stack: [StackFrame]) -> String? {
        let top = causalFrames(stack).prefix(signatureFrames)
        guard !top.isEmpty else { return nil }
        let name = ErrorNames.signalName(signal) ?? "signal \(signal)"
        return name + " in " + top.map { $0.symbol ?? $0.site.description }.joined(separator: " ← ")
    }
}

extension ExploreReport {
    /// The crash of a finding that explains it: the first process of its tree that crashed
    /// beyond the baseline's, with a stack when one has it.
    func crash(of r: ExploreResult) -> ProcessCrash? {
        let crashes = r.record.newCrashes(against: baseline)
        return crashes.first { !$0.stack.isEmpty } ?? crashes.first
    }

    /// Where a finding's fault was made: the reproducer's site and call, else the point (call k
    /// of its image, named where the tree had several).
    func faultSite(of r: ExploreResult) -> String {
        let p = r.reproducerPoint ?? r.point
        if let context = p.context { return "\(p.function) via \(describe(context))" }
        return p.site.map { "\(p.function) from \(describe($0))" } ?? "\(imagePrefix(p))\(p.function) call \(p.nth)"
    }

    /// The findings grouped into bugs, crashes first, then in order of first appearance.
    public var bugs: [ExploreBug] {
        var order: [String] = [], groups: [String: ExploreBug] = [:]
        for r in findings.sorted(by: { $0.index < $1.index }) {
            var stack: [StackFrame] = []
            let signature: String
            if r.outcome == .crash, let c = crash(of: r), let s = ExploreBug.crashSignature(signal: c.signal, stack: c.stack) {
                signature = s
                stack = c.stack
            } else if r.outcome == .crash {
                let signal = crash(of: r)?.signal ?? r.record.signal ?? 0
                signature = (ErrorNames.signalName(signal) ?? "signal \(signal)") + " after " + faultSite(of: r)
            } else {
                signature = faultSite(of: r)
            }
            let key = r.outcome.rawValue + "\t" + signature
            if groups[key] == nil {
                order.append(key)
                groups[key] = ExploreBug(outcome: r.outcome, signature: signature, stack: stack, findings: [])
            }
            groups[key]!.findings.append(r)
        }
        return order.map { groups[$0]! }.enumerated().sorted { ($0.element.outcome, $0.offset) < ($1.element.outcome, $1.offset) }.map(\.element)
    }

    /// Symbolizes the stacks of the findings' crashes (the other runs' are not shown).
    mutating func symbolizeCrashStacks() {
        for k in results.indices where results[k].outcome == .crash {
            for c in results[k].record.crashes.indices where !results[k].record.crashes[c].stack.isEmpty {
                results[k].record.crashes[c].stack = SiteSymbolizer.symbolize(results[k].record.crashes[c].stack)
            }
        }
    }
}
