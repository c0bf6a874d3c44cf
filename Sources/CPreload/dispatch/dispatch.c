/* dispatch.c — the handler behind every forwarding stub (aspects_dispatch_N, one per arity of
 * a directly callable original): THE hot path.
 *
 * Contract (every line below keeps it):
 *   - no locks, no malloc, no stdio, no libc function that libaspects.so itself exports: safe
 *     in signal handlers and between fork and exec. The exceptions are out of the call's way
 *     and sealed (thread.h: a handler arriving there gets no fresh level): building a stub on
 *     an export's first armed call (closures.c, a mutex, no allocation: memory reserved at
 *     attach), and loading a `call` rule's object (advice_call.c, a mutex and dlopen, only
 *     where asp_place_safe says loading is safe — never in a handler);
 *   - errno: the original sees the caller's errno and the caller sees what the original left,
 *     unless advice sets it; the engine's own work never leaks into it;
 *   - re-entry: the invocation stack's top frame (thread.h) says what the thread runs: inside
 *     the engine or the user's advice every wrapped call goes straight to the original, so
 *     advice never advises itself; while an original runs, calls it makes to other advised
 *     functions are advised, but a second name of the same alias group (or a second copy of
 *     the library) is not advised again for the same call; a signal handler, wherever it
 *     lands, runs on a fresh level (signals.c) and its calls are advised as its own;
 *   - shared memory is untrusted: rules are used through validated copies (rulecache.c, remade
 *     only when the table's generation moves), every index is checked against the geometry
 *     copied at attach;
 *   - cost: an armed call pays libffi's closure entry, one generation check, and per rule of
 *     its group the conditions it has (see BENCHMARKS.md for the instruction counts).
 * Order: all `before` rules in table order, then the first firing `instead` rule (a later one
 * that would fire is counted and reported as shadowed) or the original, then all `after` rules.
 *
 * Three paths, chosen per group when its rules are copied (rulecache.c, asp_views_path):
 *   single  a group's only rule: count, compare with the rule's gate, call the original
 *           (asp_dispatch, at the end of this file: the armed call most programs make);
 *           asp_single_conditional first checks conditions, asp_single_reached decides
 *           exactly and fires, asp_single_after serves `after` rules;
 *   several several simple rules counted per process (asp_dispatch_several, dispatch_full.c);
 *   full    everything else, and every call that arrives while the engine is busy
 *           (asp_dispatch_full, dispatch_full.c).
 * What the paths share is in advice.h.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include "advice.h"
#include "gate.h"
#include "stream.h"

/* A call the single and several-rules paths may take: made by the program itself, or from inside the
 * original of another group. */
static inline __attribute__((always_inline)) int asp_called_by_program(const asp_thread *t, uint32_t group) {
    const uint32_t kind = t->top.kind;
    return kind == ASP_IN_PROGRAM || (kind == ASP_IN_ORIGINAL && t->top.group != group + 1u);
}

static inline __attribute__((always_inline)) void asp_call_plain(const asp_direct_call *h, void *fn, void *ret, void **args,
                                                                 asp_thread *t, uint32_t nargs);

/* The single-rule path, once the rule matched and its call number k reached the rule's gate:
 * decide exactly, then fire or call the original. Effects run through asp_run_effects, as on
 * the full path: the delay and the signal run in a PROGRAM frame, so a signal handler's own
 * calls are advised and a handler that jumps out leaves the thread outside the engine. A direct original returns an integer class, so an `instead` result is stored as
 * the whole register (see asp_call_plain). */
