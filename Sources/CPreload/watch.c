/* watch.c — prototype rules applied as they come (docs/ARCHITECTURE.md, "the prototype watcher").
 *
 * A prototype rule advises a function once this process has rewritten the GOT slots that
 * import it (proto.c). The dispatcher does that on an advised call after the table's
 * prototypes changed; a program that calls nothing advised (only the function itself, whose
 * slots are not ours yet) would never see the rule. On a table made with --live-prototypes,
 * a thread of ours does it instead: it sleeps in a futex wait on the header's proto_generation,
 * which the writer wakes after every batch that bumped it, and runs the same pass
 * (asp_protos_sync, which takes care of a concurrent pass on another thread, of dlopen and
 * of fork).
 *
 * Why a thread, and only when asked:
 *   - not a signal: the host may own every signal number, and a signal makes its blocking
 *     calls (poll, epoll_wait, nanosleep, sigtimedwait...) fail with EINTR even with SA_RESTART;
 *   - not a check on the stub path: a function whose slots are not ours has no stub to check in;
 *   - opt-in, because a thread makes the host multithreaded: unshare(CLONE_NEWUSER) and
 *     unshare(CLONE_NEWNS) then fail with EINVAL (unshare(1), bwrap, container tools).
 *
 * The thread runs none of the host's code: every signal it may block is blocked from its
 * first instruction (glibc keeps its own two, for thread cancellation and set*id, which the
 * host cannot handle), it is inside the engine for good (a SEALED frame, thread.h: a wrapped
 * call it makes goes straight to the original), and it is named "aspects-watch" so that whoever lists the
 * host's threads sees what it is. It is detached and never exits while the table is mapped
 * (the preload never detaches it: a destroyed table's segment stays until the process ends);
 * exec ends it with the process image. A fork child has no threads but the forking one: it
 * starts its own watcher at its next table check (asp_watch_table_moved) made outside any of
 * the program's signal handlers (pthread_create is not async-signal-safe), not in the atfork
 * handler, which may itself run in a signal handler. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "closures.h"
#include "proto.h"
#include "sys.h"
#include "table.h"
#include "thread.h"
#include "watch.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the futex word is proto_generation's low half");

/* Enough for a pass: dl_iterate_phdr, dlsym of a lazy slot and a libffi closure. Only the
 * pages it touches become memory. */
#define ASP_WATCH_STACK (256u * 1024u)
/* A wake lost to a writer killed between its commit and its wake is caught up after this. */
#define ASP_WATCH_TIMEOUT_S 10
/* Another thread's pass was under way (it goes once more, asp_protos_sync): look again soon. */
#define ASP_WATCH_RETRY_NS 1000000ull

static uint32_t asp_watch_running;   /* a watcher of this process exists (0 again in a fork child) */
static uint32_t asp_watch_wanted;    /* fork child of a watched process: start one at the next check */

static int asp_watch_asked(void) {
    return asp_tab.attached && (__atomic_load_n(&asp_tab.header->options, __ATOMIC_RELAXED) & ASPECTS_TABLE_LIVE_PROTOTYPES);
}

/* Sleeps until the writer wakes the word, it no longer holds `seen`, or the timeout. 0, or
 * -1 when the word is gone (EFAULT: the thread then ends). */
static int asp_watch_wait(uint64_t seen) {
    struct timespec timeout = {ASP_WATCH_TIMEOUT_S, 0};
    uint32_t *word = (uint32_t *)&asp_tab.header->proto_generation;
    long r = syscall(SYS_futex, word, (long)FUTEX_WAIT, (long)(uint32_t)seen, &timeout, NULL, 0L);
    return r != 0 && errno == EFAULT ? -1 : 0; /* EAGAIN (it moved), EINTR, ETIMEDOUT: look again */
}

static void *asp_watch_main(void *unused) {
    (void)unused;
    (void)asp_frame_push(&asp_tls, ASP_IN_SEALED); /* the engine's own thread, for good */
    /* libffi and the closures' memory now, off the program's threads (closures.c): the first
     * prototype rule added is then applied without loading anything first */
    (void)asp_closures_prepare(NULL);
    for (;;) {
        const uint64_t generation = __atomic_load_n(&asp_tab.header->proto_generation, __ATOMIC_ACQUIRE);
        if (!asp_protos_applied(generation)) asp_protos_sync();
        if (!asp_protos_applied(generation)) {
            asp_sys_sleep_ns(ASP_WATCH_RETRY_NS);
            continue;
        }
        if (asp_watch_wait(generation) != 0) break;
    }
    __atomic_store_n(&asp_watch_running, 0, __ATOMIC_RELEASE);
    return NULL;
}

/* Called in a SEALED frame (the constructor, or a table check inside the dispatcher): what
 * pthread_create calls (mmap, mprotect, clone) reach the originals. */
void asp_watch_start(void) {
    if (!asp_watch_asked()) return;
    uint32_t expected = 0;
    if (!__atomic_compare_exchange_n(&asp_watch_running, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) return;
    int saved_errno = errno;
    pthread_attr_t attr;
    sigset_t all, old;
    int started = 0;
    if (pthread_attr_init(&attr) == 0) {
        pthread_attr_setstacksize(&attr, ASP_WATCH_STACK);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        /* The new thread inherits this mask: blocked from its first instruction, and this
         * thread's own mask back right after. */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pthread_t thread;
        started = pthread_create(&thread, &attr, asp_watch_main, NULL) == 0;
        /* named here, not by the thread itself: whoever lists the threads once the program
         * runs sees the name, never a moment before it is set */
        if (started) pthread_setname_np(thread, "aspects-watch");
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
    }
    if (!started) {
        __atomic_store_n(&asp_watch_running, 0, __ATOMIC_RELEASE);
        asp_debug("cannot start the prototype watcher thread;", "prototype rules apply at the next advised call", NULL);
    }
    errno = saved_errno;
}

void asp_watch_after_fork(void) {
    if (__atomic_load_n(&asp_watch_running, __ATOMIC_RELAXED)) __atomic_store_n(&asp_watch_wanted, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&asp_watch_running, 0, __ATOMIC_RELAXED);
}

void asp_watch_table_moved(void) {
    if (ASP_UNLIKELY(__atomic_load_n(&asp_watch_wanted, __ATOMIC_RELAXED)) && !asp_in_handler(&asp_tls)) {
        __atomic_store_n(&asp_watch_wanted, 0, __ATOMIC_RELAXED);
        const asp_frame outer = asp_frame_push(&asp_tls, ASP_IN_SEALED);
        asp_watch_start();
        asp_frame_pop(&asp_tls, outer);
    }
    asp_protos_maybe_sync();
}
