/* stub_aarch64.h — the exported wrapper on 64-bit ARM (AAPCS64, Linux): the same contract
 * as stub_x86_64.h, which states it; what differs is said here.
 *
 *   - Registers: only x16 and x17 (IP0/IP1, the intra-procedure-call scratch registers a
 *     linker veneer or PLT entry may clobber too) are used without saving. x0-x7 (arguments),
 *     x8 (the address of a large struct result) and the stack are untouched on every way to
 *     the original; x30 (the caller's return address) is read, never changed on the way out.
 *     Variadic arguments travel like named ones (AAPCS64 on Linux), so no register counts
 *     them and the `save` argument of the x86-64 macros has nothing to keep here.
 *   - Not armed: 8 instructions, the landing pad and the branch included (an address takes
 *     two: adrp and ldr).
 *   - Armed and below the gate: 29 with LSE, 31 with the exclusive loop (BENCHMARKS.md).
 *   - Armed: the gate needs more than two scratch registers, so it saves x0-x3 and x30 below
 *     the stack pointer it was given (a callee's frame would be there too) and restores them
 *     before the branch. The count is one atomic add: LSE `ldaddal` when the CPU has it
 *     (asp_cpu_lse, set once at start-up from HWCAP_ATOMICS), an ldaxr/stlxr loop otherwise.
 *   - Ordering: aarch64 may reorder loads, so the gate record's generation is read with
 *     load-acquire (gate.c publishes it last with a release store), and the count is an
 *     acquire-release add, so the bound read before it is not moved after it (the reason the
 *     bound is read first: stub_x86_64.h).
 *   - The pending ring's depth is reserved with an ldxr/stxr loop: the kernel clears the
 *     exclusive monitor when a signal handler returns, so a handler that pushed and popped
 *     between the two makes the store fail and the reservation is taken again above nothing.
 *   - asp_tls is reached the initial-exec way: tpidr_el0 plus the TP offset in the GOT.
 *   - Every way in by an indirect branch starts with a BTI landing pad, so the library can be
 *     marked for BTI (branch_protection_aarch64.h): +1 instruction, a no-op without BTI.
 */
#include "stub_layout.h"
#include "branch_protection_aarch64.h"

#define ASPECTS_TEXT .text; .arch_extension lse

/* x16 = the 64-bit word at `sym` (a hidden symbol of this library, within 4 GiB). */
.macro ASP_LOAD_WORD sym
    adrp x16, \sym
    ldr x16, [x16, :lo12:\sym]
.endm

/* Branch to the address held at `sym`. */
.macro ASP_TAIL sym
    ASP_LOAD_WORD \sym
    br x16
.endm

/* x16 = &asp_gates[group] + field */
.macro ASP_GATE_ADDRESS group
    adrp x16, asp_gates + (\group << ASP_GATE_SHIFT)
    add x16, x16, :lo12:(asp_gates + (\group << ASP_GATE_SHIFT))
.endm

/* x1 = the 64-bit word at [x16], and the word incremented by one (acquire-release): the
 * gate's count. x0 and x2 are scratch (saved by the caller of the macro). */
.macro ASP_COUNT_CALL
    adrp x2, asp_cpu_lse
    ldrb w2, [x2, :lo12:asp_cpu_lse]
    mov x0, #1
    cbz w2, 10f
    ldaddal x0, x1, [x16]
    b 11f
10: ldaxr x1, [x16]
    add x0, x1, #1
    stlxr w2, x0, [x16]
    cbnz w2, 10b
11:
.endm

