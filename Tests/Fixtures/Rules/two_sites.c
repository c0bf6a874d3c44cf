/* Area: call sites (the `site` condition, the caller in events, explore).
 * Purpose: write(2) from two places, twice each: from_a(), from_b(), from_a(), from_b(). Each
 * writes one byte to /dev/null and keeps the result; stdio (which writes inside libc, not
 * through the advised write) prints them at the end.
 * Usage: two_sites. Output: "a 1 b 1 a 1 b 1" (a failed write shows -1 and its errno name). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int fd;
static char out[256];

static void note(const char *who, long r) {
    size_t n = strlen(out);
    if (r < 0) snprintf(out + n, sizeof out - n, "%s%s -1 %s", n ? " " : "", who, errno == ENOSPC ? "ENOSPC" : errno == EIO ? "EIO" : "other");
    else snprintf(out + n, sizeof out - n, "%s%s %ld", n ? " " : "", who, r);
}

__attribute__((noinline)) static void from_a(void) { note("a", (long)write(fd, "a", 1)); }
__attribute__((noinline)) static void from_b(void) { note("b", (long)write(fd, "b", 1)); }

int main(void) {
    fd = open("/dev/null", O_WRONLY);
    if (fd < 0) return 2;
    from_a();
    from_b();
    from_a();
    from_b();
    printf("%s\n", out);
    return 0;
}
