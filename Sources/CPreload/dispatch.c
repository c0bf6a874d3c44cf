/* dispatch.c — aspects_dispatch, the one handler behind every forwarding stub: THE hot path.
 *
 * Contract (every line below keeps it):
 *   - no locks, no malloc, no stdio, no libc function that libaspects.so itself exports: safe
 *     in signal handlers and between fork and exec;
 *   - errno: the original sees the caller's errno and the caller sees what the original left,
 *     unless advice sets it; the engine's own work never leaks into it;
 *   - re-entry: while this thread is inside the engine (asp_tls.busy) every wrapped call goes
 *     straight to the original, so advice never advises itself; while an original runs the
 *     guard is down, so calls the original makes to other advised functions are advised, but
 *     a second name of the same alias group (or a second copy of the library) is not advised
 *     again for the same call (asp_tls.group_active);
 *   - shared memory is untrusted: a rule is used only after its seqlock validated, every index
 *     is checked against the geometry copied at attach.
 * Order: all `before` rules in table order, then the first firing `instead` rule (a later one
 * that would fire is counted and reported as shadowed) or the original, then all `after` rules.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ffi.h>
#include <netdb.h>
#include <stddef.h>
#include "internal.h"
#include "prng.h"

ASP_TLS asp_thread asp_tls;
/* The wrapper stubs store the caller's return address at %fs:asp_tls (arch/stub_x86_64.h). */
_Static_assert(offsetof(asp_thread, caller_ip) == 0, "caller_ip must be first");

/* A validated private copy of the fields of one rule that the call needs. */
typedef struct asp_view {
    aspects_rule *r;
    uint32_t slot;
    uint32_t position;
    uint32_t actions;
    uint32_t scope;
    uint32_t signal_number;
    int32_t errno_value;
    int64_t return_value;
    uint64_t delay_ns, nth, after, every, times, serial, call;
    uint64_t probability, seed, rule_key;
    uint32_t flags;
    uint32_t arg_set_count;
    uint32_t errno_choice_count;
} asp_view;

/* An argument as a 64-bit value: sign-extended for signed types, so matchers compare values
 * the way the rule wrote them. */
static inline uint64_t asp_widen(uint8_t type, const void *p) {
    switch (type) {
    case ASPECTS_T_I8: return (uint64_t)(int64_t)*(const int8_t *)p;
    case ASPECTS_T_U8: return *(const uint8_t *)p;
    case ASPECTS_T_I16: return (uint64_t)(int64_t)*(const int16_t *)p;
    case ASPECTS_T_U16: return *(const uint16_t *)p;
    case ASPECTS_T_I32: return (uint64_t)(int64_t)*(const int32_t *)p;
    case ASPECTS_T_U32: return *(const uint32_t *)p;
    case ASPECTS_T_F32: return *(const uint32_t *)p;
    default: return *(const uint64_t *)p;
    }
}

static inline void asp_narrow(uint8_t type, void *p, uint64_t v) {
    switch (type) {
    case ASPECTS_T_I8: case ASPECTS_T_U8: *(uint8_t *)p = (uint8_t)v; break;
    case ASPECTS_T_I16: case ASPECTS_T_U16: *(uint16_t *)p = (uint16_t)v; break;
    case ASPECTS_T_I32: case ASPECTS_T_U32: case ASPECTS_T_F32: *(uint32_t *)p = (uint32_t)v; break;
    default: *(uint64_t *)p = v; break;
    }
}

static inline int64_t asp_read_return(uint8_t type, const void *ret) {
    switch (type) {
    case ASPECTS_T_VOID: return 0;
    case ASPECTS_T_I8: return (int8_t)*(const ffi_sarg *)ret;
    case ASPECTS_T_U8: return (uint8_t)*(const ffi_arg *)ret;
    case ASPECTS_T_I16: return (int16_t)*(const ffi_sarg *)ret;
    case ASPECTS_T_U16: return (uint16_t)*(const ffi_arg *)ret;
    case ASPECTS_T_I32: return (int32_t)*(const ffi_sarg *)ret;
    case ASPECTS_T_U32: return (uint32_t)*(const ffi_arg *)ret;
    default: return *(const int64_t *)ret;
    }
}

