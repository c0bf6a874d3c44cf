/* Area: event ring under concurrency.
 * Purpose: THREADS threads each call write(-1, TAG, t + 1) CALLS times at once, so that with a
 * small ring writers one lap apart land on the same record all the time. Every argument of a
 * thread's calls is derived from its number t (fd -1, buffer 0x10000 * (t + 1), length t + 1),
 * so a record that mixes two writers shows as arguments that disagree with each other or
 * with the thread id. The write fails with EBADF and prints nothing.
 * Usage: event_laps THREADS CALLS. Output: "tid TID t T" per thread, then "done". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int calls;
static pthread_barrier_t start;
static long tids[64];

static void *worker(void *arg) {
    const long t = (long)(intptr_t)arg;
    tids[t] = gettid();
    pthread_barrier_wait(&start);
    for (int i = 0; i < calls; i++) (void)write(-1, (const void *)(uintptr_t)(0x10000 * (t + 1)), (size_t)(t + 1));
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    int threads = atoi(argv[1]);
    calls = atoi(argv[2]);
    if (threads < 1 || threads > 64) return 2;
    pthread_t th[64];
    pthread_barrier_init(&start, NULL, (unsigned)threads);
    for (long t = 0; t < threads; t++) pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < threads; t++) printf("tid %ld t %d\n", tids[t], t);
    printf("done\n");
    return 0;
}
