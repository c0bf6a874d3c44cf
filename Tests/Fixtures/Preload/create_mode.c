/* Area: preload / variadic forwarding.
 * Purpose: open(path, O_CREAT|O_WRONLY, 0640) through an armed open must keep its mode
 * (the closure forwards the variadic mode argument). Usage: create_mode PATH.
 * Output: "mode 640" (octal permission bits of the created file), umask cleared first. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    umask(0);
    int fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0640);
    if (fd < 0) { perror("open"); return 1; }
    close(fd);
    struct stat st;
    if (stat(argv[1], &st) != 0) { perror("stat"); return 1; }
    printf("mode %o\n", st.st_mode & 0777);
    return 0;
}
