/* decide_driver — makes a scripted sequence of catalog calls on one thread and prints each
 * call's result, for the differential test of the preload's decision
 * (DecisionDifferentialTests.swift).
 *
 * argv[1] is the script, tokens separated by spaces: `wN` calls write(/dev/null, buf, N)
 * (N from 0 to 64, so argument matchers on the count can be exercised), `p` calls getppid().
 * argv[2], optional, is a number of threads (default 1) that each make the whole script,
 * started together. Output: a first line `ppid P` with the real parent pid (read with the raw
 * system call, which no rule advises), then one line per call with its result, thread after
 * thread. Results are kept in memory and printed at the end, so that the program's own output
 * never interleaves with the calls. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_CALLS 4096
#define MAX_THREADS 16

enum { CALL_WRITE, CALL_GETPPID };
static struct { int kind, count; } calls[MAX_CALLS];
static size_t ncalls;
static long results[MAX_THREADS][MAX_CALLS];
static int fd;
static char buf[64];
static pthread_barrier_t start;

static void *run_script(void *arg) {
    long *out = arg;
    pthread_barrier_wait(&start);
    for (size_t i = 0; i < ncalls; i++)
        out[i] = calls[i].kind == CALL_WRITE ? (long)write(fd, buf, (size_t)calls[i].count) : (long)getppid();
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: decide_driver 'w3 p w0 ...' [threads]\n");
        return 2;
    }
    const long threads = argc == 3 ? strtol(argv[2], NULL, 10) : 1;
    if (threads < 1 || threads > MAX_THREADS) {
        fprintf(stderr, "decide_driver: %s threads: give 1 to %d\n", argv[2], MAX_THREADS);
        return 2;
    }
    memset(buf, 'x', sizeof buf);
    fd = open("/dev/null", O_WRONLY);
    if (fd < 0) {
        perror("decide_driver: /dev/null");
        return 2;
    }
    for (char *tok = strtok(argv[1], " "); tok; tok = strtok(NULL, " ")) {
        if (ncalls == MAX_CALLS) {
            fprintf(stderr, "decide_driver: more than %d calls\n", MAX_CALLS);
            return 2;
        }
        if (tok[0] == 'w') {
            const long count = strtol(tok + 1, NULL, 10);
            if (count < 0 || count > (long)sizeof buf) {
                fprintf(stderr, "decide_driver: %s: the count must be 0 to %zu\n", tok, sizeof buf);
                return 2;
            }
            calls[ncalls].kind = CALL_WRITE;
            calls[ncalls++].count = (int)count;
        } else if (tok[0] == 'p' && tok[1] == 0) {
            calls[ncalls++].kind = CALL_GETPPID;
        } else {
            fprintf(stderr, "decide_driver: unknown call \"%s\" (write wN or p)\n", tok);
            return 2;
        }
    }
    /* One thread makes the calls itself: the single-thread cases stay on the main thread. */
    pthread_t tids[MAX_THREADS];
    pthread_barrier_init(&start, NULL, (unsigned)threads);
    for (long t = 1; t < threads; t++) {
        if (pthread_create(&tids[t], NULL, run_script, results[t]) != 0) {
            fprintf(stderr, "decide_driver: cannot start thread %ld\n", t);
            return 2;
        }
    }
    run_script(results[0]);
    for (long t = 1; t < threads; t++) pthread_join(tids[t], NULL);
    printf("ppid %ld\n", (long)syscall(SYS_getppid));
    for (long t = 0; t < threads; t++)
        for (size_t i = 0; i < ncalls; i++) printf("%ld\n", results[t][i]);
    return 0;
}
