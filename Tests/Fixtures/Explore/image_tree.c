/* Area: explore's plans per program image.
 * Purpose: a process tree whose images are chosen by the test: the process writes N bytes
 * to /dev/null one write(2) at a time, says which of its writes failed, then runs each CHILD
 * in turn (fork, exec CHILD N, wait), so the tree can hold one image several times, or
 * two images (a copy of this program at another path).
 * Usage: image_tree N [CHILD...]. Output: one line per process, in the order they end:
 * "PATH wrote N failed K1 K2 ..." (the numbers of its failed writes), then the children's. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    int n = atoi(argv[1]);
    int fd = open("/dev/null", O_WRONLY);
    if (fd < 0) return 3;
    char failed[512] = "";
    size_t used = 0;
    for (int i = 1; i <= n; i++) {
        if (write(fd, "x", 1) != 1 && used < sizeof failed - 16) used += (size_t)snprintf(failed + used, sizeof failed - used, " %d", i);
    }
    printf("%s wrote %d failed%s\n", argv[0], n, failed);
    fflush(stdout);
    for (int c = 2; c < argc; c++) {
        pid_t pid = fork();
        if (pid == 0) {
            execl(argv[c], argv[c], argv[1], (char *)NULL);
            _exit(127);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 4;
    }
    return 0;
}
