/* Area: explore's call survey (ExploreImagesTests).
 * Purpose: calls getppid N times from one place, then once from a second, then N times from a
 * third: more calls than a small event ring holds, whose earliest sites (the first and the
 * second place) a survey must still learn.
 * Usage: sites_in_order N. Output: "calls 2N+1". */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) static long from_a(long n) { long s = 0; for (long i = 0; i < n; i++) s += getppid(); return s; }
__attribute__((noinline)) static long from_b(void) { return getppid(); }
__attribute__((noinline)) static long from_c(long n) { long s = 0; for (long i = 0; i < n; i++) s += getppid(); return s; }

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const long n = atol(argv[1]);
    volatile long sink = from_a(n) + from_b() + from_c(n);
    (void)sink;
    printf("calls %ld\n", 2 * n + 1);
    return 0;
}
