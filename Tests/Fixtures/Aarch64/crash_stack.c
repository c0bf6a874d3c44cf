/* Area: explore / crash stacks (crash.c writes the stack, CrashStack.swift unwinds it).
 * Purpose: crashes at a known depth, so tests can check that the unwound stack names the
 * crashing function and each caller up to main, in order. Every function is noinline and
 * called for its result, so no call is a tail call that would leave no frame.
 * Usage: crash_stack MODE, MODE one of
 *   deep   main -> deep_a -> deep_b -> deep_c, which calls a helper and then stores through
 *          NULL (a non-leaf function: its return address is saved on the stack)
 *   leaf   main -> leaf_caller -> leaf_fault, which stores through NULL without calling
 *          anything (a leaf: on aarch64 its caller is only in the link register)
 *   libc   main -> libc_caller -> printf("[%s]", a bad pointer): the fault is in the C
 *          library's strlen, called by its printf machinery
 * Output: none; the process dies of SIGSEGV (status 2 for a wrong MODE). */
#include <stdio.h>
#include <string.h>

static int *volatile nowhere;
static const char *volatile bad = (const char *)16;
static volatile int sink;

__attribute__((noinline)) static int helper(int x) { return sink + x; }

__attribute__((noinline)) static int deep_c(int x) {
    int y = helper(x);
    *nowhere = y;
    return y + 1;
}
__attribute__((noinline)) static int deep_b(int x) { return deep_c(x + 1) + 1; }
__attribute__((noinline)) static int deep_a(int x) { return deep_b(x + 1) + 1; }

__attribute__((noinline)) static int leaf_fault(int x) {
    *nowhere = x;
    return x + 1;
}
__attribute__((noinline)) static int leaf_caller(int x) { return leaf_fault(x + 1) + 1; }

__attribute__((noinline)) static int libc_caller(int x) { return printf("[%s]", bad) + x; }

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    if (!strcmp(argv[1], "deep")) return deep_a(1);
    if (!strcmp(argv[1], "leaf")) return leaf_caller(1);
    if (!strcmp(argv[1], "libc")) return libc_caller(1);
    return 2;
}
