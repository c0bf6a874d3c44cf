/* stdio_probe: one stdio call on a stream whose descriptor is 42, then everything a program
 * can see of the stream — the result, errno, ferror, feof, ftell, the buffer glibc chose, a
 * retry of the same call, and what reached the file — printed at the end in one write(2) (so
 * that before the report the only read or write on descriptor 42 is the stdio library's own). StdioFaultTests runs
 * it with aspects' fault on the call and with strace failing the call's read(2)/write(2)
 * (`-e inject=read:error=EIO:when=N`), and requires the same report.
 *
 *   stdio_probe FUNCTION SCENARIO FILE
 *   FUNCTION: fread fgets getline getdelim fgetc getchar fwrite fputs fputc puts putchar fflush
 *             fclose (getchar reads stdin, which is then FILE on descriptor 0; puts and putchar
 *             write stdout, FILE on descriptor 1, and the report goes to a copy of the first 1)
 *   SCENARIO: syscall  the call makes the system call (an unbuffered write, a first read,
 *                      fflush and fclose with output pending)
 *             buffered the call makes none (a read served from the buffer that fgetc filled,
 *                      a write that fits the buffer, fflush and fclose with nothing pending)
 *             memory   a stream without a descriptor (fmemopen)
 * The data file (for reads) holds "alpha\nbeta\ngamma\n"; writes go to FILE, made anew. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char report[8192];
static size_t used;
static int report_fd = 1;

static void say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(report + used, sizeof report - used, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < sizeof report - used) used += (size_t)n;
}

static const char *errname(int e) {
    switch (e) {
    case 0: return "0";
    case EIO: return "EIO";
    case ENOSPC: return "ENOSPC";
    case EBADF: return "EBADF";
    case EPIPE: return "EPIPE";
    case ECONNRESET: return "ECONNRESET";
    default: return "other";
    }
}

static void state(const char *what, FILE *f, long result, int err) {
    say("%s: result=%ld errno=%s", what, result, errname(err));
    if (f) {
        errno = 0;
        long pos = ftell(f);
        say(" ferror=%d feof=%d ftell=%ld", ferror(f) != 0, feof(f) != 0, pos);
        /* the buffer glibc chose at the first I/O (from fstat of the descriptor) */
        say(" buffer=%zu linebuf=%d", __fbufsize(f), __flbf(f) != 0);
    }
    say("\n");
}

/* The function under test, once. */
static long call(const char *fn, FILE *f, char *buf, size_t cap, char **line, size_t *linecap) {
    if (!strcmp(fn, "fread")) return (long)fread(buf, 1, 6, f);
    if (!strcmp(fn, "fgets")) return fgets(buf, (int)cap, f) ? (long)strlen(buf) : -1;
    if (!strcmp(fn, "getline")) return (long)getline(line, linecap, f);
    if (!strcmp(fn, "getdelim")) return (long)getdelim(line, linecap, '\n', f);
    if (!strcmp(fn, "fgetc")) {
        int c = fgetc(f);
        buf[0] = c == EOF ? 0 : (char)c;
        buf[1] = 0;
        return c;
    }
    if (!strcmp(fn, "fputc")) return (long)fputc('h', f);
    if (!strcmp(fn, "puts")) return (long)puts("hello");
    if (!strcmp(fn, "putchar")) return (long)putchar('h');
    if (!strcmp(fn, "getchar")) {
        int c = getchar();
        buf[0] = c == EOF ? 0 : (char)c;
        buf[1] = 0;
        return c;
    }
    if (!strcmp(fn, "fwrite")) return (long)fwrite("hello\n", 1, 6, f);
    if (!strcmp(fn, "fputs")) return (long)fputs("hello\n", f);
    if (!strcmp(fn, "fflush")) return (long)fflush(f);
    return -99;
}

static int reads(const char *fn) {
    return !strcmp(fn, "fread") || !strcmp(fn, "fgets") || !strcmp(fn, "getline") || !strcmp(fn, "getdelim") || !strcmp(fn, "fgetc") ||
           !strcmp(fn, "getchar");
}

static FILE *stream_at_42(const char *fn, const char *path, int flags, const char *mode) {
    int fd = open(path, flags, 0600);
    /* the standard streams' functions: stdin or stdout on that file */
    int at = !strcmp(fn, "getchar") ? 0 : (!strcmp(fn, "puts") || !strcmp(fn, "putchar")) ? 1 : 42;
    if (at == 1) report_fd = dup(1);
    if (fd < 0 || dup2(fd, at) != at) exit(3);
    close(fd);
    return at == 0 ? stdin : at == 1 ? stdout : fdopen(42, mode);
}

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    const char *fn = argv[1], *scenario = argv[2], *path = argv[3];
    char buf[64] = {0}, *line = NULL;
    size_t linecap = 0;
    static char memory[64] = "alpha\nbeta\ngamma\n";
    FILE *f;
    if (!strcmp(scenario, "memory")) f = fmemopen(memory, sizeof memory, reads(fn) ? "r" : "w");
    else if (reads(fn)) f = stream_at_42(fn, path, O_RDONLY, "r");
    else f = stream_at_42(fn, path, O_WRONLY | O_CREAT | O_TRUNC, "w");
    if (!f) return 3;

    const int syscall_case = !strcmp(scenario, "syscall");
    if (!reads(fn)) {
        /* an unbuffered write makes its write(2) at once; fflush and fclose flush a pending line */
        const int flushes = !strcmp(fn, "fflush") || !strcmp(fn, "fclose");
        if (syscall_case && !flushes) setvbuf(f, NULL, _IONBF, 0);
        if (flushes && (syscall_case || !strcmp(scenario, "memory"))) fputs("pending\n", f);
    } else if (!syscall_case && strcmp(scenario, "memory")) {
        /* fills the buffer: the call is served from it (with a function the rule is not on) */
        char c;
        if (!strcmp(fn, "fgetc")) {
            if (fread(&c, 1, 1, f) == 1) ungetc(c, f);
        } else {
            ungetc(fgetc(f), f);
        }
    }

    errno = 0;
    if (!strcmp(fn, "fclose")) {
        int r = fclose(f);
        state("call", NULL, r, errno);
    } else {
        long r = call(fn, f, buf, sizeof buf, &line, &linecap);
        int e = errno;
        state("call", f, r, e);
        if (reads(fn) && r >= 0) say("data: %s", line ? line : buf);
        errno = 0;
        clearerr(f);
        r = call(fn, f, buf, sizeof buf, &line, &linecap);
        e = errno;
        state("retry", f, r, e);
        if (reads(fn) && r >= 0) say("data: %s", line ? line : buf);
        errno = 0;
        r = fclose(f);
        state("fclose", NULL, r, errno);
    }
    if (strcmp(scenario, "memory") && !reads(fn)) {
        struct stat st;
        say("file: %ld bytes\n", stat(path, &st) == 0 ? (long)st.st_size : -1L);
    }
    free(line);
    (void)!write(report_fd, report, used);
    return 0;
}
