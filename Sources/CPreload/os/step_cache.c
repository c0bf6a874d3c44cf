/* step_cache.c — the process's steps by pc (step_cache.h): the table, and keeping one. */
#include "step_cache.h"

asp_step_entry asp_steps[ASP_STEP_CACHE_SLOTS];

static int asp_fits(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

int asp_step_of(const asp_frame_rule *rule, asp_step *out) {
    if ((rule->cfa_reg != ASP_DW_SP && rule->cfa_reg != ASP_DW_FP) || rule->ra_where != ASP_SAVED_AT_OFFSET ||
        !asp_fits(rule->cfa_off) || !asp_fits(rule->ra_off) || !asp_fits(rule->fp_off))
        return 0;
    *out = (asp_step){
        .cfa_off = (int32_t)rule->cfa_off,
        .ra_off = (int32_t)rule->ra_off,
        .fp_off = (int32_t)rule->fp_off,
        .cfa_fp = rule->cfa_reg == ASP_DW_FP,
        .fp_where = (uint8_t)rule->fp_where,
        .ra_signed = rule->ra_signed != 0,
        .b_key = rule->b_key != 0,
    };
    return 1;
}

void asp_step_cache_put(uint64_t pc, uint64_t generation, const asp_step *step) {
    asp_step_entry *e = asp_step_slot(pc);
    uint64_t seq = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
    if ((seq & 1u) || !__atomic_compare_exchange_n(&e->seq, &seq, seq + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return;
    /* a reader that sees any of the stores below then sees the odd sequence too */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    uint64_t words[2];
    __builtin_memcpy(words, step, sizeof words);
    __atomic_store_n(&e->pc, pc, __ATOMIC_RELAXED);
    __atomic_store_n(&e->generation, generation, __ATOMIC_RELAXED);
    __atomic_store_n(&e->step[0], words[0], __ATOMIC_RELAXED);
    __atomic_store_n(&e->step[1], words[1], __ATOMIC_RELAXED);
    __atomic_store_n(&e->seq, seq + 2, __ATOMIC_RELEASE);
}
