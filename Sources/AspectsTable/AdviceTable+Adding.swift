#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI
import AspectsCore
import AspectsRules

// Adding compiled rules, all or none.
extension AdviceTable {
    /// A rule as added: its id (generated where the rule had none) and, for rules that draw,
    /// the seed stored (drawn here when the rule gave none: print it so the run can be repeated).
    package struct Added: Sendable, Equatable {
        package var id: String
        package var seed: UInt64?
        package var seedWasDrawn: Bool
        /// `id@serial`: what `remove` takes to remove exactly this rule.
        package var token: RuleToken
    }

    /// Adds compiled rules, all or none, and returns a token per rule that removes exactly it.
    package func addReturningTokens(_ rules: [CompiledRule]) throws(AspectsError) -> [AspectToken] {
        try addRules(rules).map { AspectToken(token: $0.token, table: self) }
    }

    /// Refuses at once a batch of `count` rules that cannot fit, before anything costly is
    /// done for it (compiling the table's rules again to find conflicts). Advisory: read
    /// without the lock, so `addRules` checks again under it.
    package func checkRoom(for count: Int) throws(AspectsError) {
        let usable = (0..<ruleCapacity).filter {
            let state = rule($0).pointee.state
            return state == ASPECTS_RULE_FREE.rawValue || state == ASPECTS_RULE_REMOVED.rawValue
        }.count
        if usable < count { throw tableFull(asking: count) }
    }

    private func tableFull(asking count: Int) -> AspectsError {
        let active = (0..<ruleCapacity).filter { rule($0).pointee.state == ASPECTS_RULE_ACTIVE.rawValue }.count
        return AspectsError(.tableFull, field: "--table", "table \"\(name)\" has room for \(ruleCapacity) rules, \(active) are active and \(count) more were asked for",
                            fix: "remove rules, or create a larger table (`aspectctl create --rules N`)")
    }

    /// Adds compiled rules, all or none. Returns their ids (generated where the rule had none).
    @discardableResult
    package func add(_ rules: [CompiledRule]) throws(AspectsError) -> [String] {
        try addRules(rules).map(\.id)
    }

    /// Adds compiled rules, all or none.
    package func addRules(_ compiledRules: [CompiledRule]) throws(AspectsError) -> [Added] {
        let added = try write { () throws(AspectsError) -> [Added] in
            let (rules, newPrototypes) = try planPrototypes(compiledRules)
            // Everything is checked before the first store.
            var ids: [String] = []
            var taken = Set((0..<ruleCapacity).filter { rule($0).pointee.state == ASPECTS_RULE_ACTIVE.rawValue }.map { ruleID(rule($0)) })
            var number = header.pointee.next_rule_number
            // Words any attached process could have written: impossible values stop the add.
            try checkPlausible(number, "next rule number")
            try checkPlausible(header.pointee.next_serial, "next rule serial")
            for (n, c) in rules.enumerated() {
                if let id = c.rule.id {
                    guard !taken.contains(id) else {
                        throw AspectsError(.duplicateID, rule: "rule \"\(id)\"", field: "id", "the table already has a rule \"\(id)\"",
                                           fix: "remove it first (`aspectctl remove \(id)`) or choose another id")
                    }
                    ids.append(id)
                } else {
                    while taken.contains("r\(number)") { number += 1 }
                    ids.append("r\(number)")
                    number += 1
                }
                taken.insert(ids[n])
            }
            var free = (0..<ruleCapacity).filter { rule($0).pointee.state == ASPECTS_RULE_FREE.rawValue }
            if free.count < rules.count {
                // Reuse the slots of removed rules, oldest removal first.
                free += (0..<ruleCapacity).filter { rule($0).pointee.state == ASPECTS_RULE_REMOVED.rawValue }
                    .sorted { rule($0).pointee.removed_ns < rule($1).pointee.removed_ns }
            }
            guard free.count >= rules.count else { throw tableFull(asking: rules.count) }
            var perGroup: [Int: Int] = [:]
            for c in rules { for g in [c.group] + c.familyGroups { perGroup[g, default: 0] += 1 } }
            for (group, extra) in perGroup {
                let have = currentSlots(of: group).count
                if have + extra > Int(ASPECTS_GROUP_RULES) {
                    let fn = group < catalog.groups.count ? catalog.primary(of: catalog.groups[group]).name
                        : rules.first { $0.group == group }?.rule.symbol ?? "?"
                    throw AspectsError(.groupFull, field: "symbol", "\(fn) would have \(have + extra) rules; one function holds at most \(ASPECTS_GROUP_RULES)",
                                       fix: "remove some of its rules or combine them")
                }
            }
            let threadScoped = (0..<ruleCapacity).filter {
                rule($0).pointee.state == ASPECTS_RULE_ACTIVE.rawValue && rule($0).pointee.scope == ASPECTS_SCOPE_THREAD.rawValue
            }.count + rules.filter { $0.scope == ASPECTS_SCOPE_THREAD.rawValue }.count
            if threadScoped > Int(ASPECTS_THREAD_RULES) {
                throw AspectsError(.limit, field: "scope", "a table holds at most \(ASPECTS_THREAD_RULES) thread-scoped rules (each thread counts them in a fixed table)",
                                   fix: "remove thread-scoped rules, or use scope \"process\"")
            }
            // Prototype entries first (their serials precede their rules', which is how `list`
            // tells an entry's registration from a later reuse), then the slots, then the
            // group lists and armed bytes.
            registerPrototypes(rules, newEntries: newPrototypes)
            WriterStop.at("registered")
            var added: [Added] = []
            var touched: [Int: [Int]] = [:]
            for (n, c) in rules.enumerated() {
                let slot = free[n]
                var seed = c.seed
                let drawn = seed == nil && RuleCompiler.needsSeed(c)
                if drawn { seed = UInt64.random(in: 1...UInt64(UInt32.max)) }
                let serial = fill(slot: slot, with: c, id: ids[n], seed: seed ?? 0)
                batchAdded.append(slot)
                if n == rules.count / 2 { WriterStop.at("filling") }
                for g in [c.group] + c.familyGroups { touched[g, default: currentSlots(of: g)].append(slot) }
                added.append(Added(id: ids[n], seed: RuleCompiler.needsSeed(c) ? seed : nil, seedWasDrawn: drawn,
                                   token: RuleToken(id: ids[n], serial: serial)))
            }
            for (group, slots) in touched.sorted(by: { $0.key < $1.key }) { publish(group, slots) }
            header.pointee.next_rule_number = number
            return added
        }
        // On a --live-prototypes table a prototype rule holds for each running process's
        // very next call once this returns (its watcher has applied it, or `add` says not).
        lateLivePrototypes = compiledRules.contains(where: { $0.prototype != nil }) ? awaitLivePrototypes() : []
        return added
    }

    /// A counter the writer continues from must be one that could have been reached.
    func checkPlausible(_ value: UInt64, _ what: String) throws(AspectsError) {
        guard value < (1 << 48) else {
            throw AspectsError(.badTable, field: "--table", "table \"\(name)\" is damaged: its \(what) is \(value), which no table reaches",
                               fix: "destroy and re-create it (`aspectctl destroy --table \(name)`)")
        }
    }
}
