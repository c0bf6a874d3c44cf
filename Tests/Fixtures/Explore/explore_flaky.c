/* Area: explore (the reproduction run: "flaky").
 * Purpose: a program whose handling of one error depends on state it keeps across runs, as
 * programs with a recovery journal do: when the write of out.txt fails and no journal exists
 * yet (JOURNAL, outside the run's working directory, which explore makes afresh each time), it
 * starts one and aborts; when the journal exists, it reports the error and exits 1. The same
 * fault therefore crashes on the campaign's run and is handled on the reproduction run, which
 * explore must mark flaky rather than reproduced.
 * Usage: explore_flaky JOURNAL (a path that does not exist before the campaign).
 * Output: "saved" when the write succeeded. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    int fd = open("out.txt", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        perror("flaky: out.txt");
        return 1;
    }
    if (write(fd, "data\n", 5) != 5) {
        if (access(argv[1], F_OK) == 0) {
            fprintf(stderr, "flaky: the write failed; the journal has the data\n");
            return 1;
        }
        int journal = open(argv[1], O_WRONLY | O_CREAT | O_EXCL, 0600);
        if (journal >= 0) close(journal);
        abort();
    }
    close(fd);
    printf("saved\n");
    return 0;
}
