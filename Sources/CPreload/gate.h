/* gate.h — the gate in front of the forwarding stub: what the wrapper stub reads to let a
 * call of an armed function through to the original without entering libffi's closure.
 *
 * Most rules cannot fire on most calls, and that is known before the call: `nth: 10000`
 * cannot fire on calls 1..9999, a probability rule's next firing is in its schedule
 * (prng.h). For a group whose one rule has no condition the stub cannot decide itself
 * (arguments, caller, site, result, thread scope), the rule cache publishes a gate record
 * per group: the counter word of the rule's scope, the call number below which the rule
 * cannot fire, and the table generation it was made at. The stub counts the call with one
 * atomic add and, below that number and at that generation, jumps to the original; at or
 * past it, it enters the closure with the number it took (the pending ring, thread.h), so
 * the dispatcher decides that very call number exactly and moves the gate to the next one.
 *
 * Layering: made by rulecache.c from its rule copies (below the dispatcher), moved by the
 * dispatcher after each decision, read by the stubs (arch/). */
#ifndef ASP_GATE_H
#define ASP_GATE_H

#include <stdint.h>
#include "internal.h"
#include "arch/stub_layout.h"

#define ASP_GATE_SHUT UINT64_MAX      /* a generation no table reaches: the gate is shut */
#define ASP_GATE_NEVER UINT64_MAX     /* `below` of a rule that can no longer fire here */
#define ASP_GATE_STUBS (ASP_EXPORT_COUNT + 2u * ASPECTS_PROTO_CAPACITY) /* catalog exports, then 2 per prototype entry */

typedef struct asp_gate {
    uint64_t generation;   /* the table generation the gate was made at; ASP_GATE_SHUT: none */
    uint64_t *counter;     /* the word the stub counts a call in (the rule's scope counter) */
    uint64_t below;        /* a call whose count before its own is below this passes: the next
                              call number the rule can fire on, minus one */
    uint64_t *matched;     /* the `twice` thunks' word: this process's statistics entry, when
                              the counter is a shared one (table, hierarchy) */
    uint64_t idle;         /* the counter of a rule that never applies in this process */
    uint64_t filtered;     /* the table generation at which the rule's conditions are decided
                              before the closure (asp_filter); the gate then counts only calls
                              they hold for. ASP_GATE_SHUT: no filter. `generation` and
                              `filtered` are never both current. */
    uint64_t pad[2];
} asp_gate;

extern asp_gate asp_gates[ASP_ALL_GROUPS];
/* Per stub slot: where a call below the gate goes (the original, or its `twice` thunk). */
extern void *asp_gate_next[ASP_GATE_STUBS];
extern void *const asp_gate_twice[ASP_GATE_STUBS];
/* The prototype entries' stubs (2k + b), their closures and their originals (wrappers.S). */
extern void *const asp_proto_stubs[2u * ASPECTS_PROTO_CAPACITY];
extern void *const asp_proto_vstubs[2u * ASPECTS_PROTO_CAPACITY]; /* the same, keeping %rax: variadic prototypes */
extern void *asp_proto_entry[2u * ASPECTS_PROTO_CAPACITY];
extern void *asp_proto_jump[2u * ASPECTS_PROTO_CAPACITY];
int asp_is_proto_stub(uint32_t k, const void *fn); /* closures.c: fn is one of entry k's stubs */
long asp_proto_missing(void);   /* resolve.c: a prototype stub's original not known (yet) */

void asp_gates_init(void);               /* at attach, before any call can be armed */
void asp_gates_shut_all(void);           /* fork child: counters and copies start over */
/* The gate of `group` from its single rule `v` (NULL: no gate) at table generation `gen`. */
void asp_gate_publish(uint32_t group, const asp_rule_view *v, uint64_t gen);
/* After a decision on call number k of v: the gate moves to v's next possible firing. */
void asp_gate_advance(uint32_t group, const asp_rule_view *v, uint64_t next_possible);
/* Called by the stubs (asp_filter_common, arch/) for a call of an armed group whose gate has a
 * filter: the argument registers as the call left them (rdi, rsi, rdx, rcx, r8, r9) and the
 * caller's return address. 0: the rule's conditions do not hold (the original runs, nothing
 * is counted); 1: they hold, count the call at the gate; 2: enter the closure uncounted (the
 * dispatcher decides everything, e.g. the group's copy just changed). */
uint32_t asp_filter(uint32_t slot, const uint64_t *regs, uint64_t caller);
/* resolve.c: export idx's original was just resolved (a gate may still name its trampoline). */
void asp_gate_resolved(uint32_t idx, void *lazy, void *fn);

#endif
