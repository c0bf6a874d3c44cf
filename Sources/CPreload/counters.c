/* counters.c — the counters behind nth / after / every / times, per scope.
 *
 * Process scope lives in this process's memory, indexed by rule slot and tagged with the rule's
 * serial, so a slot reused for another rule starts from zero without anyone resetting it:
 * each word packs a 24-bit serial tag above a 40-bit count and is updated with one CAS.
 * Table scope lives in the slot itself (shared by every process; the writer zeroes it when it
 * fills the slot). All updates are lock-free and async-signal-safe. */
#include "internal.h"

#define ASP_TAG_SHIFT 40
#define ASP_COUNT_MASK ((1ull << ASP_TAG_SHIFT) - 1)

typedef struct asp_local_counter {
    uint64_t calls;
    uint64_t fired;
} asp_local_counter;

static asp_local_counter asp_local[ASPECTS_MAX_RULE_CAPACITY];

/* Increments a tagged word unless its count already reached `limit` (0 = no limit).
 * Returns the new count, or 0 when the limit refused the increment. */
static uint64_t asp_tagged_increment(uint64_t *word, uint64_t serial, uint64_t limit) {
    uint64_t tag = (serial & ((1ull << (64 - ASP_TAG_SHIFT)) - 1)) << ASP_TAG_SHIFT;
    uint64_t old = __atomic_load_n(word, __ATOMIC_RELAXED);
    for (;;) {
        uint64_t count = (old & ~ASP_COUNT_MASK) == tag ? (old & ASP_COUNT_MASK) : 0;
        if (limit && count >= limit) return 0;
        if (count == ASP_COUNT_MASK) return count; /* saturate rather than wrap */
        uint64_t next = tag | (count + 1);
        if (__atomic_compare_exchange_n(word, &old, next, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return count + 1;
    }
}

/* Same on a plain shared counter. */
static uint64_t asp_limited_increment(uint64_t *word, uint64_t limit) {
    if (!limit) return __atomic_add_fetch(word, 1, __ATOMIC_RELAXED);
    uint64_t old = __atomic_load_n(word, __ATOMIC_RELAXED);
    for (;;) {
        if (old >= limit) return 0;
        if (__atomic_compare_exchange_n(word, &old, old + 1, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return old + 1;
    }
}

uint64_t asp_count_call(aspects_rule *r, uint32_t slot, uint32_t scope, uint64_t serial) {
    if (scope == ASPECTS_SCOPE_TABLE) return __atomic_add_fetch(&r->table_calls, 1, __ATOMIC_RELAXED);
    if (slot >= ASPECTS_MAX_RULE_CAPACITY) return 0;
    return asp_tagged_increment(&asp_local[slot].calls, serial, 0);
}

int asp_claim_firing(aspects_rule *r, uint32_t slot, uint32_t scope, uint64_t serial, uint64_t times) {
    if (scope == ASPECTS_SCOPE_TABLE) return asp_limited_increment(&r->table_fired, times) != 0;
    if (slot >= ASPECTS_MAX_RULE_CAPACITY) return 0;
    return asp_tagged_increment(&asp_local[slot].fired, serial, times) != 0;
}

/* A fork child starts its own process-scope counters at zero (DESIGN §4). Runs in the child
 * right after fork, single-threaded. */
void asp_counters_reset_after_fork(void) {
    volatile uint64_t *p = (volatile uint64_t *)asp_local;
    for (size_t i = 0; i < 2 * ASPECTS_MAX_RULE_CAPACITY; i++) p[i] = 0;
}