__attribute__((noinline)) static void asp_single_reached(const asp_direct_call *h, uint32_t idx, void *ret, void **args,
                                                         const asp_rule_view *v, uint64_t k, uint64_t caller) {
    const asp_export_desc *ex = h->desc;
    void *fn = __atomic_load_n(&h->fn, __ATOMIC_RELAXED);
    /* (the stubs then let the calls before the next possible firing through on their own) */
    ASP_ASSUME(k >= v->gate); /* the callers' comparison (asp_gate_of) */
    const int fires = asp_decide_number(h->group, v, k, 1);
    if (!fires) {
        asp_call_plain(h, fn, ret, args, &asp_tls, h->nargs);
        return;
    }
    /* the argument registers as the event records them (zero past the arity) */
    uint64_t vals[ASP_MAX_ARGS] = {0};
    asp_read_slots(args, h->nargs, vals);
    const int caller_errno = errno;
    /* A `before` rule's event first, as on the full path: a signal may end the process. */
    if (v->position != ASPECTS_POSITION_INSTEAD) asp_event_append(ASPECTS_EVENT_FIRED, v, k, idx, vals, 0, caller_errno, caller);
    if (ASP_UNLIKELY(v->actions & (ASPECTS_ACTION_DELAY | ASPECTS_ACTION_SIGNAL))) asp_run_effects(v);
    if (v->position == ASPECTS_POSITION_INSTEAD) {
        int32_t code = asp_chosen_error(v, k);
        if (ASP_UNLIKELY(v->flags & ASPECTS_RULE_DEFAULT_BY_KIND)) code = asp_kind_errno(ex, vals, code);
        int64_t result = 0;
        if (v->actions & ASPECTS_ACTION_RETURN) {
            const int64_t value = (v->flags & ASPECTS_RULE_RETURN_IS_CODE) ? code : v->return_value;
            *(uint64_t *)ret = (uint64_t)value;
            result = asp_read_return(h->ret, ret);
        }
        const int result_errno = (v->actions & ASPECTS_ACTION_ERRNO) ? code : caller_errno;
        if (ASP_UNLIKELY(v->actions & ASPECTS_ACTION_HERRNO)) *__h_errno_location() = code;
        asp_event_append(ASPECTS_EVENT_FIRED, v, k, idx, vals, result, result_errno, caller);
        errno = result_errno;
        return;
    }
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

/* The original of an un-fired call on the single-rule path, in an ORIGINAL frame. On
 * x86-64 SysV the first six integer-class arguments travel in registers whatever the callee's
 * arity (AAPCS64: eight), so six are always passed: those past the function's own are whatever the registers
 * hold (the empty asm makes them so without undefined behaviour), and the callee ignores
 * them; the call and the result are asp_direct_invoke's. libffi's closure entry (x86-64 and
 * aarch64) points each integer avalue[] at an 8-byte register slot (docs/ARCHITECTURE.md §5, dispatch).
 * `nargs` is a constant
 * in each arity's handler (ASP_HANDLER below): no per-call switch. */
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
    const asp_frame outer = asp_frame_push_original(t, h->group, (uint32_t)(h - asp_direct));
    const long r = ((asp_varfn6)fn)((long)a0, (long)a1, (long)a2, (long)a3, (long)a4, (long)a5);
    asp_frame_pop(t, outer);
    *(uint64_t *)ret = (uint64_t)r; /* the whole register: see asp_direct_invoke */
}

/* The rule's rarer conditions: an autoRemove rule that already fired somewhere is skipped
 * as if removed (until the next writer retires it), a `process` glob was decided when the
 * rule was copied, a `caller` glob is answered for the return address the stub saved. Out of
 * line: most rules have none of them. */
__attribute__((noinline)) static int asp_single_rare_hold(const asp_rule_view *v, const asp_export_desc *ex, uint64_t caller) {
    if ((v->flags & ASPECTS_RULE_AUTOREMOVE) && __atomic_load_n(&v->r->claim, __ATOMIC_RELAXED)) return 0;
    if (!v->process_ok) return 0;
    if ((v->flags & ASPECTS_RULE_HAS_SITE) && !asp_site_ok(v, ex, caller)) return 0;
    return !(v->flags & ASPECTS_RULE_HAS_CALLER) || asp_caller_ok(v, caller);
}

#define ASP_RARE_CONDITIONS (ASPECTS_RULE_AUTOREMOVE | ASPECTS_RULE_HAS_PROCESS | ASPECTS_RULE_HAS_CALLER | ASPECTS_RULE_HAS_SITE)

/* The single-rule path of a rule with conditions (a call they do not match is not counted),
 * an autoRemove rule, or one whose counter is not one word (thread scope: this thread's
 * entry; a hierarchy that found no entry: never fires). Apart from the hot path so that it
 * keeps few registers. */
