/* Area: host safety.
 * Purpose: a program that closes every file descriptor it has (as daemons and some test
 * runners do) and then keeps calling armed functions: the preload holds no descriptor the
 * program could close under it (the table is a mapping), so advice must go on working and
 * calls that no rule fires on must behave as without the preload.
 * Usage: closed_fds range|loop OUTPUT. "range" uses close_range(0, ~0U, 0); "loop" calls
 * close() on 0..1023 (each an armed call when a rule is on close). Then 100 rounds of
 * getppid(), open + write + close of /dev/null; the results go to OUTPUT (stdout is closed):
 * "getppid42 N writes W closes C". Exit 0, or 1 when OUTPUT cannot be written. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    if (strcmp(argv[1], "range") == 0) {
        if (close_range(0, ~0U, 0) != 0) return 3;
    } else {
        for (int fd = 0; fd < 1024; fd++) close(fd);
    }
    int answers42 = 0, writes = 0, closes = 0;
    for (int i = 0; i < 100; i++) {
        if (getppid() == 42) answers42++;
        int fd = open("/dev/null", O_WRONLY);
        if (fd < 0) continue;
        if (write(fd, "x", 1) == 1) writes++;
        if (close(fd) == 0) closes++;
    }
    char line[128];
    int n = snprintf(line, sizeof line, "getppid42 %d writes %d closes %d\n", answers42, writes, closes);
    int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0 || write(out, line, (size_t)n) != n) return 1;
    return close(out) == 0 ? 0 : 1;
}
