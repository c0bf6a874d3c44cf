/* Area: host safety / signal handlers.
 * Purpose: the old timeout idiom: a SIGALRM handler siglongjmps out of a call that blocks
 * (curl's DNS timeout, many daemons), here an armed read of an empty pipe. The jump skips
 * the rest of the preload's frames; advice must go on working on that thread afterwards.
 * A test's rules: read of 1 byte delayed 2 s (before advice: the jump leaves from inside the
 * preload's delay) or not (the jump leaves from inside the original read); a read of 2 bytes
 * returns 7 (after advice); getppid returns 42 on every 2nd call.
 * Usage: longjmp_out. Output: "jumped yes getppid42 N read R" after 10 getppid calls and a
 * 2-byte read of a pipe holding 2 bytes: "getppid42 5 read 7" when advice still works. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static sigjmp_buf timeout_jump;
static void on_alarm(int sig) {
    (void)sig;
    siglongjmp(timeout_jump, 1);
}

int main(void) {
    int fds[2];
    if (pipe(fds) != 0) return 2;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    int jumped = 0;
    if (sigsetjmp(timeout_jump, 1) == 0) {
        struct itimerval once = {{0, 0}, {0, 100000}}; /* 100 ms */
        setitimer(ITIMER_REAL, &once, NULL);
        char c;
        (void)read(fds[0], &c, 1); /* nothing to read: only the alarm ends it */
    } else {
        jumped = 1;
    }
    int answers42 = 0;
    for (int i = 0; i < 10; i++) answers42 += getppid() == 42;
    char buf[2];
    if (write(fds[1], "xy", 2) != 2) return 3;
    int r = (int)read(fds[0], buf, 2);
    printf("jumped %s getppid42 %d read %d\n", jumped ? "yes" : "no", answers42, r);
    return 0;
}
