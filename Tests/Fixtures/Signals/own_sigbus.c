/* Area: preload / host safety.
 * Purpose: a SIGBUS of the program's own, from touching a page of its own file mapping past
 * the file's end, so tests can check the preload's SIGBUS watch (for a truncated table) leaves
 * every other SIGBUS as it was. Usage: own_sigbus [handler]: with "handler" the program
 * installs its own SIGBUS handler first, which prints "caught SIGBUS" and exits 3; without it
 * the fault kills the program. Prints "touching" before the fault. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void on_bus(int sig) {
    (void)sig;
    static const char msg[] = "caught SIGBUS\n";
    write(1, msg, sizeof msg - 1);
    _exit(3);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1 && strcmp(argv[1], "handler") == 0) signal(SIGBUS, on_bus);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGBUS);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    char path[] = "/tmp/own_sigbus-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || ftruncate(fd, 4096) != 0) return 2;
    volatile char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    unlink(path);
    if (p == MAP_FAILED || ftruncate(fd, 0) != 0) return 2;
    printf("touching\n");
    p[0] = 1;
    printf("survived\n");
    return 0;
}
