/* Area: the host's own single-threaded requirements (LivePrototypeTests).
 * Purpose: unshare(CLONE_NEWUSER), which the kernel refuses (EINVAL) to a multithreaded
 * process. Prints "unshare: ok" or "unshare: <errno name>"; exit status 0 or 1. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    if (unshare(CLONE_NEWUSER) == 0) { printf("unshare: ok\n"); return 0; }
    printf("unshare: %s\n", errno == EINVAL ? "EINVAL" : strerror(errno));
    return 1;
}
