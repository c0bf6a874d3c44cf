/*
 * aspects_trust.h — THE rule for which advice tables a process obeys, shared by the preload
 * (which attaches a table at start-up) and aspectctl (which writes and reads tables).
 *
 * A table injects faults, signals included, into every process that attaches it, and its
 * event ring holds their call arguments. So, as glibc's secure mode does for preloading, a
 * table is used only when it is:
 *   - reached without a symbolic link in any component of its path,
 *   - a regular file (checked on an O_PATH descriptor, before anything opens it for reading
 *     or writing: a device node is never opened),
 *   - owned by the effective uid of the process (root included: root does not obey other
 *     users' tables),
 *   - not writable by group or others;
 * or, shared on purpose (`aspectctl create --share-with-group G`), when its mode is exactly
 * 0660, its group is G, its header says it was created shared with G, the process is a member
 * of G (its effective or a supplementary group; root too), and the file's owner is a member of
 * G by /etc/passwd and /etc/group (aspects_user_in_group: the header is the creator's word, the
 * files are the system's): then every member can advise every member's processes that attach
 * it, and read their call arguments in the event ring.
 * The file is then re-opened through /proc/self/fd, so what is opened is the very inode that
 * was checked. Raw system calls only: the preload must not call the libc functions it exports.
 *
 * The file is the table's anchor (aspects_abi.h, aspects_table_anchor): the table itself is the
 * System V shared memory segment it names, which must agree with it (aspects_segment_verdict):
 * created by the file's owner (else it is not the table's: NO_SEGMENT), still owned by it (else
 * OWNER), mode 0600 — or, shared, 0660 with the file's group (else MODE) and made with that
 * group as its creator group (else CREATOR_GROUP: the kernel grants a segment's group bits to
 * members of its gid *or* its cgid, and cgid, the creator's egid at shmget, can never be
 * changed) — not being removed, of the anchor's size, and carrying the anchor's identity in its
 * header (else NO_SEGMENT). A private segment (0600) has no group bits, so its cgid opens nothing.
 *
 * Advice objects (a `call` rule's code) follow aspects_object_open: opened once, O_PATH, and
 * loaded from that descriptor (/proc/self/fd/N), never looked up by name a second time.
 */
#ifndef ASPECTS_TRUST_H
#define ASPECTS_TRUST_H

#include <stdint.h>

enum aspects_trust {
    ASPECTS_TRUST_OK = 0,
    ASPECTS_TRUST_MISSING = 1,      /* no such file (or a directory of its path is missing) */
    ASPECTS_TRUST_SYMLINK = 2,      /* a component of the path is a symbolic link */
    ASPECTS_TRUST_NOT_REGULAR = 3,  /* a directory, device, FIFO or socket */
    ASPECTS_TRUST_OWNER = 4,        /* owned by another user */
    ASPECTS_TRUST_MODE = 5,         /* writable by group or others */
    ASPECTS_TRUST_BAD_PATH = 6,     /* not absolute, too long, or with an empty name */
    ASPECTS_TRUST_SYSTEM = 7,       /* an OS call failed otherwise (errno says which) */
    ASPECTS_TRUST_GROUP = 8,        /* shared with a group its owner is not a member of */
    ASPECTS_TRUST_NOT_ANCHOR = 9,   /* the file is not a table anchor of this format */
    ASPECTS_TRUST_NO_SEGMENT = 10,  /* the segment it names is gone (reboot, ipcrm, another IPC
                                       namespace) or is another one now */
    ASPECTS_TRUST_CREATOR_GROUP = 11 /* shared, but its segment's creator group (cgid) is not the
                                        sharing group: the kernel lets that group in too */
};

/* The table's segment, attached by aspects_table_open. */
typedef struct aspects_table_segment {
    void *base;          /* shmat's address (detach with aspects_segment_detach) */
    uint64_t size;       /* the segment's size, fixed at its creation */
    int32_t shmid;
    uint32_t gid;        /* the anchor file's group */
} aspects_table_segment;

struct shmid_ds;

/* Whether the segment described by `ds` (IPC_STAT) may hold the table of an anchor whose file
 * is owned by `file_uid` with group `file_gid`, `shared` (mode 0660) or not, and whose anchor
 * says `size`: ASPECTS_TRUST_OK, or the verdict the file rule gives for the same fault
 * (OWNER: given to another user; MODE), CREATOR_GROUP for a shared one whose cgid is not
 * `file_gid`, or NO_SEGMENT for one being removed, of another size, or made by another user
 * (never the table's). */
int aspects_segment_verdict(const struct shmid_ds *ds, uint32_t file_uid, uint32_t file_gid, int shared, uint64_t size)
    __attribute__((visibility("hidden")));

/* The mode a table's segment is made with and must keep: 0660 shared with a group, else 0600. */
#define ASPECTS_SEGMENT_MODE(shared) ((shared) ? 0660u : 0600u)

#define ASPECTS_FD_PATH_SIZE 40

