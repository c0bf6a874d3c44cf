/* explore_causes.c — one bug behind many fault points (ExploreBugsTests).
 *
 * `crash`: three functions allocate through one unchecked wrapper and hand the buffer to one
 * function that writes through it: one NULL dereference (record.c's line in put), reached
 * from three callers of the wrapper — one bug, whatever frames lie above the crash.
 * `quiet`: four records, each allocated on its own line; a failed allocation skips its record
 * with "skipped record N" and the program exits 0 — a check that counts the records fails:
 * one symptom (exit 0, the check failed, "skipped record N"), one bug with four points. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void *wrapper(size_t n) { return malloc(n); }

__attribute__((noinline)) static void put(char *p) {
    p[0] = 'x'; /* the NULL dereference of `crash` */
}

__attribute__((noinline)) static void first(void) { char *p = wrapper(16); put(p); free(p); }
__attribute__((noinline)) static void second(void) { char *p = wrapper(32); put(p); free(p); }
__attribute__((noinline)) static void third(void) { char *p = wrapper(48); put(p); free(p); }

static int record(FILE *out, int n, char *p) {
    if (!p) {
        fprintf(stderr, "skipped record %d\n", n);
        return 0;
    }
    snprintf(p, 32, "record %d", n);
    fprintf(out, "%s\n", p);
    free(p);
    return 1;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "quiet") == 0) {
        FILE *out = fopen("records.txt", "w");
        if (!out) return 2;
        record(out, 1, malloc(32));
        record(out, 2, malloc(32));
        record(out, 3, malloc(32));
        record(out, 4, malloc(32));
        return fclose(out) == 0 ? 0 : 2;
    }
    first();
    second();
    third();
    return 0;
}
