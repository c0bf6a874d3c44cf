/* Area: host safety / signal handlers.
 * Purpose: concurrent sigaction on one signal (issue 30, item 8). Each of T threads installs
 * its own handler on SIGUSR1 with its own mask (SIGRTMIN+k) and flags (SA_RESTART for even
 * k), over and over, and checks every old action it gets back: the handler must come with
 * the mask and flags it was installed with. The preload's wrapper once paired one call's
 * handler with another's mask and flags (0-884 mismatches per run).
 * Usage: sigaction_race THREADS ROUNDS. Output: "old N mismatched M unknown U" (M and U 0). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 8
static void h0(int s) { (void)s; }
static void h1(int s) { (void)s; }
static void h2(int s) { (void)s; }
static void h3(int s) { (void)s; }
static void h4(int s) { (void)s; }
static void h5(int s) { (void)s; }
static void h6(int s) { (void)s; }
static void h7(int s) { (void)s; }
static void (*const handlers[MAX_THREADS])(int) = {h0, h1, h2, h3, h4, h5, h6, h7};

static int threads, rounds;
static long olds[MAX_THREADS], mismatched[MAX_THREADS], unknown[MAX_THREADS];

static void *hammer(void *arg) {
    const int k = (int)(long)arg;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handlers[k];
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGRTMIN + k);
    sa.sa_flags = k % 2 == 0 ? SA_RESTART : 0;
    for (int i = 0; i < rounds; i++) {
        if (sigaction(SIGUSR1, &sa, &old) != 0) abort();
        if (old.sa_handler == SIG_DFL) continue;
        olds[k]++;
        int j = -1;
        for (int m = 0; m < threads; m++)
            if (old.sa_handler == handlers[m]) j = m;
        if (j < 0) {
            unknown[k]++;
            continue;
        }
        int mask_ok = 1;
        for (int m = 0; m < MAX_THREADS; m++)
            if (sigismember(&old.sa_mask, SIGRTMIN + m) != (m == j)) mask_ok = 0;
        if (!mask_ok || !!(old.sa_flags & SA_RESTART) != (j % 2 == 0)) mismatched[k]++;
    }
    return NULL;
}

int main(int argc, char **argv) {
    threads = argc > 1 ? atoi(argv[1]) : 4;
    rounds = argc > 2 ? atoi(argv[2]) : 20000;
    if (threads < 1 || threads > MAX_THREADS) return 2;
    pthread_t t[MAX_THREADS];
    for (int k = 0; k < threads; k++) pthread_create(&t[k], NULL, hammer, (void *)(long)k);
    long o = 0, m = 0, u = 0;
    for (int k = 0; k < threads; k++) {
        pthread_join(t[k], NULL);
        o += olds[k], m += mismatched[k], u += unknown[k];
    }
    printf("old %ld mismatched %ld unknown %ld\n", o, m, u);
    return 0;
}
