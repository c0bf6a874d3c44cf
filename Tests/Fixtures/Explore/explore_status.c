/* explore_status.c — a program whose normal exit status is 1 (ExploreVerdictTests): like
 * diff, it compares two files line by line and exits 0 when they are the same, 1 when they
 * differ (saying where), 2 on trouble — a file it cannot open, memory it cannot get — saying
 * which. Every error is handled: explore finds nothing, and must not refuse it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int trouble(const char *what) {
    fprintf(stderr, "explore_status: %s: %s\n", what, strerror(errno));
    return 2;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    FILE *a = fopen(argv[1], "r");
    if (!a) return trouble(argv[1]);
    FILE *b = fopen(argv[2], "r");
    if (!b) return trouble(argv[2]);
    char *la = malloc(256), *lb = malloc(256);
    if (!la || !lb) return trouble("malloc");
    int differ = 0;
    for (int line = 1;; line++) {
        char *x = fgets(la, 256, a), *y = fgets(lb, 256, b);
        if (!x && !y) break;
        if (!x || !y || strcmp(la, lb) != 0) {
            printf("line %d differs\n", line);
            differ = 1;
            if (!x || !y) break;
        }
    }
    if (ferror(a) || ferror(b)) return trouble("read");
    return differ;
}
