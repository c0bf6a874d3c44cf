/* Area: rule language / seeded probability.
 * Purpose: CALLS writes to /dev/null; every failed one is printed with its call number and
 * errno name, so a test can compare runs and predict the set from (seed, rule, call).
 * Usage: draws CALLS. Output: "K ENAME" per failed write, then "done". */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int calls = argc > 1 ? atoi(argv[1]) : 10000;
    int fd = open("/dev/null", O_WRONLY);
    char out[64];
    for (int k = 1; k <= calls; k++) {
        if (write(fd, "x", 1) < 0) {
            int e = errno;
            /* through stderr's fd with snprintf: printf would write to stdout via write() too */
            int n = snprintf(out, sizeof out, "%d %s\n", k, e == EIO ? "EIO" : e == ENOSPC ? "ENOSPC" : strerror(e));
            (void)!fwrite(out, 1, (size_t)n, stderr);
        }
    }
    fprintf(stderr, "done\n");
    return 0;
}
