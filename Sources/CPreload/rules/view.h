/* view.h — a rule as this process uses it: the validated copy rulecache.c makes of a table
 * slot (every index and length checked, the scope's counter word found, globs classified). */
#ifndef ASP_VIEW_H
#define ASP_VIEW_H

#include "base.h"
#include "glob.h"
#include "aspects_prng.h"
typedef struct asp_rule_view {
    aspects_rule *r;                /* the slot: claims, shared counters, strings */
    aspects_process_stat *stat;     /* this process's statistics entry, or NULL */
    uint64_t *counter;              /* the call counter of the rule's scope when it is one word
                                       (process, table, a claimed hierarchy entry), else NULL */
    uint64_t *matched_word;         /* where a matching call is counted for statistics: for
                                       process scope the very counter word (this process's
                                       statistics entry counts its calls), so one add does both */
    uint64_t gate;                  /* calls numbered below this never fire (asp_first_possible) */
    uint32_t never_again;               /* can never fire again in this scope (asp_never_again) */
    uint32_t slot, position, actions, scope, flags, signal_number;
    int32_t errno_value;
    uint32_t matcher_count, arg_set_count, errno_choice_count;
    uint32_t unconditional;         /* no conditions, a counter word, no autoRemove: the single path's shortest way */
    uint32_t process_ok;            /* the rule's `process` glob matches this program (or it has none) */
    uint32_t gate_moves;            /* a decision can move the stubs' gate (nth, every, a schedule,
                                       claims); without, its bound stays where it was published */
    uint64_t caller_memo;           /* the last caller address << 2 | 2 | whether it matched; 0: none */
    uint64_t site_memo;             /* the same for the `site` condition */
    uint64_t site_offset;           /* `site`: the return address's offset in the file r->strings names */
    uint16_t site_off, site_len;
    uint32_t context_depth;         /* `context` (ASPECTS_RULE_HAS_CONTEXT): 1..ASPECTS_MAX_CONTEXT_DEPTH */
    uint64_t context_hash;          /*   frames, and their aspects_context_hash */
    int64_t return_value;
    uint64_t delay_ns, nth, after, every, times, serial, probability, seed, rule_key;
    aspects_schedule schedule;          /* the firing schedule of a probability rule (aspects_prng.h) */
    int64_t result_min, result_max;  /* ASPECTS_RULE_HAS_RESULT */
    int32_t result_errno;
    uint32_t result_checks;
    uint32_t result_arg;             /* `lt_arg` (result_checks bit 2): the group's argument index */
    uint16_t process_off, process_len, caller_off, caller_len;
    uint16_t result_off, result_len;  /* a struct result's bytes in r->strings (0 bytes: none) */
    aspects_matcher matchers[ASPECTS_MAX_MATCHERS];
    asp_glob_plan plans[ASPECTS_MAX_MATCHERS];
} asp_rule_view;

#endif
