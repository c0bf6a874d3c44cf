/* Area: prototype rules (GOT rewriting) in other link-map namespaces.
 * Purpose: loads each library named on the command line into a new link-map namespace
 * (dlmopen LM_ID_NEWLM) and prints what its based_value() returns, one line per library,
 * then what atoi returns in the program itself. Usage: proto_namespaces LIB... */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        void *h = dlmopen(LM_ID_NEWLM, argv[i], RTLD_NOW);
        if (!h) { printf("dlmopen failed: %s\n", dlerror()); return 1; }
        int (*value)(void) = (int (*)(void))dlsym(h, "based_value");
        printf("%d\n", value ? value() : -1);
    }
    printf("main %d\n", atoi("3"));
    return 0;
}
