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
 * Every path works on the call's record (call.h), which asp_dispatch fills once and passes by
 * pointer, and fires rules through advice.h's functions: what a firing does at each position
 * is written once there.
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

/* The original of an un-fired call on the single-rule path, in an ORIGINAL frame. On
 * x86-64 SysV the first six integer-class arguments travel in registers whatever the callee's
 * arity (AAPCS64: eight), so six are always passed: those past the function's own are whatever the registers
 * hold (the empty asm makes them so without undefined behaviour), and the callee ignores
 * them; the call and the result are asp_direct_invoke's. libffi's closure entry (x86-64 and
 * aarch64) points each integer avalue[] at an 8-byte register slot (docs/ARCHITECTURE.md §5, dispatch).
 * `nargs` is a constant
 * in each arity's handler (ASP_HANDLER below): no per-call switch. */
static inline __attribute__((always_inline)) void asp_call_plain(const asp_call *c, void *fn, asp_thread *t, uint32_t nargs) {
    void **args = c->args;
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
    const asp_frame outer = asp_frame_push_original(t, c->group, c->idx);
    const long r = ((asp_varfn6)fn)((long)a0, (long)a1, (long)a2, (long)a3, (long)a4, (long)a5);
    asp_frame_pop(t, outer);
    *(uint64_t *)c->ret = (uint64_t)r; /* the whole register: see asp_direct_invoke */
}

/* The single-rule path, once the rule matched and its call number k reached the rule's gate:
 * decide exactly, then fire or call the original (the stubs then let the calls before the
 * next possible firing through on their own). An `instead` rule replaces the call; a `before`
 * rule acts, then the original runs with the caller's errno. Effects run through
 * asp_run_effects, as on the full path: the delay and the signal run in a PROGRAM frame, so a
 * signal handler's own calls are advised and a handler that jumps out leaves the thread
 * outside the engine. */
__attribute__((noinline)) static void asp_single_reached(asp_call *c, const asp_rule_view *v, uint64_t k) {
    void *fn = asp_call_fn(c);
    ASP_ASSUME(k >= v->gate); /* the callers' comparison (asp_gate_of) */
    if (!asp_decide_call(c, v, k, 1)) {
        asp_call_plain(c, fn, &asp_tls, c->h->nargs);
        return;
    }
    asp_call_slots(c);
    asp_call_arrived(c);
    if (v->position == ASPECTS_POSITION_INSTEAD) {
        asp_fire_result(c, v);
    } else {
        asp_fire_before(c, v);
        errno = c->err;
        asp_call_direct(c->h, fn, c->vals, c->ret);
        return;
    }
    errno = c->err;
}

/* The argument conditions of a single rule, reading each argument only when a matcher needs it.
 * A fixed glob (the usual path pattern) is matched without the general matcher's dispatch. */
static inline __attribute__((always_inline)) int asp_single_matches(const asp_call *c, const asp_rule_view *v) {
    const asp_export_desc *ex = c->ex;
    const uint32_t n = v->matcher_count;
    for (uint32_t i = 0; i < n; i++) {
        const aspects_matcher *m = &v->matchers[i];
        const uint32_t arg = ex->argmap[m->arg]; /* .arg < ASP_MAX_ARGS: checked when copied */
        if (arg >= ex->nargs) return 0;
        const uint8_t type = ex->args[arg];
        if (v->plans[i].fixed && type == ASPECTS_T_STR) {
            const uint64_t x = *(const uint64_t *)c->args[arg];
            /* A NULL or near-NULL pointer is never read: the original reports EFAULT. */
            if (x < 4096 || !asp_glob_fixed(v->r->strings + m->str_off, m->str_len, &v->plans[i], (const char *)(uintptr_t)x, 4096))
                return 0;
            continue;
        }
        if (!asp_matcher_holds(v, i, type, asp_widen(type, c->args[arg]))) return 0;
    }
    return 1;
}

