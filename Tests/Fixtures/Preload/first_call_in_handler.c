/* Area: host safety / signal handlers.
 * Purpose: the first armed call of a function made inside a signal handler that interrupted
 * malloc. The preload builds a function's forwarding stub on its first armed call (libffi:
 * dlopen, closure allocation); that work must not break a handler's host. Each of CHILDREN
 * forked children starts "cold" (the parent never calls getppid), runs a SIGALRM timer at
 * 1 kHz whose handler calls getppid(), and meanwhile mallocs and frees blocks too large for
 * the per-thread cache (so malloc holds its arena lock) for MS milliseconds.
 * Usage: first_call_in_handler CHILDREN MS [warm]. "warm": each child calls getppid() once
 * before its timer starts, so the stub is built outside the handler. Output: "children N
 * crashed C handled H": C children died of a signal; H handler runs in all. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t handled;
static void on_alarm(int sig) {
    (void)sig;
    (void)getppid();
    handled++;
}

static long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int child(long ms, int warm) {
    if (warm) (void)getppid();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
    long end = now_ms() + ms;
    while (now_ms() < end) {
        void *p[8];
        for (int i = 0; i < 8; i++) p[i] = malloc(4096 + (size_t)i * 512);
        for (int i = 0; i < 8; i++) free(p[i]);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    return handled > 255 ? 255 : (int)handled;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    int children = atoi(argv[1]), warm = argc > 3 && strcmp(argv[3], "warm") == 0;
    long ms = atol(argv[2]);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    int crashed = 0;
    long total = 0;
    for (int c = 0; c < children; c++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) _exit(child(ms, warm));
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid) return 3;
        if (WIFSIGNALED(status)) crashed++;
        else total += WEXITSTATUS(status);
    }
    printf("children %d crashed %d handled %ld\n", children, crashed, total);
    return 0;
}
