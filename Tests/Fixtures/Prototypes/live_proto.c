/* Area: prototype rules applied while a program runs (LivePrototypeTests).
 * Purpose: calls fx_add of libfx (through its GOT) in a loop that makes no libc call at all,
 * so no advised catalog call can bring a table change in: the shared file is its only channel.
 * Usage: live_proto CONTROL — CONTROL, a file of 64 bytes, is mapped shared:
 *   byte 0   the test sets it to leave the loop;
 *   byte 1   set here once the loop runs;
 *   8..15    calls of fx_add(1, 2) made in the loop;
 *   16..23   of those, calls that did not return 3 (a rule's doing).
 * After the loop: getppid() (a catalog call), then fx_add(1, 2) once more, printed as
 * "after: R".
 * live_proto CONTROL fork: the loop runs in a fork child, after one getppid() (its first
 * advised call); bytes 24..31 hold the child's pid; the parent waits for it and exits with its
 * status. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int fx_add(int a, int b);

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    int fd = open(argv[1], O_RDWR);
    if (fd < 0) return 2;
    volatile unsigned char *control = mmap(NULL, 64, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (control == MAP_FAILED) return 2;
    volatile uint64_t *calls = (volatile uint64_t *)(control + 8), *changed = (volatile uint64_t *)(control + 16);
    if (argc > 2) {
        pid_t child = fork();
        if (child < 0) return 2;
        if (child > 0) {
            int status = 0;
            if (waitpid(child, &status, 0) != child) return 2;
            return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
        }
        (void)getppid();
        *(volatile uint64_t *)(control + 24) = (uint64_t)getpid();
    }
    control[1] = 1;
    while (!control[0]) {
        if (fx_add(1, 2) != 3) *changed += 1;
        *calls += 1;
    }
    (void)getppid();
    printf("after: %d\n", fx_add(1, 2));
    return 0;
}
