/* signals.c — the program's signal handlers run behind trampoline entries, each of which gives
 * its handler a fresh level of the invocation stack (thread.h): a handler that interrupts an
 * original, the engine or the user's advice makes calls of its own, advised and counted like
 * any other. Without it, a call from such a handler cannot be told from a call the engine or
 * the advice makes itself, and was either unadvised or, under a stub's gate, counted and
 * never decided.
 *
 * How. libaspects.so exports sigaction and the signal() family; each installs, through the
 * next definition (libc's), the trampoline entry of the program's handler in its place,
 * leaving every flag and mask as the program asked. What the program reads back (an old
 * action, signal()'s return) is its own handler, never an entry. SIG_DFL and SIG_IGN pass
 * through untouched (but see the crash recorder below).
 *
 * One entry per (handler, form): an entry is a distinct code address that remembers one
 * handler, set once and never changed. So what the kernel holds keeps meaning the handler
 * installed then: a crash reporter that saves the old action with the raw rt_sigaction call
 * and later chains to it runs that handler, not whatever the program installed since (one
 * trampoline that ran the current handler made such a chain call itself until the stack
 * overflowed); and an old action is a consistent pair of handler and mask/flags, since the
 * kernel returns it whole and its entry's meaning never changes — no lock is needed. The
 * entries are a fixed pool (ASP_ENTRIES, never malloc); a program that installs more distinct
 * handlers than that gets the further ones installed as they are: the kernel holds the
 * program's own handler, whose calls while the engine or advice runs go to their originals,
 * as a handler installed with the raw system call.
 *
 * Limits. A handler installed with the raw rt_sigaction system call (a Go runtime, a static
 * helper) is not behind an entry: its calls while the engine or advice runs stay unadvised, as
 * before. A handler that interrupts the engine while it holds a lock or the loader
 * (ASP_IN_SEALED: building a stub, resolving, loading advice, patching GOT slots) gets no
 * fresh level: its calls could need that very lock, so they go to their originals.
 *
 * The crash recorder (crash.c, explore's runs) stands for SIG_DFL on the crash signals: the
 * program reads it back as SIG_DFL and asking for SIG_DFL installs it; and the trampoline
 * lets it record a crash signal's stack before the program's own handler runs.
 *
 * Signal safety: the trampoline touches only this thread's TLS and its entry's word, and its
 * system calls are futex (aarch64, a handler without SA_SIGINFO: whether the kernel's frame
 * can be read; judging a level the interrupted code runs below: a nested handler,
 * asp_levels_settle) and sigaltstack (where the kernel's context is not found). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <linux/futex.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include "signals.h"
#include "thread.h"

#define ASP_EXPORTED __attribute__((visibility("default")))

/* Each entry's handler: its address, with bit 63 set when it takes (int, siginfo_t *, void *)
 * — one word, so the trampoline reads a pair that belongs together; 0 while the entry is
 * free. Set once (CAS from 0). User-space code addresses are below 2^47. */
#define ASP_HOST_SIGINFO (UINT64_C(1) << 63)
#define ASP_ENTRIES 64u
static uint64_t asp_entry_handlers[ASP_ENTRIES];

void (*asp_signal_caught_hook)(int sig, const void *context, int returned);
void (*asp_signal_installed_hook)(void);

/* The signals the crash recorder stands for SIG_DFL on (bit sig), and its handler. */
static uint64_t asp_recorded_signals;
static asp_siginfo_handler asp_recorder;

#define ASP_CONTEXT_REACH 1024u

#if defined(__aarch64__)
/* aarch64's frame for a handler without SA_SIGINFO is the same, only not pointed at: siginfo
 * at the handler's entry sp, the ucontext right after it, whose first record is always the
 * FP/SIMD registers' (<asm/sigcontext.h>: FPSIMD_MAGIC, and its size, 528). Looked for by
 * those two words from our frame up, 16 bytes at a time, within ASP_CONTEXT_REACH (siginfo
 * itself is not a mark: qemu-user leaves it unwritten there) — after asking the kernel
 * whether the top of what that reads is readable (futex(FUTEX_WAIT) with a zero timeout,
 * EFAULT where a read would fault): a program that calls an entry itself may do it near its
 * stack's top. Both ends readable and less than a page apart: all of it is. */
