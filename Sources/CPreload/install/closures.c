/* closures.c — the forwarding stubs: one libffi closure per armed export, built the first time
 * the export is called while armed, kept for the life of the process (a thread may be inside
 * it, and disarming is only the armed byte), and the fast way back to the original.
 *
 * Signal safety. An export's first armed call may come from a signal handler that interrupted
 * malloc (or anything else holding a libc lock), so building a stub must not allocate, load a
 * library or take a lock a handler could already hold. libffi is therefore loaded, and every
 * closure's memory taken from libffi's allocator, once (asp_closures_prepare) — not at attach,
 * where it cost every process about 0.3 ms and most of its page faults whether anything was
 * ever called armed or not, but at the first need from a place where loading is safe: the
 * first stub built outside any signal handler, a prototype pass, or the program installing
 * a handler of its own (signals.c's hook, preload.c), so that a handler's first armed call
 * finds everything taken. A stub needed first inside a handler before any of those (or inside
 * the program's dlopen) is not built then: that call runs unadvised, and the next one from a
 * safe place builds it. Building a stub later only fills memory that is ours (ffi_prep_cif
 * and ffi_prep_closure_loc compute and store, nothing else). The build mutex is taken in a
 * SEALED frame (thread.h), so a handler on the building thread never waits for it; fork waits
 * for it (pthread_atfork), so a child never inherits it held. */
#define _GNU_SOURCE
#include <errno.h>
#include <ffi.h>
#include <pthread.h>
#include <time.h>
#include "advice.h"
#include "closures.h"
#include "identity.h"
#include "ffi_lazy.h"
#include "originals.h"
#include "resolve.h"
#include "signals.h"
#include "signatures.h"
#include "wrapper_tables.h"
#include "sys.h"
#include "thread.h"

enum { ASP_CLOSURE_NONE = 0, ASP_CLOSURE_READY = 2, ASP_CLOSURE_FAILED = 3 };

/* One closure and the call interfaces it was prepared with. */
typedef struct asp_stub {
    ffi_cif closure_cif;      /* what the closure receives: every argument as declared */
    ffi_cif call_cif;         /* how the original is called (ffi_prep_cif_var for variadics) */
    ffi_type *types[ASP_MAX_ARGS];
    ffi_closure *closure;     /* reserved at attach; NULL: none could be had */
    void *code;               /* the closure's executable address */
} asp_stub;

typedef struct asp_export_rt {
    uint32_t state;
    uint32_t direct;          /* integer/pointer-only: the original is called without ffi_call */
    uint32_t current;         /* the stub in use */
    uint32_t builds;          /* stubs built so far (a prototype export alternates per registration) */
    asp_stub stubs[2];        /* a catalog export uses [0] only */
    void *fn;                 /* the resolved original, cached for the hot path */
} asp_export_rt;

static asp_export_rt asp_rt[ASP_ALL_EXPORTS];
static pthread_mutex_t asp_build_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t asp_reserved; /* asp_closures_prepare succeeded */

/* Held while libffi is loaded and the closures' memory taken, never with asp_build_lock: the
 * load takes the loader's lock, which a thread running a library's constructor holds while it
 * may wait here. So a wait for it is bounded (ASP_PREPARE_WAIT_NS): past it the call goes on
 * unadvised, and the loading thread, no longer waited for, finishes. The bound is seconds, not
 * the load's fraction of a millisecond: on a loaded machine the loading thread can be kept off
 * the CPU for hundreds of milliseconds, and every call that gave up would be a firing lost. */
static pthread_mutex_t asp_prepare_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t asp_prepare_held_for_fork;
#define ASP_PREPARE_WAIT_NS 2000000000ull

static int asp_prepare_lock_bounded(void) {
    const uint64_t until = asp_sys_realtime_ns() + ASP_PREPARE_WAIT_NS;
    const struct timespec at = {(time_t)(until / 1000000000ull), (long)(until % 1000000000ull)};
    return pthread_mutex_timedlock(&asp_prepare_lock, &at) == 0;
}

/* Loads libffi and takes every closure's memory, under asp_prepare_lock. A prototype export
 * gets two closures: when its table entry is registered anew (another symbol, another
 * signature), the new stub is built in the other one, so a call still running in the
 * previous stub keeps the interface it entered with. */
