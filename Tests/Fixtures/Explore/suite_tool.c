/* suite_tool.c — a tiny program with a test suite of its own, for `explore --tests`
 * (SuiteExploreTests). Each mode is one test of the suite:
 *
 * `suite_tool parse` and `suite_tool format`: each allocates from its own place and hands the
 * buffer to store_record, which writes through it unchecked — one bug reached from two tests.
 * `suite_tool clean`: checks its allocation and fails cleanly (handled, no bug).
 * `suite_tool broken`: fails without any fault (exit 3), so the suite reports and skips it.
 * Built with -g -O0, so the crash has a file:line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void store_record(char *p) {
    p[0] = 'r'; /* the NULL dereference both tests reach */
}

__attribute__((noinline)) static int parse(void) {
    char *p = malloc(40);
    store_record(p);
    free(p);
    return 0;
}

__attribute__((noinline)) static int format(void) {
    char *p = malloc(72);
    store_record(p);
    free(p);
    return 0;
}

__attribute__((noinline)) static int clean(void) {
    char *p = malloc(24);
    if (p == NULL) {
        fputs("suite_tool: out of buffers\n", stderr);
        return 1;
    }
    p[0] = 'c';
    free(p);
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "parse") == 0) return parse();
    if (strcmp(mode, "format") == 0) return format();
    if (strcmp(mode, "clean") == 0) return clean();
    if (strcmp(mode, "broken") == 0) {
        fputs("suite_tool: broken: this test fails without faults\n", stderr);
        return 3;
    }
    fprintf(stderr, "usage: suite_tool parse|format|clean|broken\n");
    return 64;
}