#define ASP_FPSIMD_MAGIC 0x46508001u
#define ASP_FPSIMD_SIZE 528u
static const ucontext_t *asp_found_context(uintptr_t frame) {
    const uintptr_t from = (frame + 15u) & ~(uintptr_t)15u;
    const size_t marks = sizeof(siginfo_t) + offsetof(ucontext_t, uc_mcontext) + offsetof(mcontext_t, __reserved) + 8u;
    const uintptr_t top = from + ASP_CONTEXT_REACH + marks - 4u;
    const struct timespec zero = {0, 0};
    const int saved = errno;
    const long r = syscall(SYS_futex, (long)top, (long)FUTEX_WAIT_PRIVATE, 0x5eed0a11L, &zero, 0L, 0L);
    const int readable = r == 0 || errno == EAGAIN || errno == ETIMEDOUT;
    errno = saved;
    if (!readable) return NULL;
    for (uintptr_t at = from; at < from + ASP_CONTEXT_REACH; at += 16u) {
        const ucontext_t *uc = (const ucontext_t *)(at + sizeof(siginfo_t));
        uint32_t head[2];
        memcpy(head, uc->uc_mcontext.__reserved, sizeof head);
        if (head[0] == ASP_FPSIMD_MAGIC && head[1] == ASP_FPSIMD_SIZE) return uc;
    }
    return NULL;
}
#endif

/* The context of a signal the kernel delivered, or NULL. x86-64's kernel always passes it;
 * aarch64's only to a handler installed with SA_SIGINFO (else the register holds whatever the
 * interrupted code left there: asp_found_context). The kernel puts it just above the
 * handler's first frame (x86-64: after the return address; aarch64: after siginfo): further
 * away or misaligned, it is not the kernel's (a program calling an entry itself) and is not
 * read. */
static const ucontext_t *asp_kernel_context(const void *context, uintptr_t frame, int siginfo) {
#if defined(__aarch64__)
    if (!siginfo) return asp_found_context(frame);
#else
    (void)siginfo;
#endif
    const uintptr_t at = (uintptr_t)context;
    return at > frame && at - frame < ASP_CONTEXT_REACH && !(at & 7u) ? (const ucontext_t *)context : NULL;
}

/* The alternate signal stack as the kernel saved it in the context (before SS_AUTODISARM
 * disarms it), else as sigaltstack says now; and whether `frame` is on it. */
static void asp_alt_stack(asp_thread *t, const ucontext_t *uc, asp_level *mine) {
    stack_t ss;
    if (uc) {
        ss = uc->uc_stack;
    } else {
        const int saved = errno;
        const long r = syscall(SYS_sigaltstack, NULL, &ss);
        errno = saved;
        if (r != 0) ss.ss_flags = SS_DISABLE;
    }
    uintptr_t lo = 0, hi = 0;
    if (!(ss.ss_flags & SS_DISABLE) && ss.ss_size && (uintptr_t)ss.ss_sp + ss.ss_size > (uintptr_t)ss.ss_sp) {
        lo = (uintptr_t)ss.ss_sp;
        hi = lo + ss.ss_size;
    }
    __atomic_store_n(&t->alt_lo, lo, __ATOMIC_RELAXED);
    __atomic_store_n(&t->alt_hi, hi, __ATOMIC_RELAXED);
    if (mine->frame >= lo && mine->frame < hi) {
        mine->alt_lo = lo;
        mine->alt_hi = hi;
    }
}

/* The interrupted code's stack pointer, from the kernel's context (0: unknown). */
static uintptr_t asp_interrupted_sp(const ucontext_t *uc) {
    if (!uc) return 0;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.sp;
#else
    return 0;
#endif
}

/* The level of a handler: the count after ending the levels a siglongjmp abandoned — every
 * level the interrupted code (at `interrupted`, its sp, or else our own frame) is not inside
 * of — and this one's record in the slot the count names. A handler arriving while this runs
 * either returns, having put back the slot and count it found, or jumps out of us too; the
 * CAS tells. The covered slot goes back on return, for a handler this one interrupted
 * mid-record. */
