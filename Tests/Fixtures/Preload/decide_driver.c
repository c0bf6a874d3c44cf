/* decide_driver — makes a scripted sequence of catalog calls on one thread and prints each
 * call's result, for the differential test of the preload's decision
 * (DecisionDifferentialTests.swift).
 *
 * argv[1] is the script, tokens separated by spaces: `wN` calls write(/dev/null, buf, N)
 * (N from 0 to 64, so argument matchers on the count can be exercised), `p` calls getppid().
 * argv[2], optional, is a number of threads (default 1) that each make the whole script,
 * started together. argv[3], optional, is the script of SIGUSR1's handler (writes only),
 * which a rule's `"signal": "SIGUSR1"` runs inside an advised call. Output: a first line
 * `ppid P` with the real parent pid (read with the raw system call, which no rule advises),
 * then one line per call with its result, thread after thread, then a line `handler` and the
 * results of the handler's calls, every run after run. Results are kept in memory and printed
 * at the end, so that the program's own output never interleaves with the calls. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_CALLS 4096
#define MAX_THREADS 16

enum { CALL_WRITE, CALL_GETPPID };
static struct { int kind, count; } calls[MAX_CALLS];
static size_t ncalls;
static long results[MAX_THREADS][MAX_CALLS];
static int fd;
static char buf[64];
static pthread_barrier_t start;
static int handler_counts[64];
static size_t handler_calls;
static long handler_results[MAX_CALLS];
static volatile size_t handler_done;

/* SIGUSR1: the handler's script, each result kept (plain stores: async-signal-safe). */
static void on_usr1(int sig) {
    (void)sig;
    for (size_t i = 0; i < handler_calls && handler_done < MAX_CALLS; i++)
        handler_results[handler_done++] = (long)write(fd, buf, (size_t)handler_counts[i]);
}

/* Reads a script into calls[]; 0, or -1 with the reason on stderr. */
static int parse_script(char *text) {
    ncalls = 0;
    for (char *tok = strtok(text, " \n"); tok; tok = strtok(NULL, " \n")) {
        if (ncalls == MAX_CALLS) {
            fprintf(stderr, "decide_driver: more than %d calls\n", MAX_CALLS);
            return -1;
        }
        if (tok[0] == 'w') {
            const long count = strtol(tok + 1, NULL, 10);
            if (count < 0 || count > (long)sizeof buf) {
                fprintf(stderr, "decide_driver: %s: the count must be 0 to %zu\n", tok, sizeof buf);
                return -1;
            }
            calls[ncalls].kind = CALL_WRITE;
            calls[ncalls++].count = (int)count;
        } else if (tok[0] == 'p' && tok[1] == 0) {
            calls[ncalls++].kind = CALL_GETPPID;
        } else {
            fprintf(stderr, "decide_driver: unknown call \"%s\" (write wN or p)\n", tok);
            return -1;
        }
    }
    return 0;
}

static void *run_script(void *arg) {
    long *out = arg;
    pthread_barrier_wait(&start);
    for (size_t i = 0; i < ncalls; i++)
        out[i] = calls[i].kind == CALL_WRITE ? (long)write(fd, buf, (size_t)calls[i].count) : (long)getppid();
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: decide_driver 'w3 p w0 ...' [threads ['w1 w2' (SIGUSR1's handler)]]\n");
        return 2;
    }
    const long threads = argc >= 3 ? strtol(argv[2], NULL, 10) : 1;
    if (threads < 1 || threads > MAX_THREADS) {
        fprintf(stderr, "decide_driver: %s threads: give 1 to %d\n", argv[2], MAX_THREADS);
        return 2;
    }
    memset(buf, 'x', sizeof buf);
    fd = open("/dev/null", O_WRONLY);
    if (fd < 0) {
        perror("decide_driver: /dev/null");
        return 2;
    }
    const int live = strcmp(argv[1], "-") == 0;
    if (!live && parse_script(argv[1]) != 0) return 2;
    if (argc == 4) {
        for (char *tok = strtok(argv[3], " "); tok; tok = strtok(NULL, " ")) {
            const long count = tok[0] == 'w' ? strtol(tok + 1, NULL, 10) : -1;
            if (count < 0 || count > (long)sizeof buf || handler_calls == 64) {
                fprintf(stderr, "decide_driver: handler call \"%s\": write wN (N 0 to %zu), at most 64\n", tok, sizeof buf);
                return 2;
            }
            handler_counts[handler_calls++] = (int)count;
        }
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    /* A mask inherited from the parent (a test runner's threads block signals) would keep
     * the raised signal pending and the handler from running. */
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
    pthread_barrier_init(&start, NULL, live ? 1u : (unsigned)threads);
    if (live) {
        /* one thread: the answers are the main thread's calls */
        static char line[65536];
        while (fgets(line, sizeof line, stdin)) {
            if (strcmp(line, "ppid\n") == 0) {
                printf("%ld\n", (long)syscall(SYS_getppid));
            } else {
                if (parse_script(line) != 0) return 2;
                run_script(results[0]);
                for (size_t i = 0; i < ncalls; i++) printf(i ? " %ld" : "%ld", results[0][i]);
                printf("\n");
            }
            fflush(stdout);
        }
        return 0;
    }
    /* One thread makes the calls itself: the single-thread cases stay on the main thread. */
    pthread_t tids[MAX_THREADS];
    for (long t = 1; t < threads; t++) {
        if (pthread_create(&tids[t], NULL, run_script, results[t]) != 0) {
            fprintf(stderr, "decide_driver: cannot start thread %ld\n", t);
            return 2;
        }
    }
    run_script(results[0]);
    for (long t = 1; t < threads; t++) pthread_join(tids[t], NULL);
    printf("ppid %ld\n", (long)syscall(SYS_getppid));
    for (long t = 0; t < threads; t++)
        for (size_t i = 0; i < ncalls; i++) printf("%ld\n", results[t][i]);
    printf("handler\n");
    for (size_t i = 0; i < handler_done; i++) printf("%ld\n", handler_results[i]);
    return 0;
}