__attribute__((noinline)) static void asp_single_conditional(const asp_direct_call *h, uint32_t idx, void *ret, void **args,
                                                             const asp_rule_view *v, const asp_pending *p) {
    /* a call the stub's gate counted is this rule's (it has no argument condition) */
    uint64_t k = asp_count_counted(v, p->counter, p->call);
    if (!k && ((ASP_UNLIKELY(v->flags & ASP_RARE_CONDITIONS) && !asp_single_rare_hold(v, h->desc, p->caller)) ||
               (v->matcher_count && !asp_single_matches(v, h->desc, args)))) {
        asp_call_plain(h, __atomic_load_n(&h->fn, __ATOMIC_RELAXED), ret, args, &asp_tls, h->nargs);
        return;
    }
    if (k && ASP_UNLIKELY(v->flags & ASP_RARE_CONDITIONS) && !asp_single_rare_hold(v, h->desc, p->caller)) {
        asp_gate_follow(h->group, v, k);
        asp_call_plain(h, __atomic_load_n(&h->fn, __ATOMIC_RELAXED), ret, args, &asp_tls, h->nargs);
        return;
    }
    if (!k) k = asp_count_matching(v);
    if (k < asp_gate_of(v)) asp_call_plain(h, __atomic_load_n(&h->fn, __ATOMIC_RELAXED), ret, args, &asp_tls, h->nargs);
    else asp_single_reached(h, idx, ret, args, v, k, p->caller);
}

/* The single-rule path of an `after` rule: the call is matched and numbered on entry (asp_take_number's
 * rule: unless the rule numbers at return, asp_numbered_at_return), the original runs, then
 * the rule decides on that number and, firing, may replace the result and errno the original
 * left, as on the full path; the event records what the caller gets. */
__attribute__((noinline)) static void asp_single_after(const asp_direct_call *h, uint32_t idx, void *ret, void **args,
                                                       const asp_rule_view *v, const asp_group_cache *c, const asp_pending *p) {
    asp_thread *t = &asp_tls;
    const uint64_t caller = p->caller;
    const uint64_t generation = __atomic_load_n(&c->generation, __ATOMIC_ACQUIRE);
    const int at_return = asp_numbered_at_return(v);
    const uint64_t serial = v->serial;
    /* A call the stub's gate or filter counted was counted on entry: the rule then has no
     * condition on the call's outcome (asp_counts_alone). */
    uint64_t k = asp_count_counted(v, p->counter, p->call);
    const int stub_counted = k != 0;
    int applies = !(ASP_UNLIKELY(v->flags & ASP_RARE_CONDITIONS) && !asp_single_rare_hold(v, h->desc, caller));
    if (!at_return && !k && applies) {
        applies = !v->matcher_count || asp_single_matches(v, h->desc, args);
        if (applies) k = asp_count_matching(v);
    }
    asp_call_plain(h, __atomic_load_n(&h->fn, __ATOMIC_RELAXED), ret, args, t, h->nargs);
    /* The original may have blocked for long: if the group's copy was remade meanwhile, v's
     * buffer may have been reused; the group's current rules decide instead (v's serial and
     * number were read before). */
    if (ASP_UNLIKELY(__atomic_load_n(&c->generation, __ATOMIC_ACQUIRE) != generation)) {
        asp_pending counted = *p;
        counted.call = 0;
        asp_dispatch_after_now(h->desc, idx, ret, args, caller, &counted, !at_return ? serial : 0, applies ? k : 0);
        return;
    }
    if (!applies) {
        if (stub_counted) asp_gate_follow(h->group, v, k);
        return;
    }
    if (at_return && !stub_counted) {
        if ((v->matcher_count && !asp_single_matches(v, h->desc, args)) ||
            ASP_UNLIKELY(!asp_result_holds(v, h->desc, args, NULL, asp_read_return(h->ret, ret), errno)))
            return;
        k = asp_count_matching(v);
    }
    if (ASP_LIKELY(!asp_decide_number(h->group, v, k, 1))) return;
    int result_errno = errno;
    if (ASP_UNLIKELY(v->actions & (ASPECTS_ACTION_DELAY | ASPECTS_ACTION_SIGNAL))) asp_run_effects(v);
    int64_t result = asp_read_return(h->ret, ret);
    uint64_t vals[ASP_MAX_ARGS] = {0};
    asp_read_slots(args, h->nargs, vals);
    int32_t code = asp_chosen_error(v, k);
    if (ASP_UNLIKELY(v->flags & ASPECTS_RULE_DEFAULT_BY_KIND)) code = asp_kind_errno(h->desc, vals, code);
    if (v->actions & ASPECTS_ACTION_RETURN) {
        *(uint64_t *)ret = (uint64_t)((v->flags & ASPECTS_RULE_RETURN_IS_CODE) ? code : v->return_value);
        result = asp_read_return(h->ret, ret);
    }
    if (v->actions & ASPECTS_ACTION_ERRNO) result_errno = code;
    if (ASP_UNLIKELY(v->actions & ASPECTS_ACTION_HERRNO)) *__h_errno_location() = code;
    asp_event_append(ASPECTS_EVENT_FIRED, v, k, idx, vals, result, result_errno, caller);
    errno = result_errno;
}

