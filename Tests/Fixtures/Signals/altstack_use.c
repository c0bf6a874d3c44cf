/* Area: host safety / signal handlers.
 * Purpose: how much of an alternate signal stack a handler uses (issue 30, item 9). The alternate
 * stack is SIZE bytes with an inaccessible page below it; it is filled with a pattern, a SIGUSR1
 * handler (SA_ONSTACK) writes one byte to /dev/null through write() — an armed function under
 * the preload — ROUNDS times, and the deepest byte changed says how much was used: the
 * kernel's signal frame, the handler and whatever runs under it. A stack too small ends in
 * SIGSEGV (the guard page).
 * Usage: altstack_use SIZE ROUNDS. Output: "used N of SIZE, kernel minimum M" (M: the kernel's
 * AT_MINSIGSTKSZ, its own signal frame on this CPU). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef AT_MINSIGSTKSZ
#define AT_MINSIGSTKSZ 51
#endif

static int devnull;
static void on_usr1(int sig) {
    (void)sig;
    (void)write(devnull, "x", 1);
}

int main(int argc, char **argv) {
    const size_t size = argc > 1 ? (size_t)atol(argv[1]) : 8192;
    const int rounds = argc > 2 ? atoi(argv[2]) : 10;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    devnull = open("/dev/null", O_WRONLY);
    /* the stack ends exactly at a page boundary, its guard page just below it */
    const size_t span = (size + page - 1) / page * page;
    unsigned char *base = mmap(NULL, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED || mprotect(base, page, PROT_NONE) != 0) return 2;
    unsigned char *top = base + page + span, *lo = top - size;
    memset(lo, 0xa5, size);
    stack_t ss = {.ss_sp = lo, .ss_flags = 0, .ss_size = size};
    if (sigaltstack(&ss, NULL) != 0) {
        perror("sigaltstack");
        return 3;
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    for (int i = 0; i < rounds; i++) raise(SIGUSR1);
    size_t used = 0;
    for (size_t k = 0; k < size; k++)
        if (lo[k] != 0xa5) {
            used = size - k;
            break;
        }
    printf("used %zu of %zu, kernel minimum %lu\n", used, size, getauxval(AT_MINSIGSTKSZ));
    return 0;
}