static int asp_reserve_locked(void) {
    if (__atomic_load_n(&asp_reserved, __ATOMIC_ACQUIRE)) return 1;
    if (!asp_ffi_load()) return 0;
    for (uint32_t idx = 0; idx < ASP_ALL_EXPORTS; idx++) {
        for (uint32_t b = 0; b < (idx < ASP_EXPORT_COUNT ? 1u : 2u); b++) {
            asp_stub *st = &asp_rt[idx].stubs[b];
            st->closure = asp_ffi.closure_alloc(sizeof(ffi_closure), &st->code);
            if (!st->closure) st->code = NULL; /* W^X policy refused it: this export stays pass-through */
        }
    }
    __atomic_store_n(&asp_reserved, 1u, __ATOMIC_RELEASE);
    return 1;
}

/* Whether loading (dlopen, allocating) is safe on this thread now: not inside the program's
 * dlopen, nor inside a handler of the program's. asp_place_safe says so without a doubt when
 * no signal is blocked; with some blocked (a program that keeps signals for signalfd or a
 * thread of its own, or a handler running), a handler can be running unseen only if one is
 * installed past the trampolines (the raw system call): the kernel's dispositions tell. Once
 * one is seen, only asp_place_safe's answer counts: asking the kernel again on every call
 * that needs a stub would cost a system call per signal each time. */
static uint32_t asp_untracked_seen;

static int asp_loading_safe(const asp_export_desc *ex) {
    if (asp_place_safe(ex)) return 1;
    if (asp_in_program_dlopen() || asp_in_handler(&asp_tls)) return 0;
    if (__atomic_load_n(&asp_untracked_seen, __ATOMIC_RELAXED)) return 0;
    if (!asp_signals_untracked_handler()) return 1;
    __atomic_store_n(&asp_untracked_seen, 1u, __ATOMIC_RELAXED);
    return 0;
}

int asp_closures_prepare(const asp_export_desc *ex) {
    if (__atomic_load_n(&asp_reserved, __ATOMIC_ACQUIRE)) return 1;
    if (!asp_loading_safe(ex)) return 0;
    asp_thread *t = &asp_tls;
    const asp_frame outer = asp_frame_push(t, ASP_IN_SEALED);
    int ready = 0;
    if (asp_prepare_lock_bounded()) {
        ready = asp_reserve_locked() ? 1 : -1;
        pthread_mutex_unlock(&asp_prepare_lock);
    }
    asp_frame_pop(t, outer);
    return ready;
}

/* The wrapper stub a prototype export's GOT slots point at for build parity b: the form that
 * keeps %rax for a variadic prototype (gate.h). */
static void *asp_proto_stub_of(uint32_t idx, uint32_t b) {
    const uint32_t stub = 2u * (idx - ASP_EXPORT_COUNT) + b;
    return (asp_export_at(idx)->flags & ASP_F_VARIADIC) ? asp_proto_vstubs[stub] : asp_proto_stubs[stub];
}

int asp_is_proto_stub(uint32_t k, const void *fn) {
    if (k >= ASPECTS_PROTO_CAPACITY) return 0;
    for (uint32_t b = 0; b < 2u; b++)
        if (fn == asp_proto_stubs[2u * k + b] || fn == asp_proto_vstubs[2u * k + b]) return 1;
    return 0;
}

static ffi_type *asp_ffi_type(uint8_t t) { return t < ASPECTS_T_STRUCT ? asp_ffi.types[t] : NULL; }

/* Argument `a` (ASP_MAX_ARGS: the return value) of export idx as an ffi type: structs by value
 * exist only for prototype exports (proto.c lays them out). */
static ffi_type *asp_arg_type(uint32_t idx, const asp_export_desc *ex, uint32_t a) {
    uint8_t t = a < ASP_MAX_ARGS ? ex->args[a] : ex->ret;
    if (t == ASPECTS_T_STRUCT) return idx >= ASP_EXPORT_COUNT ? asp_proto_struct_type(idx - ASP_EXPORT_COUNT, a) : NULL;
    return asp_ffi_type(t);
}

static int asp_is_load_group(uint32_t group) {
#ifdef ASP_GROUP_DLOPEN
    if (group == ASP_GROUP_DLOPEN) return 1;
#endif
#ifdef ASP_GROUP_DLMOPEN
    if (group == ASP_GROUP_DLMOPEN) return 1;
#endif
    (void)group;
    return 0;
}

static int asp_is_integer_class(uint8_t t) { return t != ASPECTS_T_F32 && t != ASPECTS_T_F64 && t < ASPECTS_T_STRUCT; }

