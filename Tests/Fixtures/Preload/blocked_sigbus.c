/* Area: preload / host safety.
 * Purpose: a host that blocks every signal in every thread (as servers do in their workers),
 * so a SIGBUS never reaches a handler. Its threads call getppid (a test arms it) and getpid
 * in a loop; the test truncates the table between the two phases.
 * Usage: blocked_sigbus THREADS CALLS. At a first line on stdin every thread makes CALLS
 * calls, then it prints "ready"; at a second line every thread makes CALLS more, then it
 * prints "done". */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int calls;
static pthread_barrier_t phase;

static void *worker(void *arg) {
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    for (int round = 0; round < 2; round++) {
        pthread_barrier_wait(&phase); /* the main thread starts the phase */
        for (int i = 0; i < calls; i++) { (void)getppid(); (void)getpid(); }
        pthread_barrier_wait(&phase); /* and reports it */
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    const int threads = atoi(argv[1]);
    calls = atoi(argv[2]);
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_barrier_init(&phase, NULL, (unsigned)threads + 1u);
    pthread_t t[64];
    for (int i = 0; i < threads && i < 64; i++) pthread_create(&t[i], NULL, worker, NULL);
    const char *said[2] = {"ready", "done"};
    for (int round = 0; round < 2; round++) {
        char line[16];
        if (!fgets(line, sizeof line, stdin)) return 3;
        pthread_barrier_wait(&phase);
        pthread_barrier_wait(&phase);
        printf("%s\n", said[round]);
        fflush(stdout);
    }
    for (int i = 0; i < threads && i < 64; i++) pthread_join(t[i], NULL);
    return 0;
}
