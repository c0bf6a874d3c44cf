/* Area: prototype rules / re-entry.
 * Purpose: calls rec(N) of librec and prints the result. Usage: rec_main N. */
#include <stdio.h>
#include <stdlib.h>
int rec(int n);
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 3;
    printf("%d\n", rec(n));
    return 0;
}
