/* Benchmarks/percall.c — the workload of Benchmarks/run.sh: N calls of one function.
 * Usage: percall FUNCTION N [THREADS] (THREADS threads share the N calls). The per-call cost is measured as the difference between two
 * runs with different N (start-up and exit cancel out), under callgrind for instruction
 * counts or with clock_gettime for ns. Prints the ns per call of this run on stdout. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static const char *fn;
static long per_thread;
static int devnull;

static void *work(void *arg) {
    (void)arg;
    volatile long sink = 0;
    long n = per_thread;
    if (strcmp(fn, "getppid") == 0) {
        for (long i = 0; i < n; i++) sink += getppid();
    } else if (strcmp(fn, "write") == 0) {
        for (long i = 0; i < n; i++) sink += write(devnull, "x", 1);
    } else if (strcmp(fn, "open") == 0) {
        for (long i = 0; i < n; i++) { int fd = open("/dev/null", O_RDONLY); sink += fd; close(fd); }
    } else if (strcmp(fn, "malloc") == 0) {
        for (long i = 0; i < n; i++) { void *p = malloc(32); sink += (long)(p != 0); free(p); }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: percall getppid|write|open|malloc N [THREADS]\n"); return 2; }
    fn = argv[1];
    long n = atol(argv[2]);
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    if (threads < 1 || threads > 64) threads = 1;
    if (strcmp(fn, "getppid") && strcmp(fn, "write") && strcmp(fn, "open") && strcmp(fn, "malloc")) {
        fprintf(stderr, "unknown function %s\n", fn);
        return 2;
    }
    devnull = open("/dev/null", O_WRONLY);
    per_thread = n / threads;
    double t0 = now_ns();
    if (threads == 1) {
        work(NULL);
    } else {
        pthread_t t[64];
        for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, work, NULL);
        for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    }
    double t1 = now_ns();
    printf("%.1f\n", n ? (t1 - t0) / n : 0.0);
    return 0;
}
