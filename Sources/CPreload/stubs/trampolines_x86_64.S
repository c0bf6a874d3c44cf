/* trampolines_x86_64.S — the two slow paths of the exported wrappers (see stub_x86_64.h).
 *
 * Both are entered by a jmp from a wrapper with the caller's arguments still in registers and
 * the export index in %r11d. They save every argument register (integer, %rax for variadic
 * calls, and %xmm0-7), call a C function that returns where to go, restore, and tail-jump
 * there, so the callee sees exactly the original call.
 *
 * Stack: on entry %rsp ≡ 8 (mod 16) (the caller's return address); push %rbp makes it 16-
 * aligned, and 192 bytes of save area keep it so for the C call and the movaps.
 */
#if defined(__x86_64__)

/* The integer argument registers and %rax (a variadic call's vector-register count), saved
 * at 0..55(%rsp) and put back: both trampolines and the filter's call keep them. */
.macro ASPECTS_SAVE_INTEGER_ARGS
    movq %rdi, 0(%rsp)
    movq %rsi, 8(%rsp)
    movq %rdx, 16(%rsp)
    movq %rcx, 24(%rsp)
    movq %r8, 32(%rsp)
    movq %r9, 40(%rsp)
    movq %rax, 48(%rsp)
.endm
.macro ASPECTS_RESTORE_INTEGER_ARGS
    movq 0(%rsp), %rdi
    movq 8(%rsp), %rsi
    movq 16(%rsp), %rdx
    movq 24(%rsp), %rcx
    movq 32(%rsp), %r8
    movq 40(%rsp), %r9
    movq 48(%rsp), %rax
.endm

.macro ASPECTS_TRAMPOLINE name, target
    .text
    .globl \name
    .hidden \name
    .type \name, @function
    .balign 16
\name:
    .cfi_startproc
    pushq %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    movq %rsp, %rbp
    .cfi_def_cfa_register %rbp
    subq $192, %rsp
    ASPECTS_SAVE_INTEGER_ARGS
    movaps %xmm0, 64(%rsp)
    movaps %xmm1, 80(%rsp)
    movaps %xmm2, 96(%rsp)
    movaps %xmm3, 112(%rsp)
    movaps %xmm4, 128(%rsp)
    movaps %xmm5, 144(%rsp)
    movaps %xmm6, 160(%rsp)
    movaps %xmm7, 176(%rsp)
    movl %r11d, %edi
    call \target
    movq %rax, %r11
    ASPECTS_RESTORE_INTEGER_ARGS
    movaps 64(%rsp), %xmm0
    movaps 80(%rsp), %xmm1
    movaps 96(%rsp), %xmm2
    movaps 112(%rsp), %xmm3
    movaps 128(%rsp), %xmm4
    movaps 144(%rsp), %xmm5
    movaps 160(%rsp), %xmm6
    movaps 176(%rsp), %xmm7
    leave
    .cfi_def_cfa %rsp, 8
    jmpq *%r11
    .cfi_endproc
    .size \name, . - \name
.endm

ASPECTS_TRAMPOLINE asp_lazy_common, asp_resolve
ASPECTS_TRAMPOLINE asp_slow_common, asp_enter

/* asp_filter_common — called (not jumped to) by a stub whose gate has a filter (gate.h), with
 * the stub slot in %r11d: asks asp_filter(slot, saved argument registers, caller's return
 * address) and returns its verdict in %r11d, the argument registers and %rax as they were.
 * The vector registers are not kept: a filter exists only for functions whose arguments all
 * travel in the integer registers (gate.c, asp_group_in_registers), and the program's call
 * lets its callee clobber every vector register. On entry [%rsp] returns into the stub and
 * [%rsp + 8] is the program's return address; %rsp is 16-aligned (the program's call and
 * ours), so push %rbp and 56 bytes keep it so. */
    .text
    .globl asp_filter_common
    .hidden asp_filter_common
    .type asp_filter_common, @function
    .balign 16
asp_filter_common:
    .cfi_startproc
    pushq %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    movq %rsp, %rbp
    .cfi_def_cfa_register %rbp
    subq $56, %rsp
    ASPECTS_SAVE_INTEGER_ARGS
    movl %r11d, %edi
    movq %rsp, %rsi
    movq 16(%rbp), %rdx
    call asp_filter
    movl %eax, %r11d
    ASPECTS_RESTORE_INTEGER_ARGS
    leave
    .cfi_def_cfa %rsp, 8
    ret
    .cfi_endproc
    .size asp_filter_common, . - asp_filter_common

#endif
.section .note.GNU-stack, "", @progbits
