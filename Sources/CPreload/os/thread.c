/* thread.c — the per-thread state (thread.h), and whether this thread is at a safe place. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "thread.h"

ASP_TLS asp_thread asp_tls;

/* Safe: not inside the program's dlopen (the innermost running original, which every frame
 * above it carries: dlopen inside dlopen is never safe), not inside a handler of the program's
 * (counted by the signal trampoline, signals.c), and — for a handler installed behind its
 * back — no signal blocked, since a handler's own signal is (unless SA_NODEFER). A function
 * that is not async-signal-safe (ASP_F_SIGNAL_UNSAFE) is never called from a handler by a
 * correct program, so its calls are safe wherever no dlopen runs. */
int asp_place_safe(const asp_export_desc *ex) {
    const uint32_t running = __atomic_load_n(&asp_tls.top.group, __ATOMIC_RELAXED);
#if defined(ASP_GROUP_DLOPEN)
    if (running == ASP_GROUP_DLOPEN + 1u) return 0;
#endif
#if defined(ASP_GROUP_DLMOPEN)
    if (running == ASP_GROUP_DLMOPEN + 1u) return 0;
#endif
    (void)running;
    if (ex && (ex->flags & ASP_F_SIGNAL_UNSAFE)) return 1;
    if (asp_in_handler(&asp_tls)) return 0;
    uint64_t blocked = ~(uint64_t)0;
    const int saved = errno;
    const long r = syscall(SYS_rt_sigprocmask, (long)SIG_BLOCK, NULL, &blocked, (long)sizeof blocked);
    errno = saved;
    return r == 0 && blocked == 0;
}
