/* Area: explore (planted error-handling bugs).
 * Purpose: a small "ledger" program with four error paths that are wrong on purpose and one
 * that is right, so that `aspectctl explore` must find exactly the wrong ones:
 *   - open of ledger.db failing: reported, exit 1 (correct: a "handled" outcome);
 *   - malloc failing: the NULL is used (a crash, SIGSEGV);
 *   - write of the new ledger failing: ignored, and the short temp file is renamed over the
 *     good ledger (data loss only a check of ledger.db sees: "check-failed");
 *   - write to its own pipe failing: ignored, then it waits on the pipe for good (a hang);
 *   - close failing: the buffer is freed twice (glibc aborts: a crash, SIGABRT).
 * Usage: explore_ledger (in a directory holding ledger.db, as --setup makes it).
 * Output: "total 42" when all went well. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    int db = open("ledger.db", O_RDONLY);
    if (db < 0) {
        perror("ledger: cannot open ledger.db");
        return 1;
    }
    char *entry = malloc(64);
    strcpy(entry, "total 42\n");              /* planted: malloc's NULL is not checked */
    int tmp = open("ledger.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (tmp < 0) {
        perror("ledger: cannot create ledger.tmp");
        return 1;
    }
    (void)write(tmp, entry, strlen(entry));   /* planted: a failed write is ignored ... */
    fsync(tmp);
    (void)close(tmp);
    rename("ledger.tmp", "ledger.db");        /* ... and the short file replaces the ledger */
    int p[2];
    if (pipe(p) != 0) return 1;
    (void)write(p[1], "x", 1);                /* planted: if this fails ... */
    char c;
    (void)read(p[0], &c, 1);                  /* ... this waits for ever */
    if (close(db) != 0) free(entry);          /* planted: freed here, and again below */
    free(entry);
    printf("total 42\n");
    return 0;
}
