/* advice.h — what every dispatch path shares, over the call record (call.h; matching and
 * deciding are decide.h's): numbering and deciding a call, moving the gate after a decision,
 * and what a firing rule does at each position — the semantics each path is written in — and
 * the paths' own entry points. Included by the dispatcher's files only; everything is static
 * inline so each path compiles its own copy into its own registers. The contract of
 * dispatch.c's header holds for all of it. */
#ifndef ASP_ADVICE_H
#define ASP_ADVICE_H

#include <errno.h>
#include <ffi.h>
#include <netdb.h>
#include "call.h"
#include "decide.h"
#include "events.h"
#include "gate.h"
#include "originals.h"
#include "rulecache.h"
#include "stream.h"
#include "thread.h"

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
static inline __attribute__((always_inline)) uint64_t asp_take_number(const asp_call *c, const asp_rule_view *v) {
    asp_pending *pre = c->pre;
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

/* The decision on the call's number k for rule v, which becomes the record's number: what the
 * rule's event and advice report if it fires. */
static inline __attribute__((always_inline)) int asp_decide_call(asp_call *c, const asp_rule_view *v, uint64_t k, int may_fire) {
    c->number = k;
    return asp_decide_number(c->group, v, k, may_fire);
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
static inline void asp_apply_arg_sets(asp_call *c, const asp_rule_view *v) {
    const asp_export_desc *ex = c->ex;
    for (uint32_t i = 0; i < v->arg_set_count; i++) {
        uint32_t g = v->r->arg_set_index[i];
        if (g >= ASP_MAX_ARGS) continue;
        uint32_t a = ex->argmap[g];
        if (a >= ex->nargs) continue;
        if (ex->args[a] < ASPECTS_T_I8 || ex->args[a] > ASPECTS_T_U64) continue;
        c->vals[a] = (uint64_t)v->r->arg_set_value[i];
        asp_narrow(ex->args[a], c->args[a], c->vals[a]);
    }
}

/* ---- what a firing rule does: every path fires through these ---- */

/* The error a firing reports: drawn from the rule's list, or for `"fail": true` where the
 * catalog's default depends on the descriptor, the default of what the descriptor is. */
static inline __attribute__((always_inline)) int32_t asp_firing_error(const asp_call *c, const asp_rule_view *v) {
    const int32_t code = asp_chosen_error(v, c->number);
    if (ASP_UNLIKELY(v->flags & ASPECTS_RULE_DEFAULT_BY_KIND) && c->idx < ASP_EXPORT_COUNT) return asp_kind_errno(c->ex, c->vals, code);
    return code;
}

/* What an `instead` or `after` rule makes the call return with the error `code`: its result
 * (`return`, or the failure value of `fail`), the errno and h_errno the caller sees. */
static inline __attribute__((always_inline)) void asp_apply_code(asp_call *c, const asp_rule_view *v, int32_t code) {
    if (v->actions & ASPECTS_ACTION_RETURN) {
        const int64_t value = (v->flags & ASPECTS_RULE_RETURN_IS_CODE) ? code : v->return_value;
        const uint8_t type = c->h->ret;
        if (ASP_LIKELY(type != ASPECTS_T_STRUCT)) {
            /* a full ffi_arg, as a closure returns it (asp_store_integer); floats: their bits */
            const uint64_t fitted = asp_int_fit(type, (uint64_t)value);
            if (type != ASPECTS_T_VOID) *(uint64_t *)c->ret = fitted;
            c->result = type == ASPECTS_T_VOID ? 0 : (int64_t)fitted;
        } else {
            asp_store_rule_struct(v, c->idx, c->ret);
            asp_call_read_result(c);
        }
    }
    if (v->actions & ASPECTS_ACTION_ERRNO) c->err = code;
    if (ASP_UNLIKELY(v->actions & ASPECTS_ACTION_HERRNO)) *__h_errno_location() = code;
}

/* A firing `before` rule: its event first (the signal it raises may end the process), its
 * effects, then the arguments it sets for the original. */
static inline __attribute__((always_inline)) void asp_fire_before(asp_call *c, const asp_rule_view *v) {
    asp_call_event(ASPECTS_EVENT_FIRED, c, v);
    asp_run_effects(v);
    if (v->actions & ASPECTS_ACTION_ARGS) asp_apply_arg_sets(c, v);
}

/* A firing `instead` rule, or `after` rule over what the original did: its effects, then the
 * result and errno it gives, then its event, which records them. */
static inline __attribute__((always_inline)) void asp_fire_result(asp_call *c, const asp_rule_view *v) {
    asp_run_effects(v);
    asp_apply_code(c, v, asp_firing_error(c, v));
    asp_call_event(ASPECTS_EVENT_FIRED, c, v);
}

/* A rule that matched and was counted, but that an earlier firing `instead` rule shadows. */
static inline void asp_shadowed(asp_call *c, const asp_rule_view *v, uint64_t k) {
    (void)asp_decide_call(c, v, k, 0);
    asp_event_append(ASPECTS_EVENT_SHADOWED, v, k, c->idx, c->vals, 0, 0, c->caller);
}

/* dispatch.c: the handler of a forwarding stub (one per arity of a direct original). */
typedef void (*asp_handler)(ffi_cif *, void *, void **, void *);
asp_handler asp_handler_for(uint32_t nargs, int direct);

/* dispatch_full.c: called (when set) after dlopen or dlmopen returned: preload.c points it at
 * proto.c, which applies prototype rules to the objects just loaded. */
extern void (*asp_objects_loaded_hook)(void);

/* The general paths (dispatch_full.c), over the record the entry filled. */
void asp_dispatch_full(asp_call *c);
/* The after rules of a call whose single `after` rule's copy was remade while its original
 * ran: the group's current rules decide; the rule of serial `numbered_serial` (0: none), if it
 * is still among them, with the number c->number it took on entry (0: none). */
void asp_dispatch_after_now(asp_call *c, uint64_t numbered_serial);
/* views/n: one copy, read with the path that chose it (the same `active` index). */
void asp_dispatch_several(asp_call *c, const asp_rule_view *views, uint32_t n);

#endif
