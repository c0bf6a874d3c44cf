/* decide.h — matching a rule's conditions and deciding whether it fires: pure functions of a
 * rule copy (view.h), its counters (counters.h) and the call's values, shared by the gate,
 * the filter and every dispatch path. Static inline, so each path compiles its own copy into
 * its own registers. No locks, no allocation, no stdio: callable from signal handlers. */
#ifndef ASP_DECIDE_H
#define ASP_DECIDE_H

#include <errno.h>
#include "context.h"
#include "counters.h"
#include "glob.h"
#include "identity.h"
#include "integer_width.h"
#include "aspects_prng.h"
#include "signatures.h"
#include "sys.h"

/* An argument as a 64-bit value (integer_width.h: sign-extended for signed types), and back. */
static inline uint64_t asp_widen(uint8_t type, const void *p) { return asp_int_load(type, p); }
static inline void asp_narrow(uint8_t type, void *p, uint64_t v) { asp_int_store(type, p, v); }

/* One argument condition against the argument's value (widened to 64 bits by its type). */
/* `fdpath`: the path the descriptor refers to now, read from /proc/self/fd at each call. Not
 * cached: a descriptor is closed and its number reused for another file all the time (a
 * journal, a log rotated), and no cheaper question tells whether it still names the same
 * file; one readlink (~1 µs) is paid only by calls of functions with such a rule. A socket,
 * pipe or deleted file has its kernel name ("socket:[123]", "/tmp/x (deleted)"). */
__attribute__((noinline)) static int asp_fdpath_matches(const asp_rule_view *v, uint32_t i, uint64_t x) {
    const aspects_matcher *m = &v->matchers[i];
    const int fd = (int)(int32_t)x;
    if (fd < 0) return 0;
    char proc[32] = "/proc/self/fd/";
    size_t n = 14;
    char digits[12];
    size_t k = 0;
    unsigned u = (unsigned)fd;
    do { digits[k++] = (char)('0' + u % 10); u /= 10; } while (u);
    while (k) proc[n++] = digits[--k];
    proc[n] = 0;
    char path[1024];
    const int saved = errno;
    const long len = asp_sys_readlink(proc, path, sizeof path - 1);
    errno = saved;
    if (len <= 0) return 0;
    path[len] = 0;
    const char *pattern = v->r->strings + m->str_off;
    if (v->plans[i].fixed) return asp_glob_fixed(pattern, m->str_len, &v->plans[i], path, (size_t)len + 1);
    return asp_glob_match(pattern, m->str_len, path, (size_t)len + 1);
}

static inline __attribute__((always_inline)) int asp_matcher_holds(const asp_rule_view *v, uint32_t i, uint8_t type, uint64_t x) {
    const aspects_matcher *m = &v->matchers[i];
    const uint64_t a = m->a, b = m->b;
    switch (m->kind) {
    case ASPECTS_MATCH_EQ: return x == a;
    case ASPECTS_MATCH_NE: return x != a;
    case ASPECTS_MATCH_RANGE:
        if (asp_int_signed(type)) return (int64_t)x >= (int64_t)a && (int64_t)x <= (int64_t)b;
        return x >= a && x <= b;
    case ASPECTS_MATCH_MASK_ANY: return (x & a) != 0;
    case ASPECTS_MATCH_MASK_ALL: return (x & a) == a;
    case ASPECTS_MATCH_GLOB:
    case ASPECTS_MATCH_PREFIX: {
        /* A NULL or near-NULL pointer is never read: the original reports EFAULT. */
        if (type != ASPECTS_T_STR || x < 4096) return 0;
        const char *pattern = v->r->strings + m->str_off, *str = (const char *)(uintptr_t)x;
        if (m->kind == ASPECTS_MATCH_PREFIX) return asp_prefix_match(pattern, m->str_len, str, 4096);
        if (v->plans[i].fixed) return asp_glob_fixed(pattern, m->str_len, &v->plans[i], str, 4096);
        return asp_glob_match(pattern, m->str_len, str, 4096);
    }
    case ASPECTS_MATCH_FDPATH: return asp_fdpath_matches(v, i, x);
    default: return 0;
    }
}