/* The rule's rarer conditions: an autoRemove rule that already fired somewhere is skipped
 * as if removed (until the next writer retires it), a `process` glob was decided when the
 * rule was copied, a `caller` glob is answered for the return address the stub saved. Out of
 * line: most rules have none of them. */
__attribute__((noinline)) static int asp_single_rare_hold(const asp_call *c, const asp_rule_view *v) {
    if ((v->flags & ASPECTS_RULE_AUTOREMOVE) && __atomic_load_n(&v->r->claim, __ATOMIC_RELAXED)) return 0;
    if (!v->process_ok) return 0;
    if ((v->flags & ASPECTS_RULE_HAS_SITE) && !asp_site_ok(v, c->ex, c->caller)) return 0;
    return !(v->flags & ASPECTS_RULE_HAS_CALLER) || asp_caller_ok(v, c->caller);
}

#define ASP_RARE_CONDITIONS (ASPECTS_RULE_AUTOREMOVE | ASPECTS_RULE_HAS_PROCESS | ASPECTS_RULE_HAS_CALLER | ASPECTS_RULE_HAS_SITE)

/* The single-rule path of a rule with conditions (a call they do not match is not counted),
 * an autoRemove rule, or one whose counter is not one word (thread scope: this thread's
 * entry; a hierarchy that found no entry: never fires). Apart from the hot path so that it
 * keeps few registers. */
__attribute__((noinline)) static void asp_single_conditional(asp_call *c, const asp_rule_view *v) {
    /* a call the stub's gate counted is this rule's (it has no argument condition) */
    uint64_t k = asp_count_counted(v, c->pre->counter, c->pre->call);
    const int rare = ASP_UNLIKELY(v->flags & ASP_RARE_CONDITIONS) && !asp_single_rare_hold(c, v);
    if (!k && (rare || (v->matcher_count && !asp_single_matches(c, v)))) {
        asp_call_plain(c, asp_call_fn(c), &asp_tls, c->h->nargs);
        return;
    }
    if (k && rare) {
        asp_gate_follow(c->group, v, k);
        asp_call_plain(c, asp_call_fn(c), &asp_tls, c->h->nargs);
        return;
    }
    if (!k) k = asp_count_matching(v);
    if (k < asp_gate_of(v)) asp_call_plain(c, asp_call_fn(c), &asp_tls, c->h->nargs);
    else asp_single_reached(c, v, k);
}

/* The single-rule path of an `after` rule: the call is matched and numbered on entry (asp_take_number's
 * rule: unless the rule numbers at return, asp_numbered_at_return), the original runs, then
 * the rule decides on that number and, firing, may replace the result and errno the original
 * left, as on the full path; the event records what the caller gets. */
__attribute__((noinline)) static void asp_single_after(asp_call *c, const asp_rule_view *v, const asp_group_cache *cache) {
    const uint64_t generation = __atomic_load_n(&cache->generation, __ATOMIC_ACQUIRE);
    const int at_return = asp_numbered_at_return(v);
    const uint64_t serial = v->serial;
    /* A call the stub's gate or filter counted was counted on entry: the rule then has no
     * condition on the call's outcome (asp_counts_alone). */
    uint64_t k = asp_count_counted(v, c->pre->counter, c->pre->call);
    const int stub_counted = k != 0;
    int applies = !(ASP_UNLIKELY(v->flags & ASP_RARE_CONDITIONS) && !asp_single_rare_hold(c, v));
    if (!at_return && !k && applies) {
        applies = !v->matcher_count || asp_single_matches(c, v);
        if (applies) k = asp_count_matching(v);
    }
    asp_call_plain(c, asp_call_fn(c), &asp_tls, c->h->nargs);
    /* The original may have blocked for long: if the group's copy was remade meanwhile, v's
     * buffer may have been reused; the group's current rules decide instead (v's serial and
     * number were read before). */
    if (ASP_UNLIKELY(__atomic_load_n(&cache->generation, __ATOMIC_ACQUIRE) != generation)) {
        c->pre->call = 0;
        c->number = applies ? k : 0;
        c->err = errno;
        asp_dispatch_after_now(c, !at_return ? serial : 0);
        return;
    }
    if (!applies) {
        if (stub_counted) asp_gate_follow(c->group, v, k);
        return;
    }
    if (at_return && !stub_counted) {
        if ((v->matcher_count && !asp_single_matches(c, v)) ||
            ASP_UNLIKELY(!asp_result_holds(v, c->ex, c->args, NULL, asp_read_return(c->h->ret, c->ret), errno)))
            return;
        k = asp_count_matching(v);
    }
    if (ASP_LIKELY(!asp_decide_call(c, v, k, 1))) return;
    c->err = errno; /* the original's, which the rule may replace */
    asp_call_read_result(c);
    asp_call_slots(c);
    asp_fire_result(c, v);
    errno = c->err;
}

