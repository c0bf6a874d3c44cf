/* stub_layout.h — the offsets the wrapper stubs (assembly) use in C structures: one
 * definition for both, included by the stubs and by gate.h/thread.h, where _Static_asserts
 * pin each number to the C layout. Plain numbers only: the assembler reads this file. */
#ifndef ASP_STUB_LAYOUT_H
#define ASP_STUB_LAYOUT_H

/* struct asp_gate (gate.h): one 64-byte record per group */
#define ASP_GATE_SHIFT 6
#define ASP_GATE_GENERATION 0
#define ASP_GATE_COUNTER 8
#define ASP_GATE_LAST_PASSING 16
#define ASP_GATE_MATCHED 24
#define ASP_GATE_FILTERED 40

/* struct asp_thread (thread.h), at %fs:asp_tls@gottpoff */
#define ASP_TLS_PEND_DEPTH 16
#define ASP_TLS_PEND 24
#define ASP_PEND_SHIFT 5          /* 32-byte entries: counter, call number, caller */
#define ASP_PEND_MASK 7           /* a ring of 8: nesting deeper than signal handlers go */

/* The table header's generation, relative to the armed bytes the stub already holds in %r11
 * (armed bytes at offset 256, generation at 88: aspects_abi.h, checked in gate.c). */
#define ASP_GENERATION_FROM_ARMED (-168)

#endif
