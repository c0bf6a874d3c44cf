/* explore_daemon — when its malloc fails, leaves a daemon behind the way daemons are made: a
 * double fork and setsid, SIGTERM ignored, stdout kept open, sleeping for ever; argv[1] is a
 * marker the test finds it by in /proc. With malloc working it leaves nothing running. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    void *volatile p = malloc(48);
    if (p) {
        free(p);
        return 0;
    }
    pid_t child = fork();
    if (child == 0) {
        setsid();
        if (fork() == 0) {
            signal(SIGTERM, SIG_IGN);
            for (;;) pause();
        }
        _exit(0);
    }
    waitpid(child, NULL, 0);   /* as daemon(3) users do: only the daemon is left */
    fprintf(stderr, "explore_daemon: out of memory; a daemon carries on\n");
    return 1;
}
