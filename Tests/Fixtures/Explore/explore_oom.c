/* explore_oom.c — what a program does when malloc fails (ExploreBugsTests: fail-fast).
 *
 * `abort`: an allocation wrapper that says "out of memory" and calls abort() — fail-fast by
 * design, not a bug. `exit`: the same wrapper says "memory exhausted" and exits 1.
 * `segv`: the result is used unchecked — a SIGSEGV after a failed allocation, a bug.
 * `assert`: assert() on the result — an assertion failure, a bug, though it aborts too.
 * Each mode allocates from three places, so several fault points reach the same end. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *mode = "abort";

__attribute__((noinline)) static void *xmalloc(size_t n) {
    void *p = malloc(n);
    if (p || strcmp(mode, "segv") == 0) return p;
    if (strcmp(mode, "assert") == 0) {
        assert(p != NULL);
    } else if (strcmp(mode, "exit") == 0) {
        fprintf(stderr, "explore_oom: memory exhausted\n");
        exit(1);
    }
    fprintf(stderr, "explore_oom: out of memory (%zu bytes)\n", n);
    abort();
}

__attribute__((noinline)) static void fill(char *p, size_t n) { memset(p, 'a', n); p[n - 1] = 0; }

int main(int argc, char **argv) {
    if (argc > 1) mode = argv[1];
    char *a = xmalloc(16), *b = xmalloc(32), *c = xmalloc(64);
    fill(a, 16);
    fill(b, 32);
    fill(c, 64);
    printf("%zu\n", strlen(a) + strlen(b) + strlen(c));
    free(a);
    free(b);
    free(c);
    return 0;
}
