/* originals.h — originals.c: calling an original — directly for integer signatures (asp_direct), through
 * ffi_call otherwise — and storing a result the way a libffi closure must. */
#ifndef ASP_ORIGINALS_H
#define ASP_ORIGINALS_H

#include <ffi.h>
#include "integer_width.h"
#include "thread.h"
#include "view.h"
/* Stores an integer-class result the way a libffi closure must: a full ffi_arg, sign- or
 * zero-extended, for types narrower than a register. */
static inline void asp_store_integer(uint8_t type, void *ret, long r) {
    _Static_assert(sizeof(ffi_arg) == 8, "a closure's integer result is one 8-byte ffi_arg");
    if (type != ASPECTS_T_VOID) *(uint64_t *)ret = asp_int_fit(type, (uint64_t)r);
}

/* Originals that can be called without ffi_call (integer/pointer-only signatures): set when
 * the export's closure is built. */
typedef struct asp_direct_call {
    void *fn;                     /* set for integer-only signatures; NULL: asp_call_original (ffi_call) */
    const asp_export_desc *desc;  /* the export (set for every built stub, before any call reaches it) */
    uint16_t group;
    uint8_t ret;                  /* enum aspects_type */
    uint8_t nargs;
    uint8_t string_arg;           /* the first string argument among the first six, 0xff: none (events) */
    uint8_t pad[3];
} asp_direct_call;
extern asp_direct_call asp_direct[ASP_ALL_EXPORTS];

/* The call interface of each export's closure build, set by closures.c (ffi_call's). */
extern ffi_cif *asp_original_cifs[ASP_ALL_EXPORTS];
void asp_call_original(uint32_t idx, void *ret, void **args, const uint64_t *vals);
/* The struct result an `instead`/`after` rule gives export idx (a prototype's): its bytes
 * from the rule (v->result_off/len). An integer or float result is asp_store_integer's. */
void asp_store_rule_struct(const asp_rule_view *v, uint32_t idx, void *ret);

/* A result as the caller sees it, from the closure's ffi_arg (whose upper bytes may be
 * whatever the original left in the register). */
static inline int64_t asp_read_return(uint8_t type, const void *ret) {
    return type == ASPECTS_T_VOID ? 0 : (int64_t)asp_int_fit(type, *(const uint64_t *)ret);
}

typedef long (*asp_varfn6)(long, long, long, long, long, long, ...);

/* Calls an integer-signature original directly. On x86-64 SysV the first six integer
 * arguments travel in registers whatever the callee's arity (on AAPCS64 the first eight), so
 * passing six is exact for any such function of up to six parameters. The call goes through a
 * variadic pointer so %al (vector registers used) is 0, which a variadic original needs and
 * any other ignores; AAPCS64 on Linux passes variadic arguments like named ones, so there it
 * is the same call. The result is stored as the whole register: libffi's closure exit loads a
 * result narrower than 64 bits with a load of its own width and extension (x86-64: movzbl,
 * movswl, movl, ...; aarch64: ldrb, ldrsh, ldr w, ...), and `ret` is its 8-byte-or-larger
 * return buffer even for void. */
static inline void asp_direct_invoke(void *fn, const uint64_t *a, void *ret) {
    const long r = ((asp_varfn6)fn)((long)a[0], (long)a[1], (long)a[2], (long)a[3], (long)a[4], (long)a[5]);
    *(uint64_t *)ret = (uint64_t)r;
}

/* Calls a directly callable original in an ORIGINAL frame (a second name of the same group,
 * reached from inside it, is not advised again: thread.h) and stores its result the way the
 * closure must. (dlopen and dlmopen are never called directly: the full path applies
 * prototype rules after them.) */
static inline void asp_call_direct(const asp_direct_call *h, void *fn, const uint64_t *a, void *ret) {
    asp_thread *t = &asp_tls;
    const asp_frame outer = asp_frame_push_original(t, h->group, (uint32_t)(h - asp_direct));
    asp_direct_invoke(fn, a, ret);
    asp_frame_pop(t, outer);
}

#endif
