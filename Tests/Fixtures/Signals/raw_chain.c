/* Area: host safety / signal handlers.
 * Purpose: a handler chain through a raw rt_sigaction save (issue 30, item 3). The program
 * installs H1 through libc; a "crash reporter" saves the old action with the raw system call
 * (the kernel's struct layout: what it gets is whatever the kernel holds) and installs its own
 * handler R, on SIGUSR1 with the raw system call (copying the saved restorer and flags, as
 * such reporters do), on SIGUSR2 through libc; then the program installs H2 through libc and
 * chains to its previous handler. Delivering the signal must run H2, R, H1 in that order:
 * under the preload the raw save got the preload's trampoline, which once ran the handler
 * installed *now* (H2), so the chain looped until the stack overflowed (SIGSEGV, 139).
 * Also the same thread's raw read-back installed again through libc keeps meaning H1.
 * Usage: raw_chain. Output: "usr1 H2 R H1", "usr2 H2 R H1", "reinstalled H1". */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel's struct sigaction (x86-64 and aarch64 alike). */
struct kernel_sigaction {
    void *handler;
    unsigned long flags;
    void *restorer;
    unsigned long mask;
};

static char trace[2][64];
static int depth[2];
static int slot(int sig) { return sig == SIGUSR1 ? 0 : 1; }
static void note(int sig, const char *what) {
    char *t = trace[slot(sig)];
    if (++depth[slot(sig)] > 8) return; /* a loop: it goes on until the stack overflows */
    strcat(t, t[0] ? " " : "");
    strcat(t, what);
}

static void h1(int sig, siginfo_t *si, void *uc) {
    (void)si, (void)uc;
    note(sig, "H1");
}

/* The reporter's saved action, as the raw system call gave it. */
static struct kernel_sigaction saved[2];
static void reporter(int sig, siginfo_t *si, void *uc) {
    note(sig, "R");
    const struct kernel_sigaction *k = &saved[slot(sig)];
    if (k->handler == (void *)SIG_DFL || k->handler == (void *)SIG_IGN) return;
    if (k->flags & SA_SIGINFO) ((void (*)(int, siginfo_t *, void *))k->handler)(sig, si, uc);
    else ((void (*)(int))k->handler)(sig);
}

static struct sigaction previous[2];
static void h2(int sig, siginfo_t *si, void *uc) {
    note(sig, "H2");
    const struct sigaction *p = &previous[slot(sig)];
    if (p->sa_handler == SIG_DFL || p->sa_handler == SIG_IGN) return;
    if (p->sa_flags & SA_SIGINFO) p->sa_sigaction(sig, si, uc);
    else p->sa_handler(sig);
}

static int install_libc(int sig, void (*fn)(int, siginfo_t *, void *), struct sigaction *old) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    return sigaction(sig, &sa, old);
}

static int chain(int sig, int raw_install) {
    if (install_libc(sig, h1, NULL) != 0) return 2;
    struct kernel_sigaction *k = &saved[slot(sig)];
    if (syscall(SYS_rt_sigaction, sig, NULL, k, 8) != 0) return 3;
    if (raw_install) {
        struct kernel_sigaction mine = *k;
        mine.handler = (void *)reporter;
        mine.flags = k->flags | SA_SIGINFO;
        if (syscall(SYS_rt_sigaction, sig, &mine, NULL, 8) != 0) return 4;
    } else if (install_libc(sig, reporter, NULL) != 0) {
        return 4;
    }
    if (install_libc(sig, h2, &previous[slot(sig)]) != 0) return 5;
    raise(sig);
    printf("%s %s\n", sig == SIGUSR1 ? "usr1" : "usr2", trace[slot(sig)]);
    return 0;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int r = chain(SIGUSR1, 1);
    if (!r) r = chain(SIGUSR2, 0);
    if (r) return r;
    /* the raw read-back of H1 (saved[0]) installed again through libc, after H2 replaced it */
    struct sigaction again;
    memset(&again, 0, sizeof again);
    again.sa_sigaction = (void (*)(int, siginfo_t *, void *))saved[0].handler;
    again.sa_flags = SA_SIGINFO;
    if (sigaction(SIGUSR1, &again, NULL) != 0) return 6;
    trace[0][0] = 0;
    depth[0] = 0;
    raise(SIGUSR1);
    struct sigaction now;
    sigaction(SIGUSR1, NULL, &now);
    printf("reinstalled %s read %s\n", trace[0], now.sa_sigaction == h1 ? "H1" : "other");
    return 0;
}
