/* Area: rule language / process hierarchies.
 * Purpose: a process tree: the root forks 3 children; child 2 execs this program again as a
 * grandchild ("leaf"); every process calls getppid() CALLS times and prints how often a rule
 * made it return 42, so a test can count firings per process and per tree.
 * Usage: tree CALLS [leaf]. Output: one line per process, "ROLE fired N". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void work(const char *role, int calls) {
    long fired = 0;
    for (int i = 0; i < calls; i++)
        if (getppid() == 42) fired++;
    printf("%s fired %ld\n", role, fired);
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    int calls = atoi(argv[1]);
    if (argc > 2 && strcmp(argv[2], "leaf") == 0) { work("grandchild", calls); return 0; }
    work("root", calls);
    for (int c = 1; c <= 3; c++) {
        pid_t pid = fork();
        if (pid == 0) {
            char role[16];
            snprintf(role, sizeof role, "child%d", c);
            work(role, calls);
            if (c == 2) { execl("/proc/self/exe", argv[0], argv[1], "leaf", (char *)NULL); _exit(3); }
            _exit(0);
        }
        int status;
        /* One at a time, so the output order is fixed; child2's exec'd grandchild is the
         * same process, so this also waits for it. */
        waitpid(pid, &status, 0);
    }
    return 0;
}
