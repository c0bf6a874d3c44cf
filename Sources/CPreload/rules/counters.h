/* counters.h — counters.c: the counters behind nth / after / every / times / once / autoRemove,
 * per scope, the claims, and this process's statistics entries. */
#ifndef ASP_COUNTERS_H
#define ASP_COUNTERS_H

#include "view.h"
typedef struct asp_local_counter {
    uint64_t serial;  /* the rule `calls` belongs to (asp_local_adopt resets it on change) */
    uint64_t calls;
    uint64_t fired;   /* `times` in process scope: the rule's serial (low 32 bits) above its count */
    uint64_t once;    /* `once: process`: the serial of the latest rule of the slot that fired */
} asp_local_counter;
extern asp_local_counter asp_local[ASPECTS_MAX_RULE_CAPACITY];

void asp_local_adopt(uint32_t slot, uint64_t serial);
aspects_process_stat *asp_stat_entry(uint32_t slot, uint64_t serial);
uint64_t asp_count_call_slow(const asp_rule_view *v);
int asp_claim_times(const asp_rule_view *v);
int asp_claim_once_process(const asp_rule_view *v);
aspects_hierarchy_counter *asp_hierarchy_counter_of(aspects_rule *r); /* claimed on first use; NULL: none */
int asp_claim_once_hierarchy(aspects_rule *r);
int asp_claim_autoremove(aspects_rule *r);
void asp_counters_reset_after_fork(void);

/* A matching call, counted in the rule's scope and in the statistics: one atomic add when
 * the counter is one word (for process scope that word is the statistics entry too), else
 * the statistics word and the scope's counter (thread, or a hierarchy entry found per call).
 * Returns the call's number in the scope (0: it could not be counted, and never fires). */
static inline uint64_t asp_count_matching(const asp_rule_view *v) {
    if (ASP_LIKELY(v->counter != NULL)) {
        const uint64_t k = __atomic_add_fetch(v->counter, 1, __ATOMIC_RELAXED);
        if (v->counter != v->matched_word) __atomic_fetch_add(v->matched_word, 1, __ATOMIC_RELAXED);
        return k;
    }
    __atomic_fetch_add(v->matched_word, 1, __ATOMIC_RELAXED);
    return asp_count_call_slow(v);
}

/* The same for a call the stub already counted as number `k` in `counter` (asp_pending):
 * only what the stub did not do. Returns 0 when the stub counted for another rule (the
 * group's rules changed between the stub and here): the call is counted anew. */
static inline uint64_t asp_count_counted(const asp_rule_view *v, const uint64_t *counter, uint64_t k) {
    if (!k || counter != v->counter) return 0;
    if (v->counter != v->matched_word) __atomic_fetch_add(v->matched_word, 1, __ATOMIC_RELAXED);
    return k;
}

static inline void asp_stat_fired(const asp_rule_view *v) {
    __atomic_fetch_add(v->stat ? &v->stat->fired : &v->r->fired, 1, __ATOMIC_RELAXED);
}
/* A firing taken back: a stream fault on a call that made no system call did not take
 * (dispatch_full.c), so `fired` counts calls on which the action ran, as it says. */
static inline void asp_stat_unfired(const asp_rule_view *v) {
    __atomic_fetch_sub(v->stat ? &v->stat->fired : &v->r->fired, 1, __ATOMIC_RELAXED);
}

#endif
