/* signatures.c — the descriptors of prototype exports (those of the catalog are generated:
 * generated/catalog_table.c) and the ffi types of the structs they pass or return by value,
 * both made by proto.c when it registers a table entry and read by the stubs' builder
 * (closures.c) and the calls of originals (originals.c). */
#include "signatures.h"

asp_export_desc asp_proto_exports[ASPECTS_PROTO_CAPACITY];

/* Entry k's structs by value: ffi types built from the table's layout (libffi fills size and
 * alignment when a call interface is prepared with them). */
typedef struct asp_proto_types {
    ffi_type structs[ASPECTS_PROTO_STRUCTS];
    ffi_type *struct_elements[ASPECTS_PROTO_STRUCTS][ASPECTS_STRUCT_FIELDS + 1];
    uint8_t arg_struct[ASP_MAX_ARGS + 1]; /* [ASP_MAX_ARGS]: the return value's */
} asp_proto_types;

static asp_proto_types asp_types[ASPECTS_PROTO_CAPACITY];

ffi_type *asp_proto_struct_type(uint32_t k, uint32_t arg) {
    if (k >= ASPECTS_PROTO_CAPACITY || arg > ASP_MAX_ARGS) return NULL;
    uint8_t s = asp_types[k].arg_struct[arg];
    return s < ASPECTS_PROTO_STRUCTS && asp_types[k].structs[s].elements ? &asp_types[k].structs[s] : NULL;
}

/* Copies a prototype's struct layouts (validated) into ffi types; 0 if they are unusable.
 * `scalars`: libffi's type of each scalar aspects_type (ffi_lazy.c's table). */
int asp_signature_structs(uint32_t k, const aspects_proto_symbol *e, uint32_t nargs, ffi_type *const *scalars) {
    if (k >= ASPECTS_PROTO_CAPACITY) return 0;
    asp_proto_types *p = &asp_types[k];
    uint32_t n = e->struct_count;
    if (n > ASPECTS_PROTO_STRUCTS) return 0;
    for (uint32_t s = 0; s < ASPECTS_PROTO_STRUCTS; s++) {
        p->structs[s].elements = NULL;
        if (s >= n) continue;
        uint32_t f = e->struct_field_count[s];
        if (f == 0 || f > ASPECTS_STRUCT_FIELDS) return 0;
        for (uint32_t i = 0; i < f; i++) {
            uint8_t t = e->struct_fields[s][i];
            if (t == ASPECTS_T_VOID || t >= ASPECTS_T_STRUCT || !scalars[t]) return 0;
            p->struct_elements[s][i] = scalars[t];
        }
        p->struct_elements[s][f] = NULL;
        p->structs[s].size = 0;
        p->structs[s].alignment = 0;
        p->structs[s].type = FFI_TYPE_STRUCT;
        p->structs[s].elements = p->struct_elements[s];
    }
    for (uint32_t a = 0; a <= ASP_MAX_ARGS; a++) {
        uint8_t s = a < ASP_MAX_ARGS ? e->arg_struct[a] : e->ret_struct;
        uint8_t t = a < ASP_MAX_ARGS ? (a < nargs ? e->args[a] : 0) : e->ret;
        p->arg_struct[a] = ASPECTS_NO_STRUCT;
        if (t == ASPECTS_T_STRUCT) {
            if (s >= n) return 0;
            p->arg_struct[a] = s;
        }
    }
    return 1;
}

