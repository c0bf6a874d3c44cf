/// A campaign's findings made sure of before they are reported: each bug (`ExploreBug`) is run
/// again with its first fault point — or, when that one ends otherwise, its next, up to
/// `attempts` — and is `reproduced` when the re-run is the same bug (the same crash place or
/// symptom), `flaky` otherwise. The other points of a bug are not run again: that they are
/// the same bug is what grouping them said, and a campaign of 285 findings of one bug would
/// spend most of its time re-running them.
extension ExploreCampaign {
    /// Points of one bug tried before it is called flaky.
    static let reproductionAttempts = 3

    func confirm(_ all: inout [ExploreResult], baseline: RunRecord, timeout: Double) throws(AspectsError) {
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
        var again = try runPoint(r.index, r.point, baseline: baseline, timeout: timeout, name: "again-\(r.index)")
        var runs = [again]
        ExploreReport.symbolizeCrashStacks(&runs)
        again = runs[0]
        r.reproduced = again.outcome == r.outcome
            && ExploreBug.cause(of: again, baseline: baseline).key == ExploreBug.cause(of: r, baseline: baseline).key
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
