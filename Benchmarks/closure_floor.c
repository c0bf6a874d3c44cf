/* Benchmarks/closure_floor.c — the floor of the armed path: a libffi closure of the same
 * signature as the measured function whose handler returns at once, called N times.
 * Usage: closure_floor SIGNATURE N, SIGNATURE one of getppid (no args), write (int, ptr,
 * size_t), open (ptr, int, mode_t, called like a variadic), malloc (size_t), one (int -> int),
 * four (4 ints -> int). */
#include <ffi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void handler(ffi_cif *cif, void *ret, void **args, void *data) {
    (void)cif; (void)args; (void)data;
    *(ffi_arg *)ret = 0;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    long n = atol(argv[2]);
    ffi_type *types[3], *four[4];
    unsigned nargs = 0;
    ffi_type *rtype = &ffi_type_sint32;
    if (strcmp(argv[1], "write") == 0) {
        types[0] = &ffi_type_sint32; types[1] = &ffi_type_pointer; types[2] = &ffi_type_uint64; nargs = 3; rtype = &ffi_type_sint64;
    } else if (strcmp(argv[1], "open") == 0) {
        types[0] = &ffi_type_pointer; types[1] = &ffi_type_sint32; types[2] = &ffi_type_uint32; nargs = 3;
    } else if (strcmp(argv[1], "malloc") == 0) {
        types[0] = &ffi_type_uint64; nargs = 1; rtype = &ffi_type_pointer;
    } else if (strcmp(argv[1], "one") == 0) {
        types[0] = &ffi_type_sint32; nargs = 1;
    } else if (strcmp(argv[1], "four") == 0) {
        for (int i = 0; i < 4; i++) four[i] = &ffi_type_sint32;
        nargs = 4;
    }
    ffi_cif cif;
    if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, nargs, rtype, nargs == 4 ? four : types) != FFI_OK) return 1;
    void *code;
    ffi_closure *cl = ffi_closure_alloc(sizeof(ffi_closure), &code);
    if (!cl || ffi_prep_closure_loc(cl, &cif, handler, NULL, code) != FFI_OK) return 1;
    volatile long sink = 0;
    if (nargs == 0) {
        int (*f)(void) = (int (*)(void))code;
        for (long i = 0; i < n; i++) sink += f();
    } else if (nargs == 1 && rtype == &ffi_type_sint32) {
        int (*f)(int) = (int (*)(int))code;
        for (long i = 0; i < n; i++) sink += f((int)i);
    } else if (nargs == 1) {
        void *(*f)(size_t) = (void *(*)(size_t))code;
        for (long i = 0; i < n; i++) sink += (long)f(32);
    } else if (nargs == 4) {
        int (*f)(int, int, int, int) = (int (*)(int, int, int, int))code;
        for (long i = 0; i < n; i++) sink += f((int)i, 1, 2, 3);
    } else {
        long (*f)(long, long, long) = (long (*)(long, long, long))code;
        for (long i = 0; i < n; i++) sink += f(3, (long)&sink, 1);
    }
    return (int)(sink & 0);
}
