/* advice_whoami.c — advice that says by which name the loader knows its object (dladdr), so a
 * test can see that the preload loaded the descriptor it checked (/proc/self/fd/N). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <aspects_advice.h>

void whoami_getppid(aspects_invocation *inv) {
    Dl_info info;
    if (dladdr((void *)whoami_getppid, &info) && info.dli_fname) fprintf(stderr, "whoami: %s\n", info.dli_fname);
    aspects_set_return_int(inv, 4242);
}
