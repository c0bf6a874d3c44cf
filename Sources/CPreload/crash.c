/* crash.c — the crash recorder, for explore (opt-in: ASPECTS_RECORD_CRASH=1).
 *
 * explore sees the exit status of the process it started. A crash deeper in the tree (the
 * program a `#!/bin/sh` wrapper runs, a worker of a forking server) reaches it, if at all,
 * as an ordinary status (139 from the shell), indistinguishable from a program that reported
 * an error. So in explore's runs each process records in its attachment record the crash
 * signal that ends it, and explore reads the table afterwards.
 *
 * Where the program leaves the default disposition, the recorder's handler stands for it
 * (signals.c: the program reads it back as SIG_DFL, and asking for SIG_DFL installs it). It
 * stores two words and hands the signal back to the default action, so the process dies exactly
 * as it would have: same signal, same core dump, same status for its parent. Everything it does
 * is async-signal-safe: atomic stores, raw system calls. SA_ONSTACK: on a thread with an
 * alternate signal stack, a stack overflow is recorded too. Where a handler of the program's
 * catches the signal (behind signals.c's trampoline), the crash is recorded as caught before
 * the handler runs (asp_crash_on_caught).
 *
 * The crashing thread's stack (ASPECTS_CRASH_DIR, an absolute directory explore made for the
 * run): the handler writes DIR/crash-PID.stack — the header of aspects_crash.h (its magic, the
 * ELF machine, the interrupted PC, SP, frame pointer and link register), then the raw stack
 * words from SP up, at most ASP_CRASH_STACK_BYTES — and DIR/crash-PID.maps, a copy of
 * /proc/self/maps. aspectctl turns them into frames afterwards (CrashStack.swift), by the
 * machine the file names, which need not be its own. The handler does no unwinding of its own:
 * x86-64's distro libraries have no frame pointers, an .eh_frame unwinder is too much code to
 * run in a dying process, and glibc's backtrace() may dlopen libgcc_s (malloc, the loader's
 * lock) on its first call. write(2) copies the stack with the kernel checking every page: an
 * unmapped one ends the copy with EFAULT instead of a second fault. Both files are new
 * (O_EXCL, O_NOFOLLOW): nothing already there is overwritten. Neither is made without the
 * variable, and a shared table has no room for a stack. */
#define _GNU_SOURCE
#include <ucontext.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "aspects_crash.h"
#include "crash.h"
#include "identity.h"
#include "signals.h"
#include "sys.h"
#include "table.h"
#include "thread.h"

static const int asp_crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS};
#define ASP_CRASH_SIGNALS (sizeof asp_crash_signals / sizeof asp_crash_signals[0])

/* This image's record, and what tells it is still ours: the ring of records is reused after
 * ASPECTS_ATTACH_CAPACITY more attachments. A fork child that did not exec has no record of
 * its own and writes its parent's, with its own pid. */
static aspects_attachment *asp_crash_record;
static uint32_t asp_crash_owner_pid;
static uint64_t asp_crash_owner_ns;

/* ASPECTS_CRASH_DIR, "" when unset or unusable. */
#define ASP_CRASH_DIR_MAX 200
#define ASP_CRASH_STACK_BYTES (64u * 1024u)
static char asp_crash_dir[ASP_CRASH_DIR_MAX];

/* DIR/crash-PID<suffix> into out (at least ASP_CRASH_DIR_MAX + 40 bytes). */
static void asp_crash_path(char *out, uint32_t pid, const char *suffix) {
    size_t n = 0;
    for (const char *p = asp_crash_dir; *p; p++) out[n++] = *p;
    for (const char *p = "/crash-"; *p; p++) out[n++] = *p;
    char num[12];
    asp_decimal_text(pid, num);
    for (const char *p = num; *p; p++) out[n++] = *p;
    for (const char *p = suffix; *p; p++) out[n++] = *p;
    out[n] = 0;
}

/* The dump's header words after the magic (aspects_crash.h): this process's ELF machine, then
 * the interrupted PC, SP, frame pointer and link register from the signal's context; zeros
 * (an unknown machine, which aspectctl refuses) elsewhere. */
