/* Area: preload / caller conditions.
 * Purpose: getppid called alternately from the program and from libcallerlib.so, so that a
 * `caller` rule must answer per call site, also when the last answer was for the other one.
 * Usage: caller_mix N. Output: one line per round, "exe R lib R", R being "42" when the call
 * returned 42 (a rule's forged result) and "real" otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int caller_lib_getppid(void);

static const char *show(int r) { return r == 42 ? "42" : "real"; }

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 3;
    for (int i = 0; i < n; i++) {
        int a = (int)getppid();
        int b = caller_lib_getppid();
        printf("exe %s lib %s\n", show(a), show(b));
    }
    return 0;
}
