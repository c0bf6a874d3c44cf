/* trampolines_aarch64.S — the slow paths of the exported wrappers on 64-bit ARM (see
 * stub_aarch64.h; trampolines_x86_64.S says what each is for).
 *
 * The lazy and slow trampolines are entered by a branch from a wrapper with the caller's
 * arguments still in registers and the export index in w16. They save every register a call
 * may carry arguments in (x0-x7, x8 for a large struct result, q0-q7), call a C function that
 * returns where to go, restore, and branch there, so the callee sees exactly the original
 * call. A frame record (x29, x30) keeps the stack walkable; sp stays 16-aligned. Each is
 * entered by a direct branch (b, bl) today and starts with a landing pad all the same, so
 * that an indirect way in added later cannot fault only on BTI hardware
 * (branch_protection_aarch64.h).
 */
#if defined(__aarch64__)
#include "branch_protection_aarch64.h"

/* x0-x8 at 16..87(sp): where both trampolines and the filter's call keep them. `pair` and
 * `one` are stp and str to save them, ldp and ldr to put them back: one layout for both. */
.macro ASPECTS_INTEGER_ARGS pair, one
    \pair x0, x1, [sp, #16]
    \pair x2, x3, [sp, #32]
    \pair x4, x5, [sp, #48]
    \pair x6, x7, [sp, #64]
    \one x8, [sp, #80]
.endm

.macro ASPECTS_TRAMPOLINE name, target
    .text
    .globl \name
    .hidden \name
    .type \name, @function
    .balign 16
\name:
    .cfi_startproc
    ASP_LANDING_PAD
    stp x29, x30, [sp, #-224]!
    .cfi_def_cfa_offset 224
    .cfi_offset x29, -224
    .cfi_offset x30, -216
    mov x29, sp
    ASPECTS_INTEGER_ARGS stp, str
    stp q0, q1, [sp, #96]
    stp q2, q3, [sp, #128]
    stp q4, q5, [sp, #160]
    stp q6, q7, [sp, #192]
    mov w0, w16
    bl \target
    mov x16, x0
    ASPECTS_INTEGER_ARGS ldp, ldr
    ldp q0, q1, [sp, #96]
    ldp q2, q3, [sp, #128]
    ldp q4, q5, [sp, #160]
    ldp q6, q7, [sp, #192]
    ldp x29, x30, [sp], #224
    .cfi_def_cfa_offset 0
    .cfi_restore x29
    .cfi_restore x30
    br x16
    .cfi_endproc
    .size \name, . - \name
.endm

ASPECTS_TRAMPOLINE asp_lazy_common, asp_resolve
ASPECTS_TRAMPOLINE asp_slow_common, asp_enter

/* asp_filter_common — called (bl) by a stub whose gate has a filter, with the stub slot in
 * w16 and the program's return address in x17: asks asp_filter(slot, saved argument
 * registers, caller) and returns its verdict in w16, x0-x8 as they were. The vector
 * registers are not kept: a filter exists only for functions whose arguments all travel in
 * the integer registers (gate.c, asp_group_in_registers). */
    .text
    .globl asp_filter_common
    .hidden asp_filter_common
    .type asp_filter_common, @function
    .balign 16
asp_filter_common:
    .cfi_startproc
    ASP_LANDING_PAD
    stp x29, x30, [sp, #-96]!
    .cfi_def_cfa_offset 96
    .cfi_offset x29, -96
    .cfi_offset x30, -88
    mov x29, sp
    ASPECTS_INTEGER_ARGS stp, str
    mov w0, w16
    add x1, sp, #16
    mov x2, x17
    bl asp_filter
    mov w16, w0
    ASPECTS_INTEGER_ARGS ldp, ldr
    ldp x29, x30, [sp], #96
    .cfi_def_cfa_offset 0
    .cfi_restore x29
    .cfi_restore x30
    ret
    .cfi_endproc
    .size asp_filter_common, . - asp_filter_common

ASPECTS_ARCH_NOTES
#endif
.section .note.GNU-stack, "", @progbits
