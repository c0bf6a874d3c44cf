/* table_trust.c — the trust rules of aspects_trust.h, for the preload and aspectctl alike.
 * Raw system calls through syscall(2), every argument cast to long (it is variadic). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/shm.h>
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
void aspects_fd_path(long fd, char out[ASPECTS_FD_PATH_SIZE]) {
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

/* ---- the system's user and group files ------------------------------------------------------
 * Who is a member of a group is the system's to say, not a table's creator's (a header can
 * claim anything). The preload cannot call getgrouplist (NSS: locks, malloc, our own wrapped
 * functions), so both sides read the files themselves: /etc/passwd for a user's name and
 * primary group, /etc/group for the members listed. Users and groups known only to a network
 * service (LDAP, sssd) are not found, so a table shared through them is refused: the rule fails
 * closed. A line longer than TRUST_LINE bytes is not read (and proves nothing). */
#define TRUST_LINE 4096

typedef struct trust_line {
    const char *text;   /* the line, not terminated */
    uint32_t len;
} trust_line;

/* Field `k` (0-based) of a colon-separated line: its start and length, or 0. */
static int trust_field(const trust_line *l, int k, const char **at, uint32_t *len) {
    uint32_t i = 0;
    for (int f = 0; f < k; f++) {
        while (i < l->len && l->text[i] != ':') i++;
        if (i >= l->len) return 0;
        i++;
    }
    uint32_t j = i;
    while (j < l->len && l->text[j] != ':') j++;
    *at = l->text + i;
    *len = j - i;
    return 1;
}

static int trust_field_is_number(const trust_line *l, int k, uint32_t want) {
    const char *at;
    uint32_t len;
    if (!trust_field(l, k, &at, &len) || len == 0 || len > 10) return 0;
    uint64_t v = 0;
    for (uint32_t i = 0; i < len; i++) {
        if (at[i] < '0' || at[i] > '9') return 0;
        v = v * 10 + (uint64_t)(at[i] - '0');
    }
    return v == want;
}

/* Copies the first line of `path` whose field `k` is the number `want` into `out`: its length,
 * or -1 when there is none (or the file cannot be read). */
