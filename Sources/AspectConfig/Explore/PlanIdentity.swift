/// A plan's identity: the same points in the same order give the same id, so shards of one
/// campaign, and a campaign and its journal, can tell that they run one plan. The seed and the
/// options count through the points they pick: two plans of the same points run the same runs.
extension ExplorePlan {
    /// 16 hex digits: FNV-1a of every point's name, in plan order.
    public var id: String {
        let hex = String(FNV1a.hash("aspects plan 1\n" + points.map(\.name).joined(separator: "\n")), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
