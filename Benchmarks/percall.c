/* Benchmarks/percall.c — the workload of Benchmarks/run.sh: N calls of one function.
 * Usage: percall FUNCTION N. The per-call cost is measured as the difference between two
 * runs with different N (start-up and exit cancel out), under callgrind for instruction
 * counts or with clock_gettime for ns. Prints the ns per call of this run on stdout. */
#include <fcntl.h>
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

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: percall getppid|write|open|malloc N\n"); return 2; }
    const char *fn = argv[1];
    long n = atol(argv[2]);
    int devnull = open("/dev/null", O_WRONLY);
    volatile long sink = 0;
    double t0 = now_ns();
    if (strcmp(fn, "getppid") == 0) {
        for (long i = 0; i < n; i++) sink += getppid();
    } else if (strcmp(fn, "write") == 0) {
        for (long i = 0; i < n; i++) sink += write(devnull, "x", 1);
    } else if (strcmp(fn, "open") == 0) {
        for (long i = 0; i < n; i++) { int fd = open("/dev/null", O_RDONLY); sink += fd; close(fd); }
    } else if (strcmp(fn, "malloc") == 0) {
        for (long i = 0; i < n; i++) { void *p = malloc(32); sink += (long)(p != 0); free(p); }
    } else {
        fprintf(stderr, "unknown function %s\n", fn);
        return 2;
    }
    double t1 = now_ns();
    printf("%.1f\n", n ? (t1 - t0) / n : 0.0);
    (void)sink;
    return 0;
}