/* The rule's `caller` glob against the object that contains the return address `ip`. A loop
 * calls from one place: the last address and its answer are kept in the rule copy (one word,
 * so threads racing on it see one pair or the other), which saves the lookup in the cached
 * /proc/self/maps and the glob. Like that cache, it does not notice an object unloaded and
 * another loaded at the same address while the rule copy lives. */
static inline int asp_caller_ok(const asp_rule_view *v, uint64_t ip) {
    const uint64_t memo = __atomic_load_n(&v->caller_memo, __ATOMIC_RELAXED);
    if ((memo & 2) && (memo >> 2) == ip) return (int)(memo & 1);
    const int ok = asp_caller_matches(ip, v->r->strings + v->caller_off, v->caller_len);
    if (ok < 0) return 0; /* not known this time (the maps are being read): not kept */
    if (ip < (UINT64_C(1) << 62)) /* user-space addresses always are */
        __atomic_store_n(&((asp_rule_view *)v)->caller_memo, ip << 2 | 2 | (uint64_t)ok, __ATOMIC_RELAXED);
    return ok;
}

/* The rule's `site` condition for the return address `ip`, with the same one-word memo as
 * asp_caller_ok (a loop calls from one place). */
static inline int asp_site_only_ok(const asp_rule_view *v, uint64_t ip) {
    const uint64_t memo = __atomic_load_n(&v->site_memo, __ATOMIC_RELAXED);
    if ((memo & 2) && (memo >> 2) == ip) return (int)(memo & 1);
    const int ok = asp_site_matches(ip, v->r->strings + v->site_off, v->site_len, v->site_offset);
    if (ok < 0) return 0;
    if (ip < (UINT64_C(1) << 62))
        __atomic_store_n(&((asp_rule_view *)v)->site_memo, ip << 2 | 2 | (uint64_t)ok, __ATOMIC_RELAXED);
    return ok;
}

/* Where the call comes from: its site, and for a `context` rule (whose first frame is its
 * site) the callers above it too. The site first: it is memoized, and most calls of a
 * wrapped function come from elsewhere; only a call from the site unwinds (context.c). */
static inline int asp_site_ok(const asp_rule_view *v, const asp_export_desc *ex, uint64_t ip) {
    if (!asp_site_only_ok(v, ip)) return 0;
    return !(v->flags & ASPECTS_RULE_HAS_CONTEXT) || asp_context_matches(ex, ip, v->context_depth, v->context_hash);
}

/* The first call number the rule can fire on (nth, after and every folded): set when the copy
 * is made and never changed, because a call that took a smaller number may still be on its way
 * to this comparison. */
static inline uint64_t asp_gate_of(const asp_rule_view *v) { return v->gate; }

/* A rule past its nth call, or whose `times` or `once` claim failed, can never fire again in
 * this process (the counts behind them only grow, and a changed rule gets a new copy): the
 * stubs' gate may close for good (asp_next_possible). Only the gate ahead of the calls not yet
 * counted: a call that already took its number — nth itself, taken just before — is still
 * decided exactly (closing the copy's own first gate here once lost that firing). Not for
 * thread scope, where another thread may still be below nth or have claims left. Returns 0
 * (does not fire). */
static inline int asp_never_again(const asp_rule_view *v) {
    if (v->scope != ASPECTS_SCOPE_THREAD) __atomic_store_n(&((asp_rule_view *)v)->never_again, 1u, __ATOMIC_RELAXED);
    return 0;
}

/* Whether a rule fires on its matching call number k (counted already). The claims come
 * last, most exclusive last: a call that passed every other condition takes its `times`
 * unit, then its once-per-process/hierarchy, then the table-wide autoRemove. */
