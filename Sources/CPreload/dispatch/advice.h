/* advice.h — what every dispatch path shares (matching and deciding are decide.h's): reading
 * the argument slots, the effects of advice, argument rewrites, moving the gate after a
 * decision, and the paths' own entry points. Included by the dispatcher's files only; everything is static inline so each path compiles its own copy
 * into its own registers. The contract of dispatch.c's header holds for all of it. */
#ifndef ASP_ADVICE_H
#define ASP_ADVICE_H

#include <errno.h>
#include <ffi.h>
#include <netdb.h>
#include "decide.h"
#include "events.h"
#include "gate.h"
#include "originals.h"
#include "rulecache.h"
#include "thread.h"

/* The argument register slots of a direct original (at most six; the rest of vals stays 0),
 * as they are: events record them so, and readers narrow each to its declared type
 * (AdviceTable.integerText, TableSnapshot.swift). A plain loop: unrolled and vectorized, it
 * costs more for the usual one to three arguments than it saves. */
static inline void asp_read_slots(void **args, uint32_t nargs, uint64_t *vals) {
#if defined(__clang__)
#pragma clang loop vectorize(disable) unroll(disable)
#endif
    for (uint32_t a = 0; a < nargs; a++) vals[a] = *(const uint64_t *)args[a];
}

/* After a decision on call number k: the stubs' gate (gate.h) moves to the rule's next
 * possible firing, for rules whose bound can move at all. */
__attribute__((noinline)) static void asp_gate_move(uint32_t group, const asp_rule_view *v, uint64_t k) {
    asp_gate_advance(group, v, asp_next_possible(v, k));
}
static inline __attribute__((always_inline)) void asp_gate_follow(uint32_t group, const asp_rule_view *v, uint64_t k) {
    if (v->gate_moves) asp_gate_move(group, v, k);
}

/* ---- the decision: every path counts and decides a call with these two, nothing else ----
 *
 * A call's number in the rule's scope is taken once, on entry, for every position (an after
 * rule with a condition on the outcome takes it when the call returned and matched:
 * asp_numbered_at_return): the number the stub's gate took for this very rule, or one taken
 * now. Then the rule fires on it or not (asp_decide_counted), and the stubs' gate moves to
 * the next number it could fire on. The gate's bound and the filter's plan are caches of this
 * decision (gate.c: asp_next_possible of the same rule copy), never a second copy of it. */
static inline __attribute__((always_inline)) uint64_t asp_take_number(const asp_rule_view *v, asp_pending *pre) {
    uint64_t k = asp_count_counted(v, pre->counter, pre->call);
    if (k) pre->call = 0; /* the stub's number is used once, by the rule it was taken for */
    else k = asp_count_matching(v);
    return k;
}

/* Whether the rule fires on its call number k (`may_fire` 0: a shadowed `instead` rule, which
 * is counted and never fires). Below the first number the rule can fire on, nothing moves. */
static inline __attribute__((always_inline)) int asp_decide_number(uint32_t group, const asp_rule_view *v, uint64_t k, int may_fire) {
    if (ASP_LIKELY(k < asp_gate_of(v))) return 0;
    const int fires = may_fire && asp_decide_counted(v, k);
    asp_gate_follow(group, v, k);
    return fires;
}

/* The side effects every position shares, in a fixed order: delay, then signal. */
/* The delay and the signal are where the program's own code can run inside the engine: the
 * handler of the raised signal, or of one that interrupts the sleep. Such a handler may
 * siglongjmp out and never return here (the timeout idiom), so they run in a PROGRAM frame: a
 * jump then leaves the thread as it was before the advised call, not "inside the engine" for
 * good, even for a handler installed behind signals.c's back (raw rt_sigaction). */
static inline void asp_run_effects(const asp_rule_view *v) {
    if (!(v->actions & (ASPECTS_ACTION_DELAY | ASPECTS_ACTION_SIGNAL))) return;
    asp_thread *t = &asp_tls;
    const asp_frame outer = asp_frame_push(t, ASP_IN_PROGRAM);
    if (v->actions & ASPECTS_ACTION_DELAY) asp_sys_sleep_ns(v->delay_ns);
    if (v->actions & ASPECTS_ACTION_SIGNAL) asp_sys_raise((int)v->signal_number);
    asp_frame_pop(t, outer);
}

/* `args`: overwrite arguments before the original runs (e.g. a short write). Only integer
 * arguments, as the writer allows: a damaged table can name any index, and a number written
 * over a string or pointer argument would be dereferenced by the original and by the event
 * record that copies the string (fuzz finding C1); over a struct argument, `asp_narrow`'s
 * 8-byte store could pass the end of a smaller struct. */
static inline void asp_apply_arg_sets(const asp_rule_view *v, const asp_export_desc *ex, void **args, uint64_t *vals) {
    for (uint32_t i = 0; i < v->arg_set_count; i++) {
        uint32_t g = v->r->arg_set_index[i];
        if (g >= ASP_MAX_ARGS) continue;
        uint32_t a = ex->argmap[g];
        if (a >= ex->nargs) continue;
        if (ex->args[a] < ASPECTS_T_I8 || ex->args[a] > ASPECTS_T_U64) continue;
        vals[a] = (uint64_t)v->r->arg_set_value[i];
        asp_narrow(ex->args[a], args[a], vals[a]);
    }
}

/* dispatch.c: the handler of a forwarding stub (one per arity of a direct original). */
typedef void (*asp_handler)(ffi_cif *, void *, void **, void *);
asp_handler asp_handler_for(uint32_t nargs, int direct);

/* dispatch_full.c: called (when set) after dlopen or dlmopen returned: preload.c points it at
 * proto.c, which applies prototype rules to the objects just loaded. */
extern void (*asp_objects_loaded_hook)(void);

/* The general paths (dispatch_full.c). `pre`: what the stub counted for this call (its
 * counter word and number are used once, by the rule they belong to). */
void asp_dispatch_full(const asp_export_desc *ex, uint32_t idx, void *ret, void **args, uint64_t caller, asp_pending *pre);
void asp_dispatch_after_now(const asp_export_desc *ex, uint32_t idx, void *ret, void **args, uint64_t caller, asp_pending *pre,
                            uint64_t numbered_serial, uint64_t call);
/* views/n: one copy, read with the path that chose it (the same `active` index). */
void asp_dispatch_several(const asp_direct_call *h, uint32_t idx, void *ret, void **args, const asp_rule_view *views, uint32_t n,
                          uint64_t caller, asp_pending *pre);

#endif
