/* counters.c — the counters behind nth / after / every / times / once / autoRemove, per
 * scope, and the per-process statistics. All lock-free and async-signal-safe.
 *
 *   thread     initial-exec TLS, a small open-addressed table keyed by rule serial;
 *   process    this process's statistics entry of the rule (its `matched` word), or, when the
 *              statistics region is full, this process's memory indexed by rule slot, reset
 *              when the slot holds another rule (asp_local_adopt); either is one word, which
 *              the wrapper stub's gate counts in (gate.h); the `times` and `once` claims of
 *              process scope live in that memory too, tagged with the rule's serial rather
 *              than reset;
 *   hierarchy  the rule slot's per-hierarchy entries in the table (claimed by CAS);
 *   table      the rule slot itself (the writer zeroes it when it fills the slot).
 * A fork child starts its process (and thread) counters at zero. */
#include "counters.h"
#include "identity.h"
#include "sys.h"
#include "table.h"

asp_local_counter asp_local[ASPECTS_MAX_RULE_CAPACITY];

typedef struct asp_thread_counter {
    uint64_t serial; /* 0 = free */
    uint64_t calls;
    uint64_t fired;
} asp_thread_counter;

static ASP_TLS asp_thread_counter asp_thread_counters[ASPECTS_THREAD_RULES];

/* Called while a rule copy is made: counts of a slot's previous rule do not carry over.
 * Only `calls` (the fallback counter word when the statistics region is full) is reset here:
 * the reset comes after the serial is published, so a thread that counted in between loses
 * that count. `fired` and `once` carry the serial of the rule they count for and are never
 * reset (a reset there let two threads of one process both take a `once`: one claimed while
 * the other, which had published the new serial, had not yet stored its zero). */
