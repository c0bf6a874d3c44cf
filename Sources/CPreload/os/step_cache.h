/* step_cache.h — step_cache.c: the step of each pc a calling-context walk went past, kept for
 * the process, so that a call site's walk reads its frames' CFI once (docs/cost.md).
 *
 * Direct-mapped, lock-free, safe in signal handlers: each entry is a sequence lock. A writer
 * claims it by making its sequence odd (compare-and-swap: a writer that loses, or a handler
 * that interrupts one, keeps nothing), writes, then makes it even again; a reader that sees an
 * odd or changed sequence misses. An entry is valid for the maps generation it was kept at
 * (identity.c): an object loaded or unloaded since may have put other code at the same pc. */
#ifndef ASP_STEP_CACHE_H
#define ASP_STEP_CACHE_H

#include "frame_rule.h"

/* A frame rule a walk can follow, in the form the walk reads: the CFA from the stack pointer
 * or the frame pointer, the return address saved at an offset from it. */
typedef struct asp_step {
    int32_t cfa_off, ra_off, fp_off;
    uint8_t cfa_fp;    /* the CFA is computed from the frame pointer, else the stack pointer */
    uint8_t fp_where;  /* ASP_SAVED_*: where the caller's frame pointer is */
    uint8_t ra_signed, b_key;
} asp_step;
_Static_assert(sizeof(asp_step) == 16, "two words in a cache entry");

/* 1 and *out: `rule` is one a walk can follow; 0: it is not, and the walk ends at its frame —
 * among them a rule that leaves the return address in its register (aarch64's x30: a leaf,
 * or a frame interrupted mid-prologue, which no frame above our own is). */
int asp_step_of(const asp_frame_rule *rule, asp_step *out);

#define ASP_STEP_CACHE_SLOTS 1024u /* power of 2; a miss only costs reading the CFI again */

typedef struct asp_step_entry {
    uint64_t seq, pc, generation;
    uint64_t step[2];
} asp_step_entry;
extern asp_step_entry asp_steps[ASP_STEP_CACHE_SLOTS];

static inline asp_step_entry *asp_step_slot(uint64_t pc) {
    return &asp_steps[(pc ^ (pc >> 11) ^ (pc >> 23)) & (ASP_STEP_CACHE_SLOTS - 1)];
}

/* 1 and *out: the step kept for `pc` at maps generation `generation`; 0: none kept. Inline:
 * the walk asks once a frame. */
static inline int asp_step_cache_get(uint64_t pc, uint64_t generation, asp_step *out) {
    const asp_step_entry *e = asp_step_slot(pc);
    const uint64_t seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
    if (seq & 1u) return 0; /* (an entry never kept has pc 0, which no key is) */
    const uint64_t at = __atomic_load_n(&e->pc, __ATOMIC_RELAXED);
    const uint64_t gen = __atomic_load_n(&e->generation, __ATOMIC_RELAXED);
    const uint64_t words[2] = {__atomic_load_n(&e->step[0], __ATOMIC_RELAXED), __atomic_load_n(&e->step[1], __ATOMIC_RELAXED)};
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) != seq || at != pc || gen != generation) return 0;
    __builtin_memcpy(out, words, sizeof *out);
    return 1;
}

/* Keeps `step` for `pc`; a slot another thread is writing is left alone. */
void asp_step_cache_put(uint64_t pc, uint64_t generation, const asp_step *step);

#endif
