/* Area: host safety / static binaries.
 * Purpose: built with -static, a program the preload cannot enter (no dynamic loader reads
 * LD_PRELOAD): it calls getppid() 10 times, then execs PROGRAM with the environment it was
 * given, so a dynamically linked child is advised again.
 * Usage: exec_child PROGRAM [ARGS...]. Output: "static getppid42 N", then the child's. */
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    int answers42 = 0;
    for (int i = 0; i < 10; i++) answers42 += getppid() == 42;
    printf("static getppid42 %d\n", answers42);
    fflush(stdout);
    execv(argv[1], argv + 1);
    return 127;
}
