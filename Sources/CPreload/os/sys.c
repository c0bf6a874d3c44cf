/* sys.c — the preload's only way to the kernel. Raw system calls through syscall(2), never
 * through libc functions the preload itself exports (a call from inside libaspects.so to
 * `open` or `mmap` would bind to our own wrapper). Every function is async-signal-safe.
 * Callers that care about errno save and restore it around these.
 * syscall(2) is variadic and reads every argument as a long: an int passed as is leaves the
 * register's upper half undefined (the kernel then rejects e.g. mmap's prot), so every
 * narrower argument is cast. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "sys.h"

int asp_debug_enabled;
uint32_t asp_pid;

long asp_sys_close(int fd) { return syscall(SYS_close, (long)fd); }

long asp_sys_open_ro(const char *path) {
    return syscall(SYS_openat, (long)AT_FDCWD, path, (long)(O_RDONLY | O_CLOEXEC), 0L);
}

long asp_sys_read(int fd, void *buf, size_t n) {
    long r;
    do r = syscall(SYS_read, (long)fd, buf, n); while (r < 0 && errno == EINTR);
    return r;
}

long asp_sys_create_new(const char *path) {
    return syscall(SYS_openat, (long)AT_FDCWD, path, (long)(O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC), 0600L);
}

long asp_sys_write(int fd, const void *buf, size_t n) {
    long r;
    do r = syscall(SYS_write, (long)fd, buf, n); while (r < 0 && errno == EINTR);
    return r;
}

long asp_sys_readlink(const char *path, char *buf, size_t n) {
    return syscall(SYS_readlinkat, (long)AT_FDCWD, path, buf, n);
}

long asp_sys_fstat_size(int fd, uint64_t *size) {
    struct stat st;
    long r = syscall(SYS_fstat, (long)fd, &st);
    if (r == 0) *size = (uint64_t)st.st_size;
    return r;
}

void asp_sys_yield(void) { syscall(SYS_sched_yield); }
uint32_t asp_sys_geteuid(void) { return (uint32_t)syscall(SYS_geteuid); }
uint32_t asp_sys_getpid(void) { return (uint32_t)syscall(SYS_getpid); }
uint32_t asp_sys_getppid(void) { return (uint32_t)syscall(SYS_getppid); }
uint32_t asp_sys_gettid(void) { return (uint32_t)syscall(SYS_gettid); }

uint64_t asp_sys_realtime_ns(void) {
    struct timespec ts;
    /* the kernel, not clock_gettime, which the catalog may advise (events.c finds libc's own;
     * this is its fallback) */
    if (syscall(SYS_clock_gettime, (long)CLOCK_REALTIME, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sleeps the whole duration even when signals interrupt it (the handler runs, then we go on):
 * a `delay` of 200 ms means 200 ms. Absolute deadline, so interruptions do not stretch it. */
void asp_sys_sleep_ns(uint64_t ns) {
    struct timespec now, until;
    if (syscall(SYS_clock_gettime, (long)CLOCK_MONOTONIC, &now) != 0) return;
    uint64_t t = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec + ns;
    until.tv_sec = (time_t)(t / 1000000000ull);
    until.tv_nsec = (long)(t % 1000000000ull);
    for (int i = 0; i < 1000; i++) {
        long r = syscall(SYS_clock_nanosleep, (long)CLOCK_MONOTONIC, (long)TIMER_ABSTIME, &until, NULL);
        if (r == 0 || errno != EINTR) return;
    }
}

void asp_sys_raise(int sig) {
    syscall(SYS_tgkill, (long)asp_sys_getpid(), (long)asp_sys_gettid(), (long)sig);
}

static size_t asp_strlen(const char *s) {
    size_t n = 0;
    while (s && s[n]) n++;
    return n;
}

static void asp_say(const char *a, const char *b, const char *c);

long asp_sys_fstat(int fd, struct stat *st) { return syscall(SYS_fstat, (long)fd, st); }

void asp_decimal_text(uint32_t v, char out[12]) {
    char rev[12];
    uint32_t n = 0;
    do { rev[n++] = (char)('0' + v % 10u); v /= 10u; } while (v);
    for (uint32_t i = 0; i < n; i++) out[i] = rev[n - 1 - i];
    out[n] = 0;
}

/* One line on stderr, whatever ASPECTS_DEBUG says: what a user of the program must know. */
void asp_note(const char *a, const char *b, const char *c) { asp_say(a, b, c); }

/* One line on stderr, only with ASPECTS_DEBUG set: "libaspects: a b c". */
void asp_debug(const char *a, const char *b, const char *c) {
    if (asp_debug_enabled) asp_say(a, b, c);
}

/* With ASPECTS_STRICT set, the first reason advice is off in this process, on stderr, with
 * the pid (whatever ASPECTS_DEBUG says); later ones are not repeated. */
int asp_strict_enabled;
void asp_strict_say(const char *a, const char *b, const char *c) {
    static uint32_t said;
    if (!asp_strict_enabled || __atomic_exchange_n(&said, 1, __ATOMIC_RELAXED)) return;
    char what[400];
    size_t n = 0;
    const char *parts[3] = {a, b, c};
    for (int p = 0; p < 3; p++) {
        size_t len = asp_strlen(parts[p]);
        if (p && len && n < sizeof what - 1) what[n++] = ' ';
        for (size_t i = 0; i < len && n < sizeof what - 1; i++) what[n++] = parts[p][i];
    }
    what[n] = 0;
    char pid[16];
    size_t k = 0;
    uint32_t v = asp_sys_getpid();
    char rev[16];
    do { rev[k++] = (char)('0' + v % 10); v /= 10; } while (v && k < sizeof rev);
    for (size_t i = 0; i < k; i++) pid[i] = rev[k - 1 - i];
    pid[k] = 0;
    char head[32] = "pid ";
    size_t h = 4;
    for (size_t i = 0; i < k && h < sizeof head - 2; i++) head[h++] = pid[i];
    head[h++] = ':';
    head[h] = 0;
    asp_say(head, what, "- advice is off in this process (ASPECTS_STRICT)");
}

static void asp_say(const char *a, const char *b, const char *c) {
    int saved = errno;
    char line[512];
    size_t n = 0;
    const char *parts[4] = {"libaspects: ", a, b, c};
    for (int p = 0; p < 4; p++) {
        const char *s = parts[p];
        size_t len = asp_strlen(s);
        if (p > 1 && len) { if (n < sizeof line - 2) line[n++] = ' '; }
        for (size_t i = 0; i < len && n < sizeof line - 2; i++) line[n++] = s[i];
    }
    line[n++] = '\n';
    syscall(SYS_write, 2L, line, n);
    errno = saved;
}
