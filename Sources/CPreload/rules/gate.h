/* gate.h — the gate in front of the forwarding stub: what the wrapper stub reads to let a
 * call of an armed function through to the original without entering libffi's closure.
 *
 * Most rules cannot fire on most calls, and that is known before the call: `nth: 10000`
 * cannot fire on calls 1..9999, a probability rule's next firing is in its schedule
 * (aspects_prng.h). For a group whose one rule has no condition the stub cannot decide itself
 * (arguments, caller, site, result, thread scope), the rule cache publishes a gate record
 * per group: the counter word of the rule's scope, the call number below which the rule
 * cannot fire, and the table generation it was made at. The stub counts the call with one
 * atomic add and, below that number and at that generation, jumps to the original; at or
 * past it, it enters the closure with the number it took (the pending ring, thread.h), so
 * the dispatcher decides that very call number exactly and moves the gate to the next one.
 *
 * Layering: made by rulecache.c from its rule copies (below the dispatcher), moved by the
 * dispatcher after each decision, read by the stubs (stubs/). It decides with decide.h and
 * reads the stubs' tables (wrapper_tables.h); it calls nothing above it. */
#ifndef ASP_GATE_H
#define ASP_GATE_H

#include <stdint.h>
#include "stubs/stub_layout.h"
#include "wrapper_tables.h"
#include "view.h"

#define ASP_GATE_SHUT UINT64_MAX      /* a generation no table reaches: the gate is shut */
#define ASP_GATE_NEVER UINT64_MAX     /* `last_passing` of a rule that can no longer fire here */

typedef struct asp_gate {
    uint64_t generation;   /* the table generation the gate was made at; ASP_GATE_SHUT: none */
    uint64_t *counter;     /* the word the stub counts a call in (the rule's scope counter) */
    uint64_t last_passing; /* the last call number that passes (a call whose count before its own
                              is below this): the next call number the rule can fire on, minus one */
    uint64_t *matched;     /* the `count_stats` thunks' word: this process's statistics entry, when
                              the counter is a shared one (table, hierarchy) */
    uint64_t idle;         /* the counter of a rule that never applies in this process */
    uint64_t filtered;     /* the table generation at which the rule's conditions are decided
                              before the closure (asp_filter); the gate then counts only calls
                              they hold for. ASP_GATE_SHUT: no filter. `generation` and
                              `filtered` are never both current. */
    uint32_t lock;         /* held by a publication or a retirement of this record */
    uint32_t pad0;
    uint64_t pad[1];
} asp_gate;

extern asp_gate asp_gates[ASP_ALL_GROUPS];
/* aarch64: 1 when the CPU has the LSE atomics (the stubs count with ldaddal, else with an
 * exclusive-load/store loop); set by asp_gates_init, before any call can be armed. */
extern uint8_t asp_cpu_lse;
void asp_gates_init(void);               /* at attach, before any call can be armed */
void asp_gates_shut_all(void);           /* fork child: counters and copies start over */
/* The gate of `group` from its single rule `v` (NULL: no gate) at table generation `gen`. */
void asp_gate_publish(uint32_t group, const asp_rule_view *v, uint64_t gen);
/* After a decision on call number k of v: the gate moves to v's next possible firing. */
void asp_gate_advance(uint32_t group, const asp_rule_view *v, uint64_t next_possible);
/* Whether the counting gate or the filter of `group` is the one for table generation `gen`. */
int asp_gate_filtered_at(uint32_t group, uint64_t gen);
/* The stub can count a call of v's that its conditions hold for (one counter word, counted
 * before the original runs). */
int asp_counts_alone(const asp_rule_view *v);
/* 1 when fn lies in the C library's own object (found once at start-up). */
int asp_in_libc(const void *fn);
/* resolve.c: export idx's original was just resolved (a gate may still name its trampoline). */
void asp_gate_resolved(uint32_t idx, void *lazy, void *fn);

#endif
