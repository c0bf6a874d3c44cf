/* planted_bugs.c — one bug for each sanitizer, planted on purpose: scripts/sanitize.sh runs
 * it first and must find a report of each in its logs before it believes a run without any.
 *   overflow  a 16-byte memcpy into an 8-byte heap block (ASan's memcpy interceptor sees it
 *             even in this uninstrumented build, as it would in a fixture);
 *   race      two threads increment one plain int (TSan, in the -fsanitize=thread build). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int shared;
static void *bump(void *arg) {
    (void)arg;
    for (int i = 0; i < 1000; i++) shared++;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    if (strcmp(argv[1], "overflow") == 0) {
        volatile size_t n = 16; /* not a constant: the call stays a call to memcpy */
        char src[16] = {0};
        char *dst = malloc(8);
        memcpy(dst, src, n);
        free(dst);
        return 0;
    }
    pthread_t a, b;
    pthread_create(&a, NULL, bump, NULL);
    pthread_create(&b, NULL, bump, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return shared == 0;
}
