/*
 * aspects_process.h — the one process-control call aspectctl makes that Swift cannot: prctl
 * is variadic, and Swift imports no variadic C function. Not used by the preload.
 */
#ifndef ASPECTS_PROCESS_H
#define ASPECTS_PROCESS_H

#include <sys/prctl.h>

/* Makes the calling process the reaper of its orphaned descendants: a process whose parent
 * ends is re-parented to it instead of to init, so it can still find, signal and wait for
 * everything it started (a setsid daemon too). 0, or -1 with errno. */
static inline int aspects_become_subreaper(void) {
    return prctl(PR_SET_CHILD_SUBREAPER, 1UL, 0UL, 0UL, 0UL);
}

#endif