static uint32_t asp_level_enter(asp_thread *t, uintptr_t interrupted, const asp_level *mine, asp_level *covered) {
    for (;;) {
        uint32_t at = asp_levels_settle(t, interrupted ? interrupted : mine->frame);
        if (at < ASP_LEVELS) {
            *covered = t->level[at];
            t->level[at] = *mine;
        }
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (__atomic_compare_exchange_n(&t->handlers, &at, at + 1u, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return at;
    }
}

static void asp_level_leave(asp_thread *t, uint32_t at, const asp_level *covered) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    /* levels above ours, if any, were abandoned inside our handler: they end with it */
    __atomic_store_n(&t->handlers, at, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (at < ASP_LEVELS) t->level[at] = *covered;
}

static __attribute__((noinline)) void asp_trampoline(int sig, siginfo_t *info, void *context, uint32_t entry) {
    asp_thread *t = &asp_tls;
    const uint64_t h = entry < ASP_ENTRIES ? __atomic_load_n(&asp_entry_handlers[entry], __ATOMIC_ACQUIRE) : 0;
    asp_level mine = {(uintptr_t)__builtin_frame_address(0), 0, 0, 0, 0, 0};
    /* in this frame while the handler runs (its address escapes: it stays in memory) */
    const uint32_t made = __atomic_load_n(&t->levels_made, __ATOMIC_RELAXED) + 1u;
    __atomic_store_n(&t->levels_made, made, __ATOMIC_RELAXED);
    volatile uint32_t cookie = (uint32_t)(mine.frame >> 4) ^ (made * 0x9e3779b1u) ^ 0x5a5ac0deu;
    mine.cookie = cookie;
    mine.cookie_at = (uintptr_t)&cookie;
    const ucontext_t *uc = asp_kernel_context(context, mine.frame, (h & ASP_HOST_SIGINFO) != 0);
    asp_alt_stack(t, uc, &mine);
    asp_level covered = {0, 0, 0, 0, 0, 0};
    const uint32_t at = asp_level_enter(t, asp_interrupted_sp(uc), &mine, &covered);
    const uint32_t kind = __atomic_load_n(&t->top.kind, __ATOMIC_RELAXED);
    const int fresh = kind != ASP_IN_PROGRAM && kind != ASP_IN_SEALED;
    asp_frame outer = {0, 0, 0, 0};
    if (fresh) outer = asp_frame_push(t, ASP_IN_PROGRAM);
    void (*const caught)(int, const void *, int) = __atomic_load_n(&asp_signal_caught_hook, __ATOMIC_ACQUIRE);
    if (caught) caught(sig, uc, 0);
    const uintptr_t fn = (uintptr_t)(h & ~ASP_HOST_SIGINFO);
    /* (a handler that siglongjmps out never comes back here: the thread is then in the
     * PROGRAM frame of this level, which is where such a jump lands, and its level ends at
     * the next check made outside it: asp_levels_settle) */
    if (fn && (h & ASP_HOST_SIGINFO)) ((void (*)(int, siginfo_t *, void *))fn)(sig, info, context);
    else if (fn) ((void (*)(int))fn)(sig);
    if (caught) caught(sig, NULL, 1);
    if (fresh) asp_frame_pop(t, outer);
    asp_level_leave(t, at, &covered);
}

/* The entries: distinct addresses, one list. */
#define ASP_ENTRY_LIST(X)                                                                                   \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)                    \
    X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)        \
    X(32) X(33) X(34) X(35) X(36) X(37) X(38) X(39) X(40) X(41) X(42) X(43) X(44) X(45) X(46) X(47)        \
    X(48) X(49) X(50) X(51) X(52) X(53) X(54) X(55) X(56) X(57) X(58) X(59) X(60) X(61) X(62) X(63)
#define ASP_ENTRY_DEFINE(n) \
    static void asp_entry_##n(int sig, siginfo_t *info, void *context) { asp_trampoline(sig, info, context, n); }
ASP_ENTRY_LIST(ASP_ENTRY_DEFINE)
#define ASP_ENTRY_ADDRESS(n) asp_entry_##n,
static const asp_siginfo_handler asp_entries[ASP_ENTRIES] = {ASP_ENTRY_LIST(ASP_ENTRY_ADDRESS)};

/* The entry at `h`, or -1. */
static int asp_entry_index(void *h) {
    for (unsigned k = 0; k < ASP_ENTRIES; k++)
        if ((void *)asp_entries[k] == h) return (int)k;
    return -1;
}

/* The entry of handler word `value`: the one that has it, else a free one given it; -1 when
 * all are taken by others. Entries fill in order, so a value is never in two. */
static int asp_entry_for(uint64_t value) {
    for (unsigned k = 0; k < ASP_ENTRIES; k++) {
        uint64_t v = __atomic_load_n(&asp_entry_handlers[k], __ATOMIC_ACQUIRE);
        if (v == 0 && __atomic_compare_exchange_n(&asp_entry_handlers[k], &v, value, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return (int)k;
        if (v == value) return (int)k;
    }
    return -1;
}

/* A handler of the program's to put behind an entry: not a disposition, not an entry (a
 * program that read one with the raw system call and installs it again gets it as it is: it
 * keeps its handler), not the recorder. */
static int asp_is_handler(void *h) {
    return h != (void *)SIG_DFL && h != (void *)SIG_IGN && h != (void *)SIG_ERR && h != (void *)asp_recorder &&
           asp_entry_index(h) < 0;
}

static int asp_recorded(int sig) {
    return sig > 0 && sig < 64 && (__atomic_load_n(&asp_recorded_signals, __ATOMIC_ACQUIRE) >> sig & 1u);
}

/* What the program reads back as a handler: its own where an entry stands, SIG_DFL where the
 * recorder does. */
static void *asp_host_view(void *installed) {
    const int k = asp_entry_index(installed);
    if (k >= 0) return (void *)(uintptr_t)(__atomic_load_n(&asp_entry_handlers[k], __ATOMIC_ACQUIRE) & ~ASP_HOST_SIGINFO);
    return asp_recorder && installed == (void *)asp_recorder ? (void *)SIG_DFL : installed;
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

typedef int (*asp_sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static void *asp_next_sigaction, *asp_next___sigaction;

/* Before the handler is installed: it cannot run yet, so nothing it needs is half taken. */
static void asp_signal_installed(void) {
    void (*const hook)(void) = __atomic_load_n(&asp_signal_installed_hook, __ATOMIC_ACQUIRE);
    if (!hook) return;
    const int saved = errno;
    hook();
    errno = saved;
}

static void asp_recorder_action(struct sigaction *sa) {
    memset(sa, 0, sizeof *sa);
    sa->sa_sigaction = asp_recorder;
    sa->sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa->sa_mask);
}

static int asp_sigaction_via(void **cache, const char *name, int sig, const struct sigaction *act, struct sigaction *old) {
    asp_sigaction_fn next = (asp_sigaction_fn)asp_next(cache, name);
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    if (sig <= 0 || sig >= _NSIG) return next(sig, act, old); /* libc says EINVAL */
    struct sigaction mine;
    if (act && asp_is_handler((void *)act->sa_handler)) {
        const int siginfo = (act->sa_flags & SA_SIGINFO) != 0;
        const uintptr_t fn = siginfo ? (uintptr_t)act->sa_sigaction : (uintptr_t)act->sa_handler;
        const int k = asp_entry_for((uint64_t)fn | (siginfo ? ASP_HOST_SIGINFO : 0));
        if (k >= 0) { /* else (no entry free) the handler itself */
            mine = *act;
            mine.sa_sigaction = asp_entries[k]; /* the same union member for both forms */
            act = &mine;
        }
        asp_signal_installed();
    } else if (act && act->sa_handler == SIG_DFL && asp_recorded(sig)) {
        asp_recorder_action(&mine);
        act = &mine;
    }
    const int r = next(sig, act, old);
    if (r != 0 || !old) return r;
    if (asp_recorder && old->sa_sigaction == asp_recorder) {
        /* exactly what a default disposition reads as */
        memset(old, 0, sizeof *old);
        old->sa_handler = SIG_DFL;
        sigemptyset(&old->sa_mask);
    } else {
        old->sa_handler = (void (*)(int))asp_host_view((void *)old->sa_handler);
    }
    return 0;
}

ASP_EXPORTED int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    return asp_sigaction_via(&asp_next_sigaction, "sigaction", sig, act, old);
}
ASP_EXPORTED int __sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    return asp_sigaction_via(&asp_next___sigaction, "__sigaction", sig, act, old);
}

/* The signal() family keeps each function's own semantics (BSD or System V, siginterrupt,
 * sigset's SIG_HOLD) by calling the next definition of that very function. A SIG_DFL on a
 * signal the recorder stands for is followed by the recorder (through libc's sigaction). */
typedef void (*asp_sighandler)(int);
static asp_sighandler asp_signal_via(void **cache, const char *name, int sig, asp_sighandler h) {
    asp_sighandler (*next)(int, asp_sighandler) = asp_next(cache, name);
    if (!next) {
        errno = ENOSYS;
        return SIG_ERR;
    }
    if (sig <= 0 || sig >= _NSIG) return next(sig, h);
    asp_sighandler install = h;
    if (asp_is_handler((void *)h) && h != SIG_HOLD) {
        const int k = asp_entry_for((uint64_t)(uintptr_t)h);
        if (k >= 0) install = (asp_sighandler)(void *)asp_entries[k];
        asp_signal_installed();
    }
    const asp_sighandler r = next(sig, install);
    if (r == SIG_ERR) return r;
    asp_sigaction_fn libc = (asp_sigaction_fn)asp_next(&asp_next_sigaction, "sigaction");
    if (h == SIG_DFL && asp_recorded(sig) && libc) {
        struct sigaction sa;
        asp_recorder_action(&sa);
        const int saved = errno;
        libc(sig, &sa, NULL);
        errno = saved;
    }
    return (asp_sighandler)asp_host_view((void *)r);
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

void asp_signal_record_default(int sig, asp_siginfo_handler recorder) {
    if (sig <= 0 || sig >= 64 || !recorder) return;
    asp_sigaction_fn libc = (asp_sigaction_fn)asp_next(&asp_next_sigaction, "sigaction");
    if (!libc) return;
    __atomic_store_n(&asp_recorder, recorder, __ATOMIC_RELEASE);
    __atomic_fetch_or(&asp_recorded_signals, UINT64_C(1) << sig, __ATOMIC_ACQ_REL);
    struct sigaction old;
    /* only a default disposition: any handler there is the program's, and stays */
    if (libc(sig, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) return;
    struct sigaction sa;
    asp_recorder_action(&sa);
    libc(sig, &sa, NULL);
}

int asp_signals_entry_taken(void) {
    return __atomic_load_n(&asp_entry_handlers[0], __ATOMIC_ACQUIRE) != 0;
}

int asp_signals_untracked_handler(void) {
    const long libc_first = __SIGRTMIN, libc_end = SIGRTMIN;
    for (long sig = 1; sig < 65; sig++) {
        /* the C library's own (SIGCANCEL, SIGSETXID: glibc installs them at the first
         * pthread_create; no program can install a handler there through it) */
        if (sig >= libc_first && sig < libc_end) continue;
        struct {
            void *handler;
            unsigned long flags;
            void *restorer;
            uint64_t mask;
        } k;
        const int saved = errno;
        const long r = syscall(SYS_rt_sigaction, sig, NULL, &k, (long)sizeof k.mask);
        const int why = errno;
        errno = saved;
        /* EINVAL: no such signal here (qemu-user keeps some for itself); refused otherwise
         * (a seccomp profile): then it cannot tell, and says yes */
        if (r != 0 ? why != EINVAL : asp_is_handler(k.handler)) return 1;
    }
    return 0;
}

void asp_signal_really_default(int sig) {
    /* the kernel's struct sigaction (x86-64, aarch64): SIG_DFL needs no restorer */
    struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; } k = {(void *)SIG_DFL, 0, NULL, 0};
    const int saved = errno;
    syscall(SYS_rt_sigaction, (long)sig, &k, NULL, (long)sizeof k.mask);
    errno = saved;
}
