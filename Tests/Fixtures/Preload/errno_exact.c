/* Area: preload / errno and return values.
 * Purpose: an `after` advice must leave the original's return value and errno exactly as
 * they were. Each call sets errno to a sentinel first; the output shows what the caller got.
 * Expected without advice (and with a non-changing `after` advice):
 *   open-missing: -1 errno=2          (ENOENT from the kernel)
 *   close-bad: -1 errno=9             (EBADF)
 *   write-ok: 5 errno=12345           (success leaves the sentinel untouched)
 *   read-ok: 5 errno=12345 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
    int fds[2];
    if (pipe(fds) != 0) return 2;
    errno = 12345;
    int r = open("/nonexistent-aspects-dir/file", O_RDONLY);
    printf("open-missing: %d errno=%d\n", r, errno);
    errno = 12345;
    r = close(-1);
    printf("close-bad: %d errno=%d\n", r, errno);
    errno = 12345;
    ssize_t n = write(fds[1], "hello", 5);
    printf("write-ok: %zd errno=%d\n", n, errno);
    char buf[8];
    errno = 12345;
    n = read(fds[0], buf, sizeof buf);
    printf("read-ok: %zd errno=%d\n", n, errno);
    return 0;
}
