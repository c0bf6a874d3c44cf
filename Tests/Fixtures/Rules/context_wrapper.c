/* Area: calling contexts (`when.context`, events that record contexts, explore --strategy context),
 * on x86-64 (CallContextTests) and aarch64 under qemu (Aarch64ContextTests).
 * Purpose: every allocation goes through one wrapper, xmalloc, so every malloc has ONE call
 * site (inside xmalloc) whichever function wanted the memory; only the callers above it tell
 * them apart. careful() and tidy() handle a NULL; careless() writes through it (SIGSEGV).
 * Built with -O2 (no frame pointers, as distributions build); the empty asm statements keep
 * the calls from becoming tail calls, so each caller stays on the stack.
 * Usage:
 *   context_wrapper [order]   order: letters c (careful), x (careless), t (tidy); default "ctx".
 *                              Prints each caller's result: "careful ok careless ok tidy ok"
 *                              ("NULL" for a handled failure).
 *   context_wrapper deep N    xmalloc at the bottom of N nested calls; prints "deep ok".
 *   context_wrapper badframe  xmalloc called from code that moved the stack pointer without
 *                              saying so in its unwind information and put garbage in the
 *                              frame pointer: an unwinder reads a wrong return address there.
 *                              Prints "badframe ok".
 *   context_wrapper badsigned (aarch64) as badframe, from a function that signs its return
 *                              address, with a code address as the garbage: an unwinder
 *                              fails to authenticate it. Prints "badsigned ok".
 *   context_wrapper lines     for each line of stdin, the order it holds (as above); prints
 *                              each line's results and flushes (a program that runs while
 *                              rules are added).
 *   context_wrapper signal    xwrite (write through one wrapper) from on_signal() called
 *                              directly, then from on_signal() as a SIGUSR1 handler; prints
 *                              "direct R handler R" with each write's result. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) void *xmalloc(size_t n) {
    void *p = malloc(n);
    __asm__ volatile("" : "+r"(p));
    return p;
}

static char out[256];

static void note(const char *who, const char *what) {
    size_t n = strlen(out);
    snprintf(out + n, sizeof out - n, "%s%s %s", n ? " " : "", who, what);
}

__attribute__((noinline)) static void careful(void) {
    char *p = xmalloc(64);
    if (!p) { note("careful", "NULL"); return; }
    p[0] = 'c';
    note("careful", "ok");
    free(p);
}

__attribute__((noinline)) static void careless(void) {
    char *p = xmalloc(64);
    p[0] = 'x'; /* the bug: no check */
    __asm__ volatile("" : : "r"(p) : "memory");
    note("careless", "ok");
    free(p);
}

__attribute__((noinline)) static void tidy(void) {
    char *p = xmalloc(64);
    if (!p) { note("tidy", "NULL"); return; }
    p[0] = 't';
    note("tidy", "ok");
    free(p);
}

__attribute__((noinline)) static int nest(int n) {
    if (n <= 0) {
        void *p = xmalloc(16);
        free(p);
        return 1;
    }
    int r = nest(n - 1);
    __asm__ volatile("" : "+r"(r));
    return r;
}

__attribute__((noinline)) static long xwrite(int fd, const void *buf, size_t n) {
    long r = (long)write(fd, buf, n);
    __asm__ volatile("" : "+r"(r));
    return r;
}

/* Calls xmalloc(64) with the stack pointer moved where the function's CFI does not say so,
 * and a garbage frame pointer: the return address an unwinder computes above xmalloc is
 * garbage or a stale word. x86-64: realigned, then 16 bytes of garbage pushed. aarch64: 64
 * bytes of garbage pushed (where the CFI puts the saved x29 and x30) and x29 garbage. */
#if defined(__x86_64__)
__attribute__((noinline)) static void *via_bad_frame(void) {
    void *p;
    __asm__ volatile("push %%rbp\n\t"
                     "push %%rbx\n\t"
                     "mov %%rsp, %%rbx\n\t"
                     "and $-16, %%rsp\n\t" /* the call's alignment, whatever the frame */
                     "movabs $0xdead00000000beef, %%rbp\n\t"
                     "push %%rbp\n\t"
                     "push %%rbp\n\t"
                     "mov $64, %%edi\n\t"
                     "call xmalloc\n\t"
                     "mov %%rbx, %%rsp\n\t"
                     "pop %%rbx\n\t"
                     "pop %%rbp\n\t"
                     : "=a"(p)
                     :
                     : "rdi", "rsi", "rdx", "rcx", "r8", "r9", "r10", "r11", "memory", "cc");
    return p;
}
#elif defined(__aarch64__)
/* Pushes 64 bytes of `garbage` below the stack pointer, puts it in x29 and calls xmalloc(64);
 * the stack pointer and x29 are put back after. */