/* Opens the table at absolute `path` if the trust rule allows it: the anchor file read-only
 * (its descriptor, O_CLOEXEC, in *fd_out: writers lock it), and its segment attached for
 * reading and writing (or read-only when `writable` is 0) in *seg. Returns ASPECTS_TRUST_OK,
 * or the reason with *fd_out = -1 and nothing attached; *owner_out gets the file's owner
 * whenever it was seen, and errno is that of the failing call. Async-signal-safe. */
int aspects_table_open(const char *path, int writable, uint32_t euid, int *fd_out, uint32_t *owner_out,
                       aspects_table_segment *seg) __attribute__((visibility("hidden")));

/* A System V segment as /proc/sysvipc/shm lists it: every segment of the IPC namespace, to
 * anyone, whatever its mode (IPC_STAT needs read permission). */
typedef struct aspects_listed_segment {
    int32_t shmid;
    int32_t cpid;        /* the creator's pid */
    uint32_t mode;       /* the permission bits (and SHM_DEST, SHM_LOCKED) */
    uint32_t uid, gid, cuid, cgid;
    uint64_t size;
    uint64_t nattch;
} aspects_listed_segment;

/* Calls `visit` for each segment /proc/sysvipc/shm lists, until it returns non-zero: that
 * value, 0 after the last, or -1 with errno when the list cannot be read. Raw reads, no
 * allocation (the preload uses it). */
int aspects_segments_each(int (*visit)(const aspects_listed_segment *, void *), void *ctx)
    __attribute__((visibility("hidden")));

/* Detaches a segment aspects_table_open attached. */
void aspects_segment_detach(void *base) __attribute__((visibility("hidden")));

/* Wakes every process's prototype watcher sleeping on the header's proto_generation (a
 * shared, not private, futex: the segment is mapped by the writer and every host). */
void aspects_wake_prototype_watchers(uint64_t *proto_generation) __attribute__((visibility("hidden")));

/* Makes a table's segment of `size` bytes, private (mode 0600) or, with `shared`, the group
 * `gid`'s (0660) and made with `gid` as its creator group — the calling thread's effective gid
 * is `gid` for the shmget (a raw setresgid: this thread only), which needs `gid` to be the
 * process's real, effective or saved gid, or CAP_SETGID; otherwise -1 with errno EPERM and
 * nothing made. Attached read-write: its id, or -1 with errno (nothing is left behind). */
int32_t aspects_segment_create(uint64_t size, int shared, uint32_t gid, void **base_out)
    __attribute__((visibility("hidden")));

/* Removes the segment the anchor open as `fd` names, when it is that table's (its identity)
 * and `euid` made or owns it: 1 removed, 0 nothing to remove (gone, or another's), -2 the file is not
 * an anchor, -1 an OS call failed (errno). */
int aspects_segment_remove_anchored(int fd, uint32_t euid) __attribute__((visibility("hidden")));

/* Removes a segment (IPC_RMID: it goes when the last process detaches): 0, or -1 with errno. */
int aspects_segment_remove(int32_t shmid) __attribute__((visibility("hidden")));

/* Opens the advice object at `path` once, O_PATH (never for I/O: a FIFO does not block), for
 * loading through its /proc/self/fd name. With `guarded` (a table others can write, or a
 * process of root) the path must be absolute, without a symbolic link, every directory on it
 * owned by root or `euid` and writable by no one else (root's sticky directories, as /tmp,
 * aside), and the object a regular file owned by root or `euid` and not writable by group or
 * others: no one else could change the code. Without it (an own table of a user), any regular
 * file the path leads to. ASPECTS_TRUST_OK and the descriptor (O_CLOEXEC) in *fd_out, or the
 * reason; *at_out is the length of the path up to the component the verdict is about.
 * Async-signal-safe. */
int aspects_object_open(const char *path, uint32_t euid, int guarded, int *fd_out, uint32_t *at_out)
    __attribute__((visibility("hidden")));

/* Whether user `uid` is a member of group `gid` by /etc/passwd (its primary group) and
 * /etc/group (the members listed): 0 for anything not found there (NSS-only users and
 * groups). Async-signal-safe, no allocation. */
int aspects_user_in_group(uint32_t uid, uint32_t gid) __attribute__((visibility("hidden")));

/* The name of a user (/etc/passwd) or group (/etc/group), NUL-terminated in `out`: 1, or 0
 * when there is none. */
int aspects_user_name(uint32_t uid, char *out, uint32_t cap) __attribute__((visibility("hidden")));
int aspects_group_name(uint32_t gid, char *out, uint32_t cap) __attribute__((visibility("hidden")));

/* "/proc/self/fd/<fd>", the name that opens the very inode `fd` holds. */
void aspects_fd_path(long fd, char out[ASPECTS_FD_PATH_SIZE]) __attribute__((visibility("hidden")));

/* The reason in words, for messages ("is owned by another user"). */
const char *aspects_trust_text(int code) __attribute__((visibility("hidden")));

#endif /* ASPECTS_TRUST_H */
