/* Area: host safety / resource limits.
 * Purpose: a program that lowers a resource limit to almost nothing and only then makes its
 * first armed calls, which is when the preload does its one-time work (loading libffi,
 * building the forwarding stub). That work may fail; the call must then go to the original
 * (pass-through), never crash.
 *   as      RLIMIT_AS = the address space in use now + 64 KB: no new mapping of any size;
 *   nofile  RLIMIT_NOFILE = the lowest free descriptor: no new descriptor.
 * Usage: late_rlimit as|nofile. Output: "getppid42 N open E" — N of 10 getppid calls answered
 * 42 (5 with the tests' every-2 rule when the advice works, 0 when it passed through), and
 * the errno name of an open of /dev/null that the limit must refuse (EMFILE for nofile) or
 * "ok". */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Bytes of address space mapped now, from /proc/self/statm (in pages). Read before the limit. */
static unsigned long mapped_bytes(void) {
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%lu", &pages) != 1) pages = 0;
    fclose(f);
    return pages * (unsigned long)sysconf(_SC_PAGESIZE);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    setvbuf(stdout, NULL, _IONBF, 0); /* stdio must not need a buffer once the limit is on */
    struct rlimit lim;
    int resource;
    if (strcmp(argv[1], "as") == 0) {
        resource = RLIMIT_AS;
        lim.rlim_cur = lim.rlim_max = mapped_bytes() + 64 * 1024;
    } else {
        resource = RLIMIT_NOFILE;
        int lowest = dup(0); /* the lowest free descriptor */
        if (lowest < 0) return 3;
        close(lowest);
        lim.rlim_cur = lim.rlim_max = (rlim_t)lowest;
    }
    if (setrlimit(resource, &lim) != 0) return 3;
    int answers42 = 0;
    for (int i = 0; i < 10; i++) answers42 += getppid() == 42;
    errno = 0;
    int fd = open("/dev/null", O_RDONLY);
    const char *open_result = fd >= 0 ? "ok" : errno == EMFILE ? "EMFILE" : errno == ENOMEM ? "ENOMEM" : strerror(errno);
    printf("getppid42 %d open %s\n", answers42, open_result);
    return 0;
}
