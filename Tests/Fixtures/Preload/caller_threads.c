/* Area: preload / caller conditions.
 * Purpose: two threads, started together, each write N times from this program, so a `caller`
 * rule matching the program is decided on both threads at once, the first time the
 * calling object is looked up included. Every call must be advised on every run.
 * Usage: caller_threads N. Output: "advised A of T" (A: writes that returned the rule's
 * forged 4242, T: writes made). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int fd, calls;
static int advised;
static pthread_barrier_t start;

static void *writer(void *arg) {
    (void)arg;
    pthread_barrier_wait(&start);
    for (int i = 0; i < calls; i++)
        if (write(fd, "x", 1) == 4242) __atomic_fetch_add(&advised, 1, __ATOMIC_RELAXED);
    return NULL;
}

int main(int argc, char **argv) {
    calls = argc > 1 ? atoi(argv[1]) : 5;
    fd = open("/dev/null", O_WRONLY);
    if (fd < 0) return 2;
    pthread_barrier_init(&start, NULL, 2);
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, writer, NULL);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    printf("advised %d of %d\n", advised, 2 * calls);
    return 0;
}
