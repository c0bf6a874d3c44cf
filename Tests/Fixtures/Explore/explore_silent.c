/* explore_silent.c — silent data loss for explore without a check (ExploreVerdictTests).
 * Writes three records to out.txt and lists them on stdout with write(2), ignoring what write
 * returns (the planted bug: an error swallowed, a record lost, exit 0, nothing said); an open
 * that fails is reported (exit 1: handled). It also writes `stamp`, different on every run (its
 * pid): what the baseline runs differ in is no finding. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    FILE *stamp = fopen("stamp", "w");
    if (stamp) {
        fprintf(stamp, "%d\n", (int)getpid());
        fclose(stamp);
    }
    int fd = open("out.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror("explore_silent: out.txt");
        return 1;
    }
    const char *records[] = {"one\n", "two\n", "three\n"};
    for (int i = 0; i < 3; i++) (void)!write(fd, records[i], strlen(records[i]));
    close(fd);
    for (int i = 0; i < 3; i++) (void)!write(1, records[i], strlen(records[i]));
    return 0;
}
