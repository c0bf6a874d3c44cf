/* gate.c — making, moving and shutting the gates the wrapper stubs read (see gate.h).
 *
 * Publication order. A gate record is written while its generation is ASP_GATE_SHUT, and the
 * generation is stored last (release): a stub that finds the table's generation in it reads
 * the fields written before (x86-64 keeps loads in order). A stub that read the generation
 * just before a republication may pair the old generation with the new counter or bound: it
 * then counts that one call for the rule the table had a moment ago or the one it has now,
 * the same latitude every call racing a table change has. Moving a gate (after a decision) is
 * a compare-and-swap of `last_passing` only, and only while the record still holds that rule's
 * counter, so a late decision on an old rule never moves a new rule's gate; a late decision
 * on the same rule can only lower it, which is always safe: a call the gate lets in is
 * decided exactly. */
#define _GNU_SOURCE
#include <link.h>
#include <stddef.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#endif
#include "decide.h"
#include "gate.h"
#include "objects.h"
#include "signatures.h"
#include "table.h"

asp_gate asp_gates[ASP_ALL_GROUPS] __attribute__((aligned(64)));

_Static_assert(sizeof(asp_gate) == 1u << ASP_GATE_SHIFT, "stub_layout.h: gate size");
_Static_assert(offsetof(asp_gate, generation) == ASP_GATE_GENERATION, "stub_layout.h: generation");
_Static_assert(offsetof(asp_gate, counter) == ASP_GATE_COUNTER, "stub_layout.h: counter");
_Static_assert(offsetof(asp_gate, last_passing) == ASP_GATE_LAST_PASSING, "stub_layout.h: last_passing");
_Static_assert(offsetof(asp_gate, matched) == ASP_GATE_MATCHED, "stub_layout.h: matched");
/* The stub finds the generation from the armed bytes it already holds: armed bytes start
 * right after the 256-byte header (aspects_armed_offset, checked at attach in table.c). */
_Static_assert(sizeof(aspects_table_header) == 256, "the armed bytes follow a 256-byte header");
_Static_assert((long)offsetof(aspects_table_header, generation) - 256 == ASP_GENERATION_FROM_ARMED, "stub_layout.h: generation");

/* The C library's own object: the loaded segments of the object that holds __libc_malloc
 * (default visibility: libc.so's), found once at start-up with dl_iterate_phdr, so that the
 * question costs two compares wherever it is asked (a signal handler included). */
extern __attribute__((visibility("default"))) void *__libc_malloc(size_t);
static uintptr_t asp_libc_lo, asp_libc_hi;

static int asp_find_libc(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    const uintptr_t anchor = (uintptr_t)__libc_malloc;
    uintptr_t lo, hi;
    asp_object_range(info, &lo, &hi);
    if (anchor < lo || anchor >= hi) return 0;
    asp_libc_lo = lo;
    asp_libc_hi = hi;
    return 1;
}

int asp_in_libc(const void *fn) {
    const uintptr_t a = (uintptr_t)fn;
    return a >= asp_libc_lo && a < asp_libc_hi;
}

/* Catalog exports of each group: a contiguous run in the generated order. */
static uint16_t asp_group_first[ASP_GROUP_COUNT], asp_group_count[ASP_GROUP_COUNT];

void asp_gates_shut_all(void) {
    for (uint32_t g = 0; g < ASP_ALL_GROUPS; g++) {
        __atomic_store_n(&asp_gates[g].generation, ASP_GATE_SHUT, __ATOMIC_RELEASE);
        __atomic_store_n(&asp_gates[g].filtered, ASP_GATE_SHUT, __ATOMIC_RELEASE);
    }
}

uint8_t asp_cpu_lse;

/* Whether the stubs may count with one LSE instruction: asked of the kernel once. */
static uint8_t asp_cpu_has_lse(void) {
#if defined(__aarch64__) && defined(HWCAP_ATOMICS)
    return (getauxval(AT_HWCAP) & HWCAP_ATOMICS) != 0;
#else
    return 0;
#endif
}

