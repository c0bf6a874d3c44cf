/* Area: the stubs' gate / exact counts.
 * Purpose: PROCS processes of THREADS threads each call getppid CALLS times, all released at
 * once (a pipe closed by the parent, then a barrier per process), so that threads of several
 * processes race through the wrapper stub's gate at the same call numbers. Counts the calls
 * that returned 42 (what a test's rule makes getppid return when it fires).
 * Usage: gate_race PROCS THREADS CALLS. Output: "fired F calls C" (sums over every process). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static long calls;
static pthread_barrier_t start;

static void *worker(void *arg) {
    long *fired = arg;
    pthread_barrier_wait(&start);
    for (long i = 0; i < calls; i++)
        if (getppid() == 42) (*fired)++;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    const int procs = atoi(argv[1]), threads = atoi(argv[2]);
    calls = atol(argv[3]);
    if (procs < 1 || procs > 16 || threads < 1 || threads > 64) return 2;
    int go[2], out[2];
    if (pipe(go) || pipe(out)) return 3;
    for (int p = 0; p < procs; p++) {
        if (fork() == 0) {
            close(go[1]);
            close(out[0]);
            char c;
            (void)read(go[0], &c, 1); /* returns 0 when the parent closes the pipe: all start */
            pthread_barrier_init(&start, NULL, (unsigned)threads);
            pthread_t t[64];
            long fired[64] = {0};
            for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, &fired[i]);
            long sum = 0;
            for (int i = 0; i < threads; i++) {
                pthread_join(t[i], NULL);
                sum += fired[i];
            }
            (void)!write(out[1], &sum, sizeof sum);
            _exit(0);
        }
    }
    close(go[0]);
    close(out[1]);
    close(go[1]); /* release every process at once */
    long total = 0, one;
    while (read(out[0], &one, sizeof one) == (long)sizeof one) total += one;
    while (wait(NULL) > 0) {}
    printf("fired %ld calls %ld\n", total, (long)procs * threads * calls);
    return 0;
}