static long trust_db_find(const char *path, int k, uint32_t want, char out[TRUST_LINE]) {
    long fd = trust_openat(AT_FDCWD, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return -1;
    char chunk[1024];
    uint32_t len = 0;
    int overlong = 0;
    long found = -1;
    for (;;) {
        long n;
        do n = syscall(SYS_read, fd, chunk, (long)sizeof chunk); while (n < 0 && errno == EINTR);
        if (n <= 0) {
            /* a last line without a newline */
            trust_line l = {out, len};
            if (n == 0 && len && !overlong && trust_field_is_number(&l, k, want)) found = len;
            break;
        }
        for (long i = 0; i < n && found < 0; i++) {
            if (chunk[i] != '\n') {
                if (len < TRUST_LINE) out[len++] = chunk[i]; else overlong = 1;
                continue;
            }
            trust_line l = {out, len};
            if (!overlong && trust_field_is_number(&l, k, want)) found = len;
            else len = 0, overlong = 0;
        }
        if (found >= 0) break;
    }
    trust_close(fd);
    return found;
}

/* Copies a field out as a C string (cut to `cap` - 1 bytes). */
static void trust_copy_field(const trust_line *l, int k, char *out, uint32_t cap) {
    const char *at = "";
    uint32_t len = 0, i = 0;
    trust_field(l, k, &at, &len);
    for (; i < len && i + 1 < cap; i++) out[i] = at[i];
    if (cap) out[i] = 0;
}

/* The first field (the name) of the line of `db` whose third field is `id`. */
static int trust_db_name(const char *db, uint32_t id, char *out, uint32_t cap) {
    char line[TRUST_LINE];
    long n = trust_db_find(db, 2, id, line);
    if (n < 0) return 0;
    trust_line l = {line, (uint32_t)n};
    trust_copy_field(&l, 0, out, cap);
    return 1;
}

int aspects_user_name(uint32_t uid, char *out, uint32_t cap) { return trust_db_name("/etc/passwd", uid, out, cap); }

int aspects_group_name(uint32_t gid, char *out, uint32_t cap) { return trust_db_name("/etc/group", gid, out, cap); }

int aspects_user_in_group(uint32_t uid, uint32_t gid) {
    char line[TRUST_LINE];
    long n = trust_db_find("/etc/passwd", 2, uid, line);
    if (n < 0) return 0;
    trust_line user = {line, (uint32_t)n};
    if (trust_field_is_number(&user, 3, gid)) return 1; /* its primary group */
    char name[256];
    trust_copy_field(&user, 0, name, sizeof name);
    uint32_t name_len = 0;
    while (name[name_len]) name_len++;
    if (name_len == 0) return 0;
    char gline[TRUST_LINE];
    n = trust_db_find("/etc/group", 2, gid, gline);
    if (n < 0) return 0;
    trust_line group = {gline, (uint32_t)n};
    const char *members;
    uint32_t len;
    if (!trust_field(&group, 3, &members, &len)) return 0;
    for (uint32_t i = 0; i < len;) {
        uint32_t j = i;
        while (j < len && members[j] != ',') j++;
        if (j - i == name_len) {
            uint32_t c = 0;
            while (c < name_len && members[i + c] == name[c]) c++;
            if (c == name_len) return 1;
        }
        i = j + 1;
    }
    return 0;
}

/* ---- walking a path ------------------------------------------------------------------------- */

/* A directory nobody but `euid` or root could change an entry of: owned by one of them and
 * writable by no one else — or root's and sticky, as /tmp is, where only an entry's owner can
 * replace it. */
static int trust_dir_verdict(const struct stat *st, uint32_t euid) {
    if (st->st_uid != 0 && (uint32_t)st->st_uid != euid) return ASPECTS_TRUST_OWNER;
    const int guarded = !(st->st_mode & (S_IWGRP | S_IWOTH)) || (st->st_uid == 0 && (st->st_mode & S_ISVTX));
    return guarded ? ASPECTS_TRUST_OK : ASPECTS_TRUST_MODE;
}

typedef struct trust_walk {
    long dir;          /* the last component's directory (O_PATH) */
    long fd;           /* the last component itself (O_PATH, not followed) */
    struct stat st;    /* its status */
    uint32_t at;       /* length of the path up to the component a refusal is about */
} trust_walk;

/* Walks absolute `path` from "/" one component at a time with O_PATH | O_NOFOLLOW, so what is
 * checked is what is opened: a symbolic link anywhere is refused, a FIFO or device is never
 * opened for I/O. With `guard_dirs`, "/" and every directory on the way must be guarded
 * (trust_dir_verdict). ASPECTS_TRUST_OK with w->dir and w->fd open, or the reason (nothing
 * open; w->at names the component). */
static int trust_walk_path(const char *path, int guard_dirs, uint32_t euid, trust_walk *w) {
    w->dir = w->fd = -1;
    w->at = 1;
    if (!path) return ASPECTS_TRUST_BAD_PATH;
    /* not absolute: the verdict is about the whole path (its first byte named only "l" of
     * "libadvice.so" in the message) */
    if (path[0] != '/') {
        uint32_t n = 0;
        while (path[n]) n++;
        w->at = n;
        return ASPECTS_TRUST_BAD_PATH;
    }
    long dir = trust_openat(AT_FDCWD, "/", O_PATH | O_DIRECTORY);
    if (dir < 0) return ASPECTS_TRUST_SYSTEM;
    if (guard_dirs) {
        if (trust_fstat(dir, &w->st) != 0) { trust_close(dir); return ASPECTS_TRUST_SYSTEM; }
        const int verdict = trust_dir_verdict(&w->st, euid);
        if (verdict != ASPECTS_TRUST_OK) { trust_close(dir); return verdict; }
    }
    char comp[256];
    const char *p = path;
    for (;;) {
        while (*p == '/') p++;
        size_t n = 0;
        while (p[n] && p[n] != '/') n++;
        if (n == 0 || n >= sizeof comp) { w->at = (uint32_t)(p - path + n); trust_close(dir); return ASPECTS_TRUST_BAD_PATH; }
        for (size_t i = 0; i < n; i++) comp[i] = p[i];
        comp[n] = 0;
        p += n;
        w->at = (uint32_t)(p - path);
        while (*p == '/') p++;
        const int last = *p == 0;
        long fd = trust_openat((int)dir, comp, O_PATH | O_NOFOLLOW);
        if (fd < 0) {
            int e = errno;
            trust_close(dir);
            errno = e;
            return e == ENOENT || e == ENOTDIR ? ASPECTS_TRUST_MISSING : ASPECTS_TRUST_SYSTEM;
        }
        if (trust_fstat(fd, &w->st) != 0) { trust_close(fd); trust_close(dir); return ASPECTS_TRUST_SYSTEM; }
        int verdict = ASPECTS_TRUST_OK;
        if (S_ISLNK(w->st.st_mode)) verdict = ASPECTS_TRUST_SYMLINK;
        else if (!last && !S_ISDIR(w->st.st_mode)) verdict = ASPECTS_TRUST_MISSING, errno = ENOTDIR;
        else if (!last && guard_dirs) verdict = trust_dir_verdict(&w->st, euid);
        if (verdict != ASPECTS_TRUST_OK) { trust_close(fd); trust_close(dir); return verdict; }
        if (last) {
            w->dir = dir;
            w->fd = fd;
            return ASPECTS_TRUST_OK;
        }
        trust_close(dir);
        dir = fd;
    }
}

/* ---- tables --------------------------------------------------------------------------------- */

/* A table shared with a group (aspects_trust.h): its header, in the attached segment, says it
 * was created shared with the file's group. */
static int trust_shared_with(const aspects_table_header *h, uint32_t gid) {
    return h->magic == ASPECTS_MAGIC && (h->share_flags & ASPECTS_SHARE_GROUP) && h->shared_gid == gid;
}

/* ---- segments ------------------------------------------------------------------------------- */

static long trust_shmctl(long shmid, long cmd, struct shmid_ds *ds) { return syscall(SYS_shmctl, shmid, cmd, ds); }

int aspects_segment_verdict(const struct shmid_ds *ds, uint32_t file_uid, uint32_t file_gid, int shared, uint64_t size) {
    const struct ipc_perm *p = &ds->shm_perm;
    /* Made by someone else, it was never this table's segment (`create` makes it as the
     * file's owner, and no one can change who made a segment): the id names another one now,
     * as after a reboot, when ids start again. */
    if ((p->mode & SHM_DEST) || (uint64_t)ds->shm_segsz != size || (uint32_t)p->cuid != file_uid) return ASPECTS_TRUST_NO_SEGMENT;
    /* given away (IPC_SET by its owner): someone else's now */
    if ((uint32_t)p->uid != file_uid) return ASPECTS_TRUST_OWNER;
    if ((p->mode & 0777) != ASPECTS_SEGMENT_MODE(shared) || (shared && (uint32_t)p->gid != file_gid)) return ASPECTS_TRUST_MODE;
    /* The kernel lets members of gid *or* cgid use the group bits, and cgid cannot be changed:
     * a shared segment made under another egid is open to that group as well. */
    if (shared && (uint32_t)p->cgid != file_gid) return ASPECTS_TRUST_CREATOR_GROUP;
    return ASPECTS_TRUST_OK;
}

void aspects_segment_detach(void *base) {
    int saved = errno;
    if (base) syscall(SYS_shmdt, base);
    errno = saved;
}

void aspects_wake_prototype_watchers(uint64_t *proto_generation) {
    int saved = errno;
    /* the low half of the word on a little-endian machine: what the watchers wait on */
    syscall(SYS_futex, (uint32_t *)proto_generation, (long)FUTEX_WAKE, (long)INT32_MAX, NULL, NULL, 0L);
    errno = saved;
}

int aspects_segment_remove(int32_t shmid) { return trust_shmctl(shmid, IPC_RMID, 0) == 0 ? 0 : -1; }

int32_t aspects_segment_create(uint64_t size, int shared, uint32_t gid, void **base_out) {
    *base_out = 0;
    /* A shared segment is made with the sharing group as its creator group (cgid), fixed for
     * its life: under the creator's own egid, that group could open it too. The raw system call
     * changes this thread's credentials only (glibc's setegid would change every thread's). */
    uint32_t rgid = 0, egid = 0, sgid = 0;
    if (shared && syscall(SYS_getresgid, &rgid, &egid, &sgid) != 0) return -1;
    const int switched = shared && egid != gid;
    if (switched && syscall(SYS_setresgid, -1L, (long)gid, -1L) != 0) return -1; /* EPERM */
    long id = syscall(SYS_shmget, (long)IPC_PRIVATE, (long)size, (long)(IPC_CREAT | IPC_EXCL | ASPECTS_SEGMENT_MODE(shared)));
    int made_errno = errno;
    /* back to the egid it had (allowed: it was the real or saved gid, or we have CAP_SETGID) */
    if (switched && syscall(SYS_setresgid, -1L, (long)egid, -1L) != 0) {
        made_errno = errno;
        if (id >= 0) trust_shmctl(id, IPC_RMID, 0);
        id = -1;
    }
    errno = made_errno;
    if (id < 0) return -1;
    struct shmid_ds ds;
    int ok = trust_shmctl(id, IPC_STAT, &ds) == 0;
    if (ok && shared) {
        ds.shm_perm.gid = gid;
        ds.shm_perm.mode = ASPECTS_SEGMENT_MODE(shared);
        ok = trust_shmctl(id, IPC_SET, &ds) == 0;
    }
    long at = ok ? syscall(SYS_shmat, id, 0L, 0L) : -1;
    if (at == -1 || (at < 0 && at > -4096)) {
        int e = errno;
        trust_shmctl(id, IPC_RMID, 0);
        errno = e;
        return -1;
    }
    /* ours from here on, for gc, if we are killed before the header is written */
    __atomic_store_n((uint64_t *)at, ASPECTS_MAGIC_UNFINISHED, __ATOMIC_RELAXED);
    *base_out = (void *)at;
    return (int32_t)id;
}

/* ---- the kernel's list of segments ---------------------------------------------------------- */

/* Whitespace-separated decimal (or, with base 8, octal) numbers of one line of
 * /proc/sysvipc/shm, into `v`: how many were read. */
static int trust_numbers(const char *line, uint32_t len, uint64_t *v, int cap) {
    int n = 0;
    uint32_t i = 0;
    while (n < cap) {
        while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
        if (i >= len || line[i] < '0' || line[i] > '9') break;
        /* field 2 (perms) is octal: "%4o" */
        const uint64_t base = n == 2 ? 8 : 10;
        uint64_t x = 0;
        while (i < len && line[i] >= '0' && line[i] <= '9') x = x * base + (uint64_t)(line[i++] - '0');
        v[n++] = x;
    }
    return n;
}

int aspects_segments_each(int (*visit)(const aspects_listed_segment *, void *), void *ctx) {
    long fd = trust_openat(AT_FDCWD, "/proc/sysvipc/shm", O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return -1;
    char chunk[4096], line[512];
    uint32_t len = 0;
    int overlong = 0, header = 1, result = 0;
    for (;;) {
        long n;
        do n = syscall(SYS_read, fd, chunk, (long)sizeof chunk); while (n < 0 && errno == EINTR);
        if (n < 0) { result = -1; break; }
        if (n == 0) break;
        for (long i = 0; i < n && result == 0; i++) {
            if (chunk[i] != '\n') {
                if (len < sizeof line) line[len++] = chunk[i]; else overlong = 1;
                continue;
            }
            /* key shmid perms size cpid lpid nattch uid gid cuid cgid ... (the first line names them) */
            uint64_t v[11];
            if (!header && !overlong && trust_numbers(line, len, v, 11) == 11) {
                aspects_listed_segment seg = {.shmid = (int32_t)v[1], .cpid = (int32_t)v[4], .mode = (uint32_t)v[2],
                                              .uid = (uint32_t)v[7], .gid = (uint32_t)v[8], .cuid = (uint32_t)v[9],
                                              .cgid = (uint32_t)v[10], .size = v[3], .nattch = v[6]};
                result = visit(&seg, ctx);
            }
            header = 0, len = 0, overlong = 0;
        }
        if (result != 0) break;
    }
    trust_close(fd);
    return result;
}

typedef struct trust_find_segment {
    int32_t shmid;
    aspects_listed_segment found;
} trust_find_segment;

static int trust_find_visit(const aspects_listed_segment *seg, void *ctx) {
    trust_find_segment *f = ctx;
    if (seg->shmid != f->shmid) return 0;
    f->found = *seg;
    return 1;
}

/* Reads the anchor from the opened file: exactly one, of this format. */
static int trust_read_anchor(long io, aspects_table_anchor *a) {
    struct stat st;
    if (trust_fstat(io, &st) != 0) return ASPECTS_TRUST_SYSTEM;
    if (st.st_size != (off_t)sizeof *a) return ASPECTS_TRUST_NOT_ANCHOR;
    long r;
    do r = syscall(SYS_pread64, io, a, (long)sizeof *a, 0L); while (r < 0 && errno == EINTR);
    if (r != (long)sizeof *a) return r < 0 ? ASPECTS_TRUST_SYSTEM : ASPECTS_TRUST_NOT_ANCHOR;
    if (a->magic != ASPECTS_ANCHOR_MAGIC || a->version != ASPECTS_ANCHOR_VERSION || a->shmid < 0 ||
        a->size < sizeof(aspects_table_header) || a->size > (1ull << 40))
        return ASPECTS_TRUST_NOT_ANCHOR;
    return ASPECTS_TRUST_OK;
}

/* Attaches the segment an anchor names, if it agrees with the anchor's file (`st`, `shared`):
 * ASPECTS_TRUST_OK with seg filled, or the reason with nothing attached. */
static int trust_attach_segment(const aspects_table_anchor *a, const struct stat *st, int shared, int writable,
                                aspects_table_segment *seg) {
    struct shmid_ds ds;
    if (trust_shmctl(a->shmid, IPC_STAT, &ds) != 0) {
        /* Not even readable (EACCES): someone else's segment now — or the table's, of a mode
         * that keeps this member out because its file was made to look shared by hand (a
         * private table's anchor chmod'ed 0660): then it is a mode mismatch, not a lost
         * segment. The kernel's list tells them apart: it shows every segment to anyone. */
        if (errno == EACCES) {
            trust_find_segment f = {a->shmid, {0}};
            if (aspects_segments_each(trust_find_visit, &f) == 1 && f.found.cuid == (uint32_t)st->st_uid &&
                f.found.uid == (uint32_t)st->st_uid && f.found.size == a->size && !(f.found.mode & SHM_DEST))
                return ASPECTS_TRUST_MODE;
            errno = EACCES;
        }
        return errno == EACCES || errno == EINVAL || errno == EIDRM ? ASPECTS_TRUST_NO_SEGMENT : ASPECTS_TRUST_SYSTEM;
    }
    int verdict = aspects_segment_verdict(&ds, (uint32_t)st->st_uid, (uint32_t)st->st_gid, shared, a->size);
    if (verdict != ASPECTS_TRUST_OK) return verdict;
    long at = syscall(SYS_shmat, (long)a->shmid, 0L, (long)(writable ? 0 : SHM_RDONLY));
    if (at == -1 || (at < 0 && at > -4096))
        return errno == EACCES ? ASPECTS_TRUST_OWNER : errno == EINVAL || errno == EIDRM ? ASPECTS_TRUST_NO_SEGMENT : ASPECTS_TRUST_SYSTEM;
    /* Checked again once attached: the id could have been removed and handed out again in
     * between, and only the identity in the header tells this table from another. */
    const aspects_table_header *h = (const aspects_table_header *)at;
    if (trust_shmctl(a->shmid, IPC_STAT, &ds) != 0 ||
        aspects_segment_verdict(&ds, (uint32_t)st->st_uid, (uint32_t)st->st_gid, shared, a->size) != ASPECTS_TRUST_OK ||
        h->identity[0] != a->identity[0] || h->identity[1] != a->identity[1]) {
        aspects_segment_detach((void *)at);
        return ASPECTS_TRUST_NO_SEGMENT;
    }
    seg->base = (void *)at;
    seg->size = a->size;
    seg->shmid = a->shmid;
    seg->gid = (uint32_t)st->st_gid;
    return ASPECTS_TRUST_OK;
}

int aspects_segment_remove_anchored(int fd, uint32_t euid) {
    aspects_table_anchor a;
    int verdict = trust_read_anchor(fd, &a);
    if (verdict != ASPECTS_TRUST_OK) return verdict == ASPECTS_TRUST_NOT_ANCHOR ? -2 : -1;
    struct shmid_ds ds;
    if (trust_shmctl(a.shmid, IPC_STAT, &ds) != 0) return errno == EINVAL || errno == EIDRM || errno == EACCES ? 0 : -1;
    /* made or owned by us (one given away by IPC_SET is still its creator's to remove) */
    if (((uint32_t)ds.shm_perm.cuid != euid && (uint32_t)ds.shm_perm.uid != euid) || (uint64_t)ds.shm_segsz != a.size) return 0;
    long at = syscall(SYS_shmat, (long)a.shmid, 0L, (long)SHM_RDONLY);
    if (at == -1 || (at < 0 && at > -4096)) return errno == EINVAL || errno == EIDRM ? 0 : -1;
    const aspects_table_header *h = (const aspects_table_header *)at;
    const int same = h->identity[0] == a.identity[0] && h->identity[1] == a.identity[1];
    aspects_segment_detach((void *)at);
    if (!same) return 0;
    return trust_shmctl(a.shmid, IPC_RMID, 0) == 0 ? 1 : errno == EINVAL || errno == EIDRM ? 0 : -1;
}

int aspects_table_open(const char *path, int writable, uint32_t euid, int *fd_out, uint32_t *owner_out,
                       aspects_table_segment *seg) {
    *fd_out = -1;
    seg->base = 0;
    seg->size = 0;
    seg->shmid = -1;
    seg->gid = 0;
    trust_walk w;
    int verdict = trust_walk_path(path, 0, euid, &w);
    if (verdict != ASPECTS_TRUST_OK) return verdict;
    const struct stat st = w.st;
    if (owner_out) *owner_out = (uint32_t)st.st_uid;
    const int owned = (uint32_t)st.st_uid == euid;
    /* shared with a group: decided once the segment is attached and its header can be read */
    const int shared = S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0660;
    verdict = !S_ISREG(st.st_mode) ? ASPECTS_TRUST_NOT_REGULAR
            : shared ? ASPECTS_TRUST_OK
            : !owned ? ASPECTS_TRUST_OWNER
            : (st.st_mode & (S_IWGRP | S_IWOTH)) ? ASPECTS_TRUST_MODE : ASPECTS_TRUST_OK;
    /* a member: the process is in the group (root too: no bypass for uid 0) */
    if (verdict == ASPECTS_TRUST_OK && shared && !owned && !trust_in_group((uint32_t)st.st_gid)) verdict = ASPECTS_TRUST_OWNER;
    if (verdict != ASPECTS_TRUST_OK) { trust_close(w.fd); trust_close(w.dir); return verdict; }
    /* Re-open the checked inode itself: nothing can be swapped in between. Without /proc,
     * open the name again (never blocking, never a controlling tty) and compare inodes. The
     * anchor is only read: the table is in the segment. */
    char proc[ASPECTS_FD_PATH_SIZE];
    aspects_fd_path(w.fd, proc);
    const int flags = O_RDONLY | O_NOCTTY;
    long io = trust_openat(AT_FDCWD, proc, flags);
    if (io < 0 && errno == ENOENT) {
        const char *name = path + w.at;
        while (name > path && name[-1] != '/') name--;
        char comp[256];
        size_t n = 0;
        for (; name[n] && name[n] != '/' && n + 1 < sizeof comp; n++) comp[n] = name[n];
        comp[n] = 0;
        io = trust_openat((int)w.dir, comp, flags | O_NOFOLLOW | O_NONBLOCK);
    }
    trust_close(w.dir);
    struct stat again;
    if (io >= 0 && (trust_fstat(io, &again) != 0 || again.st_dev != st.st_dev || again.st_ino != st.st_ino)) {
        trust_close(io);
        io = -1;
        errno = ESTALE;
    }
    int e = errno;
    trust_close(w.fd);
    if (io < 0) { errno = e; return e == ENOENT ? ASPECTS_TRUST_MISSING : ASPECTS_TRUST_SYSTEM; }
    aspects_table_anchor anchor;
    verdict = trust_read_anchor(io, &anchor);
    if (verdict == ASPECTS_TRUST_OK) verdict = trust_attach_segment(&anchor, &st, shared, writable, seg);
    if (verdict != ASPECTS_TRUST_OK) { e = errno; trust_close(io); errno = e; return verdict; }
    verdict = shared && !trust_shared_with((const aspects_table_header *)seg->base, (uint32_t)st.st_gid)
        /* group-writable without having been created shared: the plain rule's verdict */
        ? (owned ? ASPECTS_TRUST_MODE : ASPECTS_TRUST_OWNER)
        /* Shared by its owner with a group the owner is in — not by an outsider through a
         * setgid directory, and not by anyone with a group they are not in (whose members
         * would then advise the owner's processes). */
        : shared && !aspects_user_in_group((uint32_t)st.st_uid, (uint32_t)st.st_gid) ? ASPECTS_TRUST_GROUP
        : ASPECTS_TRUST_OK;
    if (verdict != ASPECTS_TRUST_OK) {
        aspects_segment_detach(seg->base);
        seg->base = 0;
        trust_close(io);
        return verdict;
    }
    *fd_out = (int)io;
    return ASPECTS_TRUST_OK;
}

/* ---- advice objects ------------------------------------------------------------------------- */

int aspects_object_open(const char *path, uint32_t euid, int guarded, int *fd_out, uint32_t *at_out) {
    *fd_out = -1;
    if (at_out) *at_out = 0;
    trust_walk w;
    int verdict;
    if (guarded) {
        verdict = trust_walk_path(path, 1, euid, &w);
        if (at_out) *at_out = w.at;
        if (verdict != ASPECTS_TRUST_OK) return verdict;
        trust_close(w.dir);
        verdict = !S_ISREG(w.st.st_mode) ? ASPECTS_TRUST_NOT_REGULAR
                : w.st.st_uid != 0 && (uint32_t)w.st.st_uid != euid ? ASPECTS_TRUST_OWNER
                : (w.st.st_mode & (S_IWGRP | S_IWOTH)) ? ASPECTS_TRUST_MODE : ASPECTS_TRUST_OK;
    } else {
        /* the owner's own choice: followed as the loader would, but still opened once */
        if (!path || !path[0]) return ASPECTS_TRUST_BAD_PATH;
        w.fd = trust_openat(AT_FDCWD, path, O_PATH);
        if (w.fd < 0) return errno == ENOENT || errno == ENOTDIR ? ASPECTS_TRUST_MISSING : ASPECTS_TRUST_SYSTEM;
        if (trust_fstat(w.fd, &w.st) != 0) { trust_close(w.fd); return ASPECTS_TRUST_SYSTEM; }
        if (at_out) { uint32_t n = 0; while (path[n]) n++; *at_out = n; }
        verdict = S_ISREG(w.st.st_mode) ? ASPECTS_TRUST_OK : ASPECTS_TRUST_NOT_REGULAR;
    }
    if (verdict != ASPECTS_TRUST_OK) { trust_close(w.fd); return verdict; }
    *fd_out = (int)w.fd;
    return ASPECTS_TRUST_OK;
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
    case ASPECTS_TRUST_GROUP: return "is shared with a group its owner is not a member of";
    case ASPECTS_TRUST_NOT_ANCHOR: return "is not a table of this aspects version";
    case ASPECTS_TRUST_NO_SEGMENT: return "has lost its shared memory segment (a reboot, ipcrm, or another IPC namespace)";
    case ASPECTS_TRUST_CREATOR_GROUP: return "has a shared memory segment made under another group than the one it is shared with (that group could open it too)";
    default: return "cannot be opened";
    }
}
