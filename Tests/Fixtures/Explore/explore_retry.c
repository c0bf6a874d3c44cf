/* Area: explore (a planted hang on a retried EINTR).
 * Purpose: a client asks a worker process a question over a pipe and waits for the answer,
 * retrying on EINTR. Three of its EINTR paths are right and one is wrong on purpose, so that
 * `aspectctl explore --errno EINTR` must find exactly one hang:
 *   - the worker's read of the question and write of the answer retry the interrupted call
 *     (correct: absorbed);
 *   - the client's read of the answer retries the read (correct: absorbed);
 *   - the client's write of the question takes EINTR for "try again" but goes back to waiting
 *     instead of sending again: no question went out, so the answer never comes (planted: a
 *     hang).
 * Usage: explore_retry (no arguments).
 * Output: "answer: Q" when all went well. */
#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

/* The worker: answers each question byte with its upper case, until the client hangs up. */
static void worker(int in, int out) {
    for (;;) {
        char q;
        ssize_t n = read(in, &q, 1);
        if (n < 0 && errno == EINTR) continue;   /* correct: the read is made again */
        if (n <= 0) _exit(0);
        char a = (char)(q - 'a' + 'A');
        while (write(out, &a, 1) < 0) {
            if (errno != EINTR) _exit(1);        /* correct: the write is made again */
        }
    }
}

static int ask(int to, int from, char q, char *a) {
    ssize_t n = write(to, &q, 1);
    for (;;) {
        /* planted: an interrupted write is "retried" by waiting again, but it is the wait that
         * is made again, never the write: the worker was not asked and the read never ends */
        if (n < 0 && errno != EINTR) return -1;
        n = read(from, a, 1);
        if (n == 1) return 0;
        if (n < 0 && errno == EINTR) continue;   /* correct for the read itself */
        return -1;
    }
}

int main(void) {
    int question[2], answer[2];
    if (pipe(question) != 0 || pipe(answer) != 0) return 1;
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) {
        close(question[1]);
        close(answer[0]);
        worker(question[0], answer[1]);
    }
    close(question[0]);
    close(answer[1]);
    char a;
    if (ask(question[1], answer[0], 'q', &a) != 0) {
        fprintf(stderr, "retry: the worker did not answer\n");
        return 1;
    }
    close(question[1]);
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    printf("answer: %c\n", a);
    return 0;
}
