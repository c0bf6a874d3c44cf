/* Area: explore / the oracle and coverage.
 * Purpose: a careful program: it saves "total 42" to out.db with pwrite (never write), and on
 * any error says so on stderr, removes the half-written file and exits 1. Every fault it gets
 * is handled, so a check that looks at the exit status must agree; and `--function write`
 * finds no call to fail. Usage: explore_oracle (in a fresh directory). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    const char *text = "total 42\n";
    int fd = open("out.db", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) { perror("explore_oracle: open out.db"); return 1; }
    if (pwrite(fd, text, strlen(text), 0) != (ssize_t)strlen(text)) {
        perror("explore_oracle: write out.db");
        close(fd);
        unlink("out.db");
        return 1;
    }
    if (close(fd) != 0) { perror("explore_oracle: close out.db"); unlink("out.db"); return 1; }
    printf("saved\n");
    return 0;
}