static int asp_matchers_hold(aspects_rule *r, const asp_export_desc *ex, const uint64_t *vals) {
    uint32_t n = r->matcher_count;
    if (n > ASPECTS_MAX_MATCHERS) return 0;
    for (uint32_t i = 0; i < n; i++) {
        const aspects_matcher *m = &r->matchers[i];
        if (m->arg >= ASP_MAX_ARGS) return 0;
        uint32_t arg = ex->argmap[m->arg];
        if (arg >= ex->nargs) return 0; /* this name of the group has no such argument */
        uint8_t type = ex->args[arg];
        uint64_t v = vals[arg], a = m->a, b = m->b;
        int signedness = type == ASPECTS_T_I8 || type == ASPECTS_T_I16 || type == ASPECTS_T_I32 || type == ASPECTS_T_I64;
        switch (m->kind) {
        case ASPECTS_MATCH_EQ: if (v != a) return 0; break;
        case ASPECTS_MATCH_NE: if (v == a) return 0; break;
        case ASPECTS_MATCH_RANGE:
            if (signedness ? ((int64_t)v < (int64_t)a || (int64_t)v > (int64_t)b) : (v < a || v > b)) return 0;
            break;
        case ASPECTS_MATCH_MASK_ANY: if (!(v & a)) return 0; break;
        case ASPECTS_MATCH_MASK_ALL: if ((v & a) != a) return 0; break;
        case ASPECTS_MATCH_GLOB:
        case ASPECTS_MATCH_PREFIX: {
            uint32_t off = m->str_off, len = m->str_len;
            if (type != ASPECTS_T_STR || off + len > ASPECTS_RULE_STRINGS_SIZE) return 0;
            /* A NULL or near-NULL pointer is never read: the original reports EFAULT. */
            if (v < 4096) return 0;
            const char *pattern = r->strings + off, *s = (const char *)(uintptr_t)v;
            int ok = m->kind == ASPECTS_MATCH_GLOB ? asp_glob_match(pattern, len, s, 4096)
                                                    : asp_prefix_match(pattern, len, s, 4096);
            if (!ok) return 0;
            break;
        }
        default: return 0;
        }
    }
    return 1;
}

/* Reads rule `slot` if it is active and its matchers hold for this call; the copy is trusted
 * only if the slot's sequence did not move meanwhile. */
static int asp_read_rule(uint32_t slot, const asp_export_desc *ex, const uint64_t *vals, uint64_t caller, asp_view *v) {
    if (slot >= asp_tab.rule_capacity) return 0;
    aspects_rule *r = &asp_tab.rules[slot];
    uint32_t s1 = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE);
    if ((s1 & 1u) || __atomic_load_n(&r->state, __ATOMIC_RELAXED) != ASPECTS_RULE_ACTIVE) return 0;
    /* A stale list snapshot may name a slot since reused for another function. */
    if (r->group != ex->group) return 0;
    v->flags = r->flags;
    /* An autoRemove rule that fired is gone for everyone, before any writer tidies up. */
    if ((v->flags & ASPECTS_RULE_AUTOREMOVE) && __atomic_load_n(&r->claim, __ATOMIC_RELAXED)) return 0;
    v->r = r;
    v->slot = slot;
    v->position = r->position;
    v->actions = r->actions;
    v->scope = r->scope;
    v->signal_number = r->signal_number;
    v->errno_value = r->errno_value;
    v->return_value = r->return_value;
    v->delay_ns = r->delay_ns;
    v->nth = r->nth;
    v->after = r->after;
    v->every = r->every;
    v->times = r->times;
    v->serial = r->serial;
    v->probability = r->probability;
    v->seed = r->seed;
    v->rule_key = r->rule_key;
    v->arg_set_count = r->arg_set_count;
    v->errno_choice_count = r->errno_choice_count;
    v->call = 0;
    if (!asp_matchers_hold(r, ex, vals)) return 0;
    if (v->flags & ASPECTS_RULE_HAS_PROCESS) {
        uint32_t off = r->process_off, len = r->process_len;
        if (off + len > ASPECTS_RULE_STRINGS_SIZE || !asp_process_matches(r->strings + off, len)) return 0;
    }
    if (v->flags & ASPECTS_RULE_HAS_CALLER) {
        uint32_t off = r->caller_off, len = r->caller_len;
        if (off + len > ASPECTS_RULE_STRINGS_SIZE || !asp_caller_matches(caller, r->strings + off, len)) return 0;
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&r->seq, __ATOMIC_RELAXED) != s1) return 0;
    return v->position <= ASPECTS_POSITION_AFTER && v->scope <= ASPECTS_SCOPE_TABLE;
}

