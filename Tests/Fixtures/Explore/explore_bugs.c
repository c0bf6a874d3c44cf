/* explore_bugs.c — crashes for explore's bug grouping (ExploreBugsTests).
 *
 * `explore_bugs same`: two mallocs from two places (two fault points) hand their buffer to
 * one function that writes through it unchecked — one bug, reached two ways.
 * `explore_bugs two`: two mallocs whose unchecked results are written in two different
 * functions — two bugs. Built with -g -O0, so each crash has a file:line; built stripped
 * with -rdynamic, fill_record (static, after an exported function) has no symbol of its own. */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void store_name(void) {
    char *p = malloc(64);
    p[1] = 'n'; /* the first of `two` */
    free(p);
}

__attribute__((noinline)) void store_value(void) {
    char *p = malloc(128);
    memset(p, 0, 128); /* the second of `two`: inside libc's memset, called from here */
    free(p);
}

__attribute__((noinline)) static void fill_record(char *p) {
    p[0] = 'x'; /* the NULL dereference of `same` */
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "two") == 0) {
        store_name();
        store_value();
        return 0;
    }
    char *a = malloc(32);
    fill_record(a);
    char *b = malloc(48);
    fill_record(b);
    free(a);
    free(b);
    return 0;
}
