/* rulecache.c — the process's own copy of each armed group's rules, so that an advised call
 * does not re-validate shared memory rule by rule.
 *
 * Every committed change of the table bumps its generation. A call compares the generation
 * with the one its group's copy was made at (one load of a read-mostly cache line); only
 * after a change does one thread re-read the group's rules — seqlock-validated and
 * bounds-checked, as everything from shared memory — into the other of two buffers and then
 * publish it. Threads that find a rebuild under way read shared memory directly for that call
 * (the full path's asp_rule_at), so no call waits and no call acts on a rule removed before it
 * began. The rebuilding thread re-checks the generation under its lock, so one change causes
 * one rebuild; a copy is made in a local and stored whole, so even a call that outlives two
 * rebuilds reads validated values. Lock-free for readers, allocation-free, async-signal-safe. */
#include "counters.h"
#include "decide.h"
#include "gate.h"
#include "glob.h"
#include "identity.h"
#include "rulecache.h"
#include "sys.h"

asp_group_cache asp_caches[ASP_ALL_GROUPS];
void (*asp_table_moved_hook)(void);

/* Validated copy of rule `slot` for export-independent use; 0 if it is not active. */
int asp_view_from_slot(uint32_t slot, uint32_t group, asp_rule_view *out) {
    /* Made in a local and copied out whole once valid: a reader still using the buffer (the
     * copy before last, on a call that outlived two rebuilds) sees old or new validated
     * values, never a pointer not yet set or a matcher not yet checked. */
    asp_rule_view tmp = {0};
    asp_rule_view *const v = &tmp;
    if (slot >= asp_tab.rule_capacity) return 0;
    aspects_rule *r = &asp_tab.rules[slot];
    uint32_t s1 = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE);
    if ((s1 & 1u) || !aspects_rule_in_group(r, group)) return 0;
    /* A batch counts whole: ADDING/REMOVING slots are decided by the header's committed batch
     * (the writer stores it before bumping the generation this copy was made for). */
    if (!aspects_rule_live(__atomic_load_n(&r->state, __ATOMIC_RELAXED), r->batch,
                           __atomic_load_n(&asp_tab.header->committed_batch, __ATOMIC_ACQUIRE))) return 0;
    v->r = r;
    v->slot = slot;
    v->position = r->position;
    v->actions = r->actions;
    v->scope = r->scope;
    v->flags = r->flags;
    v->signal_number = r->signal_number;
    v->errno_value = r->errno_value;
    v->return_value = r->return_value;
    /* a struct result's bytes: used only if they lie inside the slot's strings */
    const uint32_t roff = r->result_off, rlen = r->result_len;
    if (rlen && (roff >= ASPECTS_RULE_STRINGS_SIZE || rlen > ASPECTS_RULE_STRINGS_SIZE - roff)) return 0;
    v->result_off = (uint16_t)roff;
    v->result_len = (uint16_t)rlen;
    v->delay_ns = r->delay_ns;
    v->nth = r->nth;
    v->after = r->after;
    v->every = r->every;
    v->times = r->times;
    v->serial = r->serial;
    v->probability = r->probability;
    v->schedule = aspects_schedule_of((r->flags & ASPECTS_RULE_PROBABILITY) ? r->probability : UINT64_MAX);
    v->seed = r->seed;
    v->rule_key = r->rule_key;
    v->result_min = r->result_min;
    v->result_max = r->result_max;
    v->result_errno = r->result_errno;
    v->result_checks = r->result_checks;
    v->result_arg = r->result_arg; /* any value: asp_result_holds checks it against the export */
    v->arg_set_count = r->arg_set_count < ASPECTS_MAX_ARG_SETS ? r->arg_set_count : ASPECTS_MAX_ARG_SETS;
    v->errno_choice_count = r->errno_choice_count < ASPECTS_MAX_ERRNO_CHOICES ? r->errno_choice_count : ASPECTS_MAX_ERRNO_CHOICES;
    uint32_t n = r->matcher_count;
    if (n > ASPECTS_MAX_MATCHERS) return 0;
    v->matcher_count = n;
    /* A rule on several functions may name a condition's argument, which then sits at another
     * place in each (open's path is argument 0, openat's 1): after the family's group list the
     * writer stores each matcher's argument number in each of those groups (aspects_abi.h). */
    const char *remap = NULL;
    if (n && (r->flags & ASPECTS_RULE_FAMILY) && r->group != group) {
        const uint32_t off = r->family_off, fl = r->family_len;
        if (fl > ASPECTS_MAX_FAMILY || off % 2 || off > ASPECTS_RULE_STRINGS_SIZE || fl * (2u + n) > ASPECTS_RULE_STRINGS_SIZE - off) return 0;
        for (uint32_t j = 0; j < fl && !remap; j++) {
            uint16_t g;
            __builtin_memcpy(&g, r->strings + off + 2u * j, 2);
            if (g == group) remap = r->strings + off + 2u * fl + j * n;
        }
        if (!remap) return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        v->matchers[i] = r->matchers[i];
        if (remap) v->matchers[i].arg = (uint8_t)remap[i];
        const aspects_matcher *m = &v->matchers[i];
        if (m->arg >= ASP_MAX_ARGS || (uint32_t)m->str_off + m->str_len > ASPECTS_RULE_STRINGS_SIZE) return 0;
    }
    v->process_off = r->process_off;
    v->process_len = r->process_len;
    v->caller_off = r->caller_off;
    v->caller_len = r->caller_len;
    v->site_off = r->site_off;
    v->site_len = r->site_len;
    v->site_offset = r->site_offset;
    v->context_depth = r->context_depth;
    v->context_hash = r->context_hash;
    /* a context is decided after its first frame, the site: never one without it */
    if ((v->flags & ASPECTS_RULE_HAS_CONTEXT) &&
        (!(v->flags & ASPECTS_RULE_HAS_SITE) || v->context_depth == 0 || v->context_depth > ASPECTS_MAX_CONTEXT_DEPTH)) return 0;
    if ((uint32_t)v->process_off + v->process_len > ASPECTS_RULE_STRINGS_SIZE ||
        (uint32_t)v->caller_off + v->caller_len > ASPECTS_RULE_STRINGS_SIZE ||
        (uint32_t)v->site_off + v->site_len > ASPECTS_RULE_STRINGS_SIZE) return 0;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&r->seq, __ATOMIC_RELAXED) != s1) return 0;
    if (v->position > ASPECTS_POSITION_AFTER || v->scope > ASPECTS_SCOPE_TABLE) return 0;
    /* Per-process counters and the statistics entry are found now, once per generation. */
    v->stat = asp_stat_entry(slot, v->serial);
    asp_local_adopt(slot, v->serial);
    v->matched_word = v->stat ? &v->stat->matched : &r->matched;
    /* The one counter word of the scope, for the single-rule path. A hierarchy's entry is
     * claimed now only for a rule without conditions, whose every call counts anyway. */
    v->counter = NULL;
    if (v->scope == ASPECTS_SCOPE_PROCESS && slot < ASPECTS_MAX_RULE_CAPACITY) {
        /* This process's statistics entry is keyed by (rule, pid, image): exactly the life
         * of a process-scope count, so its `matched` word is the counter and one add does
         * both (the stub's gate counts with a single add). Without an entry: our memory. */
        v->counter = v->stat ? &v->stat->matched : &asp_local[slot].calls;
    } else if (v->scope == ASPECTS_SCOPE_TABLE) {
        v->counter = &r->table_calls;
    } else if (v->scope == ASPECTS_SCOPE_HIERARCHY && n == 0 && !(v->flags & (ASPECTS_RULE_HAS_PROCESS | ASPECTS_RULE_HAS_CALLER | ASPECTS_RULE_HAS_SITE))) {
        aspects_hierarchy_counter *hc = asp_hierarchy_counter_of(r);
        if (hc) v->counter = &hc->calls;
    }
    v->gate = asp_first_possible(v);
    /* `after` alone fires on every call past its bound: nothing to move after publication */
    v->gate_moves = v->nth || v->every || v->times || (v->flags & (ASPECTS_RULE_PROBABILITY | ASPECTS_RULE_ONCE_PROCESS |
                                                                    ASPECTS_RULE_ONCE_HIERARCHY | ASPECTS_RULE_AUTOREMOVE));
    v->caller_memo = 0;
    v->site_memo = 0;
    /* The program does not change while the copy lives (exec starts a new image). */
    v->process_ok = !(v->flags & ASPECTS_RULE_HAS_PROCESS) || asp_process_matches(r->strings + v->process_off, v->process_len);
    v->unconditional = n == 0 && v->counter != NULL &&
               !(v->flags & (ASPECTS_RULE_AUTOREMOVE | ASPECTS_RULE_HAS_PROCESS | ASPECTS_RULE_HAS_CALLER | ASPECTS_RULE_HAS_SITE));
    for (uint32_t i = 0; i < n; i++) {
        const aspects_matcher *m = &v->matchers[i];
        v->plans[i] = m->kind == ASPECTS_MATCH_GLOB || m->kind == ASPECTS_MATCH_FDPATH
                          ? asp_glob_classify(r->strings + m->str_off, m->str_len) : (asp_glob_plan){0, 0, 0, 0};
    }
    *out = tmp;
    return 1;
}

