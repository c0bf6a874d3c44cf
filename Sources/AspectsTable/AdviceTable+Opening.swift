#if canImport(Glibc)
import Glibc
#endif
import CAspectsABI
import AspectsCore
import AspectsRules

// Creating, opening, validating and destroying a table.
extension AdviceTable {
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

    /// Removes this table, one this process made or opened, through the anchor it holds
    /// (TableFile.destroy(_:anchor:)); the attachment stays readable until the object goes.
    package func destroy() throws(AspectsError) {
        guard fd >= 0 else { return try TableFile.destroy(name) }
        try TableFile.destroy(name, anchor: fd)
    }

    /// Whose table this is when it is not ours (a member's view of a shared table), for
    /// commands to say; nil for our own.
    package var ownerNote: String? { TableFile.whoseNote(name) }

    package static func exists(_ name: TableName) -> Bool { access(name.path, F_OK) == 0 }

    /// The check the preload makes when it maps a table (aspects_geometry.h, one definition for
    /// both), so that aspectctl never writes into something the preload would refuse.
    func validate() throws(AspectsError) {
        func bad(_ why: String, fix: String? = nil) -> AspectsError {
            AspectsError(.badTable, field: "--table", "table \"\(name)\" \(why)", fix: fix)
        }
        let h = header.pointee
        switch aspects_table_geometry_check(header, UInt64(size), catalog.abiHash, UInt32(catalog.groups.count)) {
        case ASPECTS_GEOMETRY_OK:
            break
        case ASPECTS_GEOMETRY_NO_MAGIC:
            throw bad("is not an aspects table (no magic)")
        case ASPECTS_GEOMETRY_ABI_VERSION:
            throw bad("has ABI version \(h.abi_version), this aspectctl writes \(ASPECTS_ABI_VERSION)", fix: "destroy and re-create it")
        case ASPECTS_GEOMETRY_CATALOG:
            throw bad("was made for another catalog", fix: "destroy and re-create it with this aspectctl")
        case let failure:
            throw bad("has an inconsistent layout: it \(String(cString: aspects_geometry_text(failure)))", fix: "destroy and re-create it")
        }
        let groups = h.group_capacity, rules = h.rule_capacity, events = h.event_capacity, stats = h.stat_capacity
        geometry = Geometry(groups: Int(groups), rules: Int(rules), events: Int(events), stats: Int(stats),
                            armed: Int(h.armed_offset), lists: Int(h.lists_offset), slots: Int(h.rules_offset),
                            ring: Int(h.events_offset), statistics: Int(h.stats_offset), protos: Int(h.protos_offset),
                            sources: Int(h.sources_offset))
    }
}
