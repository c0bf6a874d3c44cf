/* Area: preload / memory.
 * Purpose: malloc N times and report which calls returned NULL (and with which errno), so a
 * test can fail exactly the k-th allocation. Usage: malloc_nth COUNT.
 * Output: one line per NULL result: "malloc K: NULL errno=12"; then "done". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int count = argc > 1 ? atoi(argv[1]) : 10;
    static void *keep[100000];
    if (count > 100000) count = 100000;
    for (int i = 1; i <= count; i++) {
        errno = 0;
        void *p = malloc(32);
        if (!p) printf("malloc %d: NULL errno=%d\n", i, errno);
        keep[i - 1] = p;
    }
    for (int i = 0; i < count; i++) free(keep[i]);
    printf("done\n");
    return 0;
}