/* Which path the dispatcher (dispatch.c) takes for a group's rules.
 *   single: one rule, whatever it says — but user code and data faults;
 *   several: before/instead rules counted per process, without claims, draws, process/caller
 *           conditions, delays, signals or argument rewrites;
 *   full:   everything else, and any group with a `call`, `corrupt` or `short` rule or a stream
 *           fault: only the full path runs them (advice_call.c, advice_data.c, stream.c), so
 *           such a rule is never a group's single rule nor behind a stub's gate. */
static uint32_t asp_views_path(const asp_rule_view *v, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if ((v[i].actions & (ASPECTS_ACTION_CALL | ASPECTS_ACTION_CORRUPT | ASPECTS_ACTION_SHORT)) ||
            (v[i].flags & ASPECTS_RULE_STREAM_FAULT))
            return ASP_PATH_FULL;
    if (n == 1) return ASP_PATH_SINGLE;
    for (uint32_t i = 0; i < n; i++) {
        if (v[i].position == ASPECTS_POSITION_AFTER || v[i].scope != ASPECTS_SCOPE_PROCESS || v[i].times ||
            (v[i].flags & ~(uint32_t)ASPECTS_RULE_RETURN_IS_CODE) ||
            (v[i].actions & (ASPECTS_ACTION_DELAY | ASPECTS_ACTION_SIGNAL | ASPECTS_ACTION_ARGS | ASPECTS_ACTION_HERRNO)) ||
            v[i].slot >= ASPECTS_MAX_RULE_CAPACITY)
            return ASP_PATH_FULL;
    }
    return ASP_PATH_SEVERAL;
}

