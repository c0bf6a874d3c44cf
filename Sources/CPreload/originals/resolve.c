/* resolve.c — finding the originals: dlsym(RTLD_NEXT, name), lazily, per export.
 *
 * Why lazily: other libraries' constructors run before ours and already call wrapped
 * functions (docs/ARCHITECTURE.md §5, originals), so every export starts pointing at its lazy
 * trampoline and resolves
 * on first use, whoever calls first.
 *
 * Why the bootstrap: dlsym may call malloc/calloc (e.g. to allocate a dlerror message), which
 * lands in our own wrapper, whose original may not be resolved yet: an endless recursion. While
 * this thread is resolving, the malloc family is served by glibc's __libc_* entry points, which
 * are not interposable and always exist. Those results are used for that one call and never
 * stored, so the real chain (another malloc interposer, say) still wins afterwards.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include "gate.h"
#include "resolve.h"
#include "signatures.h"
#include "wrapper_tables.h"
#include "sys.h"
#include "thread.h"

/* glibc's own allocator entry points (declared default-visibility: they live in libc.so). */
#define ASP_LIBC __attribute__((visibility("default")))
extern ASP_LIBC void *__libc_malloc(size_t);
extern ASP_LIBC void *__libc_calloc(size_t, size_t);
extern ASP_LIBC void *__libc_realloc(void *, size_t);
extern ASP_LIBC void __libc_free(void *);

void *asp_proto_original[ASPECTS_PROTO_CAPACITY];

static ASP_TLS uint32_t asp_resolving;
static uint8_t asp_resolved[ASP_EXPORT_COUNT];

/* An original that does not exist in this process (a symbol of a newer libc, say): the call
 * fails like an unimplemented system call instead of crashing. */
static long asp_missing(void) {
    errno = ENOSYS;
    return -1;
}

/* What a prototype stub calls while its entry's original is not known: the call fails like
 * an unimplemented system call (gate.h). */
long asp_proto_missing(void) { return asp_missing(); }

static void *asp_bootstrap(const char *name) {
    if (strcmp(name, "malloc") == 0) return (void *)__libc_malloc;
    if (strcmp(name, "calloc") == 0) return (void *)__libc_calloc;
    if (strcmp(name, "realloc") == 0) return (void *)__libc_realloc;
    if (strcmp(name, "free") == 0) return (void *)__libc_free;
    return NULL;
}

void *asp_resolve(uint32_t idx) {
    if (idx >= ASP_EXPORT_COUNT) return (void *)asp_missing;
    if (__atomic_load_n(&asp_resolved[idx], __ATOMIC_ACQUIRE))
        return __atomic_load_n(&asp_real[idx], __ATOMIC_ACQUIRE);
    const char *name = asp_exports[idx].name;
    if (asp_resolving) {
        void *boot = asp_bootstrap(name);
        if (boot) return boot;
        if (asp_resolving > 4) return (void *)asp_missing;
    }
    int saved_errno = errno;
    /* The frame's stores are atomic and fenced: glibc declares dlsym a leaf function, and GCC
     * once deleted plain stores around it, letting the engine recurse (docs/ARCHITECTURE.md,
     * originals). */
    const asp_frame outer = asp_frame_push(&asp_tls, ASP_IN_SEALED);
    __atomic_store_n(&asp_resolving, asp_resolving + 1, __ATOMIC_RELAXED);
    void *p = dlsym(RTLD_NEXT, name);
    if (!p) {
        (void)dlerror(); /* do not leave our failure for the program's next dlerror() */
        asp_debug("no original for", name, "(calls fail with ENOSYS)");
        p = (void *)asp_missing;
    }
    void *lazy = __atomic_exchange_n(&asp_real[idx], p, __ATOMIC_ACQ_REL);
    __atomic_store_n(&asp_resolved[idx], 1, __ATOMIC_RELEASE);
    /* a gate made before this export resolved sends its calls through the trampoline */
    if (lazy != p) asp_gate_resolved(idx, lazy, p);
    __atomic_store_n(&asp_resolving, asp_resolving - 1, __ATOMIC_RELAXED);
    asp_frame_pop(&asp_tls, outer);
    errno = saved_errno;
    return p;
}

void *asp_original(uint32_t idx) {
    if (idx >= ASP_EXPORT_COUNT)
        return idx < ASP_ALL_EXPORTS ? __atomic_load_n(&asp_proto_original[idx - ASP_EXPORT_COUNT], __ATOMIC_ACQUIRE) : NULL;
    if (ASP_LIKELY(idx < ASP_EXPORT_COUNT && __atomic_load_n(&asp_resolved[idx], __ATOMIC_ACQUIRE)))
        return __atomic_load_n(&asp_real[idx], __ATOMIC_RELAXED);
    return asp_resolve(idx);
}
