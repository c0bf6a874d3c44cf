// The symbolizer's line-table fixture: a few functions of different shapes (static, inlined,
// looping, a switch, a macro) whose every address the tests look up here and with addr2line.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TWICE(x) ((x) + (x))

static inline int squared(int x) { return x * x; }

static int __attribute__((noinline)) classify(int c) {
    switch (c % 5) {
    case 0: return squared(c);
    case 1: return TWICE(c);
    case 2: return c - 3;
    case 3: return (int)strlen("three") + c;
    default: return -c;
    }
}

int __attribute__((noinline)) sum_to(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        s += classify(i);
        if (s > 1000) s /= 2;
    }
    return s;
}

char *__attribute__((noinline)) label(int n) {
    char *p = malloc(32);
    if (!p) return NULL;
    snprintf(p, 32, "n=%d", n);
    return p;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 10;
    char *l = label(sum_to(n));
    if (l) puts(l);
    free(l);
    return 0;
}
