/* Area: host safety / signal handlers.
 * Purpose: more distinct handlers than the preload has trampoline entries (signals.c: a fixed
 * pool, never malloc). Installs 80 handlers on SIGUSR1 in turn through sigaction, then twice
 * more in reverse order through signal(): each must be the one that runs and the one read
 * back. Past the pool the handler is installed as it is: the kernel holds it.
 * Usage: many_handlers. Output: "installed 240 ran 240 read 240 kernel-holds-own N" (N: 240
 * without the preload, 3 x the handlers past its pool with it). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N 80
static volatile sig_atomic_t ran;
#define H(n) static void h##n(int s) { (void)s; ran = n + 1; }
#define H10(t) H(t##0) H(t##1) H(t##2) H(t##3) H(t##4) H(t##5) H(t##6) H(t##7) H(t##8) H(t##9)
H(0) H(1) H(2) H(3) H(4) H(5) H(6) H(7) H(8) H(9)
H10(1) H10(2) H10(3) H10(4) H10(5) H10(6) H10(7)
#define A(n) h##n,
#define A10(t) A(t##0) A(t##1) A(t##2) A(t##3) A(t##4) A(t##5) A(t##6) A(t##7) A(t##8) A(t##9)
static void (*const handlers[N])(int) = {A(0) A(1) A(2) A(3) A(4) A(5) A(6) A(7) A(8) A(9)
                                          A10(1) A10(2) A10(3) A10(4) A10(5) A10(6) A10(7)};

/* Whether the kernel holds the program's own handler (the raw system call: the one view the
 * preload does not translate): always without the preload, past its pool with it. */
static int kernel_holds(void (*h)(int)) {
    struct { void *handler; unsigned long flags; void *restorer; unsigned long mask; } k;
    return syscall(SYS_rt_sigaction, SIGUSR1, NULL, &k, 8) == 0 && k.handler == (void *)h;
}

int main(void) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int installed = 0, good_runs = 0, good_reads = 0, own = 0;
    for (int pass = 0; pass < 3; pass++) {
        for (int i = 0; i < N; i++) {
            const int k = pass == 0 ? i : N - 1 - i;
            ran = 0;
            if (pass == 0) {
                struct sigaction sa;
                memset(&sa, 0, sizeof sa);
                sa.sa_handler = handlers[k];
                if (sigaction(SIGUSR1, &sa, NULL) != 0) return 2;
            } else if (signal(SIGUSR1, handlers[k]) == SIG_ERR) {
                return 3;
            }
            installed++;
            raise(SIGUSR1);
            good_runs += ran == k + 1;
            struct sigaction now;
            sigaction(SIGUSR1, NULL, &now);
            good_reads += now.sa_handler == handlers[k];
            own += kernel_holds(handlers[k]);
        }
    }
    printf("installed %d ran %d read %d kernel-holds-own %d\n", installed, good_runs, good_reads, own);
    return 0;
}
