/* crash.c — the crash recorder, for explore (opt-in: ASPECTS_RECORD_CRASH=1).
 *
 * explore sees the exit status of the process it started. A crash deeper in the tree (the
 * program a `#!/bin/sh` wrapper runs, a worker of a forking server) reaches it, if at all,
 * as an ordinary status (139 from the shell), indistinguishable from a program that reported
 * an error. So in explore's runs each process records in its attachment record the crash
 * signal that ends it, and explore reads the table afterwards.
 *
 * Only where the program left the default disposition: a handler of the program's (installed
 * before us, or after us, which replaces ours) decides for itself what a crash is. The handler
 * stores two words and hands the signal back to the default action, so the process dies exactly
 * as it would have: same signal, same core dump, same status for its parent. Everything it does
 * is async-signal-safe: atomic stores, raw system calls, sigaction(2). SA_ONSTACK: on a thread
 * with an alternate signal stack, a stack overflow is recorded too. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "crash.h"
#include "identity.h"
#include "sys.h"
#include "table.h"
#include "thread.h"

static const int asp_crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS};
#define ASP_CRASH_SIGNALS (sizeof asp_crash_signals / sizeof asp_crash_signals[0])

/* A handler of the preload's own found in place of the default — table.c's SIGBUS watch,
 * which mends faults inside the table's mapping — keeps running first. A fault it does not
 * mend it hands to the default action by restoring SIG_DFL: that is when this one records. */
static struct sigaction asp_crash_inner[ASP_CRASH_SIGNALS];
static uint8_t asp_crash_chained[ASP_CRASH_SIGNALS];

/* This image's record, and what tells it is still ours: the ring of records is reused after
 * ASPECTS_ATTACH_CAPACITY more attachments. A fork child that did not exec has no record of
 * its own and writes its parent's, with its own pid. */
static aspects_attachment *asp_crash_record;
static uint32_t asp_crash_owner_pid;
static uint64_t asp_crash_owner_ns;

static int asp_crash_index(int sig) {
    for (unsigned k = 0; k < ASP_CRASH_SIGNALS; k++)
        if (asp_crash_signals[k] == sig) return (int)k;
    return -1;
}

static void asp_crash_store(int sig) {
    aspects_attachment *a = asp_crash_record;
    if (!a || __atomic_load_n(&a->pid, __ATOMIC_RELAXED) != asp_crash_owner_pid ||
        __atomic_load_n(&a->attached_ns, __ATOMIC_RELAXED) != asp_crash_owner_ns) return;
    /* the pid first: a reader that sees the signal sees whose it is */
    __atomic_store_n(&a->crash_pid, asp_sys_getpid(), __ATOMIC_RELAXED);
    __atomic_store_n(&a->crash_signal, (uint32_t)sig, __ATOMIC_RELEASE);
}

static void asp_crash_on_signal(int sig, siginfo_t *si, void *ctx) {
    const int saved = errno;
    const int k = asp_crash_index(sig);
    if (k >= 0 && asp_crash_chained[k]) {
        const struct sigaction *inner = &asp_crash_inner[k];
        if (inner->sa_flags & SA_SIGINFO) inner->sa_sigaction(sig, si, ctx);
        else inner->sa_handler(sig);
        struct sigaction now;
        if (sigaction(sig, NULL, &now) == 0 && now.sa_handler == SIG_DFL) asp_crash_store(sig);
        errno = saved;
        return;
    }
    asp_crash_store(sig);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    /* A fault happens again when the faulting instruction runs again, now fatal, with the
     * kernel's own report of it (the core dump says what it said before). Anything else —
     * sent by kill, raise or abort, a seccomp trap (the system call is not made again), a
     * machine-check notice — is sent again, and delivered as this handler returns (it is
     * blocked until then). */
    const int fault = si && si->si_code > 0 && sig != SIGSYS && sig != SIGABRT &&
                      !(sig == SIGBUS && si->si_code == BUS_MCEERR_AO);
    if (!fault) asp_sys_raise(sig);
    errno = saved;
}

void asp_crash_recorder_install(void) {
    const char *on = getenv("ASPECTS_RECORD_CRASH");
    if (!on || on[0] != '1' || on[1] || !asp_tab.attached || !asp_image) return;
    aspects_attachment *a = (aspects_attachment *)(asp_tab.base + aspects_attachments_offset(
        asp_tab.group_capacity, asp_tab.rule_capacity, asp_tab.event_capacity, asp_tab.stat_capacity)) +
        ((asp_image - 1) % ASPECTS_ATTACH_CAPACITY);
    asp_crash_owner_pid = a->pid;
    asp_crash_owner_ns = a->attached_ns;
    asp_crash_record = a;
    Dl_info self;
    if (!dladdr((void *)asp_crash_recorder_install, &self)) self.dli_fbase = NULL;
    for (unsigned k = 0; k < ASP_CRASH_SIGNALS; k++) {
        struct sigaction old;
        if (sigaction(asp_crash_signals[k], NULL, &old) != 0 || old.sa_handler == SIG_IGN) continue;
        if (old.sa_handler != SIG_DFL) {
            Dl_info in;
            void *h = (old.sa_flags & SA_SIGINFO) ? (void *)old.sa_sigaction : (void *)old.sa_handler;
            if (!self.dli_fbase || !dladdr(h, &in) || in.dli_fbase != self.dli_fbase) continue; /* the program's */
            asp_crash_inner[k] = old;
            asp_crash_chained[k] = 1;
        }
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = asp_crash_on_signal;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(asp_crash_signals[k], &sa, NULL) != 0) asp_crash_chained[k] = 0;
    }
    asp_debug("crash recorder on (ASPECTS_RECORD_CRASH)", NULL, NULL);
}