/* The handler behind every forwarding stub. `nargs` is the export's parameter count for the
 * handlers of directly callable originals (one per arity, below), ASP_ANY_ARITY otherwise. */
#define ASP_ANY_ARITY 0xffu
static inline __attribute__((always_inline)) void asp_dispatch(void *ret, void **args, void *user_data, const uint32_t nargs) {
    asp_thread *t = &asp_tls;
    /* What the stub counted for this call, and its caller: taken first, whatever path follows. */
    const asp_pending p = asp_pending_pop(t);
    /* user_data is ours: the export index the stub was built for, always in range */
    const uint32_t idx = (uint32_t)(uintptr_t)user_data;
    const asp_direct_call *h = &asp_direct[idx];
    void *fn = __atomic_load_n(&h->fn, __ATOMIC_RELAXED);
    const uint32_t group = h->group;
    /* (a stub exists only once a table armed it: attached) */
    /* The program's own call (not the engine's or advice's, not part of an original of this
     * group: those take the full path, which tells them apart) */
    if (ASP_LIKELY(nargs != ASP_ANY_ARITY && fn != NULL && asp_called_by_program(t, group))) {
        const asp_group_cache *c = &asp_caches[group];
        const uint64_t gen = __atomic_load_n(&asp_tab.header->generation, __ATOMIC_ACQUIRE);
        if (ASP_LIKELY(__atomic_load_n(&c->generation, __ATOMIC_ACQUIRE) == gen + 1)) {
            const asp_rule_view *v = __atomic_load_n(&c->single, __ATOMIC_ACQUIRE);
            if (ASP_LIKELY(v != NULL)) {
                if (ASP_UNLIKELY(!v->unconditional)) {
                    asp_single_conditional(h, idx, ret, args, v, &p);
                    return;
                }
                /* One rule, counted (by the stub's gate, or here when the gate was shut) and
                 * decided exactly from its gate on. */
                uint64_t k = asp_count_counted(v, p.counter, p.call);
                if (!k) k = asp_count_matching(v);
                if (ASP_LIKELY(k < asp_gate_of(v))) {
                    /* The stub's gate was lower than the rule's (moved by a late decision). */
                    if (p.call) asp_gate_follow(group, v, k);
                    asp_call_plain(h, fn, ret, args, t, nargs);
                    return;
                }
                asp_single_reached(h, idx, ret, args, v, k, p.caller);
                return;
            }
            if ((v = __atomic_load_n(&c->single_after, __ATOMIC_ACQUIRE)) != NULL) {
                asp_single_after(h, idx, ret, args, v, c, &p);
                return;
            }
            const uint32_t b = __atomic_load_n(&c->active, __ATOMIC_ACQUIRE) & 1u;
            if (__atomic_load_n(&c->path[b], __ATOMIC_RELAXED) == ASP_PATH_SEVERAL) {
                asp_pending counted = p;
                asp_dispatch_several(h, idx, ret, args, c->views[b], __atomic_load_n(&c->count[b], __ATOMIC_RELAXED), p.caller, &counted);
                return;
            }
        }
    }
    asp_pending counted = p;
    asp_dispatch_full(asp_export_at(idx), idx, ret, args, p.caller, &counted);
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
