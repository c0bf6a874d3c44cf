/* Area: sanitizers / host safety.
 * Purpose: a busy host for the preload: THREADS threads call catalog functions (getppid,
 * write to /dev/null, open + close of /dev/null, read of /dev/zero) in a loop for MS
 * milliseconds, while rules on them are added and removed from outside. With "fork", every
 * thread also forks a child now and then that makes the same calls and _exits, so advice is
 * exercised across fork from a multithreaded process. Any return value a rule can force is
 * accepted; the program checks only what no rule may change: a call that was not failed did
 * its real work.
 * Usage: armed_threads THREADS MS [fork]. Output: "threads T calls N getppid42 K children C
 * bad B"; exit status 1 when a call that succeeded returned something impossible or a child
 * did not exit 0. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long deadline_ns;
static int with_fork;

static long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

typedef struct counts { long calls, answers42, children, bad; } counts;

/* One round of calls. A forced failure (-1) is fine; a success must be the real result. */
static void round_of_calls(counts *c) {
    char buf[16];
    pid_t parent = getppid();
    if (parent == 42) c->answers42++;
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) {
        ssize_t n = write(fd, "0123456789", 10);
        if (n < -1 || n > 10) c->bad++; /* -1 or a short count are what rules force */
        if (close(fd) != 0 && errno != EIO && errno != EBADF) c->bad++;
    }
    int z = open("/dev/zero", O_RDONLY);
    if (z >= 0) {
        memset(buf, 1, sizeof buf);
        ssize_t n = read(z, buf, sizeof buf);
        if (n > 0 && buf[0] != 0) c->bad++; /* a real read of /dev/zero reads zeros */
        close(z);
    }
    c->calls += 7;
}

static void *worker(void *arg) {
    counts *c = arg;
    long i = 0;
    while (now_ns() < deadline_ns) {
        round_of_calls(c);
        if (with_fork && ++i % 200 == 0) {
            pid_t pid = fork();
            if (pid == 0) {
                counts child = {0};
                for (int k = 0; k < 20; k++) round_of_calls(&child);
                _exit(child.bad ? 1 : 0);
            }
            if (pid > 0) {
                int status = 0;
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
                c->children++;
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) c->bad++;
            }
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    int threads = atoi(argv[1]);
    if (threads < 1 || threads > 256) return 2;
    deadline_ns = now_ns() + atol(argv[2]) * 1000000L;
    with_fork = argc > 3 && strcmp(argv[3], "fork") == 0;
    pthread_t t[256];
    counts c[256];
    memset(c, 0, sizeof c);
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, &c[i]);
    counts total = {0};
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        total.calls += c[i].calls;
        total.answers42 += c[i].answers42;
        total.children += c[i].children;
        total.bad += c[i].bad;
    }
    printf("threads %d calls %ld getppid42 %ld children %ld bad %ld\n", threads, total.calls, total.answers42,
           total.children, total.bad);
    return total.bad ? 1 : 0;
}
