import CAspectsABI
import AspectsCore

/// When a rule fires: its draw (`probability`, `seed`), how often in all (`once`,
/// `autoRemove`), the calling program, object, site and context, and the counting of calls
/// (`nth`, `after`, `every`, `first`). Conditions on the arguments are in
/// RuleCompiler+Matchers.swift, on the result in RuleCompiler+Results.swift.
extension RuleCompiler {
    /// `"probability"` as a threshold on the rule's draw, and its `"seed"`, which only a rule
    /// that draws has a use for.
    func compileProbability(_ r: Rule, into c: inout CompiledRule, label: String) throws(AspectsError) {
        let w = r.when, a = r.action
        if let p = w.probability {
            c.flags |= ASPECTS_RULE_PROBABILITY.rawValue
            c.probability = SplitMix64.threshold(p)
        } else if w.seed != nil && c.errnoChoices.isEmpty && a.corrupt == nil && !a.short {
            throw RuleErrors(label: label)(.invalidValue, "when.seed", "\"seed\" only matters with \"probability\", a list of errors to \"fail\" with, \"corrupt\" or \"short\"",
                                           fix: "add \"probability\", or drop \"seed\"")
        }
        c.seed = w.seed
    }

    /// `"autoRemove"` (one firing in the whole table) or `"once"` (one per process or
    /// hierarchy), not both.
    func compileFiringLimit(_ r: Rule, into c: inout CompiledRule, label: String) throws(AspectsError) {
        if r.autoRemove { c.flags |= ASPECTS_RULE_AUTOREMOVE.rawValue }
        switch r.once {
        case .process?: c.flags |= ASPECTS_RULE_ONCE_PROCESS.rawValue
        case .hierarchy?: c.flags |= ASPECTS_RULE_ONCE_HIERARCHY.rawValue
        case nil: break
        }
        if r.autoRemove && r.once != nil {
            throw RuleErrors(label: label)(.invalidValue, "once", "\"autoRemove\" already means one firing in the whole table", fix: "drop \"once\" or \"autoRemove\"")
        }
    }

    /// Where the call comes from: the program (`"process"`), the calling object (`"caller"`),
    /// one call site (`"site"`) or a calling context (`"context"`, whose first frame is the
    /// site); and whether a firing records its context.
    func compileWhereFrom(_ r: Rule, into c: inout CompiledRule, label: String) throws(AspectsError) {
        let fail = RuleErrors(label: label)
        let w = r.when
        if let p = w.process, p.isEmpty { throw fail(.invalidValue, "when.process", "the pattern is empty") }
        if let p = w.caller, p.isEmpty { throw fail(.invalidValue, "when.caller", "the pattern is empty") }
        if w.process != nil { c.flags |= ASPECTS_RULE_HAS_PROCESS.rawValue }
        if w.caller != nil { c.flags |= ASPECTS_RULE_HAS_CALLER.rawValue }
        c.processPattern = w.process
        c.callerPattern = w.caller
        if let text = w.site {
            guard let s = CallSite(text) else {
                throw fail(.invalidValue, "when.site", "\"\(text)\" is not a call site",
                           fix: "write the calling object's file name and the offset of the return address, as events print them: \"ledger+0x1a2b\"")
            }
            c.site = s
            c.flags |= ASPECTS_RULE_HAS_SITE.rawValue
        }
        if let frames = w.context {
            let sites = try contextSites(frames, hasSite: w.site != nil, label: label)
            c.context = CallContext(sites)
            c.site = sites[0]
            c.flags |= ASPECTS_RULE_HAS_SITE.rawValue | ASPECTS_RULE_HAS_CONTEXT.rawValue
        }
        if r.action.recordContext { c.flags |= ASPECTS_RULE_RECORD_CONTEXT.rawValue }
    }

