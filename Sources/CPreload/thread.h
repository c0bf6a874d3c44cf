/* thread.h — per-thread state (initial-exec TLS: no allocation, signal-safe): the re-entry
 * guards and the pending ring the wrapper stubs hand the dispatcher. asp_tls is defined in
 * dispatch.c. */
#ifndef ASP_THREAD_H
#define ASP_THREAD_H

#include "base.h"
#include "arch/stub_layout.h"
/* What a stub hands the dispatcher about the call it enters with (arch/stub_x86_64.h): the
 * counter word it counted the call in and the number it took (0: it counted nothing), and the
 * caller's return address. A ring, not one slot: a signal handler may interrupt between the
 * stub's push and the dispatcher's pop and make an advised call of its own, which pushes and
 * pops above it. */
typedef struct asp_pending {
    uint64_t *counter;
    uint64_t call;
    uint64_t caller;
    uint64_t pad;
} asp_pending;

typedef struct asp_thread {
    uint32_t busy;         /* inside the engine: every wrapped call goes straight to the original */
    uint32_t group_active; /* group+1 whose original is running: the same group is advised once */
    uint32_t tid;          /* cached gettid(), 0 = not yet known */
    uint32_t export_active;/* export+1 of that running original: the same name again is recursion */
    uint32_t pend_depth;   /* entries pushed on `pend` (it only wraps: a siglongjmp between a
                              stub and its dispatcher leaves one behind, below every later one) */
    uint32_t unwinding;    /* computing a calling context (context.c): never re-entered */
    asp_pending pend[ASP_PEND_MASK + 1];
} asp_thread;
extern ASP_TLS asp_thread asp_tls;
_Static_assert(__builtin_offsetof(asp_thread, pend_depth) == ASP_TLS_PEND_DEPTH, "stub_layout.h: pend_depth");
_Static_assert(__builtin_offsetof(asp_thread, pend) == ASP_TLS_PEND, "stub_layout.h: pend");
_Static_assert(sizeof(asp_pending) == 1u << ASP_PEND_SHIFT, "stub_layout.h: pending entry size");

/* The entry the stub pushed for the call the dispatcher is now handling (every armed entry
 * into a closure comes through a stub). Read before the depth is lowered: a handler arriving
 * in between pushes above this entry, not over it. */
static inline asp_pending asp_pending_pop(asp_thread *t) {
    asp_pending p = {0, 0, 0, 0};
    const uint32_t d = __atomic_load_n(&t->pend_depth, __ATOMIC_RELAXED);
    if (!d) return p; /* (a closure not entered through a stub: caller unknown) */
    p = t->pend[(d - 1u) & ASP_PEND_MASK];
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&t->pend_depth, d - 1u, __ATOMIC_RELAXED);
    return p;
}

/* ---- resolve.c ---- */
void *asp_resolve(uint32_t idx);    /* called by asp_lazy_common: the original of export idx */
void *asp_original(uint32_t idx);   /* resolved original, resolving now if needed */

#endif
