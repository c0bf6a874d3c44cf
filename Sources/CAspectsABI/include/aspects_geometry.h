/* aspects_geometry.h — THE check of a mapped table's header: what the preload (table.c) and
 * aspectctl (AdviceTable) both require before they use a table, so that neither reads or
 * writes through an offset or capacity the other would refuse. Pure: it reads the header
 * only (its magic with acquire: a creator publishes the header with it).
 *
 * After it passes, every region of the layout lies inside `mapped_size` bytes and every
 * capacity is within the compiled limits, so indices checked against the capacities are safe. */
#ifndef ASPECTS_GEOMETRY_H
#define ASPECTS_GEOMETRY_H

#include <stdint.h>
#include "aspects_abi.h"

/* Why a table is refused, in the order the checks run (the first failure is reported). */
enum aspects_geometry_failure {
    ASPECTS_GEOMETRY_OK = 0,
    ASPECTS_GEOMETRY_NO_MAGIC,        /* not a table, or one still being created */
    ASPECTS_GEOMETRY_ABI_VERSION,     /* written for another ASPECTS_ABI_VERSION */
    ASPECTS_GEOMETRY_CATALOG,         /* written for another catalog (its hash) */
    ASPECTS_GEOMETRY_STRUCT_SIZES,    /* header, rule or event of another size */
    ASPECTS_GEOMETRY_GROUP_CAPACITY,  /* fewer groups than the catalog's and the prototypes', or too many */
    ASPECTS_GEOMETRY_RULE_CAPACITY,   /* no rule slot, or too many */
    ASPECTS_GEOMETRY_EVENT_CAPACITY,  /* not a power of two, or too many */
    ASPECTS_GEOMETRY_STAT_CAPACITY,   /* neither 0 nor a power of two, or too many */
    ASPECTS_GEOMETRY_LAYOUT,          /* an offset other than the capacities give */
    ASPECTS_GEOMETRY_TRUNCATED        /* a total size other than the layout's, or past the mapping */
};

static inline int aspects_geometry_pow2(uint32_t v) { return v && !(v & (v - 1u)); }

/* The table at `h`, mapped for `mapped_size` bytes, against the catalog this program was built
 * with: its hash and its number of alias groups (prototype groups follow them). */
static inline enum aspects_geometry_failure aspects_table_geometry_check(const aspects_table_header *h, uint64_t mapped_size,
                                                                         uint64_t catalog_hash, uint32_t catalog_groups) {
    if (mapped_size < sizeof(aspects_table_header)) return ASPECTS_GEOMETRY_TRUNCATED;
    if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != ASPECTS_MAGIC) return ASPECTS_GEOMETRY_NO_MAGIC;
    if (h->abi_version != ASPECTS_ABI_VERSION) return ASPECTS_GEOMETRY_ABI_VERSION;
    if (h->catalog_hash != catalog_hash) return ASPECTS_GEOMETRY_CATALOG;
    if (h->header_size != sizeof(aspects_table_header) || h->rule_size != sizeof(aspects_rule) || h->event_size != sizeof(aspects_event))
        return ASPECTS_GEOMETRY_STRUCT_SIZES;
    const uint32_t groups = h->group_capacity, rules = h->rule_capacity, events = h->event_capacity, stats = h->stat_capacity;
    if ((uint64_t)groups < (uint64_t)catalog_groups + ASPECTS_PROTO_CAPACITY || groups > ASPECTS_GROUP_CAPACITY)
        return ASPECTS_GEOMETRY_GROUP_CAPACITY;
    if (rules == 0 || rules > ASPECTS_MAX_RULE_CAPACITY) return ASPECTS_GEOMETRY_RULE_CAPACITY;
    if (!aspects_geometry_pow2(events) || events > ASPECTS_MAX_EVENT_CAPACITY) return ASPECTS_GEOMETRY_EVENT_CAPACITY;
    if ((stats && !aspects_geometry_pow2(stats)) || stats > ASPECTS_MAX_STAT_CAPACITY) return ASPECTS_GEOMETRY_STAT_CAPACITY;
    if (h->armed_offset != aspects_armed_offset() || h->lists_offset != aspects_lists_offset(groups) ||
        h->rules_offset != aspects_rules_offset(groups) || h->events_offset != aspects_events_offset(groups, rules) ||
        h->stats_offset != aspects_stats_offset(groups, rules, events) ||
        h->protos_offset != aspects_protos_offset(groups, rules, events, stats) ||
        h->sources_offset != aspects_sources_offset(groups, rules, events, stats))
        return ASPECTS_GEOMETRY_LAYOUT;
    if (h->total_size != aspects_table_size(groups, rules, events, stats) || h->total_size > mapped_size)
        return ASPECTS_GEOMETRY_TRUNCATED;
    return ASPECTS_GEOMETRY_OK;
}

/* What the preload says of a refused table ("table PATH has a bad layout"). */
static inline const char *aspects_geometry_text(enum aspects_geometry_failure f) {
    switch (f) {
    case ASPECTS_GEOMETRY_OK: return "is usable";
    case ASPECTS_GEOMETRY_NO_MAGIC: return "has no aspects magic (not a table, or still being created)";
    case ASPECTS_GEOMETRY_ABI_VERSION: return "was written for another ABI version";
    case ASPECTS_GEOMETRY_CATALOG: return "was written for another catalog (rebuild aspectctl and libaspects.so together)";
    case ASPECTS_GEOMETRY_STRUCT_SIZES: return "has structures of another size";
    case ASPECTS_GEOMETRY_GROUP_CAPACITY: return "has a bad group capacity";
    case ASPECTS_GEOMETRY_RULE_CAPACITY: return "has a bad rule capacity";
    case ASPECTS_GEOMETRY_EVENT_CAPACITY: return "has a bad event capacity";
    case ASPECTS_GEOMETRY_STAT_CAPACITY: return "has a bad statistics capacity";
    case ASPECTS_GEOMETRY_LAYOUT: return "has a bad layout";
    case ASPECTS_GEOMETRY_TRUNCATED: return "is smaller than its header says";
    }
    return "is not usable";
}

#endif