void asp_gates_init(void) {
    asp_gates_shut_all();
    asp_cpu_lse = asp_cpu_has_lse();
    if (!asp_libc_hi) dl_iterate_phdr(asp_find_libc, NULL);
    for (uint32_t e = ASP_EXPORT_COUNT; e-- > 0;) {
        const uint32_t g = asp_exports[e].group;
        if (g >= ASP_GROUP_COUNT) continue;
        asp_group_first[g] = (uint16_t)e;
        asp_group_count[g]++;
    }
}

/* The first call the rule could fire on from now: after the count its counter holds. */
static uint64_t asp_gate_first(const asp_rule_view *v) {
    return asp_next_possible(v, __atomic_load_n(v->counter, __ATOMIC_RELAXED));
}

/* Whether the stub can count and decide a rule's calls alone: its one counter word is known
 * and nothing about a call but its number matters. */
static int asp_gateable(const asp_rule_view *v) {
    return v->counter != NULL && v->matcher_count == 0 && v->scope != ASPECTS_SCOPE_THREAD &&
           !(v->flags & (ASPECTS_RULE_HAS_CALLER | ASPECTS_RULE_HAS_SITE | ASPECTS_RULE_HAS_RESULT)) &&
           !(v->actions & (ASPECTS_ACTION_CALL | ASPECTS_ACTION_CORRUPT | ASPECTS_ACTION_SHORT)); /* full path only */
}

/* Whether a catalog group's calls can be counted by its stubs: only when each name's original
 * is the C library's own. An interposer between us and libc (another preload, a shim) may
 * reach a second name of the group, or the same name through its PLT, from inside the first
 * call: the dispatcher tells such a call from a new one (the top frame, dispatch_full.c), the
 * stub cannot. A name not resolved yet is checked when it is (asp_gate_resolved). */
static int asp_group_originals_in_libc(uint32_t group) {
    for (uint32_t i = 0; i < asp_group_count[group]; i++) {
        const uint32_t e = asp_group_first[group] + i;
        void *fn = __atomic_load_n(&asp_real[e], __ATOMIC_ACQUIRE);
        if (fn != asp_lazy[e] && !asp_in_libc(fn)) return 0; /* resolved, and not to libc */
    }
    return 1;
}

/* Where a call below the gate of stub slot `slot` goes: the original, or the `count_stats` thunk that
 * also counts it in this process's statistics. */
static void asp_gate_route(uint32_t slot, int count_stats, void *original) {
    __atomic_store_n(&asp_gate_next[slot], count_stats ? asp_gate_count_stats[slot] : original, __ATOMIC_RELAXED);
}

/* Whether the stub can count a call the rule's conditions hold for: one counter word, counted
 * before the original runs (no condition on its result). */
int asp_counts_alone(const asp_rule_view *v) {
    return v->counter != NULL && v->scope != ASPECTS_SCOPE_THREAD && !asp_numbered_at_return(v);
}

/* Whether every name of the group passes its arguments in the six integer registers, one each,
 * in order (what asp_filter reads): integer and pointer parameters only, at most six. */
static int asp_group_in_registers(uint32_t group) {
    const asp_export_desc *ex;
    uint32_t n;
    if (group < ASP_GROUP_COUNT) {
        ex = &asp_exports[asp_group_first[group]];
        n = asp_group_count[group];
    } else {
        ex = &asp_proto_exports[group - ASP_GROUP_COUNT];
        n = 1;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (ex[i].nargs > 6u) return 0;
        for (uint32_t a = 0; a < ex[i].nargs; a++)
            if (ex[i].args[a] == ASPECTS_T_F32 || ex[i].args[a] == ASPECTS_T_F64 || ex[i].args[a] >= ASPECTS_T_STRUCT) return 0;
    }
    return 1;
}

/* Whether the rule's conditions can be decided before the closure, on the registers: argument
 * conditions (for an `after` rule only integer ones — a string or descriptor may mean something
 * else once the original ran: close(fd)), caller, site, and a calling context: the filter's
 * frames lead back to the call site as the dispatcher's do (the stub's own has CFI), so a call
 * through the context is counted by the stub and one from elsewhere never enters the closure. */
