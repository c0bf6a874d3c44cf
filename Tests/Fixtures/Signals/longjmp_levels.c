/* Area: host safety / signal handlers.
 * Purpose: after a siglongjmp out of a handler the thread must not count as "in a handler"
 * (issue 30, item 4). A SIGALRM handler (behind the preload's trampoline) jumps back to main
 * JUMPS times; then main calls getppid CALLS times from 12 frames further down, each frame
 * using 256 bytes of stack — deeper than the handler ran. Inside a handler a call's calling
 * context is not unwound (not a safe place), so a rule with "context": true logs those calls
 * with their site only; out of it, with their callers. The preload once kept the abandoned
 * level for good: every deeper call on that thread counted as inside the handler.
 * With "alt" the handler runs on an alternate signal stack (SA_ONSTACK).
 * Usage: longjmp_levels JUMPS CALLS [alt]. Output: "jumps J calls C". */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sigjmp_buf back;
static void on_alarm(int sig) {
    (void)sig;
    siglongjmp(back, 1);
}

/* the stack used as any program uses it: written */
static __attribute__((noinline)) int deep(int n) {
    volatile char buf[256];
    memset((char *)buf, n, sizeof buf);
    if (n == 0) return getppid() > 0;
    return deep(n - 1) + (buf[7] != n);
}

int main(int argc, char **argv) {
    const int jumps = argc > 1 ? atoi(argv[1]) : 50, calls = argc > 2 ? atoi(argv[2]) : 10;
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    if (argc > 3 && strcmp(argv[3], "alt") == 0) {
        stack_t ss = {.ss_sp = malloc(65536), .ss_flags = 0, .ss_size = 65536};
        if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0) return 2;
        sa.sa_flags = SA_ONSTACK;
    }
    sigaction(SIGALRM, &sa, NULL);
    volatile int jumped = 0;
    while (jumped < jumps)
        if (sigsetjmp(back, 1) == 0) raise(SIGALRM);
        else jumped++;
    int made = 0;
    for (int i = 0; i < calls; i++) made += deep(12);
    printf("jumps %d calls %d\n", (int)jumped, made);
    return 0;
}
