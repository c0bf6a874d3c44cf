/* Area: host safety / processes.
 * Purpose: THREADS threads each start PER children at once, by fork, vfork and posix_spawn in
 * turn, while the other threads keep calling armed functions. A fork or vfork child calls
 * getppid() 10 times and then _exits with how often it saw 42, or execs this program as
 * "child", which does the same; a posix_spawn child is always that exec'd program. A test's
 * rule (getppid returns 42 on every 2nd call, counted per process) then gives exactly 5 to
 * every fork, exec and spawn child (each starts its counts at zero); a vfork child shares its
 * parent's memory, counters included, so any count from 0 to 10 is right for it.
 * Usage: child_storm THREADS PER. Output: "fork N:S vfork N:S exec N:S spawn N:S bad B":
 * how many children of each kind and the sum of their counts; bad counts children that died
 * or could not be started. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { FORK, VFORK, EXEC, SPAWN, KINDS };
static const char *const kind_names[KINDS] = {"fork", "vfork", "exec", "spawn"};
static int per_thread;
static char *self;

typedef struct tally { long n[KINDS], sum[KINDS], bad; } tally;

static int count42(void) {
    int n = 0;
    for (int i = 0; i < 10; i++) n += getppid() == 42;
    return n;
}

/* vfork in a function of its own: the child never returns from it, and the caller's
 * variables cannot be clobbered by the child's use of the shared stack. */
static pid_t vfork_child(void) {
    pid_t pid = vfork();
    if (pid == 0) _exit(count42()); /* only async-signal-safe calls, then _exit */
    return pid;
}

/* The exit status of a child that must exit normally with at most 10. */
static void reap(pid_t pid, int kind, tally *t) {
    int status = 0;
    if (pid < 0) { t->bad++; return; }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) { t->bad++; return; }
    if (!WIFEXITED(status) || WEXITSTATUS(status) > 10) { t->bad++; return; }
    t->n[kind]++;
    t->sum[kind] += WEXITSTATUS(status);
}

static void *worker(void *arg) {
    tally *t = arg;
    char *child_argv[] = {self, "child", NULL};
    for (int i = 0; i < per_thread; i++) {
        pid_t pid;
        switch (i % 4) {
        case 0: /* fork, then _exit */
            pid = fork();
            if (pid == 0) _exit(count42());
            reap(pid, FORK, t);
            break;
        case 1:
            reap(vfork_child(), VFORK, t);
            break;
        case 2: /* fork, calls, then exec */
            pid = fork();
            if (pid == 0) {
                (void)count42();
                execve(self, child_argv, environ);
                _exit(127);
            }
            reap(pid, EXEC, t);
            break;
        default:
            if (posix_spawn(&pid, self, NULL, NULL, child_argv, environ) != 0) pid = -1;
            reap(pid, SPAWN, t);
            break;
        }
        (void)count42(); /* the parent keeps calling between children */
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "child") == 0) return count42();
    if (argc < 3) return 2;
    int threads = atoi(argv[1]);
    per_thread = atoi(argv[2]);
    if (threads < 1 || threads > 64) return 2;
    self = realpath("/proc/self/exe", NULL);
    if (!self) return 3;
    (void)getppid(); /* the first armed call builds the forwarding stub, before any vfork */
    pthread_t th[64];
    tally t[64];
    memset(t, 0, sizeof t);
    for (int i = 0; i < threads; i++) pthread_create(&th[i], NULL, worker, &t[i]);
    tally all;
    memset(&all, 0, sizeof all);
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        for (int k = 0; k < KINDS; k++) { all.n[k] += t[i].n[k]; all.sum[k] += t[i].sum[k]; }
        all.bad += t[i].bad;
    }
    for (int k = 0; k < KINDS; k++) printf("%s %ld:%ld ", kind_names[k], all.n[k], all.sum[k]);
    printf("bad %ld\n", all.bad);
    return all.bad ? 1 : 0;
}
