/* explore_pipe.c — both ends of a pipeline for explore's --process with --strategy context
 * (ExploreImagesTests): `produce N` writes N lines, `consume` counts the lines it reads; each
 * allocates through one wrapper called from main, so a calling context of three frames reaches
 * main and, below it, glibc's start-up (which a context point must not name). Every failure is
 * handled: exit 1 with a message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void *wrapper(size_t n) { return malloc(n); }

int main(int argc, char **argv) {
    if (argc > 2 && strcmp(argv[1], "produce") == 0) {
        for (int i = 0; i < atoi(argv[2]); i++) {
            char *p = wrapper(32);
            if (!p) { fprintf(stderr, "explore_pipe: no memory\n"); return 1; }
            snprintf(p, 32, "line %d\n", i);
            fputs(p, stdout);
            free(p);
        }
        return 0;
    }
    char *line = wrapper(64);
    if (!line) { fprintf(stderr, "explore_pipe: no memory\n"); return 1; }
    long count = 0;
    while (fgets(line, 64, stdin)) count++;
    printf("%ld lines\n", count);
    free(line);
    return 0;
}