static inline __attribute__((always_inline)) int asp_decide_counted(const asp_rule_view *v, uint64_t k) {
    if (k == 0) return 0;
    /* Past its nth call a rule cannot fire again in this scope (the counts only grow). */
    if (v->nth && k != v->nth) return k > v->nth ? asp_never_again(v) : 0;
    if (v->after && k <= v->after) return 0;
    if (v->every && ((v->flags & ASPECTS_RULE_EVERY_FROM) ? (k - v->after - 1u) % v->every : k % v->every)) return 0;
    if (ASP_UNLIKELY(v->flags | v->times)) {
        if ((v->flags & ASPECTS_RULE_PROBABILITY) && !aspects_schedule_fires(v->seed, v->rule_key, &v->schedule, k))
            return 0;
        if (v->times && !asp_claim_times(v)) return asp_never_again(v);
        if ((v->flags & ASPECTS_RULE_ONCE_PROCESS) && !asp_claim_once_process(v)) return asp_never_again(v);
        if ((v->flags & ASPECTS_RULE_ONCE_HIERARCHY) && !asp_claim_once_hierarchy(v->r)) return asp_never_again(v);
        if ((v->flags & ASPECTS_RULE_AUTOREMOVE) && !asp_claim_autoremove(v->r)) return 0;
    }
    asp_stat_fired(v);
    return 1;
}

/* The first call number after k on which the rule could fire, its claims aside (UINT64_MAX:
 * none): what the stub's gate lets through until then (gate.h). Exact for nth, after, every
 * and probability alone; for `every` with `probability` after a few tries a lower bound,
 * which is always safe (a call the gate lets in is decided exactly). */
static inline uint64_t asp_next_possible(const asp_rule_view *v, uint64_t k) {
    if (asp_gate_of(v) == UINT64_MAX || k == UINT64_MAX || __atomic_load_n(&v->never_again, __ATOMIC_RELAXED))
        return UINT64_MAX; /* never, or never again (asp_never_again) */
    if ((v->flags & ASPECTS_RULE_AUTOREMOVE) && __atomic_load_n(&v->r->claim, __ATOMIC_RELAXED)) return UINT64_MAX;
    uint64_t m = k + 1u;
    if (v->nth) return m <= v->nth ? v->nth : UINT64_MAX;
    if (v->after >= m) {
        if (v->after == UINT64_MAX) return UINT64_MAX;
        m = v->after + 1u;
    }
    const int draws = (v->flags & ASPECTS_RULE_PROBABILITY) && !v->schedule.always;
    for (uint32_t tries = 0; tries < 16u; tries++) {
        if (v->every) {
            /* the multiples of `every`, or with `first` the calls first, first + every, ... */
            const uint64_t r = (v->flags & ASPECTS_RULE_EVERY_FROM) ? (m - v->after - 1u) % v->every : m % v->every;
            if (r) {
                if (m > UINT64_MAX - (v->every - r)) return UINT64_MAX;
                m += v->every - r;
            }
        }
        if (!draws) return m;
        const uint64_t f = aspects_schedule_next(v->seed, v->rule_key, &v->schedule, m - 1u);
        if (f == m || !v->every || f == UINT64_MAX) return f;
        m = f;
    }
    return m;
}

/* Whether the rule numbers a call when it returns rather than on entry: an `after` rule with a
 * condition on what the original did — its result or errno (when.result), or for `corrupt`
 * bytes to corrupt — counts only the calls whose outcome matched ("the 3rd successful
 * write"). Every other rule, whatever its position, numbers each call on entry, so that a
 * call nested in another (a signal handler's, a recursion through the PLT) is numbered after
 * it on every path. The stubs' gate and filter count on entry: never for these rules
 * (asp_counts_alone). */
static inline int asp_numbered_at_return(const asp_rule_view *v) {
    return v->position == ASPECTS_POSITION_AFTER && ((v->flags & ASPECTS_RULE_HAS_RESULT) || (v->actions & ASPECTS_ACTION_CORRUPT));
}

