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
 *   - shared memory is untrusted: rules are used through validated copies (rulecache.c, remade
 *     only when the table's generation moves), every index is checked against the geometry
 *     copied at attach;
 *   - cost: an armed call pays libffi's closure entry, one generation check, and per rule of
 *     its group the conditions it has (see BENCHMARKS.md for the instruction counts).
 * Order: all `before` rules in table order, then the first firing `instead` rule (a later one
 * that would fire is counted and reported as shadowed) or the original, then all `after` rules.
 *
 * Three paths, chosen per group when its rules are copied (rulecache.c, asp_views_path):
 *   single  one before/instead rule: count, compare with the rule's gate, call the original
 *           (asp_dispatch, at the end of this file: the armed call most programs make);
 *           asp_single_reached decides exactly and fires;
 *   lean    several simple rules counted per process (asp_dispatch_lean);
 *   full    everything else, and every call that arrives while the engine is busy
 *           (asp_dispatch_full).
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

/* One argument condition against the argument's value (widened to 64 bits by its type). */
static inline __attribute__((always_inline)) int asp_matcher_holds(const asp_rule_view *v, uint32_t i, uint8_t type, uint64_t x) {
    const aspects_matcher *m = &v->matchers[i];
    const uint64_t a = m->a, b = m->b;
    switch (m->kind) {
    case ASPECTS_MATCH_EQ: return x == a;
    case ASPECTS_MATCH_NE: return x != a;
    case ASPECTS_MATCH_RANGE:
        if (type == ASPECTS_T_I8 || type == ASPECTS_T_I16 || type == ASPECTS_T_I32 || type == ASPECTS_T_I64)
            return (int64_t)x >= (int64_t)a && (int64_t)x <= (int64_t)b;
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
    default: return 0;
    }
}

/* Conditions on arguments, process and caller. Matchers name the group's arguments; argmap
 * says where this export has them. */
static int asp_conditions_hold(const asp_rule_view *v, const asp_export_desc *ex, const uint64_t *vals, uint64_t caller) {
    for (uint32_t i = 0; i < v->matcher_count; i++) {
        uint32_t arg = ex->argmap[v->matchers[i].arg]; /* .arg < ASP_MAX_ARGS: checked when copied */
        if (arg >= ex->nargs) return 0;                /* this name of the group has no such argument */
        if (!asp_matcher_holds(v, i, ex->args[arg], vals[arg])) return 0;
    }
    if ((v->flags & ASPECTS_RULE_HAS_PROCESS) && !asp_process_matches(v->r->strings + v->process_off, v->process_len)) return 0;
    if ((v->flags & ASPECTS_RULE_HAS_CALLER) && !asp_caller_matches(caller, v->r->strings + v->caller_off, v->caller_len)) return 0;
    return 1;
}

/* A rule whose `times` or `once` claim failed can never fire again in this process (the
 * counts behind the claims only grow, and a changed rule gets a new copy): its gate closes, so
 * the single-rule path decides its later calls with one comparison. Not for thread scope,
 * where another thread may still have claims left. Returns 0 (does not fire). */
static int asp_view_spent(const asp_rule_view *v) {
    if (v->scope != ASPECTS_SCOPE_THREAD) __atomic_store_n(&((asp_rule_view *)v)->gate, UINT64_MAX, __ATOMIC_RELAXED);
    return 0;
}

/* Whether a rule fires on its matching call number k (counted already). The claims come
 * last, most exclusive last: a call that passed every other condition takes its `times`
 * unit, then its once-per-process/hierarchy, then the table-wide autoRemove. */
static inline __attribute__((always_inline)) int asp_decide_counted(const asp_rule_view *v, uint64_t k) {
    if (k == 0) return 0;
    if (v->nth && k != v->nth) return 0;
    if (v->after && k <= v->after) return 0;
    if (v->every && k % v->every) return 0;
    if (ASP_UNLIKELY(v->flags | v->times)) {
        if ((v->flags & ASPECTS_RULE_PROBABILITY) && v->probability != UINT64_MAX &&
            asp_draw(v->seed, v->rule_key, k) >= v->probability)
            return 0;
        if (v->times && !asp_claim_times(v)) return asp_view_spent(v);
        if (v->flags & ASPECTS_RULE_ONCE_PROCESS) {
            uint64_t expected = 0;
            if (v->slot >= ASPECTS_MAX_RULE_CAPACITY ||
                !__atomic_compare_exchange_n(&asp_local[v->slot].once, &expected, 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                return asp_view_spent(v);
        }
        if ((v->flags & ASPECTS_RULE_ONCE_HIERARCHY) && !asp_claim_once_hierarchy(v->r)) return asp_view_spent(v);
        if ((v->flags & ASPECTS_RULE_AUTOREMOVE) && !asp_claim_autoremove(v->r)) return 0;
    }
    asp_stat_fired(v);
    return 1;
}

/* Counts a matching call in the rule's scope (setting *call) and decides whether the rule
 * fires on it. */
static int asp_decide(const asp_rule_view *v, int may_fire, uint64_t *call) {
    asp_stat_matched(v);
    uint64_t k = asp_count_call(v);
    *call = k;
    return may_fire && asp_decide_counted(v, k);
}

/* The side effects every position shares, in a fixed order: delay, then signal. */
static void asp_run_effects(const asp_rule_view *v) {
    if (v->actions & ASPECTS_ACTION_DELAY) asp_sys_sleep_ns(v->delay_ns);
    if (v->actions & ASPECTS_ACTION_SIGNAL) asp_sys_raise((int)v->signal_number);
}

/* `args`: overwrite arguments before the original runs (e.g. a short write). */
static void asp_apply_arg_sets(const asp_rule_view *v, const asp_export_desc *ex, void **args, uint64_t *vals) {
    for (uint32_t i = 0; i < v->arg_set_count; i++) {
        uint32_t g = v->r->arg_set_index[i];
        if (g >= ASP_MAX_ARGS) continue;
        uint32_t a = ex->argmap[g];
        if (a >= ex->nargs) continue;
        vals[a] = (uint64_t)v->r->arg_set_value[i];
        asp_narrow(ex->args[a], args[a], vals[a]);
    }
}

/* The error a firing reports: the rule's, or one of its list drawn from (seed, rule, call). */
static int32_t asp_chosen_error(const asp_rule_view *v, uint64_t call) {
    uint32_t n = v->errno_choice_count;
    if (!n) return v->errno_value;
    uint64_t pick = asp_mix64(asp_draw(v->seed, v->rule_key, call)) % n;
    return v->r->errno_choices[pick];
}

/* What an `instead` or `after` rule makes the call return, and the errno the caller sees. */
static void asp_apply_result(const asp_rule_view *v, uint64_t call, uint32_t idx, void *ret, int64_t *result, int *result_errno) {
    int32_t code = asp_chosen_error(v, call);
    if (v->actions & ASPECTS_ACTION_RETURN) {
        int64_t value = (v->flags & ASPECTS_RULE_RETURN_IS_CODE) ? code : v->return_value;
        asp_store_return(idx, ret, value);
        *result = asp_read_return(asp_export_at(idx)->ret, ret);
    }
    if (v->actions & ASPECTS_ACTION_ERRNO) *result_errno = code;
    if (v->actions & ASPECTS_ACTION_HERRNO) *__h_errno_location() = code;
}

/* The rules of a call: the group's cached copy, or (while another thread remakes it, or for a
 * group with many rules) a fresh copy of each rule read straight from the table. */
typedef long (*asp_fn6)(long, long, long, long, long, long);
typedef long (*asp_varfn6)(long, long, long, long, long, long, ...);

/* Calls an integer-signature original directly and stores its result the way the closure
 * must. On x86-64 SysV the first six integer arguments travel in registers whatever the
 * callee's arity, so passing six is exact for any such function of up to six parameters; a
 * variadic original is called through a variadic pointer so that %al (vector registers
 * used) is 0. */
static inline void asp_direct_invoke(const asp_direct_call *h, void *fn, const uint64_t *a, void *ret) {
    long r = h->variadic
        ? ((asp_varfn6)fn)((long)a[0], (long)a[1], (long)a[2], (long)a[3], (long)a[4], (long)a[5])
        : ((asp_fn6)fn)((long)a[0], (long)a[1], (long)a[2], (long)a[3], (long)a[4], (long)a[5]);
    /* a full register for 64-bit and pointer results, the closure's ffi_arg rules otherwise */
    if (ASP_LIKELY(h->ret == ASPECTS_T_I64 || h->ret == ASPECTS_T_U64 || h->ret == ASPECTS_T_PTR || h->ret == ASPECTS_T_STR))
        *(uint64_t *)ret = (uint64_t)r;
    else
        asp_store_integer(h->ret, ret, r);
}

/* The original, called the cheap way when its signature allows, else through ffi_call. */
static inline void asp_invoke_original(uint32_t idx, void *ret, void **args, const uint64_t *vals) {
    const asp_direct_call *h = &asp_direct[idx];
    void *fn = __atomic_load_n(&h->fn, __ATOMIC_RELAXED);
    if (ASP_LIKELY(fn != NULL)) asp_direct_invoke(h, fn, vals, ret);
    else asp_call_original(idx, ret, args, vals);
}

typedef struct asp_rules {
    const asp_rule_view *views;
    const uint16_t *list;
    uint32_t count, group;
} asp_rules;

static inline const asp_rule_view *asp_rule_at(const asp_rules *rs, uint32_t i, asp_rule_view *scratch) {
    if (ASP_LIKELY(rs->views != NULL)) return &rs->views[i];
    return asp_view_from_slot(rs->list[i], rs->group, scratch) ? scratch : NULL;
}

/* After dlopen/dlmopen returned: apply prototype rules to what was loaded (a dlmopen
 * namespace is remembered: dl_iterate_phdr does not list it). */
static inline void asp_after_load(uint32_t group, const void *ret) {
#ifdef ASP_GROUP_DLMOPEN
    if (group == ASP_GROUP_DLMOPEN) {
        asp_protos_note_namespace(*(void *const *)ret);
        asp_protos_sync();
        return;
    }
#endif
#ifdef ASP_GROUP_DLOPEN
    if (group == ASP_GROUP_DLOPEN) asp_protos_sync();
#endif
    (void)group; (void)ret;
}

/* The full path: every kind of rule, and the re-entry cases. */
__attribute__((noinline)) static void asp_dispatch_full(const asp_export_desc *ex, uint32_t idx, void *ret, void **args, uint64_t caller) {
    asp_thread *t = &asp_tls;
    uint64_t vals[ASP_MAX_ARGS] = {0};
    for (uint32_t a = 0; a < ex->nargs; a++) vals[a] = asp_widen(ex->args[a], args[a]);

    if (t->busy || t->group_active == ex->group + 1u || !asp_tab.attached) {
        asp_invoke_original(idx, ret, args, vals);
        return;
    }
    const int caller_errno = errno;
    t->busy = 1;

    uint16_t list[ASPECTS_GROUP_RULES];
    asp_rules rs = {.list = list, .group = ex->group};
    rs.views = asp_group_rules(ex->group, list, &rs.count);
    asp_rule_view scratch;
    const asp_rule_view *chosen = NULL;
    asp_rule_view chosen_copy;
    uint64_t chosen_call = 0, call;
    int have_after = 0;

    for (uint32_t i = 0; i < rs.count; i++) {
        const asp_rule_view *v = asp_rule_at(&rs, i, &scratch);
        if (!v) continue;
        if (v->position == ASPECTS_POSITION_AFTER) { have_after = 1; continue; }
        if (ASP_UNLIKELY((v->flags & ASPECTS_RULE_AUTOREMOVE) && __atomic_load_n(&v->r->claim, __ATOMIC_RELAXED))) continue;
        if (v->matcher_count | (v->flags & (ASPECTS_RULE_HAS_PROCESS | ASPECTS_RULE_HAS_CALLER)))
            if (!asp_conditions_hold(v, ex, vals, caller)) continue;
        if (v->position == ASPECTS_POSITION_INSTEAD) {
            if (!chosen) {
                if (asp_decide(v, 1, &call)) {
                    /* scratch is reused by the next rule: keep our own copy of the chosen one */
                    if (v == &scratch) { chosen_copy = scratch; v = &chosen_copy; }
                    chosen = v;
                    chosen_call = call;
                }
            } else {
                /* Matched, but an earlier `instead` already fired: counted, not fired. */
                asp_decide(v, 0, &call);
                asp_event_append(ASPECTS_EVENT_SHADOWED, v, call, idx, vals, 0, 0);
            }
            continue;
        }
        if (!asp_decide(v, 1, &call)) continue;
        asp_event_append(ASPECTS_EVENT_FIRED, v, call, idx, vals, 0, caller_errno);
        asp_run_effects(v);
        if (v->actions & ASPECTS_ACTION_ARGS) asp_apply_arg_sets(v, ex, args, vals);
    }

    int64_t result = 0;
    int result_errno = caller_errno;
    if (chosen) {
        asp_run_effects(chosen);
        asp_apply_result(chosen, chosen_call, idx, ret, &result, &result_errno);
        asp_event_append(ASPECTS_EVENT_FIRED, chosen, chosen_call, idx, vals, result, result_errno);
    } else {
        const uint32_t outer_group = t->group_active;
        t->group_active = ex->group + 1u;
        t->busy = 0;
        errno = caller_errno;
        asp_invoke_original(idx, ret, args, vals);
        result_errno = errno;
        t->busy = 1;
        t->group_active = outer_group;
        if (have_after) result = asp_read_return(ex->ret, ret);
        /* A library loaded just now may import functions advised from a prototype. */
        asp_after_load(ex->group, ret);
    }

    for (uint32_t i = 0; have_after && i < rs.count; i++) {
        const asp_rule_view *v = asp_rule_at(&rs, i, &scratch);
        if (!v || v->position != ASPECTS_POSITION_AFTER) continue;
        if ((v->flags & ASPECTS_RULE_AUTOREMOVE) && __atomic_load_n(&v->r->claim, __ATOMIC_RELAXED)) continue;
        if (!asp_conditions_hold(v, ex, vals, caller)) continue;
        if (!asp_decide(v, 1, &call)) continue;
        asp_run_effects(v);
        asp_apply_result(v, call, idx, ret, &result, &result_errno);
        asp_event_append(ASPECTS_EVENT_FIRED, v, call, idx, vals, result, result_errno);
    }

    t->busy = 0;
    errno = result_errno;
}

/* Calls a directly callable original with the group guard up (a second name of the same
 * group, reached from inside it, is not advised again) and stores its result the way the
 * closure must. (dlopen and dlmopen are never called directly: the full path applies
 * prototype rules after them.) */
static inline void asp_call_direct(const asp_direct_call *h, void *fn, const uint64_t *a, void *ret) {
    asp_thread *t = &asp_tls;
    const uint32_t outer_group = t->group_active;
    t->group_active = h->group + 1u;
    asp_direct_invoke(h, fn, a, ret);
    t->group_active = outer_group;
}

/* A firing `instead` rule off the full path: the result, the event, the caller's errno. */
static void asp_fire_instead(const asp_rule_view *v, uint64_t call, uint32_t idx, void *ret, const uint64_t *vals) {
    int64_t result = 0;
    int result_errno = errno;
    asp_apply_result(v, call, idx, ret, &result, &result_errno);
    asp_event_append(ASPECTS_EVENT_FIRED, v, call, idx, vals, result, result_errno);
    errno = result_errno;
}

/* The lean path: a group of several simple rules (rulecache.c, asp_views_path) and a function
 * whose original is called directly. It keeps the full path's semantics for those rules,
 * with less bookkeeping: it calls nothing that could re-enter the engine (the event writer's
 * clock is libc's vDSO reader, not a wrapper), so it needs no re-entry guard, and it leaves
 * errno alone unless a rule sets it. */
__attribute__((noinline)) static void asp_dispatch_lean(const asp_direct_call *h, uint32_t idx, void *ret, void **args,
                                                        const asp_group_cache *c) {
    const asp_export_desc *ex = h->desc;
    const uint32_t b = __atomic_load_n(&c->active, __ATOMIC_ACQUIRE) & 1u;
    const asp_rule_view *views = c->views[b];
    const uint32_t n = c->count[b];
    void *fn = __atomic_load_n(&h->fn, __ATOMIC_RELAXED);
    uint64_t vals[ASP_MAX_ARGS] = {0};
    for (uint32_t a = 0; a < h->nargs; a++) vals[a] = asp_widen(ex->args[a], args[a]);
    const asp_rule_view *chosen = NULL;
    uint64_t chosen_call = 0;
    for (uint32_t i = 0; i < n; i++) {
        const asp_rule_view *v = &views[i];
        if (v->matcher_count && !asp_conditions_hold(v, ex, vals, 0)) continue;
        asp_stat_matched(v);
        const uint64_t k = __atomic_add_fetch(&asp_local[v->slot].calls, 1, __ATOMIC_RELAXED);
        const int fires = k >= v->gate && (!v->nth || k == v->nth) && (!v->after || k > v->after) &&
                          (!v->every || k % v->every == 0);
        if (v->position == ASPECTS_POSITION_INSTEAD) {
            if (chosen) {
                /* Matched, but an earlier `instead` already fired: counted, not fired. */
                const int saved = errno;
                asp_event_append(ASPECTS_EVENT_SHADOWED, v, k, idx, vals, 0, 0);
                errno = saved;
            } else if (fires) {
                asp_stat_fired(v);
                chosen = v;
                chosen_call = k;
            }
            continue;
        }
        if (!fires) continue;
        asp_stat_fired(v);
        const int saved = errno;
        asp_event_append(ASPECTS_EVENT_FIRED, v, k, idx, vals, 0, saved);
        errno = saved;
    }
    if (chosen) {
        asp_fire_instead(chosen, chosen_call, idx, ret, vals);
        return;
    }
    asp_call_direct(h, fn, vals, ret);
}

/* The single-rule path, once the rule matched and its call number k reached the rule's gate:
 * decide exactly, then fire or call the original. Effects run with the engine guard up, as
 * on the full path, so a signal handler's calls are not advised. A direct original returns
 * an integer class, so an `instead` result is stored as the whole register (see
 * asp_call_plain). */
__attribute__((noinline)) static void asp_single_reached(const asp_direct_call *h, uint32_t idx, void *ret, void **args,
                                                         const asp_rule_view *v, uint64_t k) {
    const asp_export_desc *ex = h->desc;
    void *fn = __atomic_load_n(&h->fn, __ATOMIC_RELAXED);
    /* The register slots as they are: events record them so, and readers narrow each to its
     * declared type (AdviceTable.integerText, TableSnapshot.swift). */
    uint64_t vals[ASP_MAX_ARGS] = {0};
    for (uint32_t a = 0; a < h->nargs; a++) vals[a] = *(const uint64_t *)args[a];
    if (!asp_decide_counted(v, k)) {
        asp_call_direct(h, fn, vals, ret);
        return;
    }
    const int caller_errno = errno;
    if (ASP_UNLIKELY(v->actions & (ASPECTS_ACTION_DELAY | ASPECTS_ACTION_SIGNAL))) {
        asp_tls.busy = 1;
        asp_run_effects(v);
        asp_tls.busy = 0;
    }
    if (v->position == ASPECTS_POSITION_INSTEAD) {
        const int32_t code = asp_chosen_error(v, k);
        int64_t result = 0;
        if (v->actions & ASPECTS_ACTION_RETURN) {
            const int64_t value = (v->flags & ASPECTS_RULE_RETURN_IS_CODE) ? code : v->return_value;
            *(uint64_t *)ret = (uint64_t)value;
            result = asp_read_return(h->ret, ret);
        }
        const int result_errno = (v->actions & ASPECTS_ACTION_ERRNO) ? code : caller_errno;
        if (ASP_UNLIKELY(v->actions & ASPECTS_ACTION_HERRNO)) *__h_errno_location() = code;
        asp_event_append(ASPECTS_EVENT_FIRED, v, k, idx, vals, result, result_errno);
        errno = result_errno;
        return;
    }
    asp_event_append(ASPECTS_EVENT_FIRED, v, k, idx, vals, 0, caller_errno);
    if (v->actions & ASPECTS_ACTION_ARGS) asp_apply_arg_sets(v, ex, args, vals);
    errno = caller_errno;
    asp_call_direct(h, fn, vals, ret);
}

/* The argument conditions of a single rule, reading each argument only when a matcher needs it.
 * A fixed glob (the usual path pattern) is matched without the general matcher's dispatch. */
static inline __attribute__((always_inline)) int asp_single_matches(const asp_rule_view *v, const asp_export_desc *ex, void **args) {
    const uint32_t n = v->matcher_count;
    for (uint32_t i = 0; i < n; i++) {
        const aspects_matcher *m = &v->matchers[i];
        const uint32_t arg = ex->argmap[m->arg]; /* .arg < ASP_MAX_ARGS: checked when copied */
        if (arg >= ex->nargs) return 0;
        const uint8_t type = ex->args[arg];
        if (v->plans[i].fixed && type == ASPECTS_T_STR) {
            const uint64_t x = *(const uint64_t *)args[arg];
            /* A NULL or near-NULL pointer is never read: the original reports EFAULT. */
            if (x < 4096 || !asp_glob_fixed(v->r->strings + m->str_off, m->str_len, &v->plans[i], (const char *)(uintptr_t)x, 4096))
                return 0;
            continue;
        }
        if (!asp_matcher_holds(v, i, type, asp_widen(type, args[arg]))) return 0;
    }
    return 1;
}

/* The original of an un-fired call on the single-rule path, with the group guard up. On
 * x86-64 SysV the first six integer-class arguments travel in registers whatever the callee's
 * arity, so six are always passed: those past the function's own are whatever the registers
 * hold (the empty asm makes them so without undefined behaviour), and the callee ignores
 * them. The call goes through a variadic pointer so %al (vector registers used) is 0, which a
 * variadic original needs and any other ignores. libffi's x86-64 closure entry points each
 * integer avalue[] at an 8-byte register slot (DESIGN §9). `nargs` is a constant in each
 * arity's handler (ASP_HANDLER below): no per-call switch. */
static inline __attribute__((always_inline)) void asp_call_plain(const asp_direct_call *h, void *fn, void *ret,
                                                                 void **args, asp_thread *t, uint32_t nargs) {
    uint64_t a0, a1, a2, a3, a4, a5;
    __asm__("" : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3), "=r"(a4), "=r"(a5));
    switch (nargs) {
    case 6: a5 = *(const uint64_t *)args[5]; /* fallthrough */
    case 5: a4 = *(const uint64_t *)args[4]; /* fallthrough */
    case 4: a3 = *(const uint64_t *)args[3]; /* fallthrough */
    case 3: a2 = *(const uint64_t *)args[2]; /* fallthrough */
    case 2: a1 = *(const uint64_t *)args[1]; /* fallthrough */
    case 1: a0 = *(const uint64_t *)args[0]; /* fallthrough */
    default: break;
    }
    const uint32_t outer_group = t->group_active;
    t->group_active = h->group + 1u;
    const long r = ((asp_varfn6)fn)((long)a0, (long)a1, (long)a2, (long)a3, (long)a4, (long)a5);
    t->group_active = outer_group;
    /* The whole register: libffi's x86-64 closure exit loads a result narrower than 64 bits
     * with a load of its own width and extension (movzbl, movswl, movl, ...), and `ret` is
     * its 8-byte-or-larger return buffer even for void. */
    *(uint64_t *)ret = (uint64_t)r;
}

/* The single-rule path of a rule with argument conditions: a call they do not match is not
 * counted. Apart from the hot path so that it keeps few registers. */
__attribute__((noinline)) static void asp_single_conditional(const asp_direct_call *h, uint32_t idx, void *ret, void **args,
                                                             const asp_rule_view *v) {
    if (!asp_single_matches(v, h->desc, args)) {
        asp_call_plain(h, __atomic_load_n(&h->fn, __ATOMIC_RELAXED), ret, args, &asp_tls, h->nargs);
        return;
    }
    __atomic_fetch_add(v->matched_word, 1, __ATOMIC_RELAXED);
    const uint64_t k = __atomic_add_fetch(v->counter, 1, __ATOMIC_RELAXED);
    if (k < v->gate) asp_call_plain(h, __atomic_load_n(&h->fn, __ATOMIC_RELAXED), ret, args, &asp_tls, h->nargs);
    else asp_single_reached(h, idx, ret, args, v, k);
}

/* The handler behind every forwarding stub. `nargs` is the export's parameter count for the
 * handlers of directly callable originals (one per arity, below), ASP_ANY_ARITY otherwise. */
#define ASP_ANY_ARITY 0xffu
static inline __attribute__((always_inline)) void asp_dispatch(void *ret, void **args, void *user_data, const uint32_t nargs) {
    asp_thread *t = &asp_tls;
    /* user_data is ours: the export index the stub was built for, always in range */
    const uint32_t idx = (uint32_t)(uintptr_t)user_data;
    const asp_direct_call *h = &asp_direct[idx];
    void *fn = __atomic_load_n(&h->fn, __ATOMIC_RELAXED);
    const uint32_t group = h->group;
    /* (a stub exists only once a table armed it: attached) */
    if (ASP_LIKELY(nargs != ASP_ANY_ARITY && fn != NULL && !t->busy && t->group_active != group + 1u)) {
        const asp_group_cache *c = &asp_caches[group];
        const uint64_t gen = __atomic_load_n(&asp_tab.header->generation, __ATOMIC_ACQUIRE);
        if (ASP_LIKELY(__atomic_load_n(&c->generation, __ATOMIC_ACQUIRE) == gen + 1)) {
            const asp_rule_view *v = __atomic_load_n(&c->single, __ATOMIC_ACQUIRE);
            if (ASP_LIKELY(v != NULL)) {
                if (ASP_UNLIKELY(v->matcher_count)) {
                    asp_single_conditional(h, idx, ret, args, v);
                    return;
                }
                /* The commonest armed call: one rule, counted, not firing. */
                __atomic_fetch_add(v->matched_word, 1, __ATOMIC_RELAXED);
                const uint64_t k = __atomic_add_fetch(v->counter, 1, __ATOMIC_RELAXED);
                if (ASP_LIKELY(k < v->gate)) {
                    asp_call_plain(h, fn, ret, args, t, nargs);
                    return;
                }
                asp_single_reached(h, idx, ret, args, v, k);
                return;
            }
            if (c->path[__atomic_load_n(&c->active, __ATOMIC_ACQUIRE) & 1u] == ASP_PATH_LEAN) {
                asp_dispatch_lean(h, idx, ret, args, c);
                return;
            }
        }
    }
    /* Nothing ran yet that could have overwritten the caller's address. */
    asp_dispatch_full(asp_export_at(idx), idx, ret, args, t->caller_ip);
}

#define ASP_HANDLER(n) \
    static void aspects_dispatch_##n(ffi_cif *cif, void *ret, void **args, void *user_data) { \
        (void)cif; \
        asp_dispatch(ret, args, user_data, n); \
    }
ASP_HANDLER(0)
ASP_HANDLER(1)
ASP_HANDLER(2)
ASP_HANDLER(3)
ASP_HANDLER(4)
ASP_HANDLER(5)
ASP_HANDLER(6)
_Static_assert(ASP_DIRECT_ARGS == 6, "one handler per direct arity");

static void aspects_dispatch_any(ffi_cif *cif, void *ret, void **args, void *user_data) {
    (void)cif;
    asp_dispatch(ret, args, user_data, ASP_ANY_ARITY);
}

asp_handler asp_handler_for(uint32_t nargs, int direct) {
    static const asp_handler by_arity[ASP_DIRECT_ARGS + 1] = {
        aspects_dispatch_0, aspects_dispatch_1, aspects_dispatch_2, aspects_dispatch_3,
        aspects_dispatch_4, aspects_dispatch_5, aspects_dispatch_6,
    };
    return direct && nargs <= ASP_DIRECT_ARGS ? by_arity[nargs] : aspects_dispatch_any;
}
