/* rulecache.h — rulecache.c: the process's validated copy of each armed group's rules, remade when
 * the table's generation moves. */
#ifndef ASP_RULECACHE_H
#define ASP_RULECACHE_H

#include "table.h"
#include "view.h"
#define ASP_CACHE_RULES 8u   /* rules per group a copy holds; a group with more is read directly */

/* Which dispatch path a group's rules take (rulecache.c decides when it copies them). */
enum asp_path {
    ASP_PATH_FULL = 0,   /* anything: after advice, claims before counting, caller/process conditions */
    ASP_PATH_SEVERAL = 1, /* several simple before/instead rules counted per process */
    ASP_PATH_SINGLE = 2, /* one rule with a fixed counter word: the hot path */
};

typedef struct asp_group_cache {
    uint64_t generation;            /* table generation + 1 the active copy was made at; 0 = none */
    const struct asp_rule_view *single;       /* the active copy's rule: single path, before/instead */
    const struct asp_rule_view *single_after; /* the active copy's rule: single path, after */
    uint32_t lock;                  /* 1 while one thread rebuilds the inactive copy */
    uint32_t active;                /* which of the two copies readers use */
    uint32_t count[2];
    uint32_t path[2];               /* enum asp_path of each copy */
    uint32_t pad;
    asp_rule_view views[2][ASP_CACHE_RULES];
} asp_group_cache;

int asp_view_from_slot(uint32_t slot, uint32_t group, asp_rule_view *v);
const asp_rule_view *asp_group_rules_slow(uint32_t group, uint16_t *list, uint32_t *count);
extern asp_group_cache asp_caches[ASP_ALL_GROUPS];

/* The rules of a group for this call: the cached copy when it is current (the common case:
 * two loads and a compare), else rulecache.c remakes it, or returns NULL with the raw slot
 * list in `list` for the caller to read each rule directly. */
static inline const asp_rule_view *asp_group_rules(uint32_t group, uint16_t *list, uint32_t *count) {
    if (ASP_LIKELY(group < ASP_ALL_GROUPS)) {
        asp_group_cache *c = &asp_caches[group];
        uint64_t gen = __atomic_load_n(&asp_tab.header->generation, __ATOMIC_ACQUIRE);
        if (ASP_LIKELY(__atomic_load_n(&c->generation, __ATOMIC_ACQUIRE) == gen + 1)) {
            uint32_t b = __atomic_load_n(&c->active, __ATOMIC_ACQUIRE) & 1u;
            *count = __atomic_load_n(&c->count[b], __ATOMIC_RELAXED);
            return c->views[b];
        }
    }
    return asp_group_rules_slow(group, list, count);
}
void asp_rule_caches_reset_after_fork(void);
/* Called (when set) before a group's copy is remade because the table moved: preload.c
 * points it at proto.c, whose prototype symbols may have come or gone with it. */
extern void (*asp_table_moved_hook)(void);

#endif
