/* table_trust.c — the trust rule of aspects_trust.h, for the preload and aspectctl alike.
 * Raw system calls through syscall(2), every argument cast to long (it is variadic). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "aspects_abi.h"
#include "aspects_trust.h"

static long trust_openat(int dirfd, const char *name, int flags) {
    long r;
    do r = syscall(SYS_openat, (long)dirfd, name, (long)(flags | O_CLOEXEC), 0L); while (r < 0 && errno == EINTR);
    return r;
}

static void trust_close(long fd) {
    int saved = errno;
    if (fd >= 0) syscall(SYS_close, fd);
    errno = saved;
}

static int trust_fstat(long fd, struct stat *st) { return syscall(SYS_fstat, fd, st) == 0 ? 0 : -1; }

/* "/proc/self/fd/<fd>" without stdio. */
static void trust_proc_path(long fd, char out[40]) {
    static const char prefix[] = "/proc/self/fd/";
    char digits[24];
    int n = 0, i = 0;
    do digits[n++] = (char)('0' + fd % 10); while ((fd /= 10) > 0 && n < 20);
    for (; prefix[i]; i++) out[i] = prefix[i];
    while (n > 0) out[i++] = digits[--n];
    out[i] = 0;
}

/* Whether the process is a member of gid: its effective group or a supplementary one. */
static int trust_in_group(uint32_t gid) {
    if ((uint32_t)syscall(SYS_getegid) == gid) return 1;
    uint32_t groups[256];
    long n = syscall(SYS_getgroups, 256L, groups);
    for (long i = 0; i < n; i++)
        if (groups[i] == gid) return 1;
    return 0;
}

/* A table shared with a group (aspects_trust.h): its header, read from the opened file, says
 * it was created shared with the file's group. */
static int trust_shared_with(long io, uint32_t gid) {
    aspects_table_header h;
    long r;
    do r = syscall(SYS_pread64, io, &h, (long)sizeof h, 0L); while (r < 0 && errno == EINTR);
    return r == (long)sizeof h && h.magic == ASPECTS_MAGIC && (h.share_flags & ASPECTS_SHARE_GROUP) && h.shared_gid == gid;
}

int aspects_table_open(const char *path, int writable, uint32_t euid, int *fd_out, uint32_t *owner_out) {
    *fd_out = -1;
    if (!path || path[0] != '/') return ASPECTS_TRUST_BAD_PATH;
    long dir = trust_openat(AT_FDCWD, "/", O_PATH | O_DIRECTORY);
    if (dir < 0) return ASPECTS_TRUST_SYSTEM;
    char comp[256];
    const char *p = path;
    for (;;) {
        while (*p == '/') p++;
        size_t n = 0;
        while (p[n] && p[n] != '/') n++;
        if (n == 0 || n >= sizeof comp) { trust_close(dir); return ASPECTS_TRUST_BAD_PATH; }
        for (size_t i = 0; i < n; i++) comp[i] = p[i];
        comp[n] = 0;
        p += n;
        while (*p == '/') p++;
        const int last = *p == 0;
        /* O_PATH | O_NOFOLLOW opens a symbolic link itself, so fstat can tell what it is, and
         * opens nothing else for I/O: a FIFO does not block, a device is not touched. */
        long fd = trust_openat((int)dir, comp, O_PATH | O_NOFOLLOW);
        if (fd < 0) {
            int e = errno;
            trust_close(dir);
            errno = e;
            return e == ENOENT || e == ENOTDIR ? ASPECTS_TRUST_MISSING : ASPECTS_TRUST_SYSTEM;
        }
        struct stat st;
        if (trust_fstat(fd, &st) != 0) { trust_close(fd); trust_close(dir); return ASPECTS_TRUST_SYSTEM; }
        if (S_ISLNK(st.st_mode)) { trust_close(fd); trust_close(dir); return ASPECTS_TRUST_SYMLINK; }
        if (!last) {
            trust_close(dir);
            if (!S_ISDIR(st.st_mode)) { trust_close(fd); errno = ENOTDIR; return ASPECTS_TRUST_MISSING; }
            dir = fd;
            continue;
        }
        if (owner_out) *owner_out = (uint32_t)st.st_uid;
        const int owned = (uint32_t)st.st_uid == euid;
        /* shared with a group: decided once the file is open and its header can be read */
        const int shared = S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0660;
        int verdict = !S_ISREG(st.st_mode) ? ASPECTS_TRUST_NOT_REGULAR
                    : shared ? ASPECTS_TRUST_OK
                    : !owned ? ASPECTS_TRUST_OWNER
                    : (st.st_mode & (S_IWGRP | S_IWOTH)) ? ASPECTS_TRUST_MODE : ASPECTS_TRUST_OK;
        if (verdict == ASPECTS_TRUST_OK && shared && !owned && !trust_in_group((uint32_t)st.st_gid)) verdict = ASPECTS_TRUST_OWNER;
        if (verdict != ASPECTS_TRUST_OK) { trust_close(fd); trust_close(dir); return verdict; }
        /* Re-open the checked inode itself: nothing can be swapped in between. Without /proc,
         * open the name again (never blocking, never a controlling tty) and compare inodes. */
        char proc[40];
        trust_proc_path(fd, proc);
        const int flags = (writable ? O_RDWR : O_RDONLY) | O_NOCTTY;
        long io = trust_openat(AT_FDCWD, proc, flags);
        if (io < 0 && errno == ENOENT) io = trust_openat((int)dir, comp, flags | O_NOFOLLOW | O_NONBLOCK);
        trust_close(dir);
        struct stat again;
        if (io >= 0 && (trust_fstat(io, &again) != 0 || again.st_dev != st.st_dev || again.st_ino != st.st_ino)) {
            trust_close(io);
            io = -1;
            errno = ESTALE;
        }
        int e = errno;
        trust_close(fd);
        if (io < 0) { errno = e; return e == ENOENT ? ASPECTS_TRUST_MISSING : ASPECTS_TRUST_SYSTEM; }
        if (shared && !trust_shared_with(io, (uint32_t)st.st_gid)) {
            /* group-writable without having been created shared: the plain rule's verdict */
            trust_close(io);
            return owned ? ASPECTS_TRUST_MODE : ASPECTS_TRUST_OWNER;
        }
        *fd_out = (int)io;
        return ASPECTS_TRUST_OK;
    }
}

const char *aspects_trust_text(int code) {
    switch (code) {
    case ASPECTS_TRUST_OK: return "is trusted";
    case ASPECTS_TRUST_MISSING: return "does not exist";
    case ASPECTS_TRUST_SYMLINK: return "is reached through a symbolic link";
    case ASPECTS_TRUST_NOT_REGULAR: return "is not a regular file";
    case ASPECTS_TRUST_OWNER: return "is owned by another user";
    case ASPECTS_TRUST_MODE: return "is writable by group or others";
    case ASPECTS_TRUST_BAD_PATH: return "is not a usable absolute path";
    default: return "cannot be opened";
    }
}
