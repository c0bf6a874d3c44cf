#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI
import AspectsCore
import AspectsRules

// The writer's batch: the lock, repair of a killed writer's batch, publishing groups.
extension AdviceTable {
    /// Runs `body` as the only writer, as one batch (aspects_abi.h, enum aspects_rule_state):
    /// new rules are written as ADDING and removed ones marked REMOVING, both with the batch's
    /// number; one release store of committed_batch makes all of it count at once; then the
    /// slots are normalized (ACTIVE / REMOVED) and the group lists trimmed. A writer killed at
    /// any point leaves writer_pid set, and the next writer's repair() rolls its batch back
    /// (not committed) or forward (committed): readers and `list` see a batch whole or not at all.
    func write<T>(_ body: () throws(AspectsError) -> T) throws(AspectsError) -> T {
        try TableLock.acquire(fd, name.path)
        defer { System.unlock(fd) }
        // Watchers (--live-prototypes) apply a prototype change once it is whole: after the
        // commit, or the repair of a failed batch. A writer killed before its wake left one
        // owed: its successor, which repairs, wakes them too.
        let prototypesBefore = aspects_load_acquire_u64(field(header, \.proto_generation))
        let deadWriter = header.pointee.writer_pid != 0
        defer {
            if deadWriter || aspects_load_acquire_u64(field(header, \.proto_generation)) != prototypesBefore {
                aspects_wake_prototype_watchers(field(header, \.proto_generation))
            }
        }
        if deadWriter { repair() }
        header.pointee.writer_pid = UInt32(bitPattern: System.pid)
        batch = aspects_load_acquire_u64(field(header, \.committed_batch)) &+ 1
        batchAdded = []
        batchRemoved = []
        do throws(AspectsError) {
            collectFiredAutoRemoveRules()
            let result = try body()
            WriterStop.at("before-commit")
            aspects_store_release_u64(field(header, \.committed_batch), batch)
            _ = aspects_fetch_add_u64(field(header, \.generation), 1)
            WriterStop.at("committed")
            normalize()
            header.pointee.writer_pid = 0
            return result
        } catch {
            // Validation failed before any store (add and remove check everything first); a
            // partial batch left by a failure after the first store is undone like a dead one.
            repair()
            header.pointee.writer_pid = 0
            throw error
        }
    }

    /// After the commit: ADDING slots become ACTIVE, REMOVING ones REMOVED, removed slots
    /// leave their group lists, and prototype entries lose the rules that left.
    func normalize() {
        for slot in batchAdded { setState(slot, ASPECTS_RULE_ACTIVE) }
        for (n, slot) in batchRemoved.enumerated() {
            setState(slot, ASPECTS_RULE_REMOVED)
            if n == batchRemoved.count / 2 { WriterStop.at("normalizing") }
        }
        let touchedGroups = Set(batchRemoved.flatMap { self.groups(ofSlot: $0) })
        for g in touchedGroups.sorted() where g < groupCapacity {
            publish(g, currentSlots(of: g).filter { !batchRemoved.contains($0) })
        }
        // Prototype entries: each counts the live rules that name it, recounted from the slots
        // (the counts are words any process can write); an entry left without rules is freed.
        let isPrototypeRule = { (slot: Int) in self.rule(slot).pointee.named_export & Self.prototypeFlag != 0 }
        if batchAdded.contains(where: isPrototypeRule) || batchRemoved.contains(where: isPrototypeRule) { recountPrototypes() }
        batchAdded = []
        batchRemoved = []
    }

    /// Changes a slot's state under its seqlock.
    func setState(_ slot: Int, _ state: aspects_rule_state) {
        let r = rule(slot)
        let seq = field(r, \.seq)
        let s = seq.pointee | 1
        aspects_store_release_u32(seq, s)
        aspects_fence_release()
        r.pointee.state = state.rawValue
        aspects_store_release_u32(seq, s &+ 1)
    }