/* The first call number the rule can fire on, for a new copy (its `gate`, which a call below
 * it is decided by with one comparison): asp_next_possible from the start, so "the next
 * number that can fire" has one definition, for the copy, the stubs' gate and every path. */
static inline uint64_t asp_first_possible(asp_rule_view *v) {
    v->gate = 1; /* (asp_next_possible first asks whether the copy can fire at all) */
    return asp_next_possible(v, 0);
}

/* An after rule's condition on what the original did (ASPECTS_RULE_HAS_RESULT): its result
 * in a range, the errno it left, the result below an integer argument's value (bit 2,
 * `lt_arg`: a short write returns less than its count). Decided before the call is counted,
 * as argument conditions are: `nth` then counts the calls whose result matched ("the 3rd
 * successful write"). The arguments are `vals` as the full path read them, or, on the single
 * path that reads none until a rule fires, `args` (vals NULL). A damaged table may name any
 * argument: one that this export lacks or that is not an integer never holds, as for `args`
 * (asp_apply_arg_sets). */
static inline int asp_result_holds(const asp_rule_view *v, const asp_export_desc *ex, void **args,
                                   const uint64_t *vals, int64_t result, int err) {
    if (!(v->flags & ASPECTS_RULE_HAS_RESULT)) return 1;
    if ((v->result_checks & 1u) && (result < v->result_min || result > v->result_max)) return 0;
    if ((v->result_checks & 2u) && err != v->result_errno) return 0;
    if (v->result_checks & 4u) {
        const uint32_t g = v->result_arg;
        if (g >= ASP_MAX_ARGS) return 0;
        const uint32_t a = ex->argmap[g];
        if (a >= ex->nargs) return 0;
        const uint8_t type = ex->args[a];
        if (type < ASPECTS_T_I8 || type > ASPECTS_T_U64) return 0;
        const uint64_t x = vals ? vals[a] : asp_widen(type, args[a]);
        /* as numbers: -1 is below any count (add "min": 0 to leave failures out) */
        const int is_unsigned = (type & 1u) == 0;
        if (is_unsigned ? (result >= 0 && (uint64_t)result >= x) : result >= (int64_t)x) return 0;
    }
    return 1;
}

/* The error a firing reports: the rule's, or one of its list drawn from (seed, rule, call). */
static inline int32_t asp_chosen_error(const asp_rule_view *v, uint64_t call) {
    uint32_t n = v->errno_choice_count;
    if (!n) return v->errno_value;
    return v->r->errno_choices[aspects_choice(v->seed, v->rule_key, call, n)];
}

/* Conditions on arguments, process and caller. Matchers name the group's arguments; argmap
 * says where this export has them. `vals` holds the arguments widened to 64 bits (the full
 * path), or with `raw` as the registers left them (the filter), widened here one by one as a
 * matcher asks: inline, so `raw` costs nothing either way. */
static inline __attribute__((always_inline)) int asp_conditions_hold(const asp_rule_view *v, const asp_export_desc *ex,
                                                                     const uint64_t *vals, int raw, uint64_t caller) {
    for (uint32_t i = 0; i < v->matcher_count; i++) {
        uint32_t arg = ex->argmap[v->matchers[i].arg]; /* .arg < ASP_MAX_ARGS: checked when copied */
        if (arg >= ex->nargs) return 0;                /* this name of the group has no such argument */
        const uint64_t x = raw ? asp_widen(ex->args[arg], &vals[arg]) : vals[arg];
        if (!asp_matcher_holds(v, i, ex->args[arg], x)) return 0;
    }
    if (!v->process_ok) return 0;
    if ((v->flags & ASPECTS_RULE_HAS_CALLER) && !asp_caller_ok(v, caller)) return 0;
    if ((v->flags & ASPECTS_RULE_HAS_SITE) && !asp_site_ok(v, ex, caller)) return 0;
    return 1;
}

#endif
