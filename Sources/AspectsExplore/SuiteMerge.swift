import AspectsCore

/// `explore merge` of a suite's shards (`explore --tests … --shard I/N --json FILE`): every
/// shard planned every test, and ran its share of the suite's (test, point) pairs; each test's
/// campaign is made whole from its shards' parts (`ExploreReport.merge`), and the bugs are
/// grouped across the tests again.
extension SuiteReport {
    package static func merge(_ shards: [(source: String, report: SuiteReport)]) throws(AspectsError) -> SuiteReport {
        let fix =
            "give the JSON reports of every shard of one suite: `explore --tests … --shard I/N --json FILE` for I from 1 to N, with the same options"
        guard let first = shards.first else { throw AspectsError(.usage, field: "merge", "no report to merge", fix: fix) }
        for s in shards where s.report.shard == nil {
            throw AspectsError(.invalidValue, location: s.source, "not a shard's report (it names no shard)", fix: fix)
        }
        let count = first.report.shard!.count
        var seen: [Int: String] = [:]
        for s in shards {
            if s.report.shard!.count != count {
                throw AspectsError(
                    .invalidValue, location: s.source, "shard \(s.report.shard!), \(first.source) is one of \(count)", fix: fix)
            }
            if let other = seen[s.report.shard!.index] {
                throw AspectsError(
                    .invalidValue, location: s.source, "shard \(s.report.shard!) twice: \(other) is that shard too", fix: fix)
            }
            seen[s.report.shard!.index] = s.source
            if s.report.tests.map(\.test.name) != first.report.tests.map(\.test.name) {
                throw AspectsError(.invalidValue, location: s.source, "another list of tests than \(first.source)'s", fix: fix)
            }
        }
        let missing = (1...count).filter { seen[$0] == nil }
        guard missing.isEmpty else {
            throw AspectsError(
                .invalidValue, field: "merge", "shard(s) \(missing.map { "\($0)/\(count)" }.joined(separator: ", ")) missing", fix: fix)
        }
        var merged = first.report
        merged.shard = nil
        merged.seconds = shards.map(\.report.seconds).max() ?? 0
        for k in merged.tests.indices {
            let statuses = shards.map { $0.report.tests[k].status.name }
            guard Set(statuses).count == 1 else {
                let said = zip(shards, statuses).map { "\($0.0.source): \($0.1)" }.joined(separator: ", ")
                throw AspectsError(
                    .invalidValue, field: "merge",
                    "test \(merged.tests[k].test.name) went otherwise in the shards (\(said)): its baselines differ from machine to machine",
                    fix: "make the test's runs independent of the machine, or leave it out of the list")
            }
            guard merged.tests[k].status == .explored else { continue }
            merged.tests[k].report = try ExploreReport.merge(
                shards.map { ($0.source + " (test \(merged.tests[k].test.name))", $0.report.tests[k].report!) })
        }
        return merged
    }
}
