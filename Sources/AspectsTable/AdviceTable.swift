#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI
import AspectsCore
import AspectsRules

/// The advice table in shared memory: created, written and read by aspectctl and the Swift
/// API, read without locks by libaspects.so in every advised process.
///
/// Writers hold `flock(LOCK_EX)` for every change and validate everything before the first
/// store, so a failed `add` leaves the table as it was. A writer that dies mid-update leaves
/// `writer_pid` set; the next writer sees it under the lock and repairs the table
/// (docs/ARCHITECTURE.md §3).
package final class AdviceTable {
    package let name: TableName
    package let catalog: Catalog
    /// The anchor file (writers flock it); -1 while a new table is still being made.
    private(set) var fd: Int32
    /// The attached segment (aspects_abi.h: where a table lives) and its fixed size.
    package let base: UnsafeMutableRawPointer
    package let size: Int
    /// The batch being written (under the lock), and the slots it adds and removes.
    var batch: UInt64 = 0
    var batchAdded: [Int] = []
    var batchRemoved: [Int] = []

    /// The geometry as validated when the table was opened (or made). Every address is
    /// computed from this copy, never from the header again: any attached process can write
    /// the header, and a long-running reader (`events --follow`, explore) must not follow a
    /// rewritten offset out of the segment.
    struct Geometry {
        var groups = 0, rules = 0, events = 0, stats = 0
        var armed = 0, lists = 0, slots = 0, ring = 0, statistics = 0, protos = 0, sources = 0
    }
    private(set) var geometry = Geometry()

    package var header: UnsafeMutablePointer<aspects_table_header> { aspects_header(base) }

    private init(name: TableName, catalog: Catalog, fd: Int32, base: UnsafeMutableRawPointer, size: Int) {
        self.name = name
        self.catalog = catalog
        self.fd = fd
        self.base = base
        self.size = size
    }

    deinit {
        aspects_segment_detach(base)
        if fd >= 0 { System.close(fd) }
    }

    package var ruleCapacity: Int { geometry.rules }
    /// The running processes the last addRules waited for in vain (awaitLivePrototypes).
    package private(set) var lateLivePrototypes: [Attachment] = []
    /// Made with --live-prototypes: each attached process keeps a thread that applies prototype
    /// rules as they come (without it, at the process's next advised call).
    package var livePrototypes: Bool { header.pointee.options & ASPECTS_TABLE_LIVE_PROTOTYPES != 0 }
    package var eventCapacity: Int { geometry.events }
    var groupCapacity: Int { geometry.groups }
    var statCapacity: Int { geometry.stats }

    // MARK: - create, open, destroy

    package static func create(_ name: TableName, ruleCapacity: Int = Int(ASPECTS_DEFAULT_RULE_CAPACITY),
                              eventCapacity: Int = Int(ASPECTS_DEFAULT_EVENT_CAPACITY),
                              statCapacity: Int = Int(ASPECTS_DEFAULT_STAT_CAPACITY),
                              sharedWithGroup group: UInt32? = nil, livePrototypes: Bool = false,
                              catalog: Catalog = .builtIn) throws(AspectsError) -> AdviceTable {
        guard (1...Int(ASPECTS_MAX_RULE_CAPACITY)).contains(ruleCapacity) else {
            throw AspectsError(.invalidValue, field: "--rules", "a table holds 1 to \(ASPECTS_MAX_RULE_CAPACITY) rules, not \(ruleCapacity)")
        }
        guard eventCapacity >= 16, eventCapacity <= Int(ASPECTS_MAX_EVENT_CAPACITY), eventCapacity & (eventCapacity - 1) == 0 else {
            throw AspectsError(.invalidValue, field: "--events", "the event ring holds a power of two from 16 to \(ASPECTS_MAX_EVENT_CAPACITY) records, not \(eventCapacity)")
        }
        guard statCapacity >= 16, statCapacity <= Int(ASPECTS_MAX_STAT_CAPACITY), statCapacity & (statCapacity - 1) == 0 else {
            throw AspectsError(.invalidValue, field: "--stats", "the statistics region holds a power of two from 16 to \(ASPECTS_MAX_STAT_CAPACITY) entries, not \(statCapacity)")
        }
        if let group { try TableFile.requireMembership(sharing: group) }
        let groups = UInt32(ASPECTS_GROUP_CAPACITY)
        let total = Int(aspects_table_size(groups, UInt32(ruleCapacity), UInt32(eventCapacity), UInt32(statCapacity)))
        // The table is a new segment, made whole before its anchor gets the name
        // (TableFile.createAtomically): no process ever sees it half-made, and a failure on
        // the way removes the segment (what a kill before the anchor's name leaves, `gc`
        // removes: the header's `anchored`).
        var attached: UnsafeMutableRawPointer? = nil
        let shmid = aspects_segment_create(UInt64(total), group == nil ? 0 : 1, group ?? 0, &attached)
        guard shmid >= 0, let attached else {
            let e = errno
            if let group, e == EPERM { throw creatorGroupFailure(name, group) }
            throw segmentFailure(name, total, e)
        }
        let table = AdviceTable(name: name, catalog: catalog, fd: -1, base: attached, size: total)
        WriterStop.at("create-made")
        do throws(AspectsError) {
            let identity = (UInt64.random(in: 0...UInt64.max), UInt64.random(in: 0...UInt64.max))
            let h = table.header
            h.pointee.abi_version = ASPECTS_ABI_VERSION
            h.pointee.header_size = UInt32(MemoryLayout<aspects_table_header>.size)
            h.pointee.total_size = UInt64(total)
            h.pointee.catalog_hash = catalog.abiHash
            h.pointee.group_capacity = groups
            h.pointee.rule_capacity = UInt32(ruleCapacity)
            h.pointee.event_capacity = UInt32(eventCapacity)
            h.pointee.rule_size = UInt32(MemoryLayout<aspects_rule>.size)
            h.pointee.event_size = UInt32(MemoryLayout<aspects_event>.size)
            h.pointee.armed_offset = aspects_armed_offset()
            h.pointee.lists_offset = aspects_lists_offset(groups)
            h.pointee.rules_offset = aspects_rules_offset(groups)
            h.pointee.events_offset = aspects_events_offset(groups, UInt32(ruleCapacity))
            h.pointee.stats_offset = aspects_stats_offset(groups, UInt32(ruleCapacity), UInt32(eventCapacity))
            h.pointee.protos_offset = aspects_protos_offset(groups, UInt32(ruleCapacity), UInt32(eventCapacity), UInt32(statCapacity))
            h.pointee.sources_offset = aspects_sources_offset(groups, UInt32(ruleCapacity), UInt32(eventCapacity), UInt32(statCapacity))
            h.pointee.stat_capacity = UInt32(statCapacity)
            h.pointee.next_rule_number = 1
            h.pointee.next_serial = 1
            h.pointee.next_hierarchy = 1
            h.pointee.created_ns = System.realtimeNanoseconds()
            h.pointee.identity = identity
            if livePrototypes { h.pointee.options = ASPECTS_TABLE_LIVE_PROTOTYPES }
            if let group {
                // Shared on purpose (aspects_trust.h): the header says so; the segment is the
                // group's and 0660 already, the anchor becomes so before it gets its name.
                h.pointee.shared_gid = group
                h.pointee.share_flags = ASPECTS_SHARE_GROUP
            }
            aspects_store_release_u64(table.field(h, \aspects_table_header.magic), ASPECTS_MAGIC)
            try table.validate()
            var anchorFile: Int32 = -1
            table.fd = try TableFile.createAtomically(name, size: MemoryLayout<aspects_table_anchor>.size, fill: { (fd: Int32) throws(AspectsError) in
                anchorFile = fd
                try TableFile.writeAnchor(fd, shmid: shmid, size: total, identity: identity, name.path)
                if let group {
                    guard fchown(fd, uid_t.max, group) == 0 else {
                        throw AspectsError(.system, field: "--share-with-group", "cannot give the table to group \(group): \(String(cString: strerror(errno)))",
                                           fix: "share with a group you are a member of")
                    }
                    guard fchmod(fd, 0o660) == 0 else { throw System.failure("fchmod", name.path, errno) }
                }
            }, linking: {
                // From here a kill may leave the table named: never taken for a leftover
                // (TableInventory.unanchoredSegments). Before, a kill leaves a segment gc removes.
                // Noted first where gc looks for tables whose anchor is deleted later.
                AnchorRegistry.record(shmid: shmid, identity: identity, anchor: name.path, file: anchorFile)
                aspects_store_release_u32(table.field(h, \aspects_table_header.anchored), 1)
            })
        } catch {
            _ = aspects_segment_remove(shmid)
            throw error
        }
        return table
    }

    /// A shared segment must be made under the sharing group (aspects_segment_create): an
    /// unprivileged process can take only its real or saved gid as its effective one.
    static func creatorGroupFailure(_ name: TableName, _ group: UInt32) -> AspectsError {
        let shown = TableFile.groupText(group)
        var bare = [CChar](repeating: 0, count: 256)
        let word = aspects_group_name(group, &bare, UInt32(bare.count)) != 0 ? String(cString: bare) : String(group)
        return AspectsError(.invalidValue, field: "--share-with-group",
                            "table \"\(name)\": a shared table's memory segment must be made with group \(shown) as your effective group, because the kernel also lets the members of the group it was made under (now \(TableFile.groupText(getegid())), fixed for the segment's life) open it; only root can take another group for a moment",
                            fix: "run create with \(word) as your group: `sg \(word) -c 'aspectctl create --table \(name) --share-with-group \(word)'` (or `newgrp \(word)` first)")
    }

    /// Why no segment could be made, and what to do: which of the kernel's limits, and whose
    /// segments fill it (SegmentLimits).
    static func segmentFailure(_ name: TableName, _ bytes: Int, _ e: Int32) -> AspectsError {
        SegmentLimits.current().failure(name, bytes: bytes, errno: e)
    }

    package static func open(_ name: TableName, catalog: Catalog = .builtIn) throws(AspectsError) -> AdviceTable {
        // The preload's own rule: only a table it would obey is written (TableFile).
        let (fd, segment) = try TableFile.openTrusted(name)
        // From here the table object owns fd and the attachment (deinit releases them).
        let table = AdviceTable(name: name, catalog: catalog, fd: fd, base: segment.base!, size: Int(segment.size))
        try table.validate()
        return table
    }

    /// Removes a table of ours; refuses anything else (TableFile.destroy).
    package static func destroy(_ name: TableName) throws(AspectsError) {
        try TableFile.destroy(name)
    }

    /// Whose table this is when it is not ours (a member's view of a shared table), for
    /// commands to say; nil for our own.
    package var ownerNote: String? { TableFile.whoseNote(name) }

    package static func exists(_ name: TableName) -> Bool { access(name.path, F_OK) == 0 }

    /// The same checks the preload makes when it maps a table (table.c), so that aspectctl
    /// never writes into something the preload would refuse.
    func validate() throws(AspectsError) {
        let h = header.pointee
        func bad(_ why: String, fix: String? = nil) -> AspectsError {
            AspectsError(.badTable, field: "--table", "table \"\(name)\" \(why)", fix: fix)
        }
        guard aspects_load_acquire_u64(field(header, \.magic)) == ASPECTS_MAGIC else { throw bad("is not an aspects table (no magic)") }
        guard h.abi_version == ASPECTS_ABI_VERSION else {
            throw bad("has ABI version \(h.abi_version), this aspectctl writes \(ASPECTS_ABI_VERSION)", fix: "destroy and re-create it")
        }
        guard h.catalog_hash == catalog.abiHash else {
            throw bad("was made for another catalog", fix: "destroy and re-create it with this aspectctl")
        }
        let groups = h.group_capacity, rules = h.rule_capacity, events = h.event_capacity, stats = h.stat_capacity
        guard h.header_size == UInt32(MemoryLayout<aspects_table_header>.size), h.rule_size == UInt32(MemoryLayout<aspects_rule>.size),
              h.event_size == UInt32(MemoryLayout<aspects_event>.size),
              groups >= UInt32(catalog.groups.count), groups <= ASPECTS_GROUP_CAPACITY,
              rules >= 1, rules <= ASPECTS_MAX_RULE_CAPACITY, events >= 1, events & (events - 1) == 0,
              events <= ASPECTS_MAX_EVENT_CAPACITY,
              h.armed_offset == aspects_armed_offset(), h.lists_offset == aspects_lists_offset(groups),
              h.rules_offset == aspects_rules_offset(groups), h.events_offset == aspects_events_offset(groups, rules),
              stats <= ASPECTS_MAX_STAT_CAPACITY, stats & (stats &- 1) == 0,
              h.stats_offset == aspects_stats_offset(groups, rules, events),
              h.protos_offset == aspects_protos_offset(groups, rules, events, stats),
              h.sources_offset == aspects_sources_offset(groups, rules, events, stats),
              h.total_size == aspects_table_size(groups, rules, events, stats), h.total_size <= UInt64(size)
        else { throw bad("has an inconsistent layout", fix: "destroy and re-create it") }
        geometry = Geometry(groups: Int(groups), rules: Int(rules), events: Int(events), stats: Int(stats),
                            armed: Int(h.armed_offset), lists: Int(h.lists_offset), slots: Int(h.rules_offset),
                            ring: Int(h.events_offset), statistics: Int(h.stats_offset), protos: Int(h.protos_offset),
                            sources: Int(h.sources_offset))
    }

    // MARK: - raw access

    package func field<Root, T>(_ p: UnsafeMutablePointer<Root>, _ key: WritableKeyPath<Root, T>) -> UnsafeMutablePointer<T> {
        (UnsafeMutableRawPointer(p) + MemoryLayout<Root>.offset(of: key)!).assumingMemoryBound(to: T.self)
    }

    // Addresses from the validated geometry (callers keep indices below its capacities).
    package func rule(_ slot: Int) -> UnsafeMutablePointer<aspects_rule> { element(geometry.slots, slot) }
    func list(_ group: Int) -> UnsafeMutablePointer<aspects_group_list> { element(geometry.lists, group) }
    func armed(_ group: Int) -> UnsafeMutablePointer<UInt8> { element(geometry.armed, group) }
    package func event(_ index: Int) -> UnsafeMutablePointer<aspects_event> { element(geometry.ring, index) }
    func statistic(_ index: Int) -> UnsafeMutablePointer<aspects_process_stat> { element(geometry.statistics, index) }
    func source(_ slot: Int) -> UnsafeMutablePointer<aspects_rule_source> { element(geometry.sources, slot) }

    func element<T>(_ offset: Int, _ index: Int) -> UnsafeMutablePointer<T> {
        (base + offset + index * MemoryLayout<T>.stride).assumingMemoryBound(to: T.self)
    }

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

    // MARK: - add and remove

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

    /// Writes a rule into a slot; returns the serial it got.
    @discardableResult
    func fill(slot: Int, with c: CompiledRule, id: String, seed: UInt64) -> UInt64 {
        let r = rule(slot)
        let seq = field(r, \.seq)
        let s = seq.pointee | 1
        aspects_store_release_u32(seq, s)
        aspects_fence_release()
        // Counters and strings are zeroed with the rest: a reused slot starts fresh.
        UnsafeMutableRawPointer(r).advanced(by: 4).initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<aspects_rule>.size - 4)
        // The values the rule holds as they are (config/rule-slot.spec's `<-` fields), then the rest.
        c.storeSpecFields(in: r)
        let idBytes = Array(id.utf8.prefix(Int(ASPECTS_RULE_ID_SIZE) - 1))
        let idPtr = UnsafeMutableRawPointer(field(r, \.id))
        idBytes.withUnsafeBytes { idPtr.copyMemory(from: $0.baseAddress!, byteCount: idBytes.count) }
        r.pointee.matcher_count = UInt32(c.matchers.count)
        var offset = 0
        let strings = UnsafeMutableRawPointer(field(r, \.strings))
        for (i, m) in c.matchers.enumerated() {
            let mp = r.matchers(at: i)!
            mp.pointee.arg = UInt8(m.arg)
            mp.pointee.kind = m.kind
            mp.pointee.type = m.type.rawValue
            mp.pointee.a = m.a
            mp.pointee.b = m.b
            if let pattern = m.pattern {
                let bytes = Array(pattern.utf8)
                bytes.withUnsafeBytes { (strings + offset).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
                mp.pointee.str_off = UInt16(offset)
                mp.pointee.str_len = UInt16(bytes.count)
                offset += bytes.count + 1
            }
        }
        func put(_ pattern: String) -> (UInt16, UInt16) {
            let bytes = Array(pattern.utf8)
            bytes.withUnsafeBytes { (strings + offset).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            defer { offset += bytes.count + 1 }
            return (UInt16(offset), UInt16(bytes.count))
        }
        if let p = c.processPattern { (r.pointee.process_off, r.pointee.process_len) = put(p) }
        if let p = c.callerPattern { (r.pointee.caller_off, r.pointee.caller_len) = put(p) }
        if let s = c.site {
            (r.pointee.site_off, r.pointee.site_len) = put(s.object)
            r.pointee.site_offset = s.offset
        }
        if let context = c.context {
            r.pointee.context_depth = UInt32(context.frames.count)
            r.pointee.context_hash = context.hash
        }
        if let object = c.callObject, let function = c.callFunction {
            (r.pointee.call_off, r.pointee.call_len) = put(object)
            (r.pointee.call_fn_off, r.pointee.call_fn_len) = put(function)
        }
        if let bytes = c.resultBytes {
            // a struct result (the preload copies result_len bytes, bounded by the struct's size)
            bytes.withUnsafeBytes { (strings + offset).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            r.pointee.result_off = UInt16(offset)
            r.pointee.result_len = UInt16(bytes.count)
            offset += bytes.count
        }
        if !c.familyGroups.isEmpty {
            // the other groups of a rule on several functions (aspects_rule_in_group)
            offset = (offset + 1) / 2 * 2
            for (i, g) in c.familyGroups.enumerated() {
                var v = UInt16(g)
                withUnsafeBytes(of: &v) { (strings + offset + 2 * i).copyMemory(from: $0.baseAddress!, byteCount: 2) }
            }
            r.pointee.family_off = UInt16(offset)
            r.pointee.family_len = UInt16(c.familyGroups.count)
            offset += 2 * c.familyGroups.count
            // then each matcher's argument number in each of those groups (aspects_abi.h)
            for i in c.familyGroups.indices {
                let args = i < c.familyArgs.count ? c.familyArgs[i] : c.matchers.map { UInt8($0.arg) }
                for (k, a) in args.prefix(c.matchers.count).enumerated() { (strings + offset + i * c.matchers.count + k).storeBytes(of: a, as: UInt8.self) }
            }
            offset += c.matchers.count * c.familyGroups.count
        }
        r.pointee.seed = seed
        r.pointee.rule_key = FNV1a.hash(id)
        r.pointee.errno_choice_count = UInt32(c.errnoChoices.count)
        for (i, e) in c.errnoChoices.enumerated() { r.errno_choices(at: i)?.pointee = e }
        r.pointee.arg_set_count = UInt32(c.argSets.count)
        for (i, s) in c.argSets.enumerated() { r.arg_set_index(at: i)?.pointee = s.index; r.arg_set_value(at: i)?.pointee = s.value }
        let serial = header.pointee.next_serial
        header.pointee.next_serial = serial &+ 1 // checked before the batch; any process can write it
        r.pointee.serial = serial
        r.pointee.added_ns = System.realtimeNanoseconds()
        r.pointee.named_export = c.prototype != nil ? Self.prototypeFlag | UInt32(c.group - catalog.groups.count) : UInt32(c.function.exportIndex)
        r.pointee.batch = batch
        r.pointee.state = ASPECTS_RULE_ADDING.rawValue
        aspects_store_release_u32(seq, s &+ 1)
        writeSource(slot: slot, serial: serial, Self.stampedSource(c, id: id, seed: RuleCompiler.needsSeed(c) ? seed : nil))
        return serial
    }

    /// The rule's JSON as added, with its id and (drawn or given) seed written in, so that
    /// adding it again gives the same rule; nil for a rule made in code.
    static func stampedSource(_ c: CompiledRule, id: String, seed: UInt64?) -> String? {
        guard case .object(var members)? = c.rule.source else { return nil }
        func node(_ v: JSONNode.Value) -> JSONNode { JSONNode(value: v, line: 0, column: 0) }
        members.removeAll { $0.key == "id" }
        members.insert((key: "id", value: node(.string(id))), at: 0)
        if let seed {
            var when: [(key: String, value: JSONNode)] = []
            if let i = members.firstIndex(where: { $0.key == "when" }), case .object(let w) = members[i].value.value { when = w; members.remove(at: i) }
            when.removeAll { $0.key == "seed" }
            when.append((key: "seed", value: node(.number(String(seed)))))
            members.append((key: "when", value: node(.object(when))))
        }
        return JSONNode.Value.object(members).rendered(pretty: false)
    }

    func writeSource(slot: Int, serial: UInt64, _ text: String?) {
        let src = source(slot)
        let bytes = Array((text ?? "").utf8)
        let room = MemoryLayout<aspects_rule_source>.size - MemoryLayout<aspects_rule_source>.offset(of: \.text)!
        src.pointee.serial = serial
        src.pointee.length = bytes.count <= room ? UInt32(bytes.count) : 0
        if !bytes.isEmpty && bytes.count <= room {
            let text = UnsafeMutableRawPointer(src) + MemoryLayout<aspects_rule_source>.offset(of: \.text)!
            bytes.withUnsafeBytes { text.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        }
    }

    /// The JSON a slot's rule was added with (nil: none kept, or the slot has moved on).
    func sourceText(slot: Int, serial: UInt64) -> String? {
        guard slot >= 0, slot < ruleCapacity else { return nil }
        let src = source(slot)
        let room = MemoryLayout<aspects_rule_source>.size - MemoryLayout<aspects_rule_source>.offset(of: \.text)!
        let length = Int(src.pointee.length)
        guard src.pointee.serial == serial, length > 0, length <= room else { return nil }
        let text = UnsafeRawPointer(src) + MemoryLayout<aspects_rule_source>.offset(of: \.text)!
        let copy = String(decoding: UnsafeRawBufferPointer(start: text, count: length), as: UTF8.self)
        // another writer may have taken the slot while we copied
        return src.pointee.serial == serial ? copy : nil
    }

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

extension AdviceTable {
    /// A new process hierarchy of this table, as the ASPECTS_HIERARCHY value that makes a
    /// process and its descendants one hierarchy (identity.c reads it).
    package func newHierarchy() -> String {
        // A word any attached process can write: it wraps (skipping 0, "no hierarchy"), never traps.
        var id = aspects_fetch_add_u64(field(header, \aspects_table_header.next_hierarchy), 1) &+ 1
        if id == 0 { id = aspects_fetch_add_u64(field(header, \aspects_table_header.next_hierarchy), 1) &+ 1 }
        return "\(header.pointee.created_ns):\(id)"
    }
}
