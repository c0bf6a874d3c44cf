import AspectsCore

/// `explore --shard I/N`: the I-th of N parts of a plan. The plan is made whole, the same on
/// every machine, then point k (0-based, in plan order) goes to shard k mod N + 1: every point
/// in exactly one shard, and shard sizes differ by one at most. In a suite the plans of its
/// tests are one sequence of (test, point) pairs: a test's shard has the `offset` of its first
/// point in it (`SuiteCampaign`), so that the pairs, not whole tests, are dealt round.
package struct ExploreShard: Sendable, Hashable, CustomStringConvertible {
    /// From 1.
    package var index: Int
    package var count: Int
    /// The plan's first point's place among the suite's points (0 for a lone campaign).
    package var offset = 0

    package init(index: Int, count: Int, offset: Int = 0) {
        self.index = index
        self.count = count
        self.offset = offset
    }

    /// Parses `I/N` (1 ≤ I ≤ N); `option` names where it came from in errors.
    package init(parsing text: String, option: String = "--shard") throws(AspectsError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]) else {
            throw AspectsError(.invalidValue, field: option, "\(text) is not I/N",
                               fix: "give the shard's number and the number of shards, as 2/4 (the second of four)")
        }
        guard n >= 1, i >= 1, i <= n else {
            throw AspectsError(.invalidValue, field: option, "\(text): the shard number must be from 1 to the number of shards (\(max(n, 1)))",
                               fix: n >= 1 ? "give 1/\(n) to \(n)/\(n)" : "give at least one shard, as 1/1")
        }
        self.init(index: i, count: n)
    }

    /// Whether the plan's point `k` (0-based, in plan order) is this shard's.
    package func owns(_ k: Int) -> Bool { (k + offset) % count == index - 1 }

    /// This shard's points of a plan of `points` points, in plan order.
    package func indices(of points: Int) -> [Int] { (0..<max(0, points)).filter(owns) }

    /// How many of a plan of `points` points are this shard's (without listing them: a
    /// report read back may claim any number).
    package func size(of points: Int) -> Int {
        guard points > 0 else { return 0 }
        // the points before this plan's first, in the same round, are the offset's
        let first = ((index - 1 - offset) % count + count) % count
        return first < points ? (points - 1 - first) / count + 1 : 0
    }

    package var description: String { "\(index)/\(count)" }
}
