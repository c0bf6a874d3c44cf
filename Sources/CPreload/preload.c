/* preload.c — start-up: attach the table named by ASPECTS_TABLE, register the fork handlers.
 *
 * Start-up does no per-symbol work: originals resolve lazily (resolve.c) and forwarding stubs
 * are built the first time a symbol is called while armed (closures.c). What building needs
 * from an allocator (libffi itself, closure memory) is taken at the first need from a safe
 * place, or when the program installs a signal handler (the hook below), so that a first
 * armed call inside a handler allocates nothing; a process that never calls anything armed
 * never loads libffi. No table, or an unusable one, leaves every wrapper a pass-through. */
#define _GNU_SOURCE
#include <errno.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include "advice.h"
#include "advice_call.h"
#include "closures.h"
#include "context.h"
#include "counters.h"
#include "crash.h"
#include "events.h"
#include "ffi_lazy.h"
#include "gate.h"
#include "identity.h"
#include "proto.h"
#include "rulecache.h"
#include "signals.h"
#include "sys.h"
#include "table.h"
#include "thread.h"
#include "watch.h"


/* The prototype lock first: a running pass may still need the closures lock to build a stub.
 * The advice loader's before both: a load under way holds the loader's lock and takes neither. */
static void asp_atfork_prepare(void) { asp_advice_atfork_prepare(); asp_protos_atfork_prepare(); asp_closures_atfork_prepare(); }
static void asp_atfork_parent(void) {
    asp_closures_atfork_parent();
    asp_protos_atfork_parent();
    asp_advice_atfork_parent();
}
static void asp_atfork_child(void) {
    asp_closures_atfork_child();
    asp_advice_after_fork();
    asp_pid = asp_sys_getpid();
    asp_tls.tid = 0;
    asp_counters_reset_after_fork();
    asp_rule_caches_reset_after_fork();
    asp_identity_after_fork();
    asp_protos_after_fork();
    asp_watch_after_fork();
}

/* The program installs a handler: what the handler's first armed call needs, now. */
static void asp_prepare_for_handlers(void) { (void)asp_closures_prepare(NULL); }

/* Our own first wrapper, by a hidden name (a reference to `open` itself would bind to the
 * first definition in the process, which is what we want to compare against). */
extern char asp_self_0[];

/* Is there another copy of libaspects.so ahead of us in the symbol search order (preloaded
 * twice from two paths, or preloaded and dlopened)? Then its wrappers are the ones programs
 * call, and ours are reached only as its "originals": we must stay a pass-through or every
 * call would be advised twice. A copy is recognized by the shape of its wrapper's first
 * instructions, which any build of the stub shares: on x86-64 movq asp_armed_base(%rip),
 * %r11; cmpb $0, group(%r11); on aarch64 adrp x16, asp_armed_base; ldr x16, [x16, #lo12];
 * ldrb w17, [x16, #group], after the BTI landing pad of the builds that have one (the masks
 * keep the opcode and registers, drop the offsets). */
static int asp_stub_shape(const unsigned char *first) {
#if defined(__x86_64__)
    return first[0] == 0x4c && first[1] == 0x8b && first[2] == 0x1d && first[7] == 0x41 && first[8] == 0x80;
#elif defined(__aarch64__)
    uint32_t insn[3];
    uint32_t pad;
    memcpy(&pad, first, sizeof pad);
    memcpy(insn, first + (pad == 0xd503245fu /* bti c */ ? 4 : 0), sizeof insn);
    return (insn[0] & 0x9f00001fu) == 0x90000010u && (insn[1] & 0xffc003ffu) == 0xf9400210u &&
           (insn[2] & 0xffc003ffu) == 0x39400211u;
#else
    (void)first;
    return 0;
#endif
}

static int asp_shadowed_by_another_copy(void) {
    const unsigned char *first = dlsym(RTLD_DEFAULT, asp_exports[0].name);
    if (!first || first == (const unsigned char *)asp_self_0) return 0;
    return asp_stub_shape(first);
}

__attribute__((constructor)) static void asp_init(void) {
    int saved_errno = errno;
    const asp_frame outer = asp_frame_push(&asp_tls, ASP_IN_SEALED);
    asp_debug_enabled = getenv("ASPECTS_DEBUG") != NULL;
    const char *strict = getenv("ASPECTS_STRICT");
    asp_strict_enabled = strict && *strict && !(strict[0] == '0' && !strict[1]);
    asp_pid = asp_sys_getpid();
    const char *name = getenv("ASPECTS_TABLE");
    if (getauxval(AT_SECURE)) {
        /* setuid/setgid or capability-raising exec: the environment is the caller's, not the
         * program owner's, so it names no table this process may obey (glibc ignores most of
         * LD_PRELOAD here for the same reason). */
        if (name && *name) {
            asp_debug("secure-execution mode (AT_SECURE): ASPECTS_TABLE is ignored (pass-through)", NULL, NULL);
            asp_strict_say("secure-execution mode (setuid, setgid or capabilities): ASPECTS_TABLE is ignored", NULL, NULL);
        }
    } else if (asp_shadowed_by_another_copy()) {
        asp_debug("another copy of libaspects.so is loaded first; this one stays a pass-through", NULL, NULL);
        /* not a failure: the other copy advises */
    } else if (name && *name) {
        const char *ffi = getenv("ASPECTS_LIBFFI");
        if (ffi && strlen(ffi) < sizeof asp_libffi_choice) memcpy(asp_libffi_choice, ffi, strlen(ffi) + 1);
        asp_gates_init(); /* shut before attaching publishes the armed bytes */
        /* the upcalls of lower layers (base.h): prototype rules follow the table and dlopen
         * (and a fork child of a watched process starts its watcher there: watch.c) */
        asp_table_moved_hook = asp_watch_table_moved;
        asp_objects_loaded_hook = asp_protos_sync;
        if (asp_table_attach(name) == 0) {
            __atomic_store_n(&asp_signal_installed_hook, asp_prepare_for_handlers,
                             __ATOMIC_RELEASE);
            if (asp_signals_entry_taken())
                asp_prepare_for_handlers(); /* a library's constructor, before ours */
            asp_identity_init();
            asp_identity_register();
            asp_crash_recorder_install();
            asp_events_init();
            asp_context_attach(); /* the unwinder's first use, when a rule needs contexts */
            asp_protos_sync();
            asp_watch_start(); /* with --live-prototypes: applies prototype rules as they come */
            /* `call` rules' objects: here, where loading is safe (advice_call.c) */
            asp_advice_attach();
            pthread_atfork(asp_atfork_prepare, asp_atfork_parent, asp_atfork_child);
        }
    } else {
        asp_debug("ASPECTS_TABLE is not set (pass-through)", NULL, NULL);
        asp_strict_say("ASPECTS_TABLE is not set", NULL, NULL);
    }
    asp_frame_pop(&asp_tls, outer);
    errno = saved_errno;
}
