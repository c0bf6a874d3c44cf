/*
 * aspects_process.h — the process-control calls aspectctl makes that Swift cannot: prctl and
 * syscall are variadic, and Swift imports no variadic C function, nor what the C library
 * declares only for _GNU_SOURCE (pipe2, posix_spawn's chdir and closefrom, fallocate's flags).
 * Not used by the preload.
 */
#ifndef ASPECTS_PROCESS_H
#define ASPECTS_PROCESS_H

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Makes the calling process the reaper of its orphaned descendants: a process whose parent
 * ends is re-parented to it instead of to init, so it can still find, signal and wait for
 * everything it started (a setsid daemon too). 0, or -1 with errno. */
static inline int aspects_become_subreaper(void) {
    return prctl(PR_SET_CHILD_SUBREAPER, 1UL, 0UL, 0UL, 0UL);
}

/* glibc declares these only for _GNU_SOURCE, which Swift's import of this module does not
 * define: declared here as glibc defines them (a compatible redeclaration). */
extern int pipe2(int fds[2], int flags);
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

/* A pipe whose both ends are close-on-exec from the start: a child another thread spawns
 * meanwhile cannot inherit it and keep its end of file away from us. 0, or -1 with errno.
 * Inline, like the rest of this header: nothing of it is compiled into libaspects.so. */
static inline int aspects_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

/* Adds to `actions` the closing of every descriptor from `low` up in the child: a child gets
 * only what it is given, not what its parent's other threads and libraries had open without
 * close-on-exec. */
static inline int aspects_spawn_close_from(posix_spawn_file_actions_t *actions, int low) {
    return posix_spawn_file_actions_addclosefrom_np(actions, low);
}

/* A descriptor that becomes readable when the child `pid` ends (pidfd_open, Linux 5.3), so
 * a run's end can be waited for in poll(), with no sleep in a loop. -1 with errno (ENOSYS on
 * older kernels: the caller then polls waitpid). */
static inline int aspects_pidfd_open(int pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

/* Frees the blocks of [offset, offset+length) of a file, its size unchanged (fallocate with
 * FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, which the C library declares only for
 * _GNU_SOURCE): explore cuts what it has read of a run's output out of the file while the
 * command keeps writing it. 0, or -1 with errno (EOPNOTSUPP on a file system without holes:
 * the file then keeps its blocks until the run ends). */
static inline int aspects_punch_hole(int fd, long long offset, long long length) {
    return (int)syscall(SYS_fallocate, fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)length);
}

/* Adds a chdir to `dir` to a spawn's file actions (glibc 2.29; declared only for
 * _GNU_SOURCE): explore starts each run's command in the run's directory without an `env -C`
 * in between. 0, or an errno. */
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *actions, const char *dir);
static inline int aspects_spawn_chdir(posix_spawn_file_actions_t *actions, const char *dir) {
    return posix_spawn_file_actions_addchdir_np(actions, dir);
}

#endif
