/* signals.c — the program's signal handlers run behind one trampoline, which gives each a
 * fresh level of the invocation stack (thread.h): a handler that interrupts an original, the
 * engine or the user's advice makes calls of its own, advised and counted like any other.
 * Without it, a call from such a handler cannot be told from a call the engine or the advice
 * makes itself, and was either unadvised or, under a stub's gate, counted and never decided.
 *
 * How. libaspects.so exports sigaction and the signal() family; each records the program's
 * handler here and installs the trampoline in its place through the next definition (libc's),
 * leaving every flag and mask as the program asked. What the program reads back (an old
 * action, signal()'s return) is its own handler, never the trampoline. SIG_DFL and SIG_IGN
 * pass through untouched.
 *
 * Limits. A handler installed with the raw rt_sigaction system call (a Go runtime, a static
 * helper) is not behind the trampoline: its calls while the engine or advice runs stay
 * unadvised, as before. A handler that interrupts the engine while it holds a lock or the
 * loader (ASP_IN_SEALED: building a stub, resolving, loading advice, patching GOT slots) gets
 * no fresh level: its calls could need that very lock, so they go to their originals.
 *
 * Signal safety: the trampoline touches only this thread's TLS and one word per signal. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include "thread.h"

#define ASP_EXPORTED __attribute__((visibility("default")))

/* The program's handler of each signal: its address, with bit 63 set when it takes
 * (int, siginfo_t *, void *) — one word, so the trampoline reads a pair that belongs
 * together. User-space code addresses are below 2^47. */
#define ASP_HOST_SIGINFO (UINT64_C(1) << 63)
static uint64_t asp_host_handlers[_NSIG];

static void asp_trampoline(int sig, siginfo_t *info, void *context) {
    asp_thread *t = &asp_tls;
    const uint32_t kind = __atomic_load_n(&t->top.kind, __ATOMIC_RELAXED);
    const int fresh = kind != ASP_IN_PROGRAM && kind != ASP_IN_SEALED;
    asp_frame outer = {0, 0, 0, 0};
    if (fresh) outer = asp_frame_push(t, ASP_IN_PROGRAM);
    const uintptr_t outer_sp = t->handler_sp;
    __atomic_store_n(&t->handler_sp, (uintptr_t)__builtin_frame_address(0), __ATOMIC_RELAXED);
    __atomic_store_n(&t->handlers, t->handlers + 1u, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    const uint64_t h = sig > 0 && sig < _NSIG ? __atomic_load_n(&asp_host_handlers[sig], __ATOMIC_ACQUIRE) : 0;
    const uintptr_t fn = (uintptr_t)(h & ~ASP_HOST_SIGINFO);
    /* (a handler that siglongjmps out never comes back here: the thread is then in the
     * PROGRAM frame of this level, which is where such a jump lands, and `handlers` stays
     * one too high with `handler_sp` below the code that runs: asp_in_handler) */
    if (fn && (h & ASP_HOST_SIGINFO)) ((void (*)(int, siginfo_t *, void *))fn)(sig, info, context);
    else if (fn) ((void (*)(int))fn)(sig);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&t->handlers, t->handlers - 1u, __ATOMIC_RELAXED);
    __atomic_store_n(&t->handler_sp, outer_sp, __ATOMIC_RELAXED);
    if (fresh) asp_frame_pop(t, outer);
}

/* A handler of the program's (not a disposition). The trampoline itself is none: a program
 * that read it with the raw system call and installs it again keeps the handler recorded. */
static int asp_is_handler(void *h) {
    return h != (void *)SIG_DFL && h != (void *)SIG_IGN && h != (void *)SIG_ERR && h != (void *)asp_trampoline;
}

/* The next definition of `name` (libc's), found on first use: outside a signal handler, since
 * a handler can only have been installed through one of these calls before. */
static void *asp_next(void **cache, const char *name) {
    void *fn = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (fn) return fn;
    const int saved = errno;
    fn = dlsym(RTLD_NEXT, name);
    errno = saved;
    __atomic_store_n(cache, fn, __ATOMIC_RELEASE);
    return fn;
}

