/* thread.c — the per-thread state (thread.h), and whether this thread is at a safe place. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <time.h>
#include <unistd.h>
#include "thread.h"

ASP_TLS asp_thread asp_tls;

/* Whether `l`'s cookie is no longer in its trampoline's frame, asked of the kernel by
 * futex(FUTEX_WAIT) with a zero timeout (as context.c probes words): it compares the word
 * with the cookie — EAGAIN when it differs, no wait when it is the same — and says EFAULT
 * where a read would fault (a frame on a stack freed since: ended too), never faulting. */
static int asp_level_cookie_gone(const asp_level *l) {
    const struct timespec zero = {0, 0};
    const int saved = errno;
    const long r = syscall(SYS_futex, (long)l->cookie_at, (long)FUTEX_WAIT_PRIVATE, (long)l->cookie, &zero, 0L, 0L);
    const int gone = r != 0 && (errno == EAGAIN || errno == EFAULT);
    errno = saved;
    return gone;
}

/* Whether `l` has ended for code at `here`. A handler's code runs below the trampoline's frame
 * on the stack the trampoline runs on: on its alternate stack that stack alone (a handler that
 * interrupts it nests on it too); on the thread's own stack, where `here` on the alternate
 * stack is a handler nested above `l` (or a stack we cannot compare with: not judged). Below
 * the frame is also where code runs that a jump out of the handler landed above it: the
 * cookie tells (a system call, only then). */
static int asp_level_ended(const asp_thread *t, const asp_level *l, uintptr_t here) {
    if (l->alt_hi) {
        if (here < l->alt_lo || here >= l->alt_hi || here > l->frame) return 1;
    } else {
        const uintptr_t lo = __atomic_load_n(&t->alt_lo, __ATOMIC_RELAXED), hi = __atomic_load_n(&t->alt_hi, __ATOMIC_RELAXED);
        if (here >= lo && here < hi) return 0;
        if (here > l->frame) return 1;
    }
    return asp_level_cookie_gone(l);
}

uint32_t asp_levels_settle(asp_thread *t, uintptr_t here) {
    for (;;) {
        uint32_t d = __atomic_load_n(&t->handlers, __ATOMIC_RELAXED);
        if (d == 0) return 0;
        /* past the array: the innermost recorded level, and with it those nested in it */
        const uint32_t k = d <= ASP_LEVELS ? d - 1u : ASP_LEVELS - 1u;
        /* a copy: a handler arriving now may write this slot (and puts it back) */
        const asp_level l = t->level[k];
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (!asp_level_ended(t, &l, here)) return d;
        /* fails when a handler in between changed the count: judge again */
        __atomic_compare_exchange_n(&t->handlers, &d, k, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    }
}

int asp_in_handler(asp_thread *t) {
    if (!__atomic_load_n(&t->handlers, __ATOMIC_RELAXED)) return 0;
    return asp_levels_settle(t, (uintptr_t)__builtin_frame_address(0)) != 0;
}

/* Safe: not inside the program's dlopen (the innermost running original, which every frame
 * above it carries: dlopen inside dlopen is never safe), not inside a handler of the program's
 * (counted by the signal trampoline, signals.c), and — for a handler installed behind its
 * back — no signal blocked, since a handler's own signal is (unless SA_NODEFER). A function
 * that is not async-signal-safe (ASP_F_SIGNAL_UNSAFE) is never called from a handler by a
 * correct program, so its calls are safe wherever no dlopen runs. */
int asp_in_program_dlopen(void) {
    const uint32_t running = __atomic_load_n(&asp_tls.top.group, __ATOMIC_RELAXED);
#if defined(ASP_GROUP_DLOPEN)
    if (running == ASP_GROUP_DLOPEN + 1u) return 1;
#endif
#if defined(ASP_GROUP_DLMOPEN)
    if (running == ASP_GROUP_DLMOPEN + 1u) return 1;
#endif
    (void)running;
    return 0;
}

int asp_place_safe(const asp_export_desc *ex) {
    if (asp_in_program_dlopen()) return 0;
    if (ex && (ex->flags & ASP_F_SIGNAL_UNSAFE)) return 1;
    if (asp_in_handler(&asp_tls)) return 0;
    uint64_t blocked = ~(uint64_t)0;
    const int saved = errno;
    const long r = syscall(SYS_rt_sigprocmask, (long)SIG_BLOCK, NULL, &blocked, (long)sizeof blocked);
    errno = saved;
    return r == 0 && blocked == 0;
}
