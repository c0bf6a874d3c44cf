#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI
import AspectsCore
import AspectsRules

// Removing rules by id or symbol.
extension AdviceTable {
    /// Removes rules by id. Once this returns, no call that starts afterwards sees them.
    @discardableResult
    package func remove(ids: [String]) throws(AspectsError) -> [String] {
        try write { () throws(AspectsError) -> [String] in
            var slots: [Int] = []
            for text in ids {
                // `id@serial` removes exactly that rule; a plain id the active rule of that id.
                let token = RuleToken(text)
                let id = token?.id ?? text
                let slot = activeSlot(id: id)
                if let token, let slot, rule(slot).pointee.serial != token.serial {
                    throw AspectsError(.noSuchRule, rule: "rule \"\(text)\"",
                                       "rule \(token) is gone; the active rule \"\(id)\" is a newer one (\(RuleToken(id: id, serial: rule(slot).pointee.serial)))",
                                       fix: "remove it by its own token if that is what you mean; a token names one rule for good")
                }
                guard let slot else {
                    let known = (0..<ruleCapacity).filter { rule($0).pointee.state == ASPECTS_RULE_ACTIVE.rawValue }.map { ruleID(rule($0)) }
                    throw AspectsError(.noSuchRule, rule: "rule \"\(text)\"", "table \"\(name)\" has no active rule \"\(id)\"\(token == nil ? "" : " (\(text) was removed)")",
                                       fix: known.isEmpty ? "the table has no active rules" : "active rules: \(known.sorted().joined(separator: ", "))")
                }
                slots.append(slot)
            }
            markRemoving(slots)
            return ids
        }
    }

    /// Removes every active rule (or those on one function's alias group). Returns their ids.
    @discardableResult
    package func removeAll(symbol: String? = nil) throws(AspectsError) -> [String] {
        var group: Int?
        if let symbol {
            guard let f = catalog.function(named: symbol) else {
                throw AspectsError(.unknownSymbol, field: "--symbol", "\(symbol) is not in the catalog")
            }
            group = f.groupIndex
        }
        return try write { () throws(AspectsError) -> [String] in
            let slots = (0..<ruleCapacity).filter {
                rule($0).pointee.state == ASPECTS_RULE_ACTIVE.rawValue && (group == nil || aspects_rule_in_group(rule($0), UInt32(group!)) != 0)
            }
            let ids = slots.map { ruleID(rule($0)) }
            markRemoving(slots)
            return ids
        }
    }

    /// Marks slots REMOVING in this batch: they take part in calls until the commit, and
    /// leave their group lists when the batch is normalized.
    func markRemoving(_ slots: [Int], by remover: ((Int) -> UInt32)? = nil) {
        let now = System.realtimeNanoseconds()
        for (n, slot) in slots.enumerated() where !batchRemoved.contains(slot) {
            let r = rule(slot)
            let seq = field(r, \.seq)
            let s = seq.pointee | 1
            aspects_store_release_u32(seq, s)
            aspects_fence_release()
            r.pointee.batch = batch
            r.pointee.state = ASPECTS_RULE_REMOVING.rawValue
            r.pointee.removed_ns = now
            r.pointee.removed_by_pid = remover?(slot) ?? UInt32(bitPattern: System.pid)
            aspects_store_release_u32(seq, s &+ 1)
            batchRemoved.append(slot)
            if n == slots.count / 2 { WriterStop.at("removing") }
        }
    }
}
