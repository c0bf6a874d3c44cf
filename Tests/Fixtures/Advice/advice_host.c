/* Area: advice as code (the `call` action).
 * Purpose: the program the advice tests run. One mode per argument:
 *   write       one write(1, "hello world\n", 12), a correct caller's loop around it; prints
 *               "write: R" per call on stderr
 *   errno       errno = 12345; getppid(); prints "errno: E"
 *   unlink P    unlink(P); prints "unlink: R errno E"
 *   handler     answers a first line with "ready" (attached by then), reads a second one
 *               (the test changes the table meanwhile), raises SIGUSR1, whose handler calls
 *               getppid(); then calls getppid() itself; prints "handler: H main: M kernel: K"
 *               (K: the kernel's answer, by a raw syscall no rule advises)
 *   fork        getppid() in a fork child, then in the parent: "child: C parent: P"; the
 *               kernel's own answers (a raw syscall, which no rule advises) on stderr as
 *               "kernel: child C parent P", so a test tells an unadvised run by them, not
 *               by a value a real pid can have
 *   fread F     fread(buf, 4, 256, F): prints "fread: N" on stderr and writes the N items'
 *               bytes to stdout (with write, which no rule of these tests advises)
 * Reports are made with dprintf (the C library's own write, never the preload's). It starts
 * with no signal blocked, whatever its parent's thread blocked (a test runner's may block all). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile pid_t in_handler = -1;
static void on_usr1(int sig) { (void)sig; in_handler = getppid(); }

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (strcmp(mode, "write") == 0) {
        static const char text[] = "hello world\n";
        size_t done = 0;
        while (done < sizeof text - 1) {
            ssize_t r = write(1, text + done, sizeof text - 1 - done);
            dprintf(2, "write: %zd\n", r);
            if (r <= 0) return 1;
            done += (size_t)r;
        }
        return 0;
    }
    if (strcmp(mode, "errno") == 0) {
        errno = 12345;
        (void)getppid();
        dprintf(2, "errno: %d\n", errno);
        return 0;
    }
    if (strcmp(mode, "unlink") == 0 && argc > 2) {
        errno = 0;
        int r = unlink(argv[2]);
        dprintf(2, "unlink: %d errno %d\n", r, errno);
        return 0;
    }
    if (strcmp(mode, "handler") == 0) {
        char line[16];
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_usr1;
        sigaction(SIGUSR1, &sa, NULL);
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (!fgets(line, sizeof line, stdin)) return 1;
        printf("ready\n");
        if (!fgets(line, sizeof line, stdin)) return 1;
        raise(SIGUSR1);
        pid_t main_value = getppid();
        printf("handler: %d main: %d kernel: %d\n", (int)in_handler, (int)main_value, (int)syscall(SYS_getppid));
        return 0;
    }
    if (strcmp(mode, "fread") == 0 && argc > 2) {
        static unsigned char buf[1024];
        FILE *f = fopen(argv[2], "rb");
        if (!f) return 1;
        size_t n = fread(buf, 4, 256, f);
        dprintf(2, "fread: %zu\n", n);
        (void)!write(1, buf, n * 4);
        return 0;
    }
    if (strcmp(mode, "fork") == 0) {
        int fds[2];
        if (pipe(fds) != 0) return 1;
        pid_t child = fork();
        if (child == 0) {
            int v[2] = {(int)getppid(), (int)syscall(SYS_getppid)};
            (void)!write(fds[1], v, sizeof v);
            _exit(0);
        }
        int from_child[2] = {-1, -1};
        (void)!read(fds[0], from_child, sizeof from_child);
        waitpid(child, NULL, 0);
        dprintf(2, "kernel: child %d parent %d\n", from_child[1], (int)syscall(SYS_getppid));
        printf("child: %d parent: %d\n", from_child[0], (int)getppid());
        return 0;
    }
    return 2;
}