/* The handler behind every forwarding stub: the call's record, then its path. `nargs` is the
 * export's parameter count for the handlers of directly callable originals (one per arity,
 * below), ASP_ANY_ARITY otherwise. */
#define ASP_ANY_ARITY 0xffu
static inline __attribute__((always_inline)) void asp_dispatch(void *ret, void **args, void *user_data, const uint32_t nargs) {
    asp_thread *t = &asp_tls;
    /* What the stub counted for this call, and its caller: taken first, whatever path follows. */
    asp_pending p = asp_pending_pop(t);
    /* user_data is ours: the export index the stub was built for, always in range */
    const uint32_t idx = (uint32_t)(uintptr_t)user_data;
    const asp_direct_call *h = &asp_direct[idx];
    /* The record's fixed part; each path fills the values and the outcome as it needs them. */
    asp_call c;
    c.idx = idx;
    c.group = h->group;
    c.h = h;
    c.ex = h->desc; /* (a stub exists only once a table armed it: attached) */
    c.args = args;
    c.ret = ret;
    c.caller = p.caller;
    c.pre = &p;
    void *fn = asp_call_fn(&c);
    /* The program's own call (not the engine's or advice's, not part of an original of this
     * group: those take the full path, which tells them apart) */
    if (ASP_LIKELY(nargs != ASP_ANY_ARITY && fn != NULL && asp_called_by_program(t, c.group))) {
        const asp_group_cache *cache = &asp_caches[c.group];
        const uint64_t gen = __atomic_load_n(&asp_tab.header->generation, __ATOMIC_ACQUIRE);
        if (ASP_LIKELY(__atomic_load_n(&cache->generation, __ATOMIC_ACQUIRE) == gen + 1)) {
            const asp_rule_view *v = __atomic_load_n(&cache->single, __ATOMIC_ACQUIRE);
            if (v != NULL) {
                if (ASP_UNLIKELY(!v->unconditional)) {
                    asp_single_conditional(&c, v);
                    return;
                }
                /* One rule, counted (by the stub's gate, or here when the gate was shut) and
                 * decided exactly from its gate on. */
                uint64_t k = asp_count_counted(v, p.counter, p.call);
                if (!k) k = asp_count_matching(v);
                if (ASP_LIKELY(k < asp_gate_of(v))) {
                    /* The stub's gate was lower than the rule's (moved by a late decision). */
                    if (p.call) asp_gate_follow(c.group, v, k);
                    asp_call_plain(&c, fn, t, nargs);
                    return;
                }
                asp_single_reached(&c, v, k);
                return;
            }
            if ((v = __atomic_load_n(&cache->single_after, __ATOMIC_ACQUIRE)) != NULL) {
                asp_single_after(&c, v, cache);
                return;
            }
            const uint32_t b = __atomic_load_n(&cache->active, __ATOMIC_ACQUIRE) & 1u;
            if (__atomic_load_n(&cache->path[b], __ATOMIC_RELAXED) == ASP_PATH_SEVERAL) {
                asp_dispatch_several(&c, cache->views[b], __atomic_load_n(&cache->count[b], __ATOMIC_RELAXED));
                return;
            }
        }
    }
    asp_dispatch_full(&c);
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
