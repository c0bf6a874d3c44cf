/* aspects_preload.h — the public face of libaspects.so.
 *
 * libaspects.so is loaded with LD_PRELOAD. It exports the wrappers of the catalog's functions
 * (config/catalog.spec), the API of advice objects (aspects_advice.h), and the libc functions
 * listed below, which it defines in place of libc's; nothing else (aspects-gen writes the
 * version script, generated/exports.map, from these three). Its behaviour is steered by the
 * environment and by the advice table (aspects_abi.h), which aspectctl and the AspectConfig
 * Swift library write:
 *
 *   ASPECTS_TABLE   name of the table to attach ("demo" is /dev/shm/aspects.demo; a name
 *                   starting with '/' is a file path). Unset or unusable: pure pass-through.
 *   ASPECTS_DEBUG   set: one line on stderr per problem, prefixed "libaspects:".
 */
#ifndef ASPECTS_PRELOAD_H
#define ASPECTS_PRELOAD_H

#include "aspects_abi.h"

/* The program's signal-handler installers: each installs the handler behind a trampoline
 * entry, so that it runs on a fresh level of the invocation stack (signals.c). */
#define ASPECTS_PRELOAD_LIBC_REPLACED "sigaction __sigaction signal bsd_signal ssignal sysv_signal __sysv_signal sigset"

#endif
