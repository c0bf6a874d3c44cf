/* signatures.h — signatures.c: the descriptors of every export — the catalog's, generated, and the
 * prototype entries', made at run time by proto.c — and the ffi types of prototype structs. */
#ifndef ASP_SIGNATURES_H
#define ASP_SIGNATURES_H

#include <ffi.h>
#include "base.h"
/* Exports past the catalog's are functions advised from a rule's prototype (proto.c): their
 * descriptors are made at run time, their groups follow the catalog's. */
extern asp_export_desc asp_proto_exports[ASPECTS_PROTO_CAPACITY];

static inline const asp_export_desc *asp_export_at(uint32_t idx) {
    if (idx < ASP_EXPORT_COUNT) return &asp_exports[idx];
    if (idx < ASP_ALL_EXPORTS) return &asp_proto_exports[idx - ASP_EXPORT_COUNT];
    return &asp_exports[0];
}

/* Prototype entry k's struct types (libffi fills size and alignment), from the table's layout;
 * 0 if they are unusable. Called by proto.c when it registers the entry. */
int asp_signature_structs(uint32_t k, const aspects_proto_symbol *e, uint32_t nargs, ffi_type *const *scalars);
ffi_type *asp_proto_struct_type(uint32_t k, uint32_t arg); /* arg ASP_MAX_ARGS: the return value */

#endif
