/* stub_x86_64.h — the exported wrapper, written once; generated/wrappers.S instantiates it
 * for every catalog name.
 *
 * Contract of ASPECTS_STUB name, export, group:
 *   - not armed: 4 instructions and a tail jump to the original with every register and the
 *     stack untouched (only %r11, the ABI's scratch register, is used; %rax carries the
 *     vector-register count of variadic calls and must survive);
 *   - armed: the caller's return address goes to asp_tls.caller_ip (for `caller` rules; %r10
 *     is free here: libffi's trampoline sets it itself), then a tail jump through
 *     asp_entry[export]: the symbol's libffi closure once built, before that
 *     asp_slow_<export>, which builds it (asp_enter) and then jumps;
 *   - asp_real[export] starts as asp_lazy_<export>, which resolves the original with
 *     dlsym(RTLD_NEXT) on first use (asp_resolve), so a call made before our constructor ran
 *     — from another library's constructor — still reaches the original.
 * asp_armed_base points at a zero array until a table is attached, then at the table's armed
 * bytes (one per alias group). The load is a plain 8-byte load: atomic on x86-64.
 */
#define ASPECTS_TEXT .text

.macro ASPECTS_STUB name, export, group
    .globl \name
    .type \name, @function
    .globl asp_self_\export
    .hidden asp_self_\export
    .balign 16
\name:
asp_self_\export:
    .cfi_startproc
    movq asp_armed_base(%rip), %r11
    cmpb $0, \group(%r11)
    jne 1f
    jmpq *(asp_real + 8 * \export)(%rip)
1:  movq (%rsp), %r11
    movq asp_tls@gottpoff(%rip), %r10
    movq %r11, %fs:(%r10)
    jmpq *(asp_entry + 8 * \export)(%rip)
    .cfi_endproc
    .size \name, . - \name
asp_lazy_\export:
    movl $\export, %r11d
    jmp asp_lazy_common
asp_slow_\export:
    movl $\export, %r11d
    jmp asp_slow_common
.endm

#define ASPECTS_DATA .data; .balign 8

.macro ASPECTS_TABLE_BEGIN table
    .globl \table
    .hidden \table
    .type \table, @object
\table:
.endm

.macro ASPECTS_SLOT label
    .quad \label
.endm

#define ASPECTS_END .section .note.GNU-stack, "", @progbits
