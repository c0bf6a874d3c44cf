/* Area: preload / open family.
 * Purpose: open a path N times and report each result, so a test can see which call an
 * `nth` rule failed. Usage: open_calls PATH [COUNT [FLAGS]]. FLAGS (decimal) is read at run
 * time so that a _FORTIFY_SOURCE build calls __open_2 (flags not a compile-time constant).
 * Output, one line per call: "open N: ok" or "open N: -1 ENAME". */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *errname(int e) {
    switch (e) {
    case ENOENT: return "ENOENT";
    case EACCES: return "EACCES";
    case EIO: return "EIO";
    case ENOSPC: return "ENOSPC";
    case EMFILE: return "EMFILE";
    case EPERM: return "EPERM";
    default: return strerror(e);
    }
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    int count = argc > 2 ? atoi(argv[2]) : 3;
    int flags = argc > 3 ? atoi(argv[3]) : O_RDONLY;
    for (int i = 1; i <= count; i++) {
        errno = 0;
        int fd = open(argv[1], flags);
        if (fd >= 0) {
            printf("open %d: ok\n", i);
            close(fd);
        } else {
            printf("open %d: %d %s\n", i, fd, errname(errno));
        }
    }
    return 0;
}
