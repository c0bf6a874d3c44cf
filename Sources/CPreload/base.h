/* base.h — what every file of the preload shares: the table layout, the catalog's export
 * descriptors, and the few macros of the engine. Everything declared after it is hidden: what
 * libaspects.so exports is the version script aspects-gen writes (generated/exports.map).
 *
 * Layers, each a folder, each calling only the ones below it (one header per file, declaring
 * what that file owns), in the order a call meets them from the top down:
 *   os/         the OS and the table
 *   rules/      rule copies, counting, deciding; the gate and the filter the wrapper stubs call
 *   originals/  resolving and calling originals (libffi)
 *   events/     the event records of firings
 *   dispatch/   the handler behind the closures and its paths, signals, advice as code and data
 *   install/    what puts a call on that route: the libffi closures behind the wrappers, and
 *               GOT slots pointed at prototype stubs
 *   on top      watch (its thread), crash, preload — here, with stubs/ (the wrapper stubs),
 *               generated/, include/
 * Where a lower layer must reach a higher one (a table change that prototype rules follow,
 * a dlopen after which they are applied), it calls a hook the top layer set at start-up. */
#ifndef ASP_BASE_H
#define ASP_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
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
