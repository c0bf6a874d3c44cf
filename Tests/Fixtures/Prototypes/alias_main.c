/* Area: re-entry / alias chains.
 * Purpose: opens /etc/hostname once by open64 and once by open, and prints "ok ok" when both
 * worked. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int main(void) {
    int a = open64("/etc/hostname", O_RDONLY), b = open("/etc/hostname", O_RDONLY);
    printf("%s %s\n", a >= 0 ? "ok" : "fail", b >= 0 ? "ok" : "fail");
    return 0;
}
