/* aspects_preload.h — the public face of libaspects.so.
 *
 * libaspects.so has no C API of its own: it is loaded with LD_PRELOAD and exports only the
 * wrappers of the catalog's functions (config/catalog.spec). Its behaviour is steered by the
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

#endif
