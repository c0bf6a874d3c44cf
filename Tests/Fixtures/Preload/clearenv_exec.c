/* Area: host safety.
 * Purpose: a program that wipes its environment with clearenv() while the preload is
 * attached, keeps calling armed functions, and then execs itself as a child. "bare": the
 * child gets the empty environment (no LD_PRELOAD, no table: it runs plain); "keep": the
 * parent puts LD_PRELOAD and ASPECTS_TABLE back (saved before clearenv), so the child is
 * advised again, as a new process hierarchy.
 * Usage: clearenv_exec bare|keep. Output: "parent getppid42 N" (20 calls, N counted before
 * and after clearenv), then the child's "child getppid42 M environ K" (10 calls, K
 * variables).  The child replaces the parent (exec), so its exit status is the program's. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static int count42(int calls) {
    int n = 0;
    for (int i = 0; i < calls; i++) n += getppid() == 42;
    return n;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    if (strcmp(argv[1], "child") == 0) {
        int n = count42(10), vars = 0;
        for (char **e = environ; e && *e; e++) vars++;
        printf("child getppid42 %d environ %d\n", n, vars);
        return 0;
    }
    char preload[4096] = "", table[4096] = "";
    const char *p = getenv("LD_PRELOAD"), *t = getenv("ASPECTS_TABLE");
    if (p) snprintf(preload, sizeof preload, "%s", p);
    if (t) snprintf(table, sizeof table, "%s", t);
    int n = count42(10);
    if (clearenv() != 0) return 3;
    n += count42(10);
    if (strcmp(argv[1], "keep") == 0) {
        if (*preload) setenv("LD_PRELOAD", preload, 1);
        if (*table) setenv("ASPECTS_TABLE", table, 1);
    }
    printf("parent getppid42 %d\n", n);
    fflush(stdout);
    execl("/proc/self/exe", argv[0], "child", (char *)NULL);
    return 4;
}
