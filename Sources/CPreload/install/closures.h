/* closures.h — closures.c: the forwarding stubs — one libffi closure per armed export, built on its
 * first armed call from memory reserved at the first need where loading is safe. */
#ifndef ASP_CLOSURES_H
#define ASP_CLOSURES_H

#include "base.h"
void *asp_enter(uint32_t idx);      /* called by asp_slow_common: closure code or the original */
/* libffi loaded and every closure's memory taken: 1 when they are, 0 when this is no place
 * to load (a signal handler, the program's dlopen: ask again from another), -1 when libffi
 * cannot be had. Call outside the build lock. */
int asp_closures_prepare(const asp_export_desc *ex);
void asp_stub_forget(uint32_t idx); /* a prototype export registered anew: rebuild its stub */
void *asp_build_stub(uint32_t idx); /* the forwarding stub of any export index (a prototype's: its wrapper stub) */
void asp_set_original(uint32_t idx, void *fn);
int asp_is_proto_stub(uint32_t k, const void *fn); /* fn is one of prototype entry k's wrapper stubs */
void asp_closures_atfork_prepare(void);
void asp_closures_atfork_parent(void);
void asp_closures_atfork_child(void);

#endif
