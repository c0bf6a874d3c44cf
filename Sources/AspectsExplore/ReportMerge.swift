import AspectsCore

/// `explore merge`: the campaign's report made from its shards' JSON reports (`--shard I/N`).
/// The shards must be the N parts of one plan (the same plan id), each once: the merged runs
/// are the unsharded campaign's, in its order, and its bugs are grouped over all of them.
/// What the shards saw alike (the baseline, the functions, the coverage) is taken from shard 1,
/// which ran its own baseline as every shard did.
extension ExploreReport {
    /// `shards`: each report with the file it came from, for errors.
    package static func merge(_ shards: [(source: String, report: ExploreReport)]) throws(AspectsError) -> ExploreReport {
        let fix = "give the JSON reports of every shard of one campaign: `explore --shard I/N --json FILE` for I from 1 to N, with the same options"
        guard !shards.isEmpty else { throw AspectsError(.usage, field: "merge", "no report to merge", fix: fix) }
        for s in shards where s.report.shard == nil {
            throw AspectsError(.invalidValue, location: s.source, "not a shard's report (its plan names no shard)", fix: fix)
        }
        let first = shards[0]
        for s in shards where s.report.planID != first.report.planID || s.report.plannedPoints != first.report.plannedPoints {
            throw AspectsError(.invalidValue, location: s.source,
                               "a shard of another plan: plan \(s.report.planID) of \(s.report.plannedPoints) point(s), \(first.source) is of plan \(first.report.planID) of \(first.report.plannedPoints)",
                               fix: "merge shards of one campaign (the same program, options and seed; a plan changes when the program's calls do)")
        }
        let count = first.report.shard!.count
        for s in shards where s.report.shard!.count != count {
            throw AspectsError(.invalidValue, location: s.source, "shard \(s.report.shard!) of \(s.report.shard!.count), \(first.source) is one of \(count)", fix: fix)
        }
        var bySlot: [Int: String] = [:]
        for s in shards {
            let i = s.report.shard!.index
            if let other = bySlot[i] {
                throw AspectsError(.invalidValue, location: s.source, "shard \(i)/\(count) twice: \(other) is shard \(i)/\(count) too", fix: fix)
            }
            bySlot[i] = s.source
        }
        let missing = (1...count).filter { bySlot[$0] == nil }
        guard missing.isEmpty else {
            throw AspectsError(.invalidValue, field: "merge", "shard(s) \(missing.map { "\($0)/\(count)" }.joined(separator: ", ")) missing",
                               fix: fix)
        }
        var owner: [Int: String] = [:]
        var results: [ExploreResult] = []
        for s in shards {
            for r in s.report.results {
                if let other = owner[r.index] {
                    throw AspectsError(.invalidValue, location: s.source, "run \(r.index) (\(r.point.name)) is in \(other) too: the shards overlap", fix: fix)
                }
                guard s.report.shard!.owns(r.index) else {
                    throw AspectsError(.invalidValue, location: s.source, "run \(r.index) (\(r.point.name)) is not shard \(s.report.shard!)'s", fix: fix)
                }
                owner[r.index] = s.source
                results.append(r)
            }
        }
        guard results.count == first.report.plannedPoints else {
            let short = shards.filter { $0.report.results.count != $0.report.shard!.size(of: first.report.plannedPoints) }.map(\.source)
            throw AspectsError(.invalidValue, field: "merge",
                               "the shards hold \(results.count) of the plan's \(first.report.plannedPoints) run(s): \(short.joined(separator: ", ")) did not run all of theirs",
                               fix: "run those shards again to their end (with --resume after an interruption)")
        }
        results.sort { $0.index < $1.index }
        var merged = shards.min { $0.report.shard!.index < $1.report.shard!.index }!.report
        merged.results = results
        merged.plan.points = results.map(\.point)
        merged.shard = nil
        merged.seconds = shards.map(\.report.seconds).max() ?? 0
        for s in shards.dropFirst() { merged.locations.merge(s.report.locations) { a, _ in a } }
        if let b = merged.baselines {
            var differences = b.differences
            for s in shards.dropFirst() { for d in s.report.baselines?.differences ?? [] where !differences.contains(d) { differences.append(d) } }
            merged.baselines = BaselineComparison(runs: b.runs, differences: differences)
        }
        return merged
    }
}
