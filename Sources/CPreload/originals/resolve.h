/* resolve.h — resolve.c: finding the originals, dlsym(RTLD_NEXT) lazily per export; the originals
 * of prototype symbols (proto.c finds them in the slots it rewrites). */
#ifndef ASP_RESOLVE_H
#define ASP_RESOLVE_H

#include "base.h"
void *asp_resolve(uint32_t idx);    /* called by asp_lazy_common: the original of export idx */
void *asp_original(uint32_t idx);   /* resolved original, resolving now if needed */
extern void *asp_proto_original[ASPECTS_PROTO_CAPACITY];
long asp_proto_missing(void);       /* a prototype stub's original not known (yet): ENOSYS */

#endif
