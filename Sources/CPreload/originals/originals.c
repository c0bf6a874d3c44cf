/* originals.c — calling an original from the dispatcher: the direct call of an integer
 * signature (the table asp_direct, filled by closures.c when an export's stub is built) or
 * ffi_call with the call interface of its build; and a rule's struct result stored the way
 * the closure must return it. */
#define _GNU_SOURCE
#include <errno.h>
#include "ffi_lazy.h"
#include "originals.h"
#include "resolve.h"
#include "signatures.h"

asp_direct_call asp_direct[ASP_ALL_EXPORTS];
ffi_cif *asp_original_cifs[ASP_ALL_EXPORTS];

/* Calls the original through ffi_call: signatures with floating-point or struct arguments or
 * results, or more than six parameters. Integer-only ones never get here: the dispatcher calls
 * them directly (asp_direct, dispatch.c), skipping ffi_call's per-call classification of every
 * argument (docs/ARCHITECTURE.md §5, originals). */
void asp_call_original(uint32_t idx, void *ret, void **args, const uint64_t *vals) {
    (void)vals;
    void *fn = idx < ASP_ALL_EXPORTS ? asp_original(idx) : NULL;
    ffi_cif *cif = idx < ASP_ALL_EXPORTS ? __atomic_load_n(&asp_original_cifs[idx], __ATOMIC_ACQUIRE) : NULL;
    if (ASP_UNLIKELY(!fn || !cif)) { /* a prototype whose original is not known yet: fail like ENOSYS */
        errno = ENOSYS;
        asp_store_integer(asp_export_at(idx)->ret, ret, -1);
        return;
    }
    asp_ffi.call(cif, FFI_FN(fn), ret, args);
}

void asp_store_rule_struct(const asp_rule_view *v, uint32_t idx, void *ret) {
    /* libffi's return buffer holds exactly the type's size. The writer laid the bytes out as
     * C does; fewer bytes than the type leave the rest zero, more are cut. */
    const ffi_type *t = idx >= ASP_EXPORT_COUNT ? asp_proto_struct_type(idx - ASP_EXPORT_COUNT, ASP_MAX_ARGS) : NULL;
    if (!t) return;
    const size_t size = t->size, n = v->result_len < size ? v->result_len : size;
    __builtin_memset(ret, 0, size);
    if (n) __builtin_memcpy(ret, v->r->strings + v->result_off, n);
}
