/*
 * aspects_process.h — the process-control calls aspectctl makes that Swift cannot: prctl
 * is variadic, and Swift imports no variadic C function; pipe2 and closefrom for posix_spawn are GNU
 * extensions Glibc's Swift module does not show. Not used by the preload.
 */
#ifndef ASPECTS_PROCESS_H
#define ASPECTS_PROCESS_H

#include <fcntl.h>
#include <spawn.h>
#include <sys/prctl.h>
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

#endif