/* Counts this matching call in the rule's scope and decides whether the rule fires on it.
 * The claims come last, most exclusive last: a call that passed every other condition takes
 * its `times` unit, then its once-per-process/hierarchy, then the table-wide autoRemove. */
static int asp_decide(asp_view *v, int may_fire) {
    asp_stat_matched(v->r, v->slot, v->serial);
    uint64_t k = asp_count_call(v->r, v->slot, v->scope, v->serial);
    v->call = k;
    if (!may_fire || k == 0) return 0;
    if (v->nth && k != v->nth) return 0;
    if (v->after && k <= v->after) return 0;
    if (v->every && k % v->every) return 0;
    if ((v->flags & ASPECTS_RULE_PROBABILITY) && v->probability != UINT64_MAX &&
        asp_draw(v->seed, v->rule_key, k) >= v->probability)
        return 0;
    if (v->times && !asp_claim_times(v->r, v->slot, v->scope, v->serial, v->times)) return 0;
    if ((v->flags & ASPECTS_RULE_ONCE_PROCESS) && !asp_claim_once_process(v->slot, v->serial)) return 0;
    if ((v->flags & ASPECTS_RULE_ONCE_HIERARCHY) && !asp_claim_once_hierarchy(v->r)) return 0;
    if ((v->flags & ASPECTS_RULE_AUTOREMOVE) && !asp_claim_autoremove(v->r)) return 0;
    asp_stat_fired(v->r, v->slot, v->serial);
    return 1;
}

/* The error a firing reports: the rule's, or one of its list drawn from (seed, rule, call). */
static int32_t asp_chosen_error(const asp_view *v) {
    uint32_t n = v->errno_choice_count;
    if (!n) return v->errno_value;
    if (n > ASPECTS_MAX_ERRNO_CHOICES) n = ASPECTS_MAX_ERRNO_CHOICES;
    uint64_t pick = asp_mix64(asp_draw(v->seed, v->rule_key, v->call)) % n;
    return v->r->errno_choices[pick];
}

/* What an `instead` or `after` rule makes the call return, and the errno the caller sees. */
static void asp_apply_result(const asp_view *v, uint32_t idx, void *ret, int64_t *result, int *result_errno) {
    int32_t code = asp_chosen_error(v);
    if (v->actions & ASPECTS_ACTION_RETURN) {
        int64_t value = (v->flags & ASPECTS_RULE_RETURN_IS_CODE) ? code : v->return_value;
        asp_store_return(idx, ret, value);
        *result = asp_read_return(asp_exports[idx].ret, ret);
    }
    if (v->actions & ASPECTS_ACTION_ERRNO) *result_errno = code;
    if (v->actions & ASPECTS_ACTION_HERRNO) *__h_errno_location() = code;
}

/* The side effects every position shares, in a fixed order: delay, then signal. */
static void asp_run_effects(const asp_view *v) {
    if (v->actions & ASPECTS_ACTION_DELAY) asp_sys_sleep_ns(v->delay_ns);
    if (v->actions & ASPECTS_ACTION_SIGNAL) asp_sys_raise((int)v->signal_number);
}

