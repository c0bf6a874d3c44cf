/* explore_caught.c — crash handlers and SIGPIPE under explore (ExploreVerdictTests, issue 31
 * items 4 and 3). Usage: explore_caught MODE
 *   caught    installs a SIGSEGV handler that says "internal error detected" and _exit(1)s
 *             (as m4 does), then fills a buffer from malloc without checking it: a failed
 *             malloc is a crash caught by the program's handler, exit 1
 *   returns   its SIGSEGV handler returns (raise(SIGSEGV) once, as a program that uses the
 *             signal routinely), then a checked malloc: a failed one is handled, exit 1
 *   pipeline  forks a reader that allocates its buffer (checked: "no memory", exit 1) and
 *             writes 1 MiB to it through a pipe: when the reader's malloc fails, the writer
 *             is killed by SIGPIPE, the normal end of a writer whose reader went away */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_segv(int sig) {
    (void)sig;
    static const char msg[] = "explore_caught: internal error detected\n";
    write(2, msg, sizeof msg - 1);
    _exit(1);
}
static void on_segv_return(int sig) { (void)sig; }

static __attribute__((noinline)) void fill(char *p, size_t n) {
    for (size_t i = 0; i + 1 < n; i++) p[i] = (char)('a' + i % 26);
    p[n - 1] = 0;
}

static int pipeline(void) {
    int fds[2];
    if (pipe(fds)) return 2;
    pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) {
        close(fds[1]);
        char *buf = malloc(4096);
        if (!buf) { fprintf(stderr, "explore_caught: no memory\n"); _exit(1); }
        long total = 0;
        ssize_t n;
        while ((n = read(fds[0], buf, 4096)) > 0) total += n;
        dprintf(1, "%ld bytes\n", total);
        _exit(0);
    }
    close(fds[0]);
    static char block[65536];
    memset(block, 'y', sizeof block);
    for (int i = 0; i < 16; i++)
        if (write(fds[1], block, sizeof block) < 0) return 3;
    close(fds[1]);
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 4;
}

int main(int argc, char **argv) {
    if (argc != 2) return 64;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    if (!strcmp(argv[1], "caught")) {
        sa.sa_handler = on_segv;
        sigaction(SIGSEGV, &sa, NULL);
        char *p = malloc(64);
        fill(p, 64);
        puts(p);
        free(p);
        return 0;
    }
    if (!strcmp(argv[1], "returns")) {
        sa.sa_handler = on_segv_return;
        sigaction(SIGSEGV, &sa, NULL);
        raise(SIGSEGV);
        char *p = malloc(64);
        if (!p) { fprintf(stderr, "explore_caught: no memory\n"); return 1; }
        fill(p, 64);
        puts(p);
        free(p);
        return 0;
    }
    if (!strcmp(argv[1], "pipeline")) return pipeline();
    return 64;
}
