/* Area: prototype rules (GOT rewriting).
 * Purpose: calls the functions of libfx (linked) COUNT times and prints every result, then,
 * with a library path as second argument, dlopens it and calls its fx_user (which calls fx_add
 * through its own GOT; with a third argument "ns", in a new dlmopen namespace).
 * Usage: proto_main COUNT [LIBRARY [ns]], or proto_main live: for every line
 * on stdin, call getppid() (a catalog function: the advised call on which the preload notices
 * table changes) and print fx_add(1, 2) and fx_scale(2, 1.5) ("3 3.00").
 * Output: "add K: R", "name K: S", "scale K: D", "sum6 K: R", "vsum K: R", "swap K: A B",
 * "big K: R", "bigmake K: A B C D" per round, then
 * "user: R". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int fx_add(int a, int b);
const char *fx_name(int which);
double fx_scale(double x, double k);
long fx_sum6(long a, long b, long c, long d, long e, long f);
int fx_vsum(int count, ...);
struct pair { double a, b; };
struct big { long a, b, c, d; };
struct pair fx_swap(struct pair p);
long fx_bigsum(struct big b);
struct big fx_bigmake(long k);

int main(int argc, char **argv) {
    if (argc > 1 && argv[1][0] == 'l') {
        char line[64];
        setvbuf(stdout, NULL, _IOLBF, 0);
        while (fgets(line, sizeof line, stdin)) {
            (void)getppid();
            printf("%d %.2f\n", fx_add(1, 2), fx_scale(2.0, 1.5));
            fflush(stdout);
        }
        return 0;
    }
    int count = argc > 1 ? atoi(argv[1]) : 3;
    for (int k = 1; k <= count; k++) {
        printf("add %d: %d\n", k, fx_add(k, 2));
        printf("name %d: %s\n", k, fx_name(k & 1));
        printf("scale %d: %.2f\n", k, fx_scale(k, 1.5));
        printf("sum6 %d: %ld\n", k, fx_sum6(1, 2, 3, 4, 5, k));
        printf("vsum %d: %d\n", k, fx_vsum(2, 10, k));
        struct pair sw = fx_swap((struct pair){k, 0.5});
        printf("swap %d: %.1f %.1f\n", k, sw.a, sw.b);
        printf("big %d: %ld\n", k, fx_bigsum((struct big){k, 10, 100, 1000}));
        struct big made = fx_bigmake(k);
        printf("bigmake %d: %ld %ld %ld %ld\n", k, made.a, made.b, made.c, made.d);
    }
    if (argc > 2) {
        /* a third argument "ns": load it into a new link-map namespace with dlmopen */
        void *h = argc > 3 ? dlmopen(LM_ID_NEWLM, argv[2], RTLD_NOW) : dlopen(argv[2], RTLD_NOW);
        if (!h) { printf("dlopen failed: %s\n", dlerror()); return 1; }
        int (*user)(int) = (int (*)(int))dlsym(h, "fx_user");
        printf("user: %d\n", user ? user(1) : -1);
    }
    return 0;
}
