/* Area: preload / re-entry from signal handlers.
 * Purpose: a SIGALRM handler at a high rate writes to the same descriptor the main loop
 * writes to, so that many handler writes interrupt a main write while its original runs.
 * Both are calls of their own: a rule on write must count and advise them all.
 * Usage: handler_writes N [H] (N main writes; the handler stops the timer after its H-th run,
 * so the work is N + H writes whatever the machine's speed: under an emulator a 20 µs timer
 * otherwise delivers signals faster than the loop advances, and the handler's writes are
 * all the run does). /dev/null is descriptor 100.
 * Output: "main M handler H failed F" (writes made and writes that failed, by both). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t handler_calls, handler_failed;
static long handler_limit; /* 0: no limit */

static void on_alarm(int sig) {
    (void)sig;
    handler_calls++;
    if (write(100, "h", 1) != 1) handler_failed++;
    if (handler_limit && handler_calls >= handler_limit) {
        struct itimerval off = {{0, 0}, {0, 0}};
        setitimer(ITIMER_REAL, &off, NULL);
    }
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    handler_limit = argc > 2 ? atol(argv[2]) : 0;
    int fd = open("/dev/null", O_WRONLY);
    if (fd < 0 || dup2(fd, 100) != 100) return 2;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    /* The first write before the timer starts: the preload builds write's forwarding stub on
     * it, and calls that arrive while the engine itself runs are not advised. */
    long failed = write(100, "m", 1) != 1;
    struct itimerval every = {{0, 20}, {0, 20}};
    setitimer(ITIMER_REAL, &every, NULL);
    for (long i = 1; i < n; i++)
        if (write(100, "m", 1) != 1) failed++;
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    sigprocmask(SIG_BLOCK, &set, NULL);
    printf("main %ld handler %ld failed %ld\n", n, (long)handler_calls, failed + (long)handler_failed);
    return 0;
}
