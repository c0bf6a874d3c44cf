/* Area: calling contexts through a shared library (Aarch64ContextTests; context_chain.c).
 * Purpose: ONE getppid call site in the library (ppid_site), reached through two library
 * functions, chain_left and chain_right, so that a calling context's second frame tells them
 * apart and its third and fourth lie in the program. Built with -O2; the empty asm
 * statements keep the calls from becoming tail calls, so each caller stays on the stack. */
#include <unistd.h>

__attribute__((noinline)) static int ppid_site(void) {
    int r = (int)getppid();
    __asm__ volatile("" : "+r"(r));
    return r;
}

__attribute__((noinline)) int chain_left(void) {
    int r = ppid_site();
    __asm__ volatile("" : "+r"(r));
    return r;
}

__attribute__((noinline)) int chain_right(void) {
    int r = ppid_site();
    __asm__ volatile("" : "+r"(r));
    return r;
}
