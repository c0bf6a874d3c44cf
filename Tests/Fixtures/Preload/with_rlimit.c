/* Area: host safety / resource limits.
 * Purpose: runs a program under a resource limit set before exec, so the limit is already in
 * force while the preload starts up (maps the table, opens files): a limit the preload cannot
 * work under must leave the program running as without it.
 * Usage: with_rlimit as|nofile VALUE PROGRAM [ARGS...] (VALUE in bytes or descriptors).
 * Exit status: the program's; 126 when the limit or the exec failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    struct rlimit lim;
    lim.rlim_cur = lim.rlim_max = (rlim_t)strtoull(argv[2], NULL, 10);
    int resource = strcmp(argv[1], "as") == 0 ? RLIMIT_AS : RLIMIT_NOFILE;
    if (setrlimit(resource, &lim) != 0) { perror("setrlimit"); return 126; }
    execv(argv[3], argv + 3);
    perror("execv");
    return 126;
}
