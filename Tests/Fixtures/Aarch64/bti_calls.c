/* Area: aarch64 / branch protection (Aarch64BranchProtectionTests).
 * Purpose: calls catalog functions every way a BTI program can — through its PLT (br x17)
 * and through function pointers (blr) — so that, built for BTI (bti_start.S) and run on a CPU
 * with BTI, each call enters the preload's wrapper by an indirect branch its pages check.
 * Usage: bti_calls N — N rounds of getppid by PLT and by pointer, then one write by each.
 * Output: "fired F calls C" (getppid calls that returned 42, a rule's doing; calls made).
 *        bti_calls nopad — calls a function without a landing pad through a pointer: on a
 * CPU that enforces BTI on this program's pages, SIGILL (what shows enforcement is on). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern int bti_no_pad(void);
__asm__(".text\n.globl bti_no_pad\n.type bti_no_pad, %function\nbti_no_pad:\n    mov w0, #7\n    ret\n");

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    if (strcmp(argv[1], "nopad") == 0) {
        int (*volatile f)(void) = bti_no_pad;
        printf("no pad: %d\n", f());
        return 0;
    }
    const long n = atol(argv[1]);
    pid_t (*volatile by_pointer)(void) = getppid;
    ssize_t (*volatile write_by_pointer)(int, const void *, size_t) = write;
    long fired = 0, calls = 0;
    for (long i = 0; i < n; i++) {
        fired += getppid() == 42;
        fired += by_pointer() == 42;
        calls += 2;
    }
    if (write(1, "plt\n", 4) != 4 || write_by_pointer(1, "pointer\n", 8) != 8) return 3;
    printf("fired %ld calls %ld\n", fired, calls);
    return 0;
}
