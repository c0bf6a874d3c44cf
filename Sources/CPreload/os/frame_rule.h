/* frame_rule.h — frame_rule.c: how one frame is stepped past, read from its CFI (the FDE of
 * the function holding a pc): where its CFA is computed from, and where it saved the return
 * address and the frame pointer. The calling-context walk (context.c) follows these rules
 * itself, checking every read first. */
#ifndef ASP_FRAME_RULE_H
#define ASP_FRAME_RULE_H

#include <stdint.h>

#define ASP_CFA_UNKNOWN -1

/* Where a register's value for the caller lies, by the rules run so far. */
enum { ASP_SAVED_NOT, ASP_SAVED_AT_OFFSET, ASP_SAVED_ELSEWHERE };

/* The DWARF register numbers a step follows (each psABI's DWARF mapping): the stack pointer
 * and the frame pointer, the two registers a CFA rule is followed from. Elsewhere no context
 * is known (ASP_CONTEXT_ARCH 0). */
#if defined(__x86_64__)
#define ASP_DW_SP 7  /* rsp */
#define ASP_DW_FP 6  /* rbp */
#define ASP_CONTEXT_ARCH 1
#elif defined(__aarch64__)
#define ASP_DW_SP 31 /* sp */
#define ASP_DW_FP 29 /* x29 */
#define ASP_CONTEXT_ARCH 1
#else
#define ASP_DW_SP (-2) /* no register: no rule is followed */
#define ASP_DW_FP (-2)
#define ASP_CONTEXT_ARCH 0
#endif

typedef struct asp_frame_rule {
    int cfa_reg;      /* the CFA's register, or ASP_CFA_UNKNOWN (an expression, CFI we do not read) */
    int64_t cfa_off;
    int ra_where;     /* ASP_SAVED_*: at CFA + ra_off, not saved (still in its register: a leaf,
                         or a frame interrupted mid-prologue), or elsewhere (another register,
                         an expression) */
    int64_t ra_off;
    int fp_where;     /* the same for the frame pointer: not saved means the caller's value is
                         the frame's own */
    int64_t fp_off;
    int ra_signed;    /* aarch64: the return address is saved signed (DW_CFA_AARCH64_negate_ra_state) */
    int b_key;        /* aarch64: signed with the B key (the CIE's augmentation has 'B'), else A */
} asp_frame_rule;

/* The rules of the function whose FDE is `fde` at `pc` (*out), bounded reading of the FDE
 * and its CIE. 0 when the CFI is not one we read. */
int asp_frame_rule_read(const uint8_t *fde, uint64_t pc, asp_frame_rule *out);

#endif
