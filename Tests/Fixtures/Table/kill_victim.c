/* Area: writer kills (issue 10: every batch whole or absent while programs call).
 * Purpose: calls advised functions in a loop for SECONDS while writers add and remove rules
 * and are killed mid-batch: getppid(), write(-1, ...) and open() of a missing file.
 * Between blocks of 64 rounds it sleeps PAUSE microseconds (default 200), so that eight of them
 * leave the writers CPU. Usage: kill_victim SECONDS [PAUSE]. Output: "calls N" at the end. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 1;
    useconds_t pause = argc > 2 ? (useconds_t)atoi(argv[2]) : 200;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    long calls = 0;
    do {
        for (int i = 0; i < 64; i++) {
            (void)getppid();
            (void)write(-1, "x", 1);
            int fd = open("/nonexistent-aspects-kill", O_RDONLY);
            if (fd >= 0) close(fd);
            calls += 3;
        }
        usleep(pause); /* eight of these share the machine with the writers being killed */
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
    printf("calls %ld\n", calls);
    return 0;
}
