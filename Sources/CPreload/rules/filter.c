/* filter.c — a single rule's conditions decided in front of the closure (filter.h), for the
 * stubs of a group whose gate has a filter (gate.c publishes it): on the argument registers
 * the call left, before libffi's closure. It reads the group's
 * current rule copy (rulecache.h) and decides with decide.h. It sits beside the gate (gate.c),
 * the other half of what the stubs ask before the closure. */
#include <errno.h>
#include "decide.h"
#include "filter.h"
#include "gate.h"
#include "rulecache.h"
#include "signatures.h"
#include "thread.h"

static uint32_t asp_filter_rule(const asp_rule_view *v, const asp_export_desc *ex, const uint64_t *regs, uint64_t caller) {
    /* a claimed autoRemove rule is skipped before it is counted, as on every path */
    if ((v->flags & ASPECTS_RULE_AUTOREMOVE) && __atomic_load_n(&v->r->claim, __ATOMIC_RELAXED)) return 0;
    if (ex->nargs > 6u) return 2; /* a filtered group passes at most six, all in registers */
    if (!asp_conditions_hold(v, ex, regs, 1, caller)) return 0;
    return asp_counts_alone(v) ? 1u : 2u;
}

uint32_t asp_filter(uint32_t slot, const uint64_t *regs, uint64_t caller) {
    if (slot >= ASP_GATE_STUBS) return 2;
    const uint32_t idx = slot < ASP_EXPORT_COUNT ? slot : ASP_EXPORT_COUNT + (slot - ASP_EXPORT_COUNT) / 2u;
    const asp_export_desc *ex = asp_export_at(idx);
    const uint32_t group = ex->group;
    /* inside the engine, or the group's copy not current: the dispatcher sorts it out */
    if (group >= ASP_ALL_GROUPS || asp_in_engine(&asp_tls)) return 2;
    const asp_group_cache *c = &asp_caches[group];
    const uint64_t gen = __atomic_load_n(&asp_tab.header->generation, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&c->generation, __ATOMIC_ACQUIRE) != gen + 1) return 2;
    const asp_rule_view *v = __atomic_load_n(&c->single, __ATOMIC_ACQUIRE);
    if (!v) v = __atomic_load_n(&c->single_after, __ATOMIC_ACQUIRE);
    if (!v) return 2;
    const int saved_errno = errno; /* the maps cache and fdpath make system calls */
    const uint32_t verdict = asp_filter_rule(v, ex, regs, caller);
    errno = saved_errno;
    return verdict;
}
