/* Area: host safety / signal handlers.
 * Purpose: a SIGALRM handler that calls armed functions at a high rate (setitimer, default
 * every 100 us: 10 kHz) while the main loop calls the same functions, for MS milliseconds.
 * The preload's engine is async-signal-safe: no deadlock, no crash, and every firing of a rule
 * reaches exactly one caller, in the handler or in the loop.
 * Usage: signal_storm MS [INTERVAL_US]. Output: "calls M main42 A handlercalls H handler42 B
 * writebad W" (M and A: the main loop's) — 42 is what a test's rule makes getppid return; writebad counts
 * writes of one byte to /dev/null that did not return 1 (no rule fails them). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int devnull = -1;
static volatile sig_atomic_t handler_calls, handler42, handler_writebad;

static void on_alarm(int sig) {
    (void)sig;
    int saved = errno;
    handler_calls++;
    if (getppid() == 42) handler42++;
    if (write(devnull, "h", 1) != 1) handler_writebad++;
    errno = saved;
}

static long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    long ms = atol(argv[1]), interval = argc > 2 ? atol(argv[2]) : 100;
    devnull = open("/dev/null", O_WRONLY);
    if (devnull < 0) return 3;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    sigprocmask(SIG_UNBLOCK, &set, NULL); /* the test runner may start us with it blocked */
    struct itimerval it = {{0, interval}, {0, interval}};
    setitimer(ITIMER_REAL, &it, NULL);
    long deadline = now_ns() + ms * 1000000L, calls = 0, main42 = 0, writebad = 0;
    while (now_ns() < deadline) {
        calls++;
        if (getppid() == 42) main42++;
        if (write(devnull, "m", 1) != 1) writebad++;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    sigprocmask(SIG_BLOCK, &set, NULL); /* no handler runs while the totals are read */
    printf("calls %ld main42 %ld handlercalls %ld handler42 %ld writebad %ld\n", calls, main42,
           (long)handler_calls, (long)handler42, writebad + handler_writebad);
    return 0;
}