static void *asp_build(uint32_t idx) {
    asp_export_rt *rt = &asp_rt[idx];
    const asp_export_desc *ex = asp_export_at(idx);
    void *code = NULL;
    /* Load and allocate only where that is safe (see the top); elsewhere this call goes on
     * unadvised and a later one builds the stub. */
    const int ready = asp_closures_prepare(ex);
    if (ready == 0) return NULL;
    pthread_mutex_lock(&asp_build_lock);
    if (rt->state == ASP_CLOSURE_READY) { code = rt->stubs[rt->current].code; goto out; }
    if (rt->state == ASP_CLOSURE_FAILED) goto out;
    if (ready < 0) goto fail;
    const uint32_t b = idx < ASP_EXPORT_COUNT ? 0u : rt->builds & 1u;
    asp_stub *st = &rt->stubs[b];
    if (!st->closure) goto fail;
    ffi_type *rtype = asp_arg_type(idx, ex, ASP_MAX_ARGS);
    /* dlopen and dlmopen stay on the full path, which applies prototype rules after them */
    int direct = rtype != NULL && asp_is_integer_class(ex->ret) && ex->nargs <= ASP_DIRECT_ARGS && !asp_is_load_group(ex->group);
    for (uint32_t a = 0; a < ex->nargs && a < ASP_MAX_ARGS; a++) {
        st->types[a] = asp_arg_type(idx, ex, a);
        if (!st->types[a]) rtype = NULL;
        if (!asp_is_integer_class(ex->args[a])) direct = 0;
    }
    if (!rtype || ex->nargs > ASP_MAX_ARGS) goto fail;
    if (asp_ffi.prep_cif(&st->closure_cif, FFI_DEFAULT_ABI, ex->nargs, rtype, st->types) != FFI_OK) goto fail;
    if (ex->flags & ASP_F_VARIADIC) {
        if (asp_ffi.prep_cif_var(&st->call_cif, FFI_DEFAULT_ABI, ex->nfixed, ex->nargs, rtype, st->types) != FFI_OK) goto fail;
    } else {
        st->call_cif = st->closure_cif;
    }
    if (asp_ffi.prep_closure_loc(st->closure, &st->closure_cif, asp_handler_for(ex->nargs, direct), (void *)(uintptr_t)idx, st->code) != FFI_OK)
        goto fail;
    rt->builds++;
    __atomic_store_n(&rt->current, b, __ATOMIC_RELEASE);
    rt->fn = asp_original(idx);
    __atomic_store_n(&asp_direct[idx].fn, NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&asp_original_cifs[idx], &st->call_cif, __ATOMIC_RELEASE);
    asp_direct[idx].desc = ex;
    asp_direct[idx].group = ex->group;
    asp_direct[idx].ret = ex->ret;
    asp_direct[idx].nargs = ex->nargs;
    asp_direct[idx].string_arg = 0xff;
    for (uint32_t a = 0; a < ex->nargs && a < 6; a++) /* an event record holds the first six */
        if (ex->args[a] == ASPECTS_T_STR) { asp_direct[idx].string_arg = (uint8_t)a; break; }
    if (direct && rt->fn) __atomic_store_n(&asp_direct[idx].fn, rt->fn, __ATOMIC_RELEASE);
    rt->direct = (uint32_t)direct;
    /* From now on armed calls jump straight into the closure. A prototype export's GOT slots
     * point at its wrapper stub for this build (gate.h), whose original is set once proto.c
     * finds it (asp_set_original); until then an unarmed call through it fails with ENOSYS,
     * an armed one reaches the closure. */
    if (idx < ASP_EXPORT_COUNT) {
        __atomic_store_n(&asp_entry[idx], st->code, __ATOMIC_RELEASE);
        code = st->code;
    } else {
        const uint32_t stub = 2u * (idx - ASP_EXPORT_COUNT) + b;
        __atomic_store_n(&asp_proto_jump[stub], (void *)asp_proto_missing, __ATOMIC_RELEASE);
        if (rt->fn) __atomic_store_n(&asp_proto_jump[stub], rt->fn, __ATOMIC_RELEASE);
        __atomic_store_n(&asp_proto_entry[stub], st->code, __ATOMIC_RELEASE);
        code = asp_proto_stub_of(idx, b);
    }
    __atomic_store_n(&rt->state, ASP_CLOSURE_READY, __ATOMIC_RELEASE);
    goto out;
fail:
    __atomic_store_n(&rt->state, ASP_CLOSURE_FAILED, __ATOMIC_RELEASE);
    asp_debug("cannot build the forwarding stub of", ex->name, "(it stays pass-through)");
    asp_identity_note_stub_failure(idx);
out:
    pthread_mutex_unlock(&asp_build_lock);
    return code;
}