void asp_local_adopt(uint32_t slot, uint64_t serial) {
    if (slot >= ASPECTS_MAX_RULE_CAPACITY) return;
    asp_local_counter *c = &asp_local[slot];
    uint64_t old = __atomic_load_n(&c->serial, __ATOMIC_RELAXED);
    if (old == serial) return;
    if (__atomic_compare_exchange_n(&c->serial, &old, serial, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        __atomic_store_n(&c->calls, 0, __ATOMIC_RELAXED);
}

/* `once: process`: the first claim of this rule in this process. The word holds the serial
 * of the latest rule of the slot that fired; serials only grow, so a claim succeeds by moving
 * it up to this rule's, once, and a copy of an older rule of the slot (a call still on its
 * way through a rule since replaced) never takes it back. */
int asp_claim_once_process(const asp_rule_view *v) {
    if (v->slot >= ASPECTS_MAX_RULE_CAPACITY) return 0;
    uint64_t *w = &asp_local[v->slot].once, cur = __atomic_load_n(w, __ATOMIC_RELAXED);
    for (;;) {
        if (cur >= v->serial) return 0;
        if (__atomic_compare_exchange_n(w, &cur, v->serial, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return 1;
    }
}

/* `times` in process scope: one more firing of this rule, unless it fired that often. The word
 * is the rule's serial (low 32 bits, which distinguish the rules one slot holds over any
 * realistic run) above its count (low 32 bits): another rule's word counts as 0. A `times` of
 * 2^32 or more is not reached by a 32-bit count: every claim succeeds. */
static int asp_claim_times_process(const asp_rule_view *v) {
    if (v->slot >= ASPECTS_MAX_RULE_CAPACITY) return 0;
    if (v->times > 0xffffffffu) return 1;
    uint64_t *w = &asp_local[v->slot].fired, cur = __atomic_load_n(w, __ATOMIC_RELAXED);
    const uint64_t tag = (v->serial & 0xffffffffu) << 32;
    for (;;) {
        const uint64_t count = (cur & 0xffffffff00000000u) == tag ? cur & 0xffffffffu : 0;
        if (count >= v->times) return 0;
        if (__atomic_compare_exchange_n(w, &cur, tag | (count + 1), 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return 1;
    }
}

/* Increments unless the count already reached `limit`; returns whether it did. */
static int asp_limited_increment(uint64_t *word, uint64_t limit) {
    uint64_t old = __atomic_load_n(word, __ATOMIC_RELAXED);
    for (;;) {
        if (old >= limit) return 0;
        if (__atomic_compare_exchange_n(word, &old, old + 1, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return 1;
    }
}

/* This thread's counter of a thread-scoped rule. Entries of rules that left the table are
 * reused; the writer caps thread-scoped rules at ASPECTS_THREAD_RULES, so one is always free. */
static asp_thread_counter *asp_thread_counter_of(uint32_t slot, uint64_t serial) {
    uint32_t start = slot % ASPECTS_THREAD_RULES;
    asp_thread_counter *free_entry = NULL;
    for (uint32_t i = 0; i < ASPECTS_THREAD_RULES; i++) {
        asp_thread_counter *c = &asp_thread_counters[(start + i) % ASPECTS_THREAD_RULES];
        if (c->serial == serial) return c;
        if (!free_entry && c->serial == 0) free_entry = c;
    }
    if (!free_entry) {
        /* Every entry is taken: reuse one whose rule is no longer active. */
        for (uint32_t i = 0; i < ASPECTS_THREAD_RULES && !free_entry; i++) {
            asp_thread_counter *c = &asp_thread_counters[i];
            int alive = 0;
            for (uint32_t r = 0; r < asp_tab.rule_capacity && !alive; r++)
                alive = __atomic_load_n(&asp_tab.rules[r].serial, __ATOMIC_RELAXED) == c->serial &&
                        aspects_rule_live(__atomic_load_n(&asp_tab.rules[r].state, __ATOMIC_RELAXED), asp_tab.rules[r].batch,
                                          __atomic_load_n(&asp_tab.header->committed_batch, __ATOMIC_RELAXED));
            if (!alive) free_entry = c;
        }
        if (!free_entry) return NULL;
    }
    free_entry->serial = serial;
    free_entry->calls = 0;
    free_entry->fired = 0;
    return free_entry;
}

/* A hierarchy entry's owner word while a process takes it over from an ended hierarchy:
 * the new owner with this bit, until its counts are zeroed. */
#define ASP_HIERARCHY_TAKING (UINT64_C(1) << 63)

/* The rules (by slot, their serial) for which this process found every hierarchy entry
 * taken by a running hierarchy: it is counted once in the rule's hierarchies_full, is not
 * advised by the rule, and does not look again. */
static uint64_t asp_hierarchy_full_serial[ASPECTS_MAX_RULE_CAPACITY];

/* Takes over entry h from `owner`, a hierarchy that has ended: its counts start at zero for
 * us. 1 when h is ours now. */
static int asp_hierarchy_take_over(aspects_hierarchy_counter *h, uint64_t owner, uint64_t me) {
    if (asp_hierarchy_alive(owner & ~ASP_HIERARCHY_TAKING)) return 0;
    if (!__atomic_compare_exchange_n(&h->hierarchy, &owner, me | ASP_HIERARCHY_TAKING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return 0;
    __atomic_store_n(&h->calls, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&h->fired, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&h->once, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&h->hierarchy, me, __ATOMIC_RELEASE);
    return 1;
}

/* An entry another process of our hierarchy is taking over: ours once it has zeroed the
 * counts. Bounded: if the taker is this thread, interrupted by a signal handler, it cannot
 * finish until we return (then this call is not advised). */
static int asp_hierarchy_taken_by_us(aspects_hierarchy_counter *h, uint64_t me) {
    for (uint32_t spin = 0; spin < 100000u; spin++) {
        const uint64_t owner = __atomic_load_n(&h->hierarchy, __ATOMIC_ACQUIRE);
        if (owner != (me | ASP_HIERARCHY_TAKING)) return owner == me;
        ASP_CPU_RELAX();
    }
    return 0;
}

/* The rule's entry for this process's hierarchy, claimed on first use: a free one, else one
 * whose hierarchy has ended (issue #20, 9: the slots used to run out after 8 process trees,
 * silently). NULL when all ASPECTS_HIERARCHY_SLOTS entries belong to running hierarchies:
 * counted once per process in the rule's hierarchies_full (`list`, `stats`). */
aspects_hierarchy_counter *asp_hierarchy_counter_of(aspects_rule *r) {
    uint64_t me = asp_hierarchy;
    if (!me || me >= ASP_HIERARCHY_TAKING) return NULL;
    for (uint32_t i = 0; i < ASPECTS_HIERARCHY_SLOTS; i++) {
        aspects_hierarchy_counter *h = &r->hierarchies[i];
        uint64_t owner = __atomic_load_n(&h->hierarchy, __ATOMIC_ACQUIRE);
        if (owner == me) return h;
        if (owner == (me | ASP_HIERARCHY_TAKING)) return asp_hierarchy_taken_by_us(h, me) ? h : NULL;
        if (owner == 0) {
            uint64_t expected = 0;
            if (__atomic_compare_exchange_n(&h->hierarchy, &expected, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
                expected == me)
                return h;
        }
    }
    const size_t slot = (size_t)(r - asp_tab.rules);
    const uint64_t serial = __atomic_load_n(&r->serial, __ATOMIC_RELAXED);
    if (slot >= ASPECTS_MAX_RULE_CAPACITY || __atomic_load_n(&asp_hierarchy_full_serial[slot], __ATOMIC_RELAXED) == serial)
        return NULL;
    for (uint32_t i = 0; i < ASPECTS_HIERARCHY_SLOTS; i++) {
        aspects_hierarchy_counter *h = &r->hierarchies[i];
        const uint64_t owner = __atomic_load_n(&h->hierarchy, __ATOMIC_ACQUIRE);
        if (owner == me) return h;
        if (owner && asp_hierarchy_take_over(h, owner, me)) return h;
    }
    if (__atomic_exchange_n(&asp_hierarchy_full_serial[slot], serial, __ATOMIC_RELAXED) != serial)
        __atomic_fetch_add(&r->hierarchies_full, 1, __ATOMIC_RELAXED);
    return NULL;
}

uint64_t asp_count_call_slow(const asp_rule_view *v) {
    switch (v->scope) {
    case ASPECTS_SCOPE_TABLE:
        return __atomic_add_fetch(&v->r->table_calls, 1, __ATOMIC_RELAXED);
    case ASPECTS_SCOPE_THREAD: {
        asp_thread_counter *c = asp_thread_counter_of(v->slot, v->serial);
        return c ? ++c->calls : 0;
    }
    case ASPECTS_SCOPE_HIERARCHY: {
        aspects_hierarchy_counter *h = asp_hierarchy_counter_of(v->r);
        return h ? __atomic_add_fetch(&h->calls, 1, __ATOMIC_RELAXED) : 0;
    }
    default:
        return v->slot < ASPECTS_MAX_RULE_CAPACITY ? __atomic_add_fetch(&asp_local[v->slot].calls, 1, __ATOMIC_RELAXED) : 0;
    }
}

/* `times`: one more firing in the rule's scope, unless it already fired that often. */
int asp_claim_times(const asp_rule_view *v) {
    switch (v->scope) {
    case ASPECTS_SCOPE_TABLE:
        return asp_limited_increment(&v->r->table_fired, v->times);
    case ASPECTS_SCOPE_THREAD: {
        asp_thread_counter *c = asp_thread_counter_of(v->slot, v->serial);
        if (!c || c->fired >= v->times) return 0;
        c->fired++;
        return 1;
    }
    case ASPECTS_SCOPE_HIERARCHY: {
        aspects_hierarchy_counter *h = asp_hierarchy_counter_of(v->r);
        return h && asp_limited_increment(&h->fired, v->times);
    }
    default:
        return asp_claim_times_process(v);
    }
}

int asp_claim_once_hierarchy(aspects_rule *r) {
    aspects_hierarchy_counter *h = asp_hierarchy_counter_of(r);
    uint64_t expected = 0;
    return h && __atomic_compare_exchange_n(&h->once, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* autoRemove: exactly one firing in the whole table, whoever calls. */
int asp_claim_autoremove(aspects_rule *r) {
    uint32_t expected = 0, me = asp_pid ? asp_pid : 1;
    return __atomic_compare_exchange_n(&r->claim, &expected, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* The image of an entry another thread of ours has just claimed, once it is written (0: not
 * within the bound). The claimer writes it a few stores after its claim, but may be preempted
 * in between: past a short spin the wait gives up the CPU, so its length does not depend on
 * the CPU's spin hint (a bare spin of 100,000 loads lasted what x86-64's `pause` made of it,
 * far less on aarch64, where two threads of a process under qemu then took two entries and
 * both counted from 1). The bound, 20,000 yields, is milliseconds. */
static uint64_t asp_stat_image_written(const aspects_process_stat *e) {
    uint64_t image = __atomic_load_n(&e->image, __ATOMIC_ACQUIRE);
    for (uint32_t spin = 0; image == 0 && spin < 20000u; spin++) {
        if (spin >= 100u) asp_sys_yield();
        else ASP_CPU_RELAX();
        image = __atomic_load_n(&e->image, __ATOMIC_ACQUIRE);
    }
    return image;
}

/* This process's statistics entry for a rule (open addressing on the key; NULL if the region
 * is full, and the rule's own counters take the counts). Called while rule copies are made. */
aspects_process_stat *asp_stat_entry(uint32_t slot, uint64_t serial) {
    if (!asp_tab.stat_capacity) return NULL;
    uint64_t key = (serial << 22) | (asp_pid & 0x3fffffu);
    /* The product's high half, which every bit of the key reaches: its low bits depend on the
     * key's low bits alone, so that every rule of one pid probed the same 64 slots, and a pid
     * whose images called more than 64 functions counted the rest under no process. */
    uint64_t h = (key * 0x9e3779b97f4a7c15ull) >> 32;
    for (uint32_t probe = 0; probe < 64; probe++) {
        aspects_process_stat *e = &asp_tab.stats[(h + probe) & (asp_tab.stat_capacity - 1)];
        uint64_t expected = 0;
        if (__atomic_compare_exchange_n(&e->key, &expected, key, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            e->pid = asp_pid;
            e->slot = slot;
            __atomic_store_n(&e->image, asp_image, __ATOMIC_RELEASE);
            return e;
        }
        /* The same key from an earlier image of this pid (before an exec) is not ours. One
         * another thread of ours has just claimed has no image for a moment: wait for it,
         * since a process-scope rule counts its calls in this very entry (rulecache.c) and
         * two entries would split the count. Bounded: if the claimer is this thread,
         * interrupted by a signal handler, it cannot write the image until we return; then we
         * take a second entry (readers sum both). */
        if (expected == key && asp_stat_image_written(e) == asp_image) return e;
    }
    return NULL;
}

/* A fork child starts its own process- and thread-scope counters at zero (docs/ARCHITECTURE.md
 * §5, host safety). Runs in
 * the child right after fork, single-threaded. */
void asp_counters_reset_after_fork(void) {
    volatile uint64_t *p = (volatile uint64_t *)asp_local;
    for (size_t i = 0; i < 4 * (size_t)ASPECTS_MAX_RULE_CAPACITY; i++) p[i] = 0;
    for (uint32_t i = 0; i < ASPECTS_THREAD_RULES; i++) asp_thread_counters[i].serial = 0;
    /* the child is a process of its own: it looks for an entry again, and counts if none */
    for (uint32_t i = 0; i < ASPECTS_MAX_RULE_CAPACITY; i++) asp_hierarchy_full_serial[i] = 0;
}
