/* Area: preload / fork while another thread is inside a prototype pass.
 * Purpose: a prototype pass (proto.c) runs under a lock of its own and inside the loader's
 * dl_iterate_phdr, after every dlopen while a prototype rule exists. A fork while another
 * thread is inside a pass copies both locks held into the child, where no thread will ever
 * release them. The child must still apply prototype rules added later, put the originals
 * back when they go, and never hang.
 * One thread keeps LIBRARY (which imports fx_add) loaded and calls dlopen on it again and
 * again (each call starts a pass over every object, and changes nothing in the loader); the
 * main thread forks CHILDREN times, 1-20 ms apart, so that many forks land inside a pass.
 * Then ADD (a shell command) adds a prototype rule on fx_scale; each child calls getppid() (a
 * catalog call: where the preload notices table changes) and reports whether fx_scale and
 * fx_add are advised. Then REMOVE removes both rules; each child calls getppid() again and
 * reports whether both reach their originals. A child whose pass cannot run answers "not
 * applied"; one whose pass hangs does not answer.
 * The rules are expected to make fx_add return -7 and fx_scale return 0.25 (plain: 3 and 3.0).
 * ADD and REMOVE run with neither LD_PRELOAD nor ASPECTS_* in their environment.
 * Usage: proto_fork LIBRARY CHILDREN ADD REMOVE
 * Output: "rounds P children C applied A removed R stuck S parent-removed Y": P the loading
 * thread's rounds while the children were forked; A, R children that saw the rules applied,
 * then removed; S children that did not answer within 10 s of a step (hung; they are killed);
 * Y 1 when this process saw the rules removed too. Exit 0 unless a step failed outright. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
int fx_add(int a, int b);
double fx_scale(double x, double k);

static const char *library;
static volatile int stop;
static unsigned long rounds;

static void *loader(void *arg) {
    (void)arg;
    /* Loaded once and kept: the dlopen calls below load and unload nothing, so the loader
     * never changes its list of objects (glibc leaves the lock guarding that list held in a
     * child forked while another thread changes it, and the child's next dlopen hangs, preload
     * or not). Each of them still starts a prototype pass. */
    void *kept = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!kept) { fprintf(stderr, "loader dlopen: %s\n", dlerror()); _exit(3); }
    int (*user)(int) = (int (*)(int))dlsym(kept, "fx_user");
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        void *h = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
        if (!h) { fprintf(stderr, "loader dlopen: %s\n", dlerror()); _exit(3); }
        if (user) (void)user(1);
        dlclose(h);
        __atomic_add_fetch(&rounds, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

/* Per child: a pipe it reads its go-ahead from (one byte per step). */
static void child(int report, int go) {
    char byte, verdict;
    if (read(go, &byte, 1) != 1) _exit(4);
    (void)getppid();
    verdict = fx_add(1, 2) == -7 && fx_scale(2.0, 1.5) == 0.25 ? 'A' : 'a';
    if (write(report, &verdict, 1) != 1) _exit(4);
    if (read(go, &byte, 1) != 1) _exit(4);
    (void)getppid();
    verdict = fx_add(1, 2) == 3 && fx_scale(2.0, 1.5) == 3.0 ? 'R' : 'r';
    if (write(report, &verdict, 1) != 1) _exit(4);
    _exit(0);
}

static int shell(const char *command) {
    static char *env[1024];
    int n = 0;
    for (char **e = environ; *e && n < 1023; e++)
        if (strncmp(*e, "LD_PRELOAD=", 11) != 0 && strncmp(*e, "ASPECTS_", 8) != 0) env[n++] = *e;
    env[n] = NULL;
    char *argv[] = {"/bin/sh", "-c", (char *)command, NULL};
    pid_t pid;
    int status = 0;
    if (posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, env) != 0) return -1;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Sends every live child its next go-ahead and counts the verdicts equal to `good`; a child
 * still silent 10 s after the go-ahead is hung (a healthy one answers within milliseconds): it
 * is killed and marked dead. */
static int step(int children, const int *go, const int *report, pid_t *pids, char good, int *stuck) {
    int count = 0;
    for (int c = 0; c < children; c++)
        if (pids[c] > 0 && write(go[c], "g", 1) != 1) pids[c] = -pids[c];
    const long deadline = now_ms() + 10000;
    for (int c = 0; c < children; c++) {
        if (pids[c] <= 0) continue;
        struct pollfd p = {.fd = report[c], .events = POLLIN};
        char v = 0;
        long left = deadline - now_ms();
        if (poll(&p, 1, left > 0 ? (int)left : 0) == 1 && read(report[c], &v, 1) == 1) {
            count += v == good;
        } else {
            kill(pids[c], SIGKILL);
            pids[c] = -pids[c];
            (*stuck)++;
        }
    }
    return count;
}

int main(int argc, char **argv) {
    if (argc < 5) return 2;
    library = argv[1];
    int children = atoi(argv[2]);
    if (children < 1 || children > 200) return 2;
    pid_t pids[200];
    int go[200], report[200];
    (void)getppid();

    pthread_t t;
    pthread_create(&t, NULL, loader, NULL);
    while (__atomic_load_n(&rounds, __ATOMIC_RELAXED) < 5) usleep(100);
    srand((unsigned)getpid());
    for (int c = 0; c < children; c++) {
        int g[2], r[2];
        if (pipe(g) != 0 || pipe(r) != 0) return 3;
        /* 1-20 ms apart: over many of the loader's rounds, at unrelated moments */
        struct timespec pause = {0, 1000 + rand() % 20000000};
        nanosleep(&pause, NULL);
        pids[c] = fork();
        if (pids[c] < 0) return 3;
        if (pids[c] == 0) {
            close(g[1]);
            close(r[0]);
            child(r[1], g[0]);
        }
        close(g[0]);
        close(r[1]);
        go[c] = g[1];
        report[c] = r[0];
    }
    unsigned long forked_during = __atomic_load_n(&rounds, __ATOMIC_RELAXED);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);

    int stuck = 0;
    if (shell(argv[3]) != 0) { fprintf(stderr, "ADD failed\n"); return 3; }
    int applied = step(children, go, report, pids, 'A', &stuck);
    if (shell(argv[4]) != 0) { fprintf(stderr, "REMOVE failed\n"); return 3; }
    int removed = step(children, go, report, pids, 'R', &stuck);
    for (int c = 0; c < children; c++) waitpid(pids[c] > 0 ? pids[c] : -pids[c], NULL, 0);
    (void)getppid();
    int parent_removed = fx_add(1, 2) == 3 && fx_scale(2.0, 1.5) == 3.0;
    printf("rounds %lu children %d applied %d removed %d stuck %d parent-removed %d\n", forked_during, children, applied,
           removed, stuck, parent_removed);
    return 0;
}
