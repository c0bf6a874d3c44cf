/* Area: preload / the crash recorder (crash.c, ASPECTS_RECORD_CRASH).
 * Purpose: ends by a crash in one of several ways, so tests can check that the recorder writes
 * the signal into the attachment record and the process dies exactly as without it.
 * Usage: crash_tree MODE, MODE one of
 *   segv        a store through NULL (a fault: SIGSEGV, re-raised by the faulting instruction)
 *   fpe         an integer division by zero (SIGFPE)
 *   raise       raise(SIGSEGV) (a signal sent, not a fault)
 *   abort       abort() (SIGABRT)
 *   child-segv  a fork child (no exec) faults; the parent reports its status and exits 0
 *   own-handler the program installs its own SIGSEGV handler, which prints "caught" and
 *               exits 3, then faults: the recorder must not have taken the signal from it
 * Output: "child: signal N" for child-segv, "caught" for own-handler. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int zero;
static int *volatile nowhere;

static void caught(int sig) {
    (void)sig;
    static const char msg[] = "caught\n";
    write(1, msg, sizeof msg - 1);
    _exit(3);
}

static void fault(void) { *nowhere = 1; }

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    const char *mode = argv[1];
    if (!strcmp(mode, "segv")) fault();
    if (!strcmp(mode, "fpe")) return 10 / zero;
    if (!strcmp(mode, "raise")) raise(SIGSEGV);
    if (!strcmp(mode, "abort")) abort();
    if (!strcmp(mode, "child-segv")) {
        pid_t pid = fork();
        if (pid == 0) fault();
        int status = 0;
        waitpid(pid, &status, 0);
        printf("child: signal %d\n", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        return 0;
    }
    if (!strcmp(mode, "own-handler")) {
        signal(SIGSEGV, caught);
        fault();
    }
    return 2;
}
