/// A fault point's name: what it fails, as one word that shards, journals and merged reports
/// compare — `write@ledger+0x1a2b#3/error/EIO` (the 3rd call from that site fails with EIO),
/// `malloc#7/persistent/ENOMEM` (the 7th call of the process, any site), `read@ledger+0x40#1/short`
/// (a short transfer names no errno).
extension FaultPoint {
    public var name: String {
        function + (site.map { "@" + $0.description } ?? "") + "#\(nth)/" + kind.rawValue + (errno.isEmpty ? "" : "/" + errno)
    }
}
