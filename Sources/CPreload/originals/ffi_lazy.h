/* ffi_lazy.h — ffi_lazy.c: libffi, dlopened RTLD_LOCAL by absolute path at its first need. */
#ifndef ASP_FFI_LAZY_H
#define ASP_FFI_LAZY_H

#include "base.h"
#include <ffi.h>
typedef struct asp_ffi_api {
    ffi_status (*prep_cif)(ffi_cif *, ffi_abi, unsigned, ffi_type *, ffi_type **);
    ffi_status (*prep_cif_var)(ffi_cif *, ffi_abi, unsigned, unsigned, ffi_type *, ffi_type **);
    void *(*closure_alloc)(size_t, void **);
    void (*closure_free)(void *);
    ffi_status (*prep_closure_loc)(ffi_closure *, ffi_cif *, void (*)(ffi_cif *, void *, void **, void *), void *, void *);
    void (*call)(ffi_cif *, void (*)(void), void *, void **);
    ffi_type *types[ASPECTS_T_COUNT];
} asp_ffi_api;
extern asp_ffi_api asp_ffi;
int asp_ffi_load(void);   /* 1 when libffi is usable */
extern char asp_libffi_choice[512]; /* ASPECTS_LIBFFI as the program started with it, or "" */

#endif
