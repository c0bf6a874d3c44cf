/* thread.h — thread.c: per-thread state (initial-exec TLS: no allocation, signal-safe), the
 * invocation stack's top frame and the pending ring the wrapper stubs hand the dispatcher;
 * and whether this thread is at a safe place. */
#ifndef ASP_THREAD_H
#define ASP_THREAD_H

#include "base.h"
#include "stubs/stub_layout.h"
/* What a stub hands the dispatcher about the call it enters with (stubs/stub_x86_64.h): the
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

/* The invocation stack. Its top frame says what this thread is running now, and so what a
 * wrapped call arriving on it is:
 *   PROGRAM   the program's own code: the call is advised;
 *   ORIGINAL  the original of an advised call of `group` (name `export`): a call of another
 *             group is advised; of the same group it is advised unless it is part of the
 *             running call (asp_part_of_running_call: an alias chain);
 *   ENGINE    the engine deciding or recording: the call goes to the original, unadvised;
 *   ADVICE    the user's `call` advice: likewise (advice never advises itself);
 *   SEALED    the engine holding a lock or the loader (building a stub, resolving an
 *             original, loading advice, patching GOT slots): likewise, and a signal handler
 *             arriving here is not given a fresh level either, since its calls could need
 *             that very lock.
 * The frames below the top live on the machine stack: whoever pushes a frame keeps the one it
 * covers in a local (asp_frame_push) and puts it back (asp_frame_pop), so a siglongjmp that
 * abandons frames abandons their saved copies with them. A signal handler installed through
 * sigaction or signal runs behind a trampoline (signals.c) that pushes a PROGRAM frame — a
 * fresh level: whatever it interrupted (an original, the engine, the user's advice), the
 * handler's own calls are advised and counted as calls of their own. */
enum asp_frame_kind { ASP_IN_PROGRAM = 0, ASP_IN_ORIGINAL, ASP_IN_ENGINE, ASP_IN_ADVICE, ASP_IN_SEALED };

typedef struct asp_frame {
    uint32_t kind;    /* enum asp_frame_kind */
    uint32_t group;   /* group + 1 of the innermost original running at or below this frame
                         (0: none): an ORIGINAL frame's own, inherited by the frames above it */
    uint32_t export;  /* export + 1 of that original's name (an export index) */
    uint32_t pad;
} asp_frame;

/* One running handler of the program's, as its trampoline recorded it: the trampoline's frame
 * address and, when it runs on the alternate signal stack, that stack's range. Everything the
 * handler runs is below `frame` on that stack; code above it, or on another stack, is not in
 * the handler — a siglongjmp left it. Code below it may be either: the trampoline's frame
 * holds `cookie` at `cookie_at` for as long as it runs, which the frames of code that runs
 * there after a jump overwrite (asp_levels_settle). */
typedef struct asp_level {
    uintptr_t frame;
    uintptr_t alt_lo, alt_hi; /* (0, 0: the thread's own stack) */
    uintptr_t cookie_at;
    uint32_t cookie;
    uint32_t pad;
} asp_level;
/* Nested handlers recorded per thread; deeper ones are counted, not recorded, and end with the
 * innermost recorded one (they run inside it). */
#define ASP_LEVELS 8u

typedef struct asp_thread {
    asp_frame top;         /* the invocation stack's top frame (above) */
    uint32_t pend_depth;   /* entries pushed on `pend` (it only wraps: a siglongjmp between a
                              stub and its dispatcher leaves one behind, below every later one) */
    uint32_t tid;          /* cached gettid(), 0 = not yet known */
    asp_pending pend[ASP_PEND_MASK + 1];
    uint32_t unwinding;    /* computing a calling context (context.c): never re-entered */
    uint32_t handlers;     /* the program's signal handlers running on this thread (behind
                              signals.c's trampoline): entered, and neither returned from nor
                              found abandoned by a siglongjmp (asp_levels_settle) */
    uintptr_t alt_lo, alt_hi; /* this thread's alternate signal stack as the last trampoline
                              saw it (0, 0: none) */
    uint32_t levels_made;  /* levels ever entered here: each cookie differs from the last */
    uint32_t pad2;
    asp_level level[ASP_LEVELS]; /* level[k]: the k-th of `handlers`, outermost first */
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

/* Makes `kind` the top frame and returns the frame it covers, for asp_frame_pop. The fences
 * keep the compiler from moving the stores across the code the frame covers: a signal handler
 * on this thread reads the top frame at any instruction. */
static inline __attribute__((always_inline)) asp_frame asp_frame_push(asp_thread *t, uint32_t kind) {
    const asp_frame outer = t->top;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&t->top.kind, kind, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return outer;
}

/* An ORIGINAL frame: the original of export `export` (group `group`) runs. */
static inline __attribute__((always_inline)) asp_frame asp_frame_push_original(asp_thread *t, uint32_t group, uint32_t export) {
    const asp_frame outer = t->top;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->top.group = group + 1u;
    t->top.export = export + 1u;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&t->top.kind, ASP_IN_ORIGINAL, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return outer;
}

static inline __attribute__((always_inline)) void asp_frame_pop(asp_thread *t, asp_frame outer) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&t->top.kind, outer.kind, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->top.group = outer.group;
    t->top.export = outer.export;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* Whether this thread is inside the engine or the user's advice: a wrapped call goes to its
 * original, unadvised and uncounted. */
static inline int asp_in_engine(const asp_thread *t) { return __atomic_load_n(&t->top.kind, __ATOMIC_RELAXED) >= ASP_IN_ENGINE; }

/* The handler levels still running for code whose frame is at `here`: ends for good every
 * innermost level a siglongjmp abandoned — `here` above its frame on its stack, on another
 * stack than its alternate one, or below it with its cookie overwritten — and returns how many
 * remain. Signal-safe (a CAS on the count: a handler arriving in between only ever lowers it
 * or puts it back). */
uint32_t asp_levels_settle(asp_thread *t, uintptr_t here);

/* Whether this thread runs inside a handler of the program's (behind the trampoline). One
 * that siglongjmp'd out never returned; the first check made outside it ends its level. */
int asp_in_handler(asp_thread *t);

/* Whether a call of `ex` comes from a safe place: not inside the program's dlopen, nor
 * (possibly) inside a signal handler that interrupted malloc or the loader. Loading advice
 * objects (advice_call.c) and unwinding a calling context (context.c) wait for one. */
int asp_place_safe(const asp_export_desc *ex);

/* Whether the innermost original running on this thread is the program's dlopen (or
 * dlmopen): loading a library of ours there is never safe. */
int asp_in_program_dlopen(void);

/* ---- resolve.c ---- */
void *asp_resolve(uint32_t idx);    /* called by asp_lazy_common: the original of export idx */
void *asp_original(uint32_t idx);   /* resolved original, resolving now if needed */

#endif