/* What the program reads back as an old handler: its own where the trampoline stands. */
static void *asp_host_view(void *installed, uint64_t recorded) {
    return installed == (void *)asp_trampoline ? (void *)(uintptr_t)(recorded & ~ASP_HOST_SIGINFO) : installed;
}

static int asp_sigaction_via(void **cache, const char *name, int sig, const struct sigaction *act, struct sigaction *old) {
    int (*next)(int, const struct sigaction *, struct sigaction *) = asp_next(cache, name);
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    if (sig <= 0 || sig >= _NSIG) return next(sig, act, old); /* libc says EINVAL */
    const uint64_t recorded = __atomic_load_n(&asp_host_handlers[sig], __ATOMIC_ACQUIRE);
    struct sigaction mine;
    if (act && asp_is_handler((void *)act->sa_handler)) {
        mine = *act;
        const int siginfo = (act->sa_flags & SA_SIGINFO) != 0;
        const uintptr_t fn = siginfo ? (uintptr_t)act->sa_sigaction : (uintptr_t)act->sa_handler;
        /* recorded before the trampoline can be delivered for it */
        __atomic_store_n(&asp_host_handlers[sig], (uint64_t)fn | (siginfo ? ASP_HOST_SIGINFO : 0), __ATOMIC_RELEASE);
        mine.sa_sigaction = asp_trampoline; /* the same union member for both forms */
        act = &mine;
    }
    const int r = next(sig, act, old);
    if (r != 0) {
        __atomic_store_n(&asp_host_handlers[sig], recorded, __ATOMIC_RELEASE);
        return r;
    }
    if (old) old->sa_handler = (void (*)(int))asp_host_view((void *)old->sa_handler, recorded);
    return 0;
}

static void *asp_next_sigaction, *asp_next___sigaction;
ASP_EXPORTED int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    return asp_sigaction_via(&asp_next_sigaction, "sigaction", sig, act, old);
}
ASP_EXPORTED int __sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    return asp_sigaction_via(&asp_next___sigaction, "__sigaction", sig, act, old);
}

/* The signal() family keeps each function's own semantics (BSD or System V, siginterrupt,
 * sigset's SIG_HOLD) by calling the next definition of that very function. */
typedef void (*asp_sighandler)(int);
static asp_sighandler asp_signal_via(void **cache, const char *name, int sig, asp_sighandler h) {
    asp_sighandler (*next)(int, asp_sighandler) = asp_next(cache, name);
    if (!next) {
        errno = ENOSYS;
        return SIG_ERR;
    }
    if (sig <= 0 || sig >= _NSIG) return next(sig, h);
    const uint64_t recorded = __atomic_load_n(&asp_host_handlers[sig], __ATOMIC_ACQUIRE);
    asp_sighandler install = h;
    if (asp_is_handler((void *)h) && h != SIG_HOLD) {
        __atomic_store_n(&asp_host_handlers[sig], (uint64_t)(uintptr_t)h, __ATOMIC_RELEASE);
        install = (asp_sighandler)(void *)asp_trampoline;
    }
    const asp_sighandler r = next(sig, install);
    if (r == SIG_ERR) {
        __atomic_store_n(&asp_host_handlers[sig], recorded, __ATOMIC_RELEASE);
        return r;
    }
    return (asp_sighandler)asp_host_view((void *)r, recorded);
}

#define ASP_SIGNAL_FUNCTION(name)                                                  \
    static void *asp_next_##name;                                                  \
    ASP_EXPORTED asp_sighandler name(int sig, asp_sighandler h) {                  \
        return asp_signal_via(&asp_next_##name, #name, sig, h);                    \
    }
ASP_SIGNAL_FUNCTION(signal)
ASP_SIGNAL_FUNCTION(bsd_signal)
ASP_SIGNAL_FUNCTION(ssignal)
ASP_SIGNAL_FUNCTION(sysv_signal)
ASP_SIGNAL_FUNCTION(__sysv_signal)
ASP_SIGNAL_FUNCTION(sigset)
