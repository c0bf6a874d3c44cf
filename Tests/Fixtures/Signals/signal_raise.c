/* Area: rule language / signal and delay actions.
 * Purpose: installs a SIGUSR1 handler, calls close(-1) once and reports whether the handler
 * ran before close returned, and how long the call took in ms (for a `delay` lower bound).
 * Output: "handler ran: yes|no", "close: -1 errno=9", "elapsed-ms: N". */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t ran;
static void on_usr1(int sig) { (void)sig; ran = 1; }

int main(void) {
    signal(SIGUSR1, on_usr1);
    /* The test runner may start us with signals blocked: unblock the one we expect. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int r = close(-1);
    int e = errno;
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("handler ran: %s\n", ran ? "yes" : "no");
    printf("close: %d errno=%d\n", r, e);
    printf("elapsed-ms: %ld\n", (long)((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000));
    return 0;
}
