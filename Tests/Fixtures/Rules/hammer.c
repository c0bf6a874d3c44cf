/* Area: rule language / claims under concurrency.
 * Purpose: PROCS processes × THREADS threads each call getppid() CALLS times at once; a rule
 * makes getppid return 42 when it fires. Every process prints how often it saw 42, so a test
 * can check that autoRemove (or scope: table with nth) fired exactly once in total.
 * Usage: hammer PROCS THREADS CALLS. Output: one line per process, "fired N". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int calls;
static pthread_barrier_t start;

static void *worker(void *arg) {
    long *fired = arg;
    pthread_barrier_wait(&start);
    for (int i = 0; i < calls; i++)
        if (getppid() == 42) (*fired)++;
    return NULL;
}

static void run_process(int threads) {
    pthread_t t[64];
    long fired[64] = {0};
    pthread_barrier_init(&start, NULL, (unsigned)threads);
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, &fired[i]);
    long total = 0;
    for (int i = 0; i < threads; i++) { pthread_join(t[i], NULL); total += fired[i]; }
    printf("fired %ld\n", total);
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    int procs = atoi(argv[1]), threads = atoi(argv[2]);
    calls = atoi(argv[3]);
    if (threads > 64) threads = 64;
    for (int p = 0; p < procs; p++) {
        pid_t pid = fork();
        if (pid == 0) { run_process(threads); _exit(0); }
    }
    int status, failed = 0;
    while (wait(&status) > 0) failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    return failed;
}
