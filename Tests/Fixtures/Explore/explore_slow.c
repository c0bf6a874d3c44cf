/* explore_slow.c — runs that are slow, not hung (ExploreVerdictTests: timeouts).
 * `explore_slow S`: sleeps S seconds (a program whose baseline takes that long), then
 * allocates; a failed allocation makes it wait 1.5 s more (a retry back-off), then it reports
 * the error and exits 1: past a 1 s limit, but it ends. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void pause_for(double seconds) {
    struct timespec t = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    while (nanosleep(&t, &t) != 0) {}
}

int main(int argc, char **argv) {
    pause_for(argc > 1 ? atof(argv[1]) : 0);
    char *p = malloc(64);
    if (!p) {
        pause_for(1.5);
        fprintf(stderr, "explore_slow: no memory after waiting\n");
        return 1;
    }
    free(p);
    puts("done");
    return 0;
}