/* A prototype export's table entry was registered anew: its next stub is built afresh (in
 * the other reserved closure) from the descriptor proto.c has just rewritten. Called in a
 * SEALED frame (thread.h). */
void asp_stub_forget(uint32_t idx) {
    if (idx < ASP_EXPORT_COUNT || idx >= ASP_ALL_EXPORTS) return;
    pthread_mutex_lock(&asp_build_lock);
    __atomic_store_n(&asp_rt[idx].state, ASP_CLOSURE_NONE, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&asp_build_lock);
}

/* The forwarding stub of export idx (catalog or prototype), built on first use. NULL when
 * libffi cannot make one. Call in an ASP_IN_SEALED frame (thread.h). */
void *asp_build_stub(uint32_t idx) {
    if (idx >= ASP_ALL_EXPORTS) return NULL;
    uint32_t st = __atomic_load_n(&asp_rt[idx].state, __ATOMIC_ACQUIRE);
    if (st == ASP_CLOSURE_READY) {
        const uint32_t b = __atomic_load_n(&asp_rt[idx].current, __ATOMIC_ACQUIRE);
        return idx < ASP_EXPORT_COUNT ? asp_rt[idx].stubs[b].code : asp_proto_stub_of(idx, b);
    }
    if (st == ASP_CLOSURE_FAILED) return NULL;
    return asp_build(idx);
}

void *asp_enter(uint32_t idx) {
    if (idx >= ASP_EXPORT_COUNT) return asp_resolve(idx);
    int saved_errno = errno;
    void *target = asp_original(idx);
    asp_thread *t = &asp_tls;
    if (!asp_in_engine(t)) {
        uint32_t st = __atomic_load_n(&asp_rt[idx].state, __ATOMIC_ACQUIRE);
        if (st == ASP_CLOSURE_READY) {
            target = asp_rt[idx].stubs[0].code;
        } else if (st != ASP_CLOSURE_FAILED) {
            /* Sealed while building: libffi's own calls reach our wrappers, and a handler
             * arriving now must not wait for the build lock this thread holds. */
            const asp_frame outer = asp_frame_push(t, ASP_IN_SEALED);
            void *code = asp_build(idx);
            asp_frame_pop(t, outer);
            if (code) target = code;
        }
    }
    /* Not into the closure after all (no stub could be built, or inside the engine): the
     * dispatcher will not pop what the wrapper stub pushed for this call. */
    if (target != asp_rt[idx].stubs[0].code || !target) (void)asp_pending_pop(&asp_tls);
    errno = saved_errno;
    return target;
}

/* The original of a prototype export, once proto.c found it: the direct call may use it. */
void asp_set_original(uint32_t idx, void *fn) {
    if (idx >= ASP_ALL_EXPORTS || !fn) return;
    if (fn == asp_rt[idx].stubs[0].code || fn == asp_rt[idx].stubs[1].code) return;
    if (idx >= ASP_EXPORT_COUNT) {
        const uint32_t k = idx - ASP_EXPORT_COUNT;
        if (asp_is_proto_stub(k, fn)) return;
    }
    asp_export_rt *rt = &asp_rt[idx];
    if (idx >= ASP_EXPORT_COUNT) {
        const uint32_t stub = 2u * (idx - ASP_EXPORT_COUNT) + __atomic_load_n(&rt->current, __ATOMIC_ACQUIRE);
        __atomic_store_n(&asp_proto_jump[stub], fn, __ATOMIC_RELEASE);
    }
    if (rt->fn == fn) return;
    rt->fn = fn;
    if (rt->direct) __atomic_store_n(&asp_direct[idx].fn, fn, __ATOMIC_RELEASE);
}

/* A load under way is waited for (bounded: its thread may wait for the loader's lock, which
 * a constructor that forks holds); a child whose parent could not wait starts with the lock
 * free and loads again itself. */
void asp_closures_atfork_prepare(void) {
    asp_prepare_held_for_fork = (uint32_t)asp_prepare_lock_bounded();
    pthread_mutex_lock(&asp_build_lock);
}
void asp_closures_atfork_parent(void) {
    pthread_mutex_unlock(&asp_build_lock);
    if (asp_prepare_held_for_fork) pthread_mutex_unlock(&asp_prepare_lock);
}
void asp_closures_atfork_child(void) {
    pthread_mutex_unlock(&asp_build_lock);
    if (asp_prepare_held_for_fork) pthread_mutex_unlock(&asp_prepare_lock);
    else asp_prepare_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}
