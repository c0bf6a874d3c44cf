import CAspectsABI
import Testing

/// aspects_table_geometry_check (aspects_geometry.h), the one check of a table's header the
/// preload and aspectctl share: a header the layout functions made passes, and each damage is
/// reported as its own failure, the first in the check's order.
@Suite(.tags(.fast)) struct TableGeometryTests {
    static let catalogHash: UInt64 = 0x1234_5678_9abc_def0
    static let catalogGroups: UInt32 = 10

    /// A header as a creator writes it for these capacities.
    static func header(groups: UInt32 = catalogGroups + ASPECTS_PROTO_CAPACITY, rules: UInt32 = 4, events: UInt32 = 8,
                       stats: UInt32 = 4) -> aspects_table_header {
        var h = aspects_table_header()
        h.magic = ASPECTS_MAGIC
        h.abi_version = ASPECTS_ABI_VERSION
        h.catalog_hash = catalogHash
        h.header_size = UInt32(MemoryLayout<aspects_table_header>.size)
        h.rule_size = UInt32(MemoryLayout<aspects_rule>.size)
        h.event_size = UInt32(MemoryLayout<aspects_event>.size)
        h.group_capacity = groups
        h.rule_capacity = rules
        h.event_capacity = events
        h.stat_capacity = stats
        h.armed_offset = aspects_armed_offset()
        h.lists_offset = aspects_lists_offset(groups)
        h.rules_offset = aspects_rules_offset(groups)
        h.events_offset = aspects_events_offset(groups, rules)
        h.stats_offset = aspects_stats_offset(groups, rules, events)
        h.protos_offset = aspects_protos_offset(groups, rules, events, stats)
        h.sources_offset = aspects_sources_offset(groups, rules, events, stats)
        h.total_size = aspects_table_size(groups, rules, events, stats)
        return h
    }

    static func check(_ h: aspects_table_header, mapped: UInt64? = nil) -> aspects_geometry_failure {
        var h = h
        return aspects_table_geometry_check(&h, mapped ?? h.total_size, catalogHash, catalogGroups)
    }

    @Test func aHeaderTheLayoutMadePasses() {
        #expect(Self.check(Self.header()) == ASPECTS_GEOMETRY_OK)
        #expect(Self.check(Self.header(stats: 0)) == ASPECTS_GEOMETRY_OK)
        #expect(Self.check(Self.header(), mapped: Self.header().total_size + 4096) == ASPECTS_GEOMETRY_OK)
    }

    @Test func eachDamageIsItsOwnFailure() {
        func damaged(_ change: (inout aspects_table_header) -> Void) -> aspects_geometry_failure {
            var h = Self.header()
            change(&h)
            return Self.check(h)
        }
        #expect(damaged { $0.magic = ASPECTS_MAGIC_UNFINISHED } == ASPECTS_GEOMETRY_NO_MAGIC)
        #expect(damaged { $0.abi_version += 1 } == ASPECTS_GEOMETRY_ABI_VERSION)
        #expect(damaged { $0.catalog_hash ^= 1 } == ASPECTS_GEOMETRY_CATALOG)
        #expect(damaged { $0.rule_size += 8 } == ASPECTS_GEOMETRY_STRUCT_SIZES)
        #expect(damaged { $0.header_size -= 8 } == ASPECTS_GEOMETRY_STRUCT_SIZES)
        #expect(damaged { $0.event_size = 0 } == ASPECTS_GEOMETRY_STRUCT_SIZES)
        // the prototypes' groups follow the catalog's: a table must hold both
        #expect(damaged { $0.group_capacity = Self.catalogGroups } == ASPECTS_GEOMETRY_GROUP_CAPACITY)
        #expect(damaged { $0.group_capacity = ASPECTS_GROUP_CAPACITY + 1 } == ASPECTS_GEOMETRY_GROUP_CAPACITY)
        #expect(damaged { $0.rule_capacity = 0 } == ASPECTS_GEOMETRY_RULE_CAPACITY)
        #expect(damaged { $0.rule_capacity = ASPECTS_MAX_RULE_CAPACITY + 1 } == ASPECTS_GEOMETRY_RULE_CAPACITY)
        #expect(damaged { $0.event_capacity = 0 } == ASPECTS_GEOMETRY_EVENT_CAPACITY)
        #expect(damaged { $0.event_capacity = 6 } == ASPECTS_GEOMETRY_EVENT_CAPACITY)
        #expect(damaged { $0.event_capacity = ASPECTS_MAX_EVENT_CAPACITY * 2 } == ASPECTS_GEOMETRY_EVENT_CAPACITY)
        #expect(damaged { $0.stat_capacity = 3 } == ASPECTS_GEOMETRY_STAT_CAPACITY)
        #expect(damaged { $0.stat_capacity = ASPECTS_MAX_STAT_CAPACITY * 2 } == ASPECTS_GEOMETRY_STAT_CAPACITY)
        #expect(damaged { $0.armed_offset += 64 } == ASPECTS_GEOMETRY_LAYOUT)
        #expect(damaged { $0.events_offset += 64 } == ASPECTS_GEOMETRY_LAYOUT)
        #expect(damaged { $0.protos_offset += 64 } == ASPECTS_GEOMETRY_LAYOUT)
        #expect(damaged { $0.sources_offset += 64 } == ASPECTS_GEOMETRY_LAYOUT)
        #expect(damaged { $0.total_size += 64 } == ASPECTS_GEOMETRY_TRUNCATED)
    }

    @Test func aTableLargerThanItsMappingIsTruncated() {
        let h = Self.header()
        #expect(Self.check(h, mapped: h.total_size - 1) == ASPECTS_GEOMETRY_TRUNCATED)
        #expect(Self.check(h, mapped: UInt64(MemoryLayout<aspects_table_header>.size) - 1) == ASPECTS_GEOMETRY_TRUNCATED)
    }

    /// The preload's words for each failure: one per case, none empty.
    @Test func everyFailureHasItsText() {
        let failures = (ASPECTS_GEOMETRY_OK.rawValue...ASPECTS_GEOMETRY_TRUNCATED.rawValue).map { aspects_geometry_failure(rawValue: $0) }
        let texts = failures.map { String(cString: aspects_geometry_text($0)) }
        #expect(Set(texts).count == failures.count, "\(texts)")
    }
}
