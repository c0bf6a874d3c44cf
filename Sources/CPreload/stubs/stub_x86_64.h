/* stub_x86_64.h — the exported wrapper, written once; generated/wrappers.S instantiates it
 * for every catalog name (ASPECTS_STUB) and twice for every prototype entry
 * (ASPECTS_PROTO_STUB: GOT slots of prototype rules point at these).
 *
 * Contract of a stub, for export `export` of group `group`:
 *   - not armed: 4 instructions and a tail jump to the original with every register and the
 *     stack untouched (only %r11 and %r10, the ABI's scratch registers, are used: neither
 *     carries an argument; %rax carries the vector-register count of variadic calls and
 *     survives);
 *   - armed, gate open (ASPECTS_GATE): the group's gate record (gate.h) was made at the
 *     table's current generation; the call is counted with one atomic add in the rule's
 *     counter word and, while the number is below the rule's next possible firing, tail-jumps
 *     to the original (or to the export's `count_stats` thunk, which also counts the call in this
 *     process's statistics word when the counter is a shared one) — 13 instructions in all,
 *     no libffi closure, no dispatcher;
 *   - otherwise (no gate for this generation, or the call reached the gate): the call's
 *     counter word, the number it took (0: none) and the caller's return address are pushed
 *     on this thread's pending ring (asp_thread.pend, thread.h), which the dispatcher pops
 *     first thing, so no call is counted twice or lost; then a tail jump through
 *     asp_entry[export]: the symbol's libffi closure once built, before that asp_slow_<export>,
 *     which builds it (asp_enter) and then jumps;
 *   - asp_real[export] starts as asp_lazy_<export>, which resolves the original with
 *     dlsym(RTLD_NEXT) on first use (asp_resolve), so a call made before our constructor ran
 *     — from another library's constructor — still reaches the original.
 * asp_armed_base points at a zero array until a table is attached, then at the table's armed
 * bytes (one per alias group). The loads are plain 8-byte loads: atomic on x86-64, and TSO
 * keeps them in program order (the gate record is published generation last, gate.c).
 */
#include "stub_layout.h"

#define ASPECTS_TEXT .text

/* The gate and the way into the dispatcher; %r11 holds asp_armed_base. `slot` indexes
 * asp_gate_next, `entry` is where the dispatcher is entered.
 *
 * The bound is read BEFORE the count is taken. Every bound is "the next possible firing
 * after a number already taken, minus one" (gate.c), so a bound read before our number was
 * taken lies at or below every firing number not taken yet — ours included. Read after, a
 * decision on a later number could have moved it past ours while we were between the add and
 * the compare, and a firing would be skipped (seen: 13 in 693,000 with a 10 kHz signal
 * handler). `save` 0 uses %rax for the bound: every variadic function of the catalog takes
 * integer optional arguments only, so %al (the vector-register count, an upper bound the
 * callee uses only to spill %xmm registers) may be left larger than the caller set it; `save`
 * 1 keeps %rax (prototype functions, whose optional arguments may be doubles). */
.macro ASPECTS_GATE slot, group, entry, save, orig
    movq ASP_GENERATION_FROM_ARMED(%r11), %r10
    cmpq %r10, (asp_gates + (\group << ASP_GATE_SHIFT) + ASP_GATE_GENERATION)(%rip)
    jne 2f
6:
.if \save
    pushq %rax
    .cfi_adjust_cfa_offset 8
.endif
    movq (asp_gates + (\group << ASP_GATE_SHIFT) + ASP_GATE_LAST_PASSING)(%rip), %rax
    movq (asp_gates + (\group << ASP_GATE_SHIFT) + ASP_GATE_COUNTER)(%rip), %r11
    movl $1, %r10d
    lock xaddq %r10, (%r11)
    cmpq %rax, %r10
.if \save
    popq %rax
    .cfi_adjust_cfa_offset -8
.endif
    jae 3f
    jmpq *(asp_gate_next + 8 * \slot)(%rip)
2:  /* A filter: the rule's conditions decided here, on the registers, before the closure. */
    cmpq %r10, (asp_gates + (\group << ASP_GATE_SHIFT) + ASP_GATE_FILTERED)(%rip)
    jne 5f
    movl $\slot, %r11d
    call asp_filter_common
    testl %r11d, %r11d
    je 8f
    cmpl $1, %r11d
    je 6b
5:  xorl %r11d, %r11d              /* no gate: nothing counted */
    xorl %r10d, %r10d
    jmp 4f
8:  jmpq *\orig(%rip)              /* not the rule's call: the original, uncounted */
3:  incq %r10                      /* the call number this call took */
4:  /* Push (counter, number, caller) on the pending ring. Below the caller's return address
     * the stack is ours, as the callee's frame would be. The depth is reserved with one xadd
     * before the entry is written: a signal handler arriving in between pushes and pops above
     * it (same thread: no lock prefix needed). */
    pushq %rax
    .cfi_adjust_cfa_offset 8
    pushq %rcx
    .cfi_adjust_cfa_offset 8
    movq asp_tls@gottpoff(%rip), %rcx
    movl $1, %eax
    xaddl %eax, %fs:ASP_TLS_PEND_DEPTH(%rcx)
    andl $ASP_PEND_MASK, %eax
    shll $ASP_PEND_SHIFT, %eax
    addq %rcx, %rax
    movq %r11, %fs:ASP_TLS_PEND(%rax)
    movq %r10, %fs:(ASP_TLS_PEND + 8)(%rax)
    movq 16(%rsp), %r11
    movq %r11, %fs:(ASP_TLS_PEND + 16)(%rax)
    popq %rcx
    .cfi_adjust_cfa_offset -8
    popq %rax
    .cfi_adjust_cfa_offset -8
    jmpq *\entry(%rip)
.endm

/* A stub's code, catalog or prototype: not armed, the tail jump to `orig`; armed, the gate. */
.macro ASPECTS_BODY slot, group, entry, save, orig
    .cfi_startproc
    movq asp_armed_base(%rip), %r11
    cmpb $0, \group(%r11)
    jne 1f
    jmpq *\orig(%rip)
1:  ASPECTS_GATE \slot, \group, \entry, \save, \orig
    .cfi_endproc
.endm

/* Below the gate of a rule counted in a shared word (table or hierarchy scope): the call is
 * this process's too, in its statistics; then the original. */
.macro ASPECTS_COUNT_STATS label, group, orig
\label:
    movq (asp_gates + (\group << ASP_GATE_SHIFT) + ASP_GATE_MATCHED)(%rip), %r11
    lock incq (%r11)
    jmpq *\orig(%rip)
.endm

/* A jump to one of the common trampolines (trampolines_x86_64.S) with the export's index in
 * %r11d, the register they read it from. */
.macro ASPECTS_JUMP_INDEXED index, target
    movl $\index, %r11d
    jmp \target
.endm

/* Notes an object of this architecture carries beside .note.GNU-stack: none (x86-64's
 * indirect-branch tracking, IBT, is not enforced for Linux programs). */
.macro ASPECTS_ARCH_NOTES
.endm

#include "stub_common.h"
