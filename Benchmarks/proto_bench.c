/* Benchmarks/proto_bench.c — N calls of fx_one(int) or fx_four(int, int, int, int) from
 * libprotobench.so, for per-call costs of prototype rules. Usage: proto_bench one|four N, or
 * proto_bench wait: call getppid() (armed, so table changes are noticed) and fx_one(1) until
 * fx_one returns 42, then print the CLOCK_REALTIME ns of that call (gives up after 5 s). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int fx_one(int a);
int fx_four(int a, int b, int c, int d);

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "wait") == 0) {
        struct timespec start, now;
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
            (void)getppid();
            if (fx_one(1) == 42) break;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec - start.tv_sec > 5) { printf("0\n"); return 1; }
        }
        clock_gettime(CLOCK_REALTIME, &now);
        printf("%lld\n", (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
        return 0;
    }
    if (argc < 3) return 2;
    long n = atol(argv[2]);
    volatile long sink = 0;
    if (strcmp(argv[1], "one") == 0)
        for (long i = 0; i < n; i++) sink += fx_one((int)i);
    else
        for (long i = 0; i < n; i++) sink += fx_four((int)i, 1, 2, 3);
    return (int)(sink & 0);
}
