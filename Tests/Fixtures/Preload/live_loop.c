/* Area: preload / live changes.
 * Purpose: a long-running program whose advice changes while it runs. For every line read
 * on stdin it opens PATH once and prints the result ("ok" or "ENOENT"/errno), then flushes,
 * so a test can add and remove rules between calls without restarting it. Usage:
 * live_loop PATH; ends at EOF. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    char line[64];
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (fgets(line, sizeof line, stdin)) {
        int fd = open(argv[1], O_RDONLY);
        if (fd >= 0) {
            close(fd);
            printf("ok\n");
        } else {
            printf("%s\n", errno == ENOENT ? "ENOENT" : strerror(errno));
        }
        fflush(stdout);
    }
    return 0;
}
