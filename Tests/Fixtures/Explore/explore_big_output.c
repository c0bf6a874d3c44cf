/* explore_big_output — writes more than explore's output file keeps (ProgramRun.outputFileCap,
 * 16 MiB) to stdout, then one last word that depends on a fault: explore must still tell the
 * runs apart by their whole output. Two malloc sites: the first's failure changes nothing
 * (absorbed), the second's changes the last word only (handled). write(2), not stdio, so that
 * stdio's own allocations add no malloc sites. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void write_all(const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(1, p, n);
        if (w <= 0) _exit(3);
        p += w;
        n -= (size_t)w;
    }
}

int main(void) {
    void *volatile first = malloc(32);   /* a failure here is ignored */
    free(first);
    static char block[1 << 16];
    memset(block, 'x', sizeof block);
    for (int i = 0; i < 272; i++) write_all(block, sizeof block);   /* 17 MiB */
    void *volatile second = malloc(64);
    write_all(second ? "end\n" : "END\n", 4);
    free(second);
    return 0;
}
