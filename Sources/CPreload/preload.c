/* preload.c — start-up: attach the table named by ASPECTS_TABLE, register the fork handlers.
 *
 * Start-up does no per-symbol work: originals resolve lazily (resolve.c) and forwarding stubs
 * are built the first time a symbol is called while armed (closures.c). No table, or an
 * unusable one, leaves every wrapper a pass-through. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include "internal.h"

/* The armed bytes before a table is attached: nothing is armed. */
static const uint8_t asp_nothing_armed[ASPECTS_GROUP_CAPACITY];
const uint8_t *asp_armed_base = asp_nothing_armed;

static void asp_atfork_prepare(void) { asp_closures_atfork_prepare(); }
static void asp_atfork_parent(void) { asp_closures_atfork_release(); }
static void asp_atfork_child(void) {
    asp_closures_atfork_release();
    asp_pid = asp_sys_getpid();
    asp_tls.tid = 0;
    asp_counters_reset_after_fork();
}

__attribute__((constructor)) static void asp_init(void) {
    int saved_errno = errno;
    uint32_t saved_busy = asp_tls.busy;
    asp_tls.busy = 1;
    asp_debug_enabled = getenv("ASPECTS_DEBUG") != NULL;
    asp_pid = asp_sys_getpid();
    const char *name = getenv("ASPECTS_TABLE");
    if (name && *name) {
        if (asp_table_attach(name) == 0) pthread_atfork(asp_atfork_prepare, asp_atfork_parent, asp_atfork_child);
    } else {
        asp_debug("ASPECTS_TABLE is not set (pass-through)", NULL, NULL);
    }
    asp_tls.busy = saved_busy;
    errno = saved_errno;
}