#define BAD_FRAME_CALL(p, garbage)                                                                 \
    __asm__ volatile("mov x19, sp\n\t"                                                           \
                     "mov x20, x29\n\t"                                                          \
                     "mov x29, %1\n\t"                                                           \
                     "stp x29, x29, [sp, #-16]!\n\t"                                             \
                     "stp x29, x29, [sp, #-16]!\n\t"                                             \
                     "stp x29, x29, [sp, #-16]!\n\t"                                             \
                     "stp x29, x29, [sp, #-16]!\n\t"                                             \
                     "mov x0, #64\n\t"                                                           \
                     "bl xmalloc\n\t"                                                            \
                     "mov sp, x19\n\t"                                                           \
                     "mov x29, x20\n\t"                                                          \
                     : "=r"(p)                                                                    \
                     : "r"(garbage)                                                               \
                     : "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12",  \
                       "x13", "x14", "x15", "x16", "x17", "x19", "x20", "x30", "v0", "v1", "v2",  \
                       "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18", "v19", "v20", "v21",    \
                       "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31",      \
                       "memory", "cc")

__attribute__((noinline)) static void *via_bad_frame(void) {
    register void *p __asm__("x0");
    BAD_FRAME_CALL(p, 0xdead00000000beefull);
    return p;
}

/* As via_bad_frame, in a function that signs its return address (pac-ret: paciasp, and its
 * CFI says the saved x30 is signed), with a code address as the garbage: an unwinder strips
 * it to a code address, but authenticating it fails (a fault on a CPU with FEAT_FPAC, else a
 * poisoned pointer whose code it reads). */
__attribute__((noinline, target("branch-protection=pac-ret"))) static void *via_bad_signed_frame(void) {
    register void *p __asm__("x0");
    BAD_FRAME_CALL(p, (unsigned long)(uintptr_t)xmalloc + 8);
    return p;
}
#endif

static volatile long results[2];
static volatile int which;

__attribute__((noinline)) static void on_signal(int sig) {
    (void)sig;
    results[which] = xwrite(1, "", 0);
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv) {
    if (argc > 2 && strcmp(argv[1], "deep") == 0) {
        int r = nest(atoi(argv[2]));
        printf("deep %s\n", r == 1 ? "ok" : "wrong");
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "badframe") == 0) {
        void *p = via_bad_frame();
        printf("badframe %s\n", p ? "ok" : "NULL");
        free(p);
        return 0;
    }
#if defined(__aarch64__)
    if (argc > 1 && strcmp(argv[1], "badsigned") == 0) {
        void *p = via_bad_signed_frame();
        printf("badsigned %s\n", p ? "ok" : "NULL");
        free(p);
        return 0;
    }
#endif
    if (argc > 1 && strcmp(argv[1], "signal") == 0) {
        /* no signal blocked, whatever the parent left blocked: a blocked signal is how the
         * preload tells a handler may be running (a test runner's children inherit many) */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        which = 0;
        on_signal(0);
        signal(SIGUSR1, on_signal);
        which = 1;
        raise(SIGUSR1);
        printf("direct %ld handler %ld\n", results[0], results[1]);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "lines") == 0) {
        char line[64];
        while (fgets(line, sizeof line, stdin)) {
            out[0] = 0;
            for (const char *o = line; *o; o++) {
                if (*o == 'c') careful();
                else if (*o == 'x') careless();
                else if (*o == 't') tidy();
            }
            printf("%s\n", out);
            fflush(stdout);
        }
        return 0;
    }
    const char *order = argc > 1 ? argv[1] : "ctx";
    for (const char *o = order; *o; o++) {
        if (*o == 'c') careful();
        else if (*o == 'x') careless();
        else if (*o == 't') tidy();
    }
    printf("%s\n", out);
    return 0;
}
