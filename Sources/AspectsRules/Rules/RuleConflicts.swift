import CAspectsABI
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Rules that can never fire, found when they are added — as Aspects refused a hook at hook
/// time rather than letting it sit unused: an `instead` rule behind an earlier one that takes
/// every call of the same function, a rule that repeats another exactly, and a failure the
/// kernel never gives (instead of a close, whose real failure releases the descriptor). aspectctl warns
/// (`--strict` refuses); nothing here changes a rule.
package enum RuleConflicts {
    package struct Finding: Sendable, Equatable, CustomStringConvertible {
        /// The rule that can never fire, as errors name rules ("rule \"x\"", "rule 3").
        package var rule: String
        package var message: String
        /// What to do about it, when it is not the usual (a condition, or dropping the rule).
        package var fix: String? = nil
        package var description: String { "\(rule): \(message)" }
    }

    /// `rules` in the order they will be added, after `existing` (the table's active rules,
    /// oldest first); `labels` name the new ones (their ids, or their place in the file).
    /// Linear in the rules: each rule's fingerprint is made once and looked up, and the rules
    /// that take every call are indexed by alias group (a scan of all earlier rules per rule
    /// made `check` of 2,000 rules take 18 s).
    package static func find(_ rules: [CompiledRule], labels: [String], after existing: [CompiledRule] = [],
                            catalog: Catalog = .builtIn) -> [Finding] {
        findCountingWork(rules, labels: labels, after: existing).findings
            + resultsReplacedTwice(rules, labels: labels, after: existing)
            + rules.enumerated().compactMap { n, c in failureNeverGiven(c, label: n < labels.count ? labels[n] : "rule \(n + 1)", catalog: catalog) }
    }

    /// A failure `instead` of a call whose real failure comes after its work (the catalog's
    /// `fails: after`): the program would keep a descriptor the kernel releases, or miss a
    /// write-back that ran, so what it does next (a pipe that never ends) is no finding.
    static func failureNeverGiven(_ c: CompiledRule, label: String, catalog: Catalog) -> Finding? {
        guard c.position == ASPECTS_POSITION_INSTEAD.rawValue, c.prototype == nil,
              c.rule.action.fail != nil || c.rule.action.errno != nil else { return nil }
        for g in [c.group] + c.familyGroups where g < catalog.groups.count {
            guard let reason = catalog.groups[g].failsAfterReason else { continue }
            let name = catalog.primary(of: catalog.groups[g]).name
            return Finding(rule: label, message: "can never happen this way: a failure of \(name) comes after its work (\(reason)), but this rule fails it instead of the call, so the program keeps what the kernel would have released or done; write \"position\": \"after\" (the call runs, then reports the failure) or leave \"position\" out",
                           fix: "write \"position\": \"after\" (the call runs, then reports the failure), or leave \"position\" out (the catalog's)")
        }
        return nil
    }

    /// `find`, and how many earlier rules it compared a rule with (the test that keeps it
    /// linear: at most one comparison per rule when no rule takes every call).
    package static func findCountingWork(_ rules: [CompiledRule], labels: [String], after existing: [CompiledRule] = []) -> (findings: [Finding], comparisons: Int) {
        var out: [Finding] = []
        var comparisons = 0
        var firstByFingerprint: [String: String] = [:]
        /// Per alias group, the earlier rules that take every call on it, oldest first.
        var takingEveryCall: [Int: [(groups: Set<Int>, function: String, label: String)]] = [:]
        func remember(_ c: CompiledRule, label: String, fingerprint: String) {
            if firstByFingerprint[fingerprint] == nil { firstByFingerprint[fingerprint] = label }
            guard takesEveryCall(c) else { return }
            let groups = Set([c.group] + c.familyGroups)
            for g in groups { takingEveryCall[g, default: []].append((groups, c.function.name, label)) }
        }
        for c in existing {
            remember(c, label: c.rule.id.map { "rule \"\($0)\"" } ?? "a rule", fingerprint: fingerprint(c))
        }
        for (n, c) in rules.enumerated() {
            let label = n < labels.count ? labels[n] : "rule \(n + 1)"
            let groups = Set([c.group] + c.familyGroups)
            let print = fingerprint(c)
            if c.rule.when.probability == 0 {
                out.append(Finding(rule: label, message: "can never fire: its probability is 0", fix: "give a probability above 0, or drop the rule"))
            } else if c.position == ASPECTS_POSITION_INSTEAD.rawValue,
               let e = takingEveryCall[c.group]?.first(where: { comparisons += 1; return $0.groups.isSuperset(of: groups) }) {
                out.append(Finding(rule: label, message: "can never fire: \(e.label), added before it, is an instead rule on \(e.function) without conditions, so it answers every call first"))
            } else if let e = { comparisons += 1; return firstByFingerprint[print] }() {
                out.append(Finding(rule: label, message: "repeats \(e) exactly (same function, position, conditions and action): it adds nothing but a second count"))
            }
            remember(c, label: label, fingerprint: print)
        }
        return (out, comparisons)
    }

    /// An `after` rule that replaces the result of a call another `after` rule (earlier in the
    /// table) may replace too: every firing `after` runs, in table order, so where both fire the
    /// later result is the one returned and the earlier rule's firing — counted, logged — is
    /// never seen by the program. Rules that count the same calls (same conditions and scope)
    /// but fire on different `nth` cannot meet; any other pair can. Linear: per alias group,
    /// the replacing rules by how they count, and their call numbers.
    static func resultsReplacedTwice(_ rules: [CompiledRule], labels: [String], after existing: [CompiledRule] = []) -> [Finding] {
        /// group → how a rule counts → (nth → its rule; the first rule without nth)
        var earlier: [Int: [String: (numbered: [UInt64: String], unnumbered: String?)]] = [:]
        var out: [Finding] = []
        let all = existing.map { ($0, $0.rule.id.map { "rule \"\($0)\"" } ?? "a rule", false) }
            + rules.enumerated().map { n, c in (c, n < labels.count ? labels[n] : "rule \(n + 1)", true) }
        for (c, label, isNew) in all {
            guard c.position == ASPECTS_POSITION_AFTER.rawValue, c.actions & ASPECTS_ACTION_RETURN.rawValue != 0 else { continue }
            let groups = Set([c.group] + c.familyGroups)
            let counting = countingFingerprint(c)
            let nth = c.rule.when.nth
            var met: String?
            for g in groups.sorted() where met == nil {
                for (key, seen) in earlier[g, default: [:]] where met == nil {
                    if let nth, key == counting {
                        met = seen.numbered[nth] ?? seen.unnumbered
                    } else {
                        met = seen.unnumbered ?? seen.numbered.values.min()
                    }
                }
            }
            if isNew, let met {
                out.append(Finding(rule: label, message: "replaces the result of \(c.function.name) after the call, as \(met), added before it, may on the same call: every firing after rule runs, in table order, so there this rule's result is the one returned and the earlier one's is never seen (its firing is still counted)",
                                   fix: "make them fail different calls (the same conditions with another \"nth\"), or keep one"))
            }
            for g in groups {
                var entry = earlier[g, default: [:]][counting, default: ([:], nil)]
                if let nth { if entry.numbered[nth] == nil { entry.numbered[nth] = label } }
                else if entry.unnumbered == nil { entry.unnumbered = label }
                earlier[g, default: [:]][counting] = entry
            }
        }
        return out
    }

    /// What decides which calls a rule counts, and so its call numbers: everything but `nth`
    /// and the action.
    static func countingFingerprint(_ c: CompiledRule) -> String {
        let w = c.rule.when
        let m = c.matchers.map { "\($0.arg):\($0.kind):\($0.type.rawValue):\($0.a):\($0.b):\($0.pattern ?? "")" }
        return [
            "\(c.scope)", m.joined(separator: ","), "\(c.probability)", "\(w.seed.map(String.init) ?? "-")",
            "\(w.after ?? 0)/\(w.every ?? 0)/\(w.times ?? 0)", w.process ?? "", w.caller ?? "", w.site ?? "",
            "\(c.resultChecks):\(c.resultMin):\(c.resultMax):\(c.resultErrno):\(c.resultArg)", "\(c.rule.once.map { "\($0)" } ?? "")",
        ].joined(separator: "|")
    }

    /// An `instead` rule that fires on every call, for ever: no condition, no limit.
    static func takesEveryCall(_ c: CompiledRule) -> Bool {
        let w = c.rule.when
        return c.position == ASPECTS_POSITION_INSTEAD.rawValue && w.nth == nil && w.after == nil && w.every == nil && w.times == nil
            && w.probability == nil && w.args.isEmpty && w.process == nil && w.caller == nil && w.site == nil
            && w.context == nil
            && c.rule.once == nil && !c.rule.autoRemove
    }

    /// Everything that decides when and how a rule fires (not its id, comment or seed when drawn).
    static func fingerprint(_ c: CompiledRule) -> String {
        let w = c.rule.when
        let m = c.matchers.map { "\($0.arg):\($0.kind):\($0.type.rawValue):\($0.a):\($0.b):\($0.pattern ?? "")" }
        return [
            "\(Set([c.group] + c.familyGroups).sorted())", "\(c.position)", "\(c.actions)", "\(c.errnoValue)", "\(c.returnValue)",
            "\(c.delayNanoseconds)", "\(c.signalNumber)", "\(c.scope)", "\(c.flags)", m.joined(separator: ","),
            c.argSets.map { "\($0.index)=\($0.value)" }.joined(separator: ","), "\(c.errnoChoices)", "\(c.probability)",
            "\(w.seed.map(String.init) ?? "-")", "\(w.nth ?? 0)/\(w.after ?? 0)/\(w.every ?? 0)/\(w.times ?? 0)",
            w.process ?? "", w.caller ?? "", w.site ?? "", c.context?.description ?? "", "\(c.resultBytes ?? [])", "\(c.prototype?.declaration ?? "")",
            "\(c.resultChecks):\(c.resultMin):\(c.resultMax):\(c.resultErrno):\(c.resultArg)",
        ].joined(separator: "|")
    }

    /// A `process` glob that the command to run does not match, as the preload decides it
    /// (ProcessGlob: the executable the command runs): the rule can fire only in programs the
    /// command starts.
    package static func processMismatches(_ rules: [CompiledRule], labels: [String], program: String) -> [Finding] {
        var image: String?
        return rules.enumerated().compactMap { n, c in
            guard let glob = c.rule.when.process else { return nil }
            if image == nil { image = ProcessGlob.image(of: program) }
            guard !ProcessGlob.matches(glob, image: image!) else { return nil }
            let label = n < labels.count ? labels[n] : "rule \(n + 1)"
            if ProcessGlob.matches(glob, image: program) {
                return Finding(rule: label, message: "its process glob \"\(glob)\" matches the command \(program), but that runs as \(image!) (a link, or a script's interpreter), whose path the preload matches: it fires only in programs the command starts that match",
                               fix: "match the executable, e.g. \"\((image! as NSString).lastPathComponent)\"")
            }
            return Finding(rule: label, message: "its process glob \"\(glob)\" does not match the command \(program): it fires only in programs the command starts that match",
                           fix: "check the glob against the command's executable (\(image!)), or drop \"process\"")
        }
    }

    /// A `process` glob that matches no program one could start — none on PATH or in the
    /// current directory (and, for an absolute pattern, none of the files it names) runs as an
    /// executable it matches: `check` and `add`, which know no command, say so.
    package static func processGlobsMatchingNothing(_ rules: [CompiledRule], labels: [String],
                                                   searchPath: String? = ProcessInfo.processInfo.environment["PATH"],
                                                   directory: String = FileManager.default.currentDirectoryPath) -> [Finding] {
        var verdicts: [String: ProcessGlob.Verdict] = [:]
        return rules.enumerated().compactMap { n, c in
            guard let glob = c.rule.when.process else { return nil }
            let label = n < labels.count ? labels[n] : "rule \(n + 1)"
            if verdicts[glob] == nil {
                verdicts[glob] = ProcessGlob.verdict(glob, programs: ProcessGlob.knownPrograms(for: glob, searchPath: searchPath, directory: directory), searchPath: searchPath)
            }
            switch verdicts[glob]! {
            case .matches:
                return nil
            case .runsAsAnother(let path, let image):
                return Finding(rule: label, message: "its process glob \"\(glob)\" matches \(path), but that runs as \(image) (a link, or a script's interpreter), whose path the preload matches: the rule never fires there",
                               fix: "match the executable, e.g. \"\((image as NSString).lastPathComponent)\"")
            case .matchesNothing:
                return Finding(rule: label, message: "its process glob \"\(glob)\" matches no program on PATH or in the current directory\(glob.hasPrefix("/") ? ", nor any file it names" : ""): the rule fires only in a program whose executable's real path matches (a glob without '/': its file name)",
                               fix: "check the spelling; `aspectctl list` shows the programs that attached a table")
            }
        }
    }
}