    /// Brings the table back to a consistent state after a writer died (or failed) mid-batch:
    /// its batch is rolled back if it was not committed and forward if it was, every group list
    /// and armed byte is rebuilt from the slots that are live, and prototype entries are
    /// recounted from the rules that name them. Only called under the write lock.
    func repair() {
        let committed = aspects_load_acquire_u64(field(header, \.committed_batch))
        let now = System.realtimeNanoseconds()
        for slot in 0..<ruleCapacity {
            let r = rule(slot)
            let seq = field(r, \.seq)
            let odd = seq.pointee & 1 == 1
            let state = r.pointee.state, done = r.pointee.batch <= committed && r.pointee.batch != 0
            var next: UInt32? = nil
            switch state {
            case ASPECTS_RULE_ADDING.rawValue: next = done && !odd ? ASPECTS_RULE_ACTIVE.rawValue : ASPECTS_RULE_FREE.rawValue
            case ASPECTS_RULE_REMOVING.rawValue: next = done ? ASPECTS_RULE_REMOVED.rawValue : ASPECTS_RULE_ACTIVE.rawValue
            case ASPECTS_RULE_ACTIVE.rawValue, ASPECTS_RULE_REMOVED.rawValue: next = odd ? state : nil
            default: next = odd ? ASPECTS_RULE_FREE.rawValue : nil // half-written: never counted
            }
            // An ADDING slot whose seqlock is odd was being filled or normalized; filled slots
            // of a committed batch are whole (the commit comes after every fill).
            if state == ASPECTS_RULE_ADDING.rawValue && odd && done { next = ASPECTS_RULE_ACTIVE.rawValue }
            guard let n = next else { continue }
            aspects_store_release_u32(seq, seq.pointee | 1)
            aspects_fence_release()
            r.pointee.state = n
            if n == ASPECTS_RULE_ACTIVE.rawValue { r.pointee.removed_ns = 0; r.pointee.removed_by_pid = 0 }
            if n == ASPECTS_RULE_REMOVED.rawValue && r.pointee.removed_ns == 0 { r.pointee.removed_ns = now }
            aspects_store_release_u32(seq, (seq.pointee | 1) &+ 1)
        }
        // One pass over the slots (reading fields in place: a slot is 1,280 bytes), then each
        // group's list in serial order.
        var members: [Int: [(serial: UInt64, slot: Int)]] = [:]
        for slot in 0..<ruleCapacity {
            let r = rule(slot)
            if field(r, \.state).pointee == ASPECTS_RULE_ACTIVE.rawValue {
                for g in groups(ofSlot: slot) { members[g, default: []].append((field(r, \.serial).pointee, slot)) }
            }
        }
        for group in 0..<groupCapacity {
            let ordered = (members[group] ?? []).sorted { $0.serial < $1.serial }.map(\.slot)
            let l = list(group)
            if l.pointee.count == 0 && ordered.isEmpty && l.pointee.seq & 1 == 0 && armed(group).pointee == 0 { continue }
            publish(group, Array(ordered.prefix(Int(ASPECTS_GROUP_RULES))))
        }
        recountPrototypes()
        _ = aspects_fetch_add_u64(field(header, \.generation), 1)
        batchAdded = []
        batchRemoved = []
    }

    /// autoRemove rules that fired are already dead to every reader (their claim is set);
    /// under the write lock they leave the table for good, credited to the pid that fired them.
    func collectFiredAutoRemoveRules() {
        let fired = (0..<ruleCapacity).filter {
            let r = rule($0).pointee
            return r.state == ASPECTS_RULE_ACTIVE.rawValue && r.flags & ASPECTS_RULE_AUTOREMOVE.rawValue != 0
                && aspects_load_acquire_u32(field(rule($0), \aspects_rule.claim)) != 0
        }
        guard !fired.isEmpty else { return }
        markRemoving(fired, by: { UInt32(aspects_load_acquire_u32(self.field(self.rule($0), \aspects_rule.claim))) })
    }

    /// Replaces a group's rule list (seqlock write) and sets its armed byte accordingly.
    func publish(_ group: Int, _ slots: [Int]) {
        let l = list(group)
        let seq = field(l, \.seq)
        let s = seq.pointee | 1 // odd, even if a dead writer left it odd already
        aspects_store_release_u32(seq, s)
        aspects_fence_release()
        for (i, slot) in slots.enumerated() { aspects_list_set_rule(l, UInt32(i), UInt16(slot)) }
        l.pointee.count = UInt32(slots.count)
        aspects_store_release_u32(seq, s &+ 1)
        aspects_store_release_u8(armed(group), slots.isEmpty ? 0 : 1)
        if group == catalog.function(named: "dlopen")?.groupIndex || group == catalog.function(named: "dlmopen")?.groupIndex { updateDlopenArm() }
    }

    /// The groups a slot's rule applies to: its own, and a family rule's others (read with
    /// the same bounds the preload uses, aspects_rule_in_group).
    func groups(ofSlot slot: Int) -> [Int] {
        let r = rule(slot)
        var out = [Int(field(r, \.group).pointee)]
        guard field(r, \.flags).pointee & ASPECTS_RULE_FAMILY.rawValue != 0 else { return out }
        let off = Int(field(r, \.family_off).pointee), n = Int(field(r, \.family_len).pointee)
        guard n <= Int(ASPECTS_MAX_FAMILY), off % 2 == 0, off + 2 * n <= Int(ASPECTS_RULE_STRINGS_SIZE) else { return out }
        let strings = UnsafeRawPointer(field(r, \.strings))
        for i in 0..<n { out.append(Int(strings.loadUnaligned(fromByteOffset: off + 2 * i, as: UInt16.self))) }
        return out.filter { $0 < groupCapacity }
    }

    func currentSlots(of group: Int) -> [Int] {
        let l = list(group)
        let n = min(Int(l.pointee.count), Int(ASPECTS_GROUP_RULES))
        return (0..<n).map { Int(aspects_list_rule(l, UInt32($0))) }.filter { $0 < ruleCapacity }
    }

    func activeSlot(id: String) -> Int? {
        (0..<ruleCapacity).first { rule($0).pointee.state == ASPECTS_RULE_ACTIVE.rawValue && ruleID(rule($0)) == id }
    }

    func ruleID(_ r: UnsafeMutablePointer<aspects_rule>) -> String {
        withUnsafeBytes(of: r.pointee.id) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
