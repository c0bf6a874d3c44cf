/* Area: rule language / functions families.
 * Purpose: writes to a file by write, pwrite, writev and write again, and prints which call
 * failed with which errno, so a test can check that a rule on several functions counts their
 * calls as one ("the 3rd write, whichever function makes it"). Usage: family_writes FILE. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static void report(const char *what, long r) {
    if (r < 0) printf("%s: %s\n", what, strerror(errno));
    else printf("%s: %ld\n", what, r);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return 1;
    report("write", (long)write(fd, "a", 1));
    report("pwrite", (long)pwrite(fd, "b", 1, 1));
    struct iovec v = {.iov_base = "c", .iov_len = 1};
    report("writev", (long)writev(fd, &v, 1));
    report("write", (long)write(fd, "d", 1));
    close(fd);
    return 0;
}