static int asp_filterable(uint32_t group, const asp_rule_view *v) {
    if (!(v->matcher_count || (v->flags & (ASPECTS_RULE_HAS_CALLER | ASPECTS_RULE_HAS_SITE)))) return 0;
    if (!asp_group_in_registers(group)) return 0;
    for (uint32_t i = 0; i < v->matcher_count; i++) {
        const uint8_t kind = v->matchers[i].kind;
        if (v->position == ASPECTS_POSITION_AFTER && kind != ASPECTS_MATCH_EQ && kind != ASPECTS_MATCH_NE &&
            kind != ASPECTS_MATCH_RANGE && kind != ASPECTS_MATCH_MASK_ANY && kind != ASPECTS_MATCH_MASK_ALL)
            return 0;
    }
    return 1;
}

/* The same for every stub of `group`: each name of a catalog group, both stubs of a
 * prototype entry. */
static void asp_gate_route_group(uint32_t group, int count_stats) {
    if (group < ASP_GROUP_COUNT) {
        for (uint32_t i = 0; i < asp_group_count[group]; i++) {
            const uint32_t e = asp_group_first[group] + i;
            asp_gate_route(e, count_stats, __atomic_load_n(&asp_real[e], __ATOMIC_ACQUIRE));
        }
    } else {
        const uint32_t k = group - ASP_GROUP_COUNT;
        for (uint32_t b = 0; b < 2; b++)
            asp_gate_route(ASP_EXPORT_COUNT + 2u * k + b, count_stats, __atomic_load_n(&asp_proto_jump[2u * k + b], __ATOMIC_ACQUIRE));
    }
}

/* A record's lock: publications (one group's copy is remade by one thread at a time, but a
 * retirement may run meanwhile) and retirements take it; the stubs never do. A spin: its
 * holder only stores a few words, and never from a signal handler that could interrupt it on
 * the same thread (publish runs under the copy's lock; retire only tries). */
