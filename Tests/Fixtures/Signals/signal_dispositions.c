/* signal_dispositions — what a program sees of its own signal handlers: installed through
 * sigaction, signal, bsd_signal, sysv_signal and sigset, read back, delivered (with siginfo
 * from sigqueue), replaced and refused. Under libaspects.so it must print exactly what it
 * prints without it: the preload puts its trampoline in front of each handler (signals.c),
 * and the program must never see the trampoline or a changed flag, mask or result.
 * Each line: a check and what the program observed. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* sigset: still exported, still used */

/* no longer declared by glibc's headers, still exported */
extern __sighandler_t bsd_signal(int, __sighandler_t);

static volatile sig_atomic_t got_info_sig, got_info_value, got_info_code, got_plain, got_other;

static void on_info(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    got_info_sig = sig;
    got_info_value = si->si_value.sival_int;
    got_info_code = si->si_code;
}
static void on_plain(int sig) { got_plain = sig; }
static void on_other(int sig) { got_other = sig; }

static const char *name_of(void *h) {
    if (h == (void *)on_info) return "on_info";
    if (h == (void *)on_plain) return "on_plain";
    if (h == (void *)on_other) return "on_other";
    if (h == (void *)SIG_DFL) return "SIG_DFL";
    if (h == (void *)SIG_IGN) return "SIG_IGN";
    if (h == (void *)SIG_ERR) return "SIG_ERR";
    if (h == (void *)SIG_HOLD) return "SIG_HOLD";
    return "unknown";
}

/* The handler the kernel holds for SIGUSR1, read with the raw system call (the one view the
 * preload does not translate): the program's own without the preload, the trampoline with it. */
static int kernel_holds_own_handler(void) {
    struct { void *handler; unsigned long flags; void *restorer; unsigned long mask; } k;
    if (syscall(SYS_rt_sigaction, SIGUSR1, NULL, &k, 8) != 0) return -1;
    return k.handler == (void *)on_info;
}

int main(int argc, char **argv) {
    (void)argv;
    /* the test runner's blocked signals are inherited: deliver ours */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_info;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR2);
    int installed = sigaction(SIGUSR1, &sa, &old);
    /* with an argument: only what differs with the preload, nothing else */
    if (argc > 1) {
        printf("kernel-holds-own %d\n", kernel_holds_own_handler());
        return 0;
    }

    printf("sigaction-install %d\n", installed);
    printf("sigaction-old %s\n", name_of((void *)old.sa_handler));
    memset(&old, 0, sizeof old);
    sigaction(SIGUSR1, NULL, &old);
    printf("sigaction-read %s siginfo %d restart %d mask-usr2 %d\n", name_of((void *)old.sa_sigaction), !!(old.sa_flags & SA_SIGINFO),
           !!(old.sa_flags & SA_RESTART), sigismember(&old.sa_mask, SIGUSR2));
    union sigval value = {.sival_int = 77};
    sigqueue(getpid(), SIGUSR1, value);
    printf("delivered sig %d value %d queued %d\n", (int)got_info_sig, (int)got_info_value, got_info_code == SI_QUEUE);

    /* what the kernel holds (the raw system call), installed again through sigaction: the
     * program's handler still runs, once */
    struct { void *handler; unsigned long flags; void *restorer; unsigned long mask; } k;
    syscall(SYS_rt_sigaction, SIGUSR1, NULL, &k, 8);
    struct sigaction again = sa;
    again.sa_sigaction = (void (*)(int, siginfo_t *, void *))k.handler;
    sigaction(SIGUSR1, &again, NULL);
    got_info_sig = 0;
    value.sival_int = 78;
    sigqueue(getpid(), SIGUSR1, value);
    printf("reinstalled-raw delivered sig %d value %d\n", (int)got_info_sig, (int)got_info_value);

    printf("signal-first %s\n", name_of((void *)signal(SIGUSR2, on_plain)));
    printf("signal-second %s\n", name_of((void *)signal(SIGUSR2, on_other)));
    raise(SIGUSR2);
    printf("delivered-plain %d other %d\n", (int)got_plain, (int)got_other);
    memset(&old, 0, sizeof old);
    sigaction(SIGUSR2, NULL, &old);
    printf("signal-read %s siginfo %d\n", name_of((void *)old.sa_handler), !!(old.sa_flags & SA_SIGINFO));
    printf("signal-ignore %s\n", name_of((void *)signal(SIGUSR2, SIG_IGN)));
    printf("signal-after-ignore %s\n", name_of((void *)signal(SIGUSR2, SIG_DFL)));

    /* (one call per statement: the order of a call's arguments is unspecified) */
    const char *first = name_of((void *)bsd_signal(SIGHUP, on_plain));
    printf("bsd_signal %s %s\n", first, name_of((void *)bsd_signal(SIGHUP, SIG_DFL)));
    first = name_of((void *)sysv_signal(SIGHUP, on_other));
    printf("sysv_signal %s %s\n", first, name_of((void *)sysv_signal(SIGHUP, SIG_DFL)));
    first = name_of((void *)sigset(SIGALRM, on_plain));
    printf("sigset %s %s\n", first, name_of((void *)sigset(SIGALRM, SIG_DFL)));

    /* replaced by sigaction after signal(): the old one is the program's */
    signal(SIGTERM, on_plain);
    sa.sa_handler = on_other;
    sa.sa_flags = 0;
    int r = sigaction(SIGTERM, &sa, &old);
    printf("replace %d old %s\n", r, name_of((void *)old.sa_handler));
    got_other = 0;
    raise(SIGTERM);
    printf("replaced-delivered %d\n", (int)got_other);

    /* refusals keep the program's handler */
    errno = 0;
    sa.sa_handler = on_plain;
    r = sigaction(SIGKILL, &sa, NULL);
    printf("kill-refused %d errno %d\n", r, errno);
    errno = 0;
    r = sigaction(0, &sa, NULL);
    printf("range-refused %d errno %d\n", r, errno);
    errno = 0;
    r = sigaction(_NSIG, &sa, NULL);
    printf("range-high-refused %d errno %d\n", r, errno);
    sigaction(SIGTERM, NULL, &old);
    printf("after-refusals %s\n", name_of((void *)old.sa_handler));
    return 0;
}
