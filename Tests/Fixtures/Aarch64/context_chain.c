/* Area: calling contexts through a shared library (Aarch64ContextTests).
 * Purpose: three chains of callers down to one getppid site in libctxchain.so
 * (context_chain_lib.c): first() -> chain_left, first() -> chain_right, second() ->
 * chain_left. Two frames tell left from right; three frames tell all three apart (first's
 * left from second's left); main is the fourth. Built with -O2; the empty asm statements
 * keep the calls from becoming tail calls.
 * Usage: context_chain [order]   order: letters f (first) and s (second); default "fs".
 * Output: one line, each library call's result in call order, "42" when the call returned 42
 * (a rule's forged result) and "real" otherwise: "first.left=real first.right=real
 * second.left=real". */
#include <stdio.h>
#include <string.h>

int chain_left(void);
int chain_right(void);

static char out[512];

__attribute__((noinline)) static void note(const char *who, int r) {
    size_t n = strlen(out);
    snprintf(out + n, sizeof out - n, "%s%s=%s", n ? " " : "", who, r == 42 ? "42" : "real");
}

__attribute__((noinline)) static void first(void) {
    int l = chain_left();
    __asm__ volatile("" : "+r"(l));
    int r = chain_right();
    __asm__ volatile("" : "+r"(r));
    note("first.left", l);
    note("first.right", r);
}

__attribute__((noinline)) static void second(void) {
    int l = chain_left();
    __asm__ volatile("" : "+r"(l));
    note("second.left", l);
}

int main(int argc, char **argv) {
    const char *order = argc > 1 ? argv[1] : "fs";
    for (const char *o = order; *o; o++) {
        if (*o == 'f') first();
        else if (*o == 's') second();
    }
    printf("%s\n", out);
    return 0;
}
