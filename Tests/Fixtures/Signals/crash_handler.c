/* Area: preload / the crash recorder (crash.c) and a program's own crash handler.
 * Purpose: what a program with a crash handler of its own sees and leaves in explore's runs
 * (ASPECTS_RECORD_CRASH=1; issue 30 item 11, issue 31 item 4). Usage: crash_handler MODE:
 *   probe    prints how each crash signal's disposition reads ("SIGSEGV SIG_DFL flags 0
 *            mask 0"): the recorder must read as the default
 *   if-none  installs its SIGSEGV handler only if none is installed (reads SIG_DFL), then
 *            faults in fault(); the handler prints "internal error detected" and _exit(2)s
 *   restore  installs a SIGSEGV handler, puts the old action back, prints what it reads
 *            ("restored SIG_DFL"), then faults: it dies of SIGSEGV
 *   returns  its SIGSEGV handler returns: raise(SIGSEGV), then prints "went on", exit 0
 *   routine  the same 6 times (a program that uses SIGSEGV routinely), then faults in fault()
 *            under the handler of if-none: "internal error detected", exit 2 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int *volatile nowhere;
static __attribute__((noinline)) void fault(void) { *nowhere = 1; }

static void on_segv(int sig) {
    (void)sig;
    static const char msg[] = "internal error detected\n";
    write(1, msg, sizeof msg - 1);
    _exit(2);
}
static void on_segv_return(int sig) { (void)sig; }

static const char *name(void *h) {
    return h == (void *)SIG_DFL ? "SIG_DFL" : h == (void *)SIG_IGN ? "SIG_IGN" : "a-handler";
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc != 2) return 64;
    const char *mode = argv[1];
    struct sigaction old, sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    if (!strcmp(mode, "probe")) {
        const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
        const char *names[] = {"SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT"};
        for (int k = 0; k < 5; k++) {
            memset(&old, 0xff, sizeof old);
            sigaction(sigs[k], NULL, &old);
            int members = 0;
            for (int s = 1; s < 32; s++) members += sigismember(&old.sa_mask, s) == 1;
            printf("%s %s flags %d mask %d\n", names[k], name((void *)old.sa_handler), (int)old.sa_flags, members);
        }
        return 0;
    }
    if (!strcmp(mode, "if-none")) {
        sigaction(SIGSEGV, NULL, &old);
        if (old.sa_handler == SIG_DFL && !(old.sa_flags & SA_SIGINFO)) {
            sa.sa_handler = on_segv;
            sigaction(SIGSEGV, &sa, NULL);
        } else {
            printf("a handler is installed already: %s\n", name((void *)old.sa_handler));
        }
        fault();
        return 1;
    }
    if (!strcmp(mode, "restore")) {
        sa.sa_handler = on_segv;
        sigaction(SIGSEGV, &sa, &old);
        sigaction(SIGSEGV, &old, NULL);
        struct sigaction now;
        sigaction(SIGSEGV, NULL, &now);
        printf("restored %s\n", name((void *)now.sa_handler));
        fault();
        return 1;
    }
    if (!strcmp(mode, "routine")) {
        sa.sa_handler = on_segv_return;
        sigaction(SIGSEGV, &sa, NULL);
        for (int i = 0; i < 6; i++) raise(SIGSEGV);
        sa.sa_handler = on_segv;
        sigaction(SIGSEGV, &sa, NULL);
        fault();
        return 1;
    }
    if (!strcmp(mode, "returns")) {
        sa.sa_handler = on_segv_return;
        sigaction(SIGSEGV, &sa, NULL);
        raise(SIGSEGV);
        printf("went on\n");
        return 0;
    }
    return 64;
}
