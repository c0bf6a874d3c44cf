/* call.h — the call record: one advised call, as every dispatch path and the advice API see it.
 *
 * The dispatcher's entry (dispatch.c, asp_dispatch) fills the fixed part once, on its stack,
 * and passes the record by pointer down whatever path the call takes; a path fills the values
 * when it first needs them (asp_call_slots or asp_call_widen) and the outcome as it goes. The
 * invocation a `call` advice is given (advice_call.h) is a view of this record, not a copy:
 * what the advice changes — arguments, result, errno — is the call's. Like the record, valid
 * only while the call is dispatched. */
#ifndef ASP_CALL_H
#define ASP_CALL_H

#include <errno.h>
#include "decide.h"
#include "events.h"
#include "originals.h"
#include "thread.h"

typedef struct asp_call {
    /* what was called: set on entry, never changed */
    uint32_t idx;               /* the export (its closure's user_data) */
    uint32_t group;             /* its alias group, whose rules apply */
    const asp_direct_call *h;   /* asp_direct[idx]: arity, result type, the direct original */
    const asp_export_desc *ex;  /* the export's signature */
    void **args;                /* libffi's argument pointers: where the original reads them */
    void *ret;                  /* the closure's result buffer */
    uint64_t caller;            /* the return address the stub saved */
    asp_pending *pre;           /* what the stub counted for this call: used once, by its rule */
    /* the arguments as values: the register slots (asp_call_slots) or widened by type
     * (asp_call_widen); zero past the arity, as events record them */
    uint64_t vals[ASP_MAX_ARGS];
    uint64_t number;            /* the call's number in the scope of the rule deciding or firing now */
    /* the outcome so far */
    int64_t result;             /* the result the caller gets: the original's, or a rule's */
    int caller_errno;           /* errno as the call arrived (set by the paths that act before the original) */
    int err;                    /* errno the caller gets: the caller's, the original's, a rule's */
} asp_call;

/* The direct original, NULL when it is called through ffi_call (asp_call_original). */
static inline void *asp_call_fn(const asp_call *c) { return __atomic_load_n(&c->h->fn, __ATOMIC_RELAXED); }

/* The argument register slots of a direct original (at most six), as they are: events record
 * them so, and readers narrow each to its declared type (AdviceTable.integerText,
 * TableSnapshot.swift). A plain loop: unrolled and vectorized, it costs more for the usual
 * one to three arguments than it saves. */
static inline __attribute__((always_inline)) void asp_call_slots(asp_call *c) {
    const uint32_t n = c->h->nargs;
    void **args = c->args;
    uint64_t *vals = c->vals;
    __builtin_memset(vals, 0, sizeof c->vals);
#if defined(__clang__)
#pragma clang loop vectorize(disable) unroll(disable)
#endif
    for (uint32_t a = 0; a < n; a++) vals[a] = *(const uint64_t *)args[a];
}

/* The arguments widened by their types (what conditions compare and an ffi_call original is
 * given), for any signature. */
static inline __attribute__((always_inline)) void asp_call_widen(asp_call *c) {
    const asp_export_desc *ex = c->ex;
    void **args = c->args;
    uint64_t *vals = c->vals;
    __builtin_memset(vals, 0, sizeof c->vals);
    for (uint32_t a = 0; a < ex->nargs; a++) vals[a] = asp_widen(ex->args[a], args[a]);
}

/* The outcome before any rule or original acted: the caller's errno, no result. */
static inline __attribute__((always_inline)) void asp_call_arrived(asp_call *c) {
    c->caller_errno = c->err = errno;
    c->result = 0;
}

/* The result the closure's buffer holds now, as the caller sees it. */
static inline __attribute__((always_inline)) void asp_call_read_result(asp_call *c) { c->result = asp_read_return(c->h->ret, c->ret); }

/* An event of `kind` for rule v on this call: its number, arguments and outcome as they are. */
static inline __attribute__((always_inline)) void asp_call_event(uint16_t kind, const asp_call *c, const asp_rule_view *v) {
    asp_event_append(kind, v, c->number, c->idx, c->vals, c->result, c->err, c->caller);
}

#endif
