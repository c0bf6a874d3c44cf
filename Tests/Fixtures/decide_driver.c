/* decide_driver — makes a scripted sequence of catalog calls on one thread and prints each
 * call's result, for the differential test of the preload's decision
 * (DecisionDifferentialTests.swift).
 *
 * argv[1] is the script, tokens separated by spaces: `wN` calls write(/dev/null, buf, N)
 * (N from 0 to 64, so argument matchers on the count can be exercised), `p` calls getppid().
 * Output: a first line `ppid P` with the real parent pid (read with the raw system call, which
 * no rule advises), then one line per call with its result. Results are kept in memory and
 * printed at the end, so that the program's own output never interleaves with the calls. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_CALLS 4096

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: decide_driver 'w3 p w0 ...'\n");
        return 2;
    }
    static long results[MAX_CALLS];
    static char buf[64];
    memset(buf, 'x', sizeof buf);
    const int fd = open("/dev/null", O_WRONLY);
    if (fd < 0) {
        perror("decide_driver: /dev/null");
        return 2;
    }
    size_t n = 0;
    for (char *tok = strtok(argv[1], " "); tok; tok = strtok(NULL, " ")) {
        if (n == MAX_CALLS) {
            fprintf(stderr, "decide_driver: more than %d calls\n", MAX_CALLS);
            return 2;
        }
        if (tok[0] == 'w') {
            const long count = strtol(tok + 1, NULL, 10);
            if (count < 0 || count > (long)sizeof buf) {
                fprintf(stderr, "decide_driver: %s: the count must be 0 to %zu\n", tok, sizeof buf);
                return 2;
            }
            results[n++] = (long)write(fd, buf, (size_t)count);
        } else if (tok[0] == 'p' && tok[1] == 0) {
            results[n++] = (long)getppid();
        } else {
            fprintf(stderr, "decide_driver: unknown call \"%s\" (write wN or p)\n", tok);
            return 2;
        }
    }
    printf("ppid %ld\n", (long)syscall(SYS_getppid));
    for (size_t i = 0; i < n; i++) printf("%ld\n", results[i]);
    return 0;
}