/* `args`: overwrite arguments before the original runs (e.g. a short write). */
static void asp_apply_arg_sets(const asp_view *v, const asp_export_desc *ex, void **args, uint64_t *vals) {
    uint32_t n = v->arg_set_count;
    if (n > ASPECTS_MAX_ARG_SETS) n = ASPECTS_MAX_ARG_SETS;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g = v->r->arg_set_index[i];
        if (g >= ASP_MAX_ARGS) continue;
        uint32_t a = ex->argmap[g];
        if (a >= ex->nargs) continue;
        vals[a] = (uint64_t)v->r->arg_set_value[i];
        asp_narrow(ex->args[a], args[a], vals[a]);
    }
}

void aspects_dispatch(ffi_cif *cif, void *ret, void **args, void *user_data) {
    (void)cif;
    asp_thread *t = &asp_tls;
    const uint64_t caller = t->caller_ip; /* first: a nested armed call would overwrite it */
    const uint32_t idx = (uint32_t)(uintptr_t)user_data;
    const asp_export_desc *ex = &asp_exports[idx < ASP_EXPORT_COUNT ? idx : 0];
    uint64_t vals[ASP_MAX_ARGS] = {0};
    for (uint32_t a = 0; a < ex->nargs && a < ASP_MAX_ARGS; a++) vals[a] = asp_widen(ex->args[a], args[a]);

    if (t->busy || t->group_active == ex->group + 1u || !asp_tab.attached) {
        asp_call_original(idx, ret, args, vals);
        return;
    }
    const int caller_errno = errno;
    t->busy = 1;

    uint16_t list[ASPECTS_GROUP_RULES];
    const uint32_t n = asp_table_rules_of(ex->group, list);
    asp_view v, chosen;
    int have_instead = 0, have_after = 0;

    for (uint32_t i = 0; i < n; i++) {
        if (!asp_read_rule(list[i], ex, vals, caller, &v)) continue;
        if (v.position == ASPECTS_POSITION_AFTER) { have_after = 1; continue; }
        if (v.position == ASPECTS_POSITION_INSTEAD) {
            if (!have_instead) {
                if (asp_decide(&v, 1)) { chosen = v; have_instead = 1; }
            } else {
                /* Matched, but an earlier `instead` already fired: counted, not fired. */
                asp_decide(&v, 0);
                asp_event_append(ASPECTS_EVENT_SHADOWED, v.slot, v.r, v.serial, v.call, idx, vals, 0, 0);
            }
            continue;
        }
        if (!asp_decide(&v, 1)) continue;
        asp_event_append(ASPECTS_EVENT_FIRED, v.slot, v.r, v.serial, v.call, idx, vals, 0, caller_errno);
        asp_run_effects(&v);
        if (v.actions & ASPECTS_ACTION_ARGS) asp_apply_arg_sets(&v, ex, args, vals);
    }

    int64_t result = 0;
    int result_errno = caller_errno;
    if (have_instead) {
        asp_run_effects(&chosen);
        asp_apply_result(&chosen, idx, ret, &result, &result_errno);
        asp_event_append(ASPECTS_EVENT_FIRED, chosen.slot, chosen.r, chosen.serial, chosen.call, idx, vals, result, result_errno);
    } else {
        const uint32_t outer_group = t->group_active;
        t->group_active = ex->group + 1u;
        t->busy = 0;
        errno = caller_errno;
        asp_call_original(idx, ret, args, vals);
        result_errno = errno;
        t->busy = 1;
        t->group_active = outer_group;
        result = asp_read_return(ex->ret, ret);
    }

    for (uint32_t i = 0; have_after && i < n; i++) {
        if (!asp_read_rule(list[i], ex, vals, caller, &v) || v.position != ASPECTS_POSITION_AFTER) continue;
        if (!asp_decide(&v, 1)) continue;
        asp_run_effects(&v);
        asp_apply_result(&v, idx, ret, &result, &result_errno);
        asp_event_append(ASPECTS_EVENT_FIRED, v.slot, v.r, v.serial, v.call, idx, vals, result, result_errno);
    }

    t->busy = 0;
    errno = result_errno;
}
