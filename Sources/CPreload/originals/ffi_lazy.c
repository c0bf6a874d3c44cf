/* ffi_lazy.c — libffi, loaded at the first need from a place where loading is safe
 * (asp_closures_prepare: the first forwarding stub, a prototype pass, the program installing
 * a signal handler), never at attach: most processes that attach a table never call anything
 * armed, and libffi's loading and first allocation were most of what attaching cost.
 *
 * Why not link it: a preloaded library's dependencies join every process's global symbol
 * scope, and every symbol lookup of the program's own relocations then probes them too; with
 * libffi as a NEEDED entry, start-up cost ~25,000 more instructions in every process, armed or
 * not. Loaded here with RTLD_LOCAL, it stays out of the program's scope, and processes that
 * never arm anything never map it. The real dlopen is called (not our own export).
 *
 * Called in a SEALED frame (thread.h): dlopen's own calls of wrapped functions reach the
 * originals. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include "ffi_lazy.h"
#include "resolve.h"
#include "sys.h"

asp_ffi_api asp_ffi;
char asp_libffi_choice[512];  /* ASPECTS_LIBFFI, copied at start-up (the program may change its environment) */
static uint32_t asp_ffi_state; /* 0 not tried, 1 loaded, 2 unavailable */

static void *asp_ffi_sym(void *h, const char *name, int *missing) {
    void *p = dlsym(h, name);
    if (!p) *missing = 1;
    return p;
}

int asp_ffi_load(void) {
    uint32_t st = __atomic_load_n(&asp_ffi_state, __ATOMIC_ACQUIRE);
    if (st) return st == 1;
    typedef void *(*dlopen_fn)(const char *, int);
    dlopen_fn real_dlopen = (dlopen_fn)asp_original(ASP_EXPORT_DLOPEN);
    void *h = NULL;
    /* By absolute path only. A bare soname would be searched through the loader's path, and
     * through libaspects.so's own RUNPATH were it ever linked with one again ($ORIGIN, which
     * SwiftPM gives every library and Package.swift removes): a libffi.so.8 placed beside the
     * preload would then run its code in every advised process. The system's
     * library directories, or ASPECTS_LIBFFI (the user's own environment, like LD_PRELOAD
     * itself; never honoured in secure-execution mode, where no table is attached). */
    const char *chosen = asp_libffi_choice;
    if (chosen[0] == '/' && real_dlopen) {
        h = real_dlopen(chosen, RTLD_NOW | RTLD_LOCAL);
        if (!h) asp_debug("ASPECTS_LIBFFI", chosen, "cannot be loaded; trying the system's libffi");
    }
    static const char *const dirs[] = {
#if defined(__x86_64__)
        "/usr/lib/x86_64-linux-gnu/", "/lib/x86_64-linux-gnu/",
#elif defined(__aarch64__)
        "/usr/lib/aarch64-linux-gnu/", "/lib/aarch64-linux-gnu/",
#endif
        "/usr/lib64/", "/lib64/", "/usr/lib/", "/lib/", "/usr/local/lib64/", "/usr/local/lib/"};
    static const char *const names[] = {"libffi.so.8", "libffi.so.7"};
    for (unsigned n = 0; n < sizeof names / sizeof names[0] && !h && real_dlopen; n++) {
        for (unsigned d = 0; d < sizeof dirs / sizeof dirs[0] && !h; d++) {
            char path[96];
            size_t a = strlen(dirs[d]), b = strlen(names[n]);
            if (a + b + 1 > sizeof path) continue;
            memcpy(path, dirs[d], a);
            memcpy(path + a, names[n], b + 1);
            h = real_dlopen(path, RTLD_NOW | RTLD_LOCAL);
        }
    }
    int missing = !h;
    if (h) {
        asp_ffi.prep_cif = (ffi_status (*)(ffi_cif *, ffi_abi, unsigned, ffi_type *, ffi_type **))asp_ffi_sym(h, "ffi_prep_cif", &missing);
        asp_ffi.prep_cif_var = (ffi_status (*)(ffi_cif *, ffi_abi, unsigned, unsigned, ffi_type *, ffi_type **))asp_ffi_sym(h, "ffi_prep_cif_var", &missing);
        asp_ffi.closure_alloc = (void *(*)(size_t, void **))asp_ffi_sym(h, "ffi_closure_alloc", &missing);
        asp_ffi.closure_free = (void (*)(void *))asp_ffi_sym(h, "ffi_closure_free", &missing);
        asp_ffi.prep_closure_loc = (ffi_status (*)(ffi_closure *, ffi_cif *, void (*)(ffi_cif *, void *, void **, void *), void *, void *))asp_ffi_sym(h, "ffi_prep_closure_loc", &missing);
        asp_ffi.call = (void (*)(ffi_cif *, void (*)(void), void *, void **))asp_ffi_sym(h, "ffi_call", &missing);
        /* the scalar types; structs are built per prototype (proto.c) */
        static const char *const types[ASPECTS_T_STRUCT] = {
            "ffi_type_void", "ffi_type_sint8", "ffi_type_uint8", "ffi_type_sint16", "ffi_type_uint16",
            "ffi_type_sint32", "ffi_type_uint32", "ffi_type_sint64", "ffi_type_uint64", "ffi_type_pointer",
            "ffi_type_pointer", "ffi_type_float", "ffi_type_double"};
        for (unsigned t = 0; t < ASPECTS_T_STRUCT; t++) asp_ffi.types[t] = (ffi_type *)asp_ffi_sym(h, types[t], &missing);
    }
    if (missing) asp_debug("libffi (libffi.so.8) is not in the system's library directories (set ASPECTS_LIBFFI to its path): advice stays pass-through", NULL, NULL);
    __atomic_store_n(&asp_ffi_state, missing ? 2u : 1u, __ATOMIC_RELEASE);
    return !missing;
}
