/* base.h — what every file of the preload shares: the table layout, the catalog's export
 * descriptors, and the few macros of the engine. Everything declared after it is hidden: the
 * only exported symbols of libaspects.so are the generated wrappers.
 *
 * Layers, each a folder, each calling only the ones below it (one header per file, declaring
 * what that file owns):
 *   os/         the OS and the table: sys, table, glob, identity, objects, context (unwinding),
 *               thread, prng, integer_width, wrapper_tables (what the generated wrapper stubs
 *               read and jump through)
 *   rules/      view, counters, decide, gate, rulecache, signatures
 *   originals/  resolve, originals, ffi_lazy (libffi, how originals are called), events
 *   dispatch/   advice.h, dispatch, dispatch_full, filter, signals, advice_call, advice_data
 *   stubs/      closures (the libffi stubs behind the wrappers), proto (GOT slots to prototype stubs)
 *   on top      watch (its thread), crash, preload — here, with arch/, generated/, include/
 * Where a lower layer must reach a higher one (a table change that prototype rules follow,
 * a dlopen after which they are applied), it calls a hook the top layer set at start-up. */
#ifndef ASP_BASE_H
#define ASP_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>  /* strnlen: libc's (not exported by us), word-at-a-time */
#include "aspects_abi.h"
#include "catalog.h"

#pragma GCC visibility push(hidden)

_Static_assert(sizeof(void *) == 8, "libaspects supports LP64 only");

#define ASP_TLS __thread __attribute__((tls_model("initial-exec")))
#define ASP_LIKELY(x) __builtin_expect(!!(x), 1)
/* A fact the compiler may rely on (clang's builtin; GCC, which AspectsTesting's source build
 * may use, learns it from an unreachable branch). `x` must have no side effects. */
#if defined(__clang__)
#define ASP_ASSUME(x) __builtin_assume(x)
#else
#define ASP_ASSUME(x) do { if (!(x)) __builtin_unreachable(); } while (0)
#endif
#define ASP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#if defined(__x86_64__)
#define ASP_CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define ASP_CPU_RELAX() __asm__ __volatile__("yield" ::: "memory")
#else
#define ASP_CPU_RELAX() __asm__ __volatile__("" ::: "memory")
#endif

#endif
