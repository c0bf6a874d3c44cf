/* Area: prototype rules (GOT rewriting) across dlclose.
 * Purpose: loads and unloads a library that imports fx_add, so tests can check that the
 * preload forgets the GOT slots of unloaded objects (never writes into them, never runs out
 * of slots) while a prototype rule on fx_add comes and goes.
 * Usage: proto_cycle LIBRARY, then commands on stdin, one per line:
 *   cycle N  dlopen LIBRARY, call its fx_user(1), dlclose it; N times
 *   call     getppid() (the catalog call on which the preload notices table changes), fx_add(1, 2)
 * Output: per cycle command "cycles N: first F last L advised A" (A = calls whose result was
 * not the plain 101), per call command "add R". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int fx_add(int a, int b);

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    char line[64];
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "cycle ", 6) == 0) {
            int n = atoi(line + 6), first = 0, last = 0, advised = 0;
            for (int i = 0; i < n; i++) {
                (void)getppid();
                void *h = dlopen(argv[1], RTLD_NOW);
                if (!h) { printf("dlopen failed: %s\n", dlerror()); return 1; }
                int (*user)(int) = (int (*)(int))dlsym(h, "fx_user");
                int r = user ? user(1) : -1;
                if (i == 0) first = r;
                last = r;
                advised += r != 101;
                if (dlclose(h) != 0) { printf("dlclose failed\n"); return 1; }
            }
            printf("cycles %d: first %d last %d advised %d\n", n, first, last, advised);
        } else {
            (void)getppid();
            printf("add %d\n", fx_add(1, 2));
        }
        fflush(stdout);
    }
    return 0;
}
