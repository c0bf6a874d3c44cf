/* Area: prototype rules / symbol versions.
 * Purpose: calls fx_ver (bound at link time to its default version, V2) twice and prints the
 * results: "ver: 2" twice without advice. */
#include <stdio.h>
int fx_ver(void);
int main(void) {
    printf("ver: %d\n", fx_ver());
    printf("ver: %d\n", fx_ver());
    return 0;
}
