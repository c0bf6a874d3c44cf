import Foundation
import AspectsCore

/// A campaign's findings made sure of before they are reported: each bug (`ExploreBug`) is run
/// again with its first fault point — or, when that one ends otherwise, its next, up to
/// `attempts` — and is `reproduced` when the re-run is the same bug (the same crash place or
/// symptom), `flaky` otherwise. The other points of a bug are not run again: that they are
/// the same bug is what grouping them said, and a campaign of 285 findings of one bug would
/// spend most of its time re-running them. A hang is first run again with a longer limit
/// (`RunTimeouts.confirmation`): one that ends then was a slow run, and takes that run's outcome.
extension ExploreCampaign {
    /// Points of one bug tried before it is called flaky.
    static let reproductionAttempts = 3

    func confirm(_ all: inout [ExploreResult], baseline: RunRecord, timeout: Double) throws(AspectsError) {
        for k in all.indices where all[k].outcome == .hang { try confirmHang(&all[k], baseline: baseline, timeout: timeout) }
        let position = Dictionary(uniqueKeysWithValues: all.indices.map { (all[$0].index, $0) })
        for bug in ExploreBug.group(all.filter { $0.outcome.isFinding }, baseline: baseline) {
            for r in bug.findings.prefix(Self.reproductionAttempts) {
                let k = position[r.index]!
                try reproduce(&all[k], baseline: baseline, timeout: timeout)
                if all[k].reproduced == true { break }
            }
        }
    }

    /// Runs finding `r` once more with the same fault and names its reproducer's fault: a k-th
    /// call point's reproducer names the same call by its site (`locate`), kept when it ends
    /// the same way (the site's count can differ from run to run where processes race).
    func reproduce(_ r: inout ExploreResult, baseline: RunRecord, timeout: Double) throws(AspectsError) {
        // a hang still running at the longer limit was run again already (`confirmHang`)
        if r.outcome != .hang {
            var runs = [try runPoint(r.index, r.point, baseline: baseline, timeout: timeout, name: "again-\(r.index)")]
            ExploreReport.symbolizeCrashStacks(&runs)
            r.reproduced = runs[0].outcome == r.outcome
                && ExploreBug.cause(of: runs[0], baseline: baseline).key == ExploreBug.cause(of: r, baseline: baseline).key
        }
        var repro = r.point
        if repro.site == nil, repro.context == nil, let located = try locate(r, timeout: timeout),
           try runPoint(r.index, located, baseline: baseline, timeout: timeout, name: "repro-\(r.index)").outcome == r.outcome {
            repro = located
        }
        r.reproducerPoint = repro
        if let file = r.reproducer {
            try OutputFile.write("[" + repro.ruleJSON + "]\n", to: file, option: "--out")
        }
    }
}

extension ExploreCampaign {
    /// Runs a hang again with the longer limit: still running, it is a hang, reproduced; ended,
    /// it was slow (a loaded machine) and is what that run was — its finding's files go
    /// when that is no finding.
    func confirmHang(_ r: inout ExploreResult, baseline: RunRecord, timeout: Double) throws(AspectsError) {
        let longer = try runPoint(r.index, r.point, baseline: baseline, timeout: RunTimeouts.confirmation(timeout), name: "longer-\(r.index)")
        if longer.outcome == .hang {
            r.reproduced = true
            return
        }
        removeWork(Self.runName(r.index))
        if !longer.outcome.isFinding, let file = r.reproducer { unlink(file) }
        var slow = longer
        slow.reproducer = longer.outcome.isFinding ? (r.reproducer ?? longer.reproducer) : nil
        r = slow
    }
}