static void asp_crash_registers(const void *ctx, uint64_t head[ASPECTS_CRASH_HEADER_WORDS]) {
    for (int k = 1; k < ASPECTS_CRASH_HEADER_WORDS; k++) head[k] = 0;
    if (!ctx) return;
    const ucontext_t *uc = (const ucontext_t *)ctx;
#if defined(__x86_64__)
    head[ASPECTS_CRASH_WORD_MACHINE] = ASPECTS_ELF_MACHINE_X86_64;
    head[ASPECTS_CRASH_WORD_PC] = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    head[ASPECTS_CRASH_WORD_SP] = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
    head[ASPECTS_CRASH_WORD_FP] = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
#elif defined(__aarch64__)
    /* x30: a leaf function never saves it, so a crash there has its caller only here */
    head[ASPECTS_CRASH_WORD_MACHINE] = ASPECTS_ELF_MACHINE_AARCH64;
    head[ASPECTS_CRASH_WORD_PC] = (uint64_t)uc->uc_mcontext.pc;
    head[ASPECTS_CRASH_WORD_SP] = (uint64_t)uc->uc_mcontext.sp;
    head[ASPECTS_CRASH_WORD_FP] = (uint64_t)uc->uc_mcontext.regs[29];
    head[ASPECTS_CRASH_WORD_LR] = (uint64_t)uc->uc_mcontext.regs[30];
#else
    (void)uc;
#endif
}

/* The stack file: header, then the stack from SP a page at a time until an unreadable page
 * (write fails with EFAULT), the limit, or a short write. */
static void asp_crash_write_stack(uint32_t pid, const void *ctx) {
    char path[ASP_CRASH_DIR_MAX + 40];
    asp_crash_path(path, pid, ".stack");
    const long fd = asp_sys_create_new(path);
    if (fd < 0) return;
    uint64_t head[ASPECTS_CRASH_HEADER_WORDS];
    memcpy(head, ASPECTS_CRASH_STACK_MAGIC, 8);
    asp_crash_registers(ctx, head);
    const uint64_t sp = head[ASPECTS_CRASH_WORD_SP];
    if (asp_sys_write((int)fd, head, sizeof head) == (long)sizeof head && sp != 0) {
        uint64_t at = sp & ~(uint64_t)7;
        const uint64_t end = at + ASP_CRASH_STACK_BYTES;
        while (at < end) {
            const uint64_t page_end = (at | 4095u) + 1;
            const uint64_t n = (page_end < end ? page_end : end) - at;
            if (asp_sys_write((int)fd, (const void *)(uintptr_t)at, (size_t)n) != (long)n) break;
            at += n;
        }
    }
    asp_sys_close((int)fd);
}

/* The maps file: /proc/self/maps as it is, which tells addresses to objects and offsets. */
static void asp_crash_write_maps(uint32_t pid) {
    char path[ASP_CRASH_DIR_MAX + 40];
    asp_crash_path(path, pid, ".maps");
    const long in = asp_sys_open_ro("/proc/self/maps");
    if (in < 0) return;
    const long fd = asp_sys_create_new(path);
    if (fd >= 0) {
        char buf[512]; /* small: the handler may run on a small alternate stack */
        long n;
        while ((n = asp_sys_read((int)in, buf, sizeof buf)) > 0)
            if (asp_sys_write((int)fd, buf, (size_t)n) != n) break;
        asp_sys_close((int)fd);
    }
    asp_sys_close((int)in);
}

static void asp_crash_write_files(const void *ctx) {
    if (!asp_crash_dir[0]) return;
    const uint32_t pid = asp_sys_getpid();
    asp_crash_write_stack(pid, ctx);
    asp_crash_write_maps(pid);
}

/* ASPECTS_CRASH_DIR when absolute and short enough to build paths from; else none. */
static void asp_crash_dir_install(void) {
    const char *dir = getenv("ASPECTS_CRASH_DIR");
    asp_crash_dir[0] = 0;
    if (!dir || dir[0] != '/' || strlen(dir) >= ASP_CRASH_DIR_MAX) return;
    memcpy(asp_crash_dir, dir, strlen(dir) + 1);
}

