/* Area: host safety / threads.
 * Purpose: THREADS threads alive at once (small stacks), each calling getppid() CALLS times
 * and writing one byte to /dev/null CALLS/10 times once all have started. With a test's
 * thread-scoped rule (getppid returns 42 on every 10th call of each thread), every thread
 * sees exactly CALLS/10 answers of 42, however the threads interleave.
 * Usage: many_threads THREADS CALLS. Output: "threads T started S min42 A max42 B total42 C
 * writes W". */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int calls, devnull;
static pthread_barrier_t all_started;

typedef struct result { int answers42, writes; } result;

static void *worker(void *arg) {
    result *r = arg;
    pthread_barrier_wait(&all_started);
    for (int i = 0; i < calls; i++) {
        if (getppid() == 42) r->answers42++;
        if (i % 10 == 0 && write(devnull, "t", 1) == 1) r->writes++;
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    int threads = atoi(argv[1]);
    calls = atoi(argv[2]);
    if (threads < 1 || threads > 4096) return 2;
    devnull = open("/dev/null", O_WRONLY);
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    result *res = calloc((size_t)threads, sizeof *res);
    if (!th || !res || devnull < 0) return 3;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_barrier_init(&all_started, NULL, (unsigned)threads);
    int started = 0;
    for (int i = 0; i < threads; i++)
        if (pthread_create(&th[i], &attr, worker, &res[i]) == 0) started++;
        else break;
    if (started != threads) {
        /* The barrier waits for all: without them the started ones would wait forever. */
        printf("threads %d started %d\n", threads, started);
        fflush(stdout);
        _exit(4);
    }
    int min42 = calls, max42 = 0;
    long total42 = 0, writes = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        if (res[i].answers42 < min42) min42 = res[i].answers42;
        if (res[i].answers42 > max42) max42 = res[i].answers42;
        total42 += res[i].answers42;
        writes += res[i].writes;
    }
    printf("threads %d started %d min42 %d max42 %d total42 %ld writes %ld\n", threads, started, min42, max42,
           total42, writes);
    free(th); /* LeakSanitizer runs this fixture too (scripts/sanitize.sh) */
    free(res);
    return 0;
}
