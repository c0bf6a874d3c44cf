/* Area: attaching a table (start-up cost).
 * Purpose: what attaching left in this process: whether libffi is mapped, and how much of the
 * table's shared-memory segment the process has touched (its Rss in /proc/self/smaps: only
 * the pages it faulted in, whatever the table's capacity). MODE says what the program does
 * first: "idle" nothing; "call" one getppid(); "handler" installs a SIGUSR1 handler with
 * sigaction (no armed call); "blocked" blocks every signal, starts and joins a thread (glibc
 * then holds its own handlers), then calls getppid().
 * Usage: attach_footprint MODE. Output: "libffi yes|no getppid N segment_kb K" (libffi as
 * seen after MODE's work, the segment before it). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int libffi_mapped(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[512];
    int found = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "libffi.so")) found = 1;
    fclose(f);
    return found;
}

/* The Rss of the System V segment (the table), in kB; -1 when there is none. */
static long segment_kb(void) {
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return -1;
    char line[512];
    long kb = -1;
    int in_segment = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) in_segment = strstr(line, "SYSV") != NULL;
        else if (in_segment && strncmp(line, "Rss:", 4) == 0) kb = atol(line + 4);
    }
    fclose(f);
    return kb;
}

static void on_usr1(int sig) { (void)sig; }
static void *nothing(void *arg) { return arg; }

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *mode = argv[1];
    const long kb = segment_kb();
    long r = 0;
    if (strcmp(mode, "call") == 0) {
        r = getppid();
    } else if (strcmp(mode, "handler") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_usr1;
        sigaction(SIGUSR1, &sa, NULL);
    } else if (strcmp(mode, "blocked") == 0) {
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, NULL);
        pthread_t t;
        if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0) return 3;
        r = getppid();
    } else if (strcmp(mode, "idle") != 0) {
        return 2;
    }
    printf("libffi %s getppid %ld segment_kb %ld\n", libffi_mapped() == 1 ? "yes" : "no", r, kb);
    return 0;
}