static aspects_attachment *asp_crash_own_record(void);
static void asp_crash_store(int sig, const void *ctx) {
    aspects_attachment *a = asp_crash_own_record();
    if (!a) return;
    /* the files before the signal: a reader that sees the signal finds them complete */
    asp_crash_write_files(ctx);
    /* the pid first: a reader that sees the signal sees whose it is */
    __atomic_store_n(&a->crash_pid, asp_sys_getpid(), __ATOMIC_RELAXED);
    __atomic_store_n(&a->crash_signal, (uint32_t)sig, __ATOMIC_RELEASE);
}

/* The record, while it is still this image's (else NULL). */
static aspects_attachment *asp_crash_own_record(void) {
    aspects_attachment *a = asp_crash_record;
    if (!a || __atomic_load_n(&a->pid, __ATOMIC_RELAXED) != asp_crash_owner_pid ||
        __atomic_load_n(&a->attached_ns, __ATOMIC_RELAXED) != asp_crash_owner_ns) return NULL;
    return a;
}

/* A crash signal on its way to a handler of the program's (signals.c's trampoline calls this
 * before the handler, and after it if it returns). A program that catches a crash to print
 * its own message and exit (m4's "internal error detected", a _exit(1) in a SIGSEGV handler)
 * ends with an ordinary status, but it crashed: its stack is recorded before the handler runs
 * and the record marked caught. A handler that returns has handled the signal (a fault it
 * repaired, a kill it answers) and the program goes on: the mark and the files go — except
 * for SIGABRT, after which abort() ends the process anyway. A handler that jumps out leaves
 * them (the program may have recovered: a limit, docs/limits.md). A program whose handler has
 * returned ASP_CRASH_ROUTINE times uses the signal routinely (a collector's write barrier, a
 * runtime's guard pages): its later ones are not written down, at a 64 KiB stack copy each. */
#define ASP_CRASH_ROUTINE 4u
static uint32_t asp_crash_returns[32];
static void asp_crash_on_caught(int sig, const void *ctx, int returned) {
    if (sig != SIGSEGV && sig != SIGBUS && sig != SIGFPE && sig != SIGILL && sig != SIGABRT) return;
    aspects_attachment *a = asp_crash_own_record();
    if (!a || __atomic_load_n(&asp_crash_returns[sig], __ATOMIC_RELAXED) >= ASP_CRASH_ROUTINE) return;
    const int saved = errno;
    const uint32_t pid = asp_sys_getpid();
    if (returned) __atomic_fetch_add(&asp_crash_returns[sig], 1u, __ATOMIC_RELAXED);
    if (!returned) {
        asp_crash_write_files(ctx); /* (new files only: a first caught crash keeps its own) */
        __atomic_store_n(&a->crash_pid, pid, __ATOMIC_RELAXED);
        __atomic_store_n(&a->crash_caught, (uint32_t)sig, __ATOMIC_RELEASE);
    } else if (sig != SIGABRT && __atomic_load_n(&a->crash_caught, __ATOMIC_ACQUIRE) == (uint32_t)sig &&
               __atomic_load_n(&a->crash_pid, __ATOMIC_RELAXED) == pid && !__atomic_load_n(&a->crash_signal, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&a->crash_caught, 0u, __ATOMIC_RELEASE);
        if (asp_crash_dir[0]) {
            char path[ASP_CRASH_DIR_MAX + 40];
            asp_crash_path(path, pid, ".stack");
            syscall(SYS_unlinkat, (long)AT_FDCWD, path, 0L);
            asp_crash_path(path, pid, ".maps");
            syscall(SYS_unlinkat, (long)AT_FDCWD, path, 0L);
        }
    }
    errno = saved;
}

static void asp_crash_on_signal(int sig, siginfo_t *si, void *ctx) {
    const int saved = errno;
    asp_crash_store(sig, ctx);
    asp_signal_really_default(sig);
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
    asp_crash_dir_install();
    /* where the disposition is the default, now or later (signals.c: the program reads SIG_DFL) */
    for (unsigned k = 0; k < ASP_CRASH_SIGNALS; k++) asp_signal_record_default(asp_crash_signals[k], asp_crash_on_signal);
    /* and where a handler of the program's catches one */
    __atomic_store_n(&asp_signal_caught_hook, asp_crash_on_caught, __ATOMIC_RELEASE);
    asp_debug("crash recorder on (ASPECTS_RECORD_CRASH)", NULL, NULL);
}
