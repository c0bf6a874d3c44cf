/* Benchmarks/add_latency.c — calls getppid() in a tight loop until a rule makes it return 42,
 * then prints the CLOCK_REALTIME (ns) of that first advised call. Gives up after 5 s. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        if (getppid() == 42) break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 5) { printf("0\n"); return 1; }
    }
    clock_gettime(CLOCK_REALTIME, &now);
    printf("%lld\n", (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
    return 0;
}