/* The rules of a group for this call: the cached copy when it is current (NULL is returned
 * otherwise, with the raw slot list in `list`, when another thread is rebuilding the copy or
 * the group has more rules than a copy holds: the caller then reads each rule directly). */
const asp_rule_view *asp_group_rules_slow(uint32_t group, uint16_t *list, uint32_t *count) {
    *count = 0;
    if (ASP_UNLIKELY(group >= ASP_ALL_GROUPS || group >= asp_tab.group_capacity)) return NULL;
    /* The table moved: prototype symbols may have come or gone too. */
    if (asp_table_moved_hook) asp_table_moved_hook();
    asp_group_cache *c = &asp_caches[group];
    uint32_t expected = 0;
    if (!__atomic_compare_exchange_n(&c->lock, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        *count = asp_table_rules_of(group, list);
        return NULL;
    }
    /* Under the lock: another thread may have just made the copy for this generation. Making
     * it again would overwrite the buffer that calls of the previous generation still read. */
    const uint64_t gen = __atomic_load_n(&asp_tab.header->generation, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&c->generation, __ATOMIC_ACQUIRE) == gen + 1) {
        const uint32_t a = __atomic_load_n(&c->active, __ATOMIC_ACQUIRE) & 1u;
        *count = __atomic_load_n(&c->count[a], __ATOMIC_RELAXED);
        __atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE);
        return c->views[a];
    }
    uint32_t n = asp_table_rules_of(group, list);
    *count = n;
    if (n > ASP_CACHE_RULES) {
        __atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE);
        return NULL;
    }
    uint32_t b = (__atomic_load_n(&c->active, __ATOMIC_RELAXED) & 1u) ^ 1u;
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (asp_view_from_slot(list[i], group, &c->views[b][k])) k++;
    /* a call that outlived two rebuilds may still read this buffer (asp_group_rules):
     * the count is published with an atomic store, the views are validated copies */
    __atomic_store_n(&c->count[b], k, __ATOMIC_RELAXED);
    const uint32_t path = asp_views_path(c->views[b], k);
    __atomic_store_n(&c->path[b], path, __ATOMIC_RELAXED);
    const int single = path == ASP_PATH_SINGLE, after = c->views[b][0].position == ASPECTS_POSITION_AFTER;
    __atomic_store_n(&c->single, single && !after ? &c->views[b][0] : NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&c->single_after, single && after ? &c->views[b][0] : NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&c->active, b, __ATOMIC_RELEASE);
    /* generation + 1, so that a zeroed cache (0) never looks current */
    __atomic_store_n(&c->generation, gen + 1, __ATOMIC_RELEASE);
    /* The stubs' gate, once the copy a call at the gate will find is in place. */
    asp_gate_publish(group, single ? &c->views[b][0] : NULL, gen);
    __atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE);
    *count = k;
    return c->views[b];
}

/* After fork: the copies point at the parent's statistics entries; rebuild on next use. */
void asp_rule_caches_reset_after_fork(void) {
    asp_gates_shut_all();
    for (uint32_t g = 0; g < ASP_ALL_GROUPS; g++) {
        asp_caches[g].generation = 0;
        asp_caches[g].lock = 0;
    }
}