static int asp_gate_try_lock(asp_gate *g) {
    uint32_t unlocked = 0;
    return __atomic_compare_exchange_n(&g->lock, &unlocked, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}
static void asp_gate_unlock(asp_gate *g) { __atomic_store_n(&g->lock, 0, __ATOMIC_RELEASE); }

static void asp_gate_publish_locked(uint32_t group, asp_gate *g, const asp_rule_view *v, uint64_t gen);

void asp_gate_publish(uint32_t group, const asp_rule_view *v, uint64_t gen) {
    if (group >= ASP_ALL_GROUPS) return;
    asp_gate *g = &asp_gates[group];
    for (uint32_t spins = 0; !asp_gate_try_lock(g); spins++) {
        if (spins > 100000u) {
            /* held by a retirement this thread's signal handler interrupted: leave the gate
             * shut (calls take the closure) until the next table change */
            __atomic_store_n(&g->generation, ASP_GATE_SHUT, __ATOMIC_RELEASE);
            __atomic_store_n(&g->filtered, ASP_GATE_SHUT, __ATOMIC_RELEASE);
            return;
        }
        ASP_CPU_RELAX();
    }
    asp_gate_publish_locked(group, g, v, gen);
    asp_gate_unlock(g);
}

static void asp_gate_publish_locked(uint32_t group, asp_gate *g, const asp_rule_view *v, uint64_t gen) {
    __atomic_store_n(&g->generation, ASP_GATE_SHUT, __ATOMIC_RELEASE);
    __atomic_store_n(&g->filtered, ASP_GATE_SHUT, __ATOMIC_RELEASE);
    if (!v || (group < ASP_GROUP_COUNT && !asp_group_originals_in_libc(group))) return;
    const int gated = asp_gateable(v), filtered = !gated && asp_filterable(group, v);
    if (!gated && !filtered) return;
    uint64_t *counter = v->counter;
    uint64_t last_passing;
    int count_stats = v->counter != v->matched_word;
    if (!asp_counts_alone(v)) {
        /* a filter only: calls its conditions hold for enter the closure uncounted */
        counter = &g->idle;
        last_passing = ASP_GATE_NEVER;
        count_stats = 0;
    } else if (!v->process_ok || ((v->flags & ASPECTS_RULE_AUTOREMOVE) && __atomic_load_n(&v->r->claim, __ATOMIC_RELAXED))) {
        /* The rule is for other programs, or an autoRemove rule that already fired: calls
         * here are not its calls. */
        counter = &g->idle;
        last_passing = ASP_GATE_NEVER;
        count_stats = 0;
    } else {
        const uint64_t first = asp_gate_first(v);
        last_passing = first == UINT64_MAX ? ASP_GATE_NEVER : (first ? first - 1u : 0);
    }
    asp_gate_route_group(group, count_stats);
    __atomic_store_n(&g->counter, counter, __ATOMIC_RELAXED);
    __atomic_store_n(&g->matched, v->matched_word, __ATOMIC_RELAXED);
    __atomic_store_n(&g->last_passing, last_passing, __ATOMIC_RELAXED);
    __atomic_store_n(gated ? &g->generation : &g->filtered, gen, __ATOMIC_RELEASE);
}

/* An autoRemove rule that fired (here or in another process) is gone as far as calls are
 * concerned until a writer retires it: its later calls are not its calls, so the gate stops
 * counting them (the stub counts into `idle`). Only tried: a busy lock means a publication is
 * under way, which will say the same. */
static void asp_gate_retire(uint32_t group, const asp_rule_view *v) {
    if (group >= ASP_ALL_GROUPS) return;
    asp_gate *g = &asp_gates[group];
    if (!asp_gate_try_lock(g)) return;
    const uint64_t gen = __atomic_load_n(&g->generation, __ATOMIC_ACQUIRE);
    if (gen != ASP_GATE_SHUT && __atomic_load_n(&g->counter, __ATOMIC_RELAXED) == v->counter) {
        __atomic_store_n(&g->generation, ASP_GATE_SHUT, __ATOMIC_RELEASE);
        __atomic_store_n(&g->last_passing, ASP_GATE_NEVER, __ATOMIC_RELAXED);
        __atomic_store_n(&g->counter, &g->idle, __ATOMIC_RELAXED);
        asp_gate_route_group(group, 0);
        __atomic_store_n(&g->generation, gen, __ATOMIC_RELEASE);
    }
    asp_gate_unlock(g);
}

int asp_gate_filtered_at(uint32_t group, uint64_t gen) {
    return group < ASP_ALL_GROUPS && __atomic_load_n(&asp_gates[group].filtered, __ATOMIC_ACQUIRE) == gen;
}

void asp_gate_advance(uint32_t group, const asp_rule_view *v, uint64_t next_possible) {
    if (group >= ASP_ALL_GROUPS) return;
    if (next_possible == UINT64_MAX && (v->flags & ASPECTS_RULE_AUTOREMOVE) && __atomic_load_n(&v->r->claim, __ATOMIC_RELAXED)) {
        asp_gate_retire(group, v);
        return;
    }
    asp_gate *g = &asp_gates[group];
    uint64_t last_passing = __atomic_load_n(&g->last_passing, __ATOMIC_RELAXED);
    if (__atomic_load_n(&g->counter, __ATOMIC_ACQUIRE) != v->counter) return;
    const uint64_t want = next_possible == UINT64_MAX ? ASP_GATE_NEVER : (next_possible ? next_possible - 1u : 0);
    if (want != last_passing) __atomic_compare_exchange_n(&g->last_passing, &last_passing, want, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

void asp_gate_resolved(uint32_t idx, void *lazy, void *fn) {
    if (idx >= ASP_EXPORT_COUNT) return;
    const uint32_t group = asp_exports[idx].group;
    if (asp_tab.attached && group < ASP_GROUP_COUNT && !asp_in_libc(fn)) {
        __atomic_store_n(&asp_gates[group].generation, ASP_GATE_SHUT, __ATOMIC_RELEASE);
        __atomic_store_n(&asp_gates[group].filtered, ASP_GATE_SHUT, __ATOMIC_RELEASE);
        return;
    }
    void *expected = lazy;
    __atomic_compare_exchange_n(&asp_gate_next[idx], &expected, fn, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