/* The gate and the way into the dispatcher; x16 holds asp_armed_base. */
.macro ASPECTS_GATE slot, group, entry, save, orig
    stp x0, x1, [sp, #-48]!
    .cfi_def_cfa_offset 48
    stp x2, x3, [sp, #16]
    str x30, [sp, #32]
    .cfi_offset x30, -16             /* the return address, while bl and stxr use x30 */
    ldur x17, [x16, #ASP_GENERATION_FROM_ARMED]
    ASP_GATE_ADDRESS \group
    ldar x0, [x16]
    cmp x0, x17
    b.ne 2f
6:  ldr x17, [x16, #ASP_GATE_LAST_PASSING]
    ldr x16, [x16, #ASP_GATE_COUNTER]
    ASP_COUNT_CALL
    cmp x1, x17
    b.hs 3f
    ldr x2, [sp, #16]
    ldp x0, x1, [sp], #48
    .cfi_remember_state
    .cfi_def_cfa_offset 0
    .cfi_restore x30
    ASP_TAIL (asp_gate_next + 8 * \slot)
    .cfi_restore_state
2:  /* A filter: the rule's conditions decided here, on the registers, before the closure. */
    ldr x0, [x16, #ASP_GATE_FILTERED]
    cmp x0, x17
    b.ne 5f
    ldp x0, x1, [sp]
    ldr x2, [sp, #16]
    mov w16, #\slot
    mov x17, x30
    bl asp_filter_common
    ldr x30, [sp, #32]
    cbz w16, 8f
    cmp w16, #1
    b.ne 5f
    ASP_GATE_ADDRESS \group
    b 6b
8:  ldp x0, x1, [sp], #48            /* not the rule's call: the original, uncounted */
    .cfi_remember_state
    .cfi_def_cfa_offset 0
    .cfi_restore x30
    ASP_TAIL \orig
    .cfi_restore_state
5:  mov x16, #0                      /* no gate: nothing counted */
    mov x17, #0
    b 4f
3:  add x17, x1, #1                  /* the call number this call took */
4:  /* Push (counter, number, caller) on the pending ring: reserve the depth, then write. */
    mrs x0, tpidr_el0
    adrp x1, :gottprel:asp_tls
    ldr x1, [x1, #:gottprel_lo12:asp_tls]
    add x0, x0, x1
    add x1, x0, #ASP_TLS_PEND_DEPTH
7:  ldxr w2, [x1]
    add w3, w2, #1
    stxr w30, w3, [x1]
    cbnz w30, 7b
    and w2, w2, #ASP_PEND_MASK
    add x0, x0, x2, lsl #ASP_PEND_SHIFT
    stp x16, x17, [x0, #ASP_TLS_PEND]
    ldr x30, [sp, #32]
    str x30, [x0, #(ASP_TLS_PEND + 16)]
    ldp x2, x3, [sp, #16]
    ldp x0, x1, [sp], #48
    .cfi_def_cfa_offset 0
    .cfi_restore x30
    ASP_TAIL \entry
.endm

/* A stub's code, catalog or prototype: not armed, the tail branch to `orig`; armed, the gate. */
.macro ASPECTS_BODY slot, group, entry, save, orig
    .cfi_startproc
    ASP_LANDING_PAD
    ASP_LOAD_WORD asp_armed_base
    ldrb w17, [x16, #\group]
    cbnz w17, 1f
    ASP_TAIL \orig
1:  ASPECTS_GATE \slot, \group, \entry, \save, \orig
    .cfi_endproc
.endm

/* Below the gate of a rule counted in a shared word: this process's statistics, then the
 * original. The increment needs a third register for the exclusive store's status: x0,
 * saved around it. */
.macro ASPECTS_COUNT_STATS label, group, orig
\label:
    .cfi_startproc
    ASP_LANDING_PAD                  /* entered by the gate's br x16 */
    str x0, [sp, #-16]!
    .cfi_def_cfa_offset 16
    ASP_LOAD_WORD (asp_gates + (\group << ASP_GATE_SHIFT) + ASP_GATE_MATCHED)
12: ldxr x17, [x16]
    add x17, x17, #1
    stxr w0, x17, [x16]
    cbnz w0, 12b
    ldr x0, [sp], #16
    .cfi_def_cfa_offset 0
    ASP_TAIL \orig
    .cfi_endproc
.endm

/* A jump to one of the common trampolines (trampolines_aarch64.S) with the export's index in
 * w16, the register they read it from. Entered by the stub's br x16 (asp_real and asp_entry
 * hold these lazy and slow entries until the first call resolves them). */
.macro ASPECTS_JUMP_INDEXED index, target
    ASP_LANDING_PAD
    mov w16, #\index
    b \target
.endm

#include "stub_common.h"