    /// The frames of `"context"`: call sites, at least one and at most a slot's depth, and
    /// not besides a `"site"` (the first frame is the site).
    func contextSites(_ frames: [String], hasSite: Bool, label: String) throws(AspectsError) -> [CallSite] {
        let fail = RuleErrors(label: label)
        if hasSite {
            throw fail(.invalidValue, "when.context", "\"context\" names the call site as its first frame, and the rule has \"site\" too",
                       fix: "drop \"site\"; the context's first frame is the site")
        }
        guard !frames.isEmpty else {
            throw fail(.invalidValue, "when.context", "the context is empty",
                       fix: "list the call site, then its callers, as events print them: [\"app+0x1a2b\", \"app+0x3c4d\"]")
        }
        guard frames.count <= Int(ASPECTS_MAX_CONTEXT_DEPTH) else {
            throw fail(.limit, "when.context", "\(frames.count) frames; a context holds at most \(ASPECTS_MAX_CONTEXT_DEPTH)",
                       fix: "keep the call site and its nearest callers, at most \(ASPECTS_MAX_CONTEXT_DEPTH)")
        }
        var sites: [CallSite] = []
        for (i, text) in frames.enumerated() {
            guard let s = CallSite(text) else {
                throw fail(.invalidValue, "when.context[\(i)]", "\"\(text)\" is not a call site",
                           fix: "write the object's file name and the offset of the return address, as events print them: \"ledger+0x1a2b\"")
            }
            sites.append(s)
        }
        return sites
    }

    /// The counting conditions go together: `"first"` only with `"every"` and instead of
    /// `"after"`, and an `"nth"` that `"after"` does not rule out.
    func compileCounting(_ w: Conditions, into c: inout CompiledRule, label: String) throws(AspectsError) {
        let fail = RuleErrors(label: label)
        if let first = w.first {
            guard w.every != nil else {
                throw fail(.invalidValue, "when.first", "\"first\" says where \"every\" starts, and the rule has no \"every\"",
                           fix: "add \"every\": N to fire on calls \(first), \(first)+N, ...; for that one call alone use \"nth\": \(first)")
            }
            if let after = w.after {
                throw fail(.invalidValue, "when.first", "\"first\": \(first) and \"after\": \(after) both say where counting starts",
                           fix: "keep \"first\" (\"first\": F fires from call F on: \"after\": F - 1)")
            }
            if w.nth != nil { throw fail(.invalidValue, "when.first", "\"first\" goes with \"every\", not with \"nth\"", fix: "drop \"first\"") }
            c.flags |= ASPECTS_RULE_EVERY_FROM.rawValue
        }
        if let nth = w.nth, let after = w.after, nth <= after {
            throw fail(.invalidValue, "when.nth", "\"nth\": \(nth) can never fire together with \"after\": \(after)", fix: "drop one of them")
        }
    }

    /// The slot's strings area holds the argument patterns (counted by `compileMatchers`), the
    /// `process` and `caller` patterns and the site's object name, each with its NUL.
    func countSlotStrings(_ w: Conditions, into c: inout CompiledRule, label: String) throws(AspectsError) {
        c.stringBytes += [w.process, w.caller, c.site?.object].compactMap { $0 }.reduce(0) { $0 + $1.utf8.count + 1 }
        if c.stringBytes > Int(ASPECTS_RULE_STRINGS_SIZE) {
            throw RuleErrors(label: label)(.limit, "when.args", "the patterns take \(c.stringBytes) bytes; a rule holds at most \(ASPECTS_RULE_STRINGS_SIZE)",
                                           fix: "shorten the patterns (a glob such as \"*/data/*.db\" often does)")
        }
    }

    /// The slot's `scope` (enum aspects_scope): whose calls the rule's counters count.
    static func scopeCode(_ s: Rule.Scope) -> UInt32 {
        switch s {
        case .process: return ASPECTS_SCOPE_PROCESS.rawValue
        case .thread: return ASPECTS_SCOPE_THREAD.rawValue
        case .hierarchy: return ASPECTS_SCOPE_HIERARCHY.rawValue
        case .table: return ASPECTS_SCOPE_TABLE.rawValue
        }
    }
}
