/* stub_common.h — the parts of the generated wrappers that are the same on every
 * architecture, included at the end of each stubs/stub_<arch>.h once it has defined
 * ASPECTS_BODY, ASPECTS_COUNT_STATS, ASPECTS_JUMP_INDEXED and ASPECTS_ARCH_NOTES. */

/* The exported wrapper of catalog export `export`: its body (ASPECTS_BODY, the arch's), the
 * lazy and slow entries asp_real and asp_entry start at, and its count_stats thunk. */
.macro ASPECTS_STUB name, export, group, save=0
    .globl \name
    .type \name, @function
    .globl asp_self_\export
    .hidden asp_self_\export
    .balign 16
\name:
asp_self_\export:
    ASPECTS_BODY \export, \group, (asp_entry + 8 * \export), \save, (asp_real + 8 * \export)
    .size \name, . - \name
asp_lazy_\export:
    ASPECTS_JUMP_INDEXED \export, asp_lazy_common
asp_slow_\export:
    ASPECTS_JUMP_INDEXED \export, asp_slow_common
    ASPECTS_COUNT_STATS asp_count_stats_\export, \group, (asp_real + 8 * \export)
.endm

/* Stub `stub` (2k + b) of prototype entry k: the GOT slots of a prototype rule point here. The
 * `v` form keeps the register that counts a variadic call's vector arguments where the
 * architecture has one (%rax on x86-64; on aarch64 both forms are the same code). Its original
 * is asp_proto_jump[stub], its closure asp_proto_entry[stub]: each registration of an entry
 * builds into the other of its two stubs, so a call still running in the previous one keeps
 * the original and the interface it entered with. */
.macro ASPECTS_PROTO_STUB_FORM label, stub, slot, group, save
    .globl \label
    .hidden \label
    .type \label, @function
    .balign 16
\label:
    ASPECTS_BODY \slot, \group, (asp_proto_entry + 8 * \stub), \save, (asp_proto_jump + 8 * \stub)
    .size \label, . - \label
.endm

.macro ASPECTS_PROTO_STUB stub, slot, group
    ASPECTS_PROTO_STUB_FORM asp_proto_stub_\stub, \stub, \slot, \group, 0
    ASPECTS_PROTO_STUB_FORM asp_proto_vstub_\stub, \stub, \slot, \group, 1
    ASPECTS_COUNT_STATS asp_proto_count_stats_\stub, \group, (asp_proto_jump + 8 * \stub)
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

/* The end of wrappers.S: the architecture's notes (aarch64: the BTI property), and a stack
 * that is not executable. */
#define ASPECTS_END ASPECTS_ARCH_NOTES; .section .note.GNU-stack, "", @progbits
