/* frame_rule.c — a frame's rules read from its CFI, the way a DWARF unwinder reads them: the
 * CIE's initial instructions, then the FDE's up to the pc, with remember/restore_state. Only
 * what a step needs is kept: the CFA's rule, and the rules of the return address column and
 * of the frame pointer. Every read is bounded by the entry's length (ASP_CFI_MAX at most):
 * a malformed entry gives "not one we read", never a read past it. */
#include "frame_rule.h"

#define ASP_CFI_MAX 4096 /* bytes of one CIE or FDE read at most */

typedef struct asp_cfi_reader { const uint8_t *p, *end; int ok; } asp_cfi_reader;

static uint64_t asp_uleb(asp_cfi_reader *r) {
    uint64_t v = 0;
    for (unsigned shift = 0; r->ok; shift += 7) {
        if (r->p >= r->end || shift > 63) { r->ok = 0; return 0; }
        const uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) break;
    }
    return v;
}

static int64_t asp_sleb(asp_cfi_reader *r) {
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0;
    do {
        if (r->p >= r->end || shift > 63) { r->ok = 0; return 0; }
        b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

static void asp_skip(asp_cfi_reader *r, uint64_t n) {
    if (!r->ok || n > (uint64_t)(r->end - r->p)) { r->ok = 0; return; }
    r->p += n;
}

/* The size of a pointer in DW_EH_PE encoding `enc` (0: not one we read). */
static unsigned asp_encoded_size(uint8_t enc) {
    switch (enc & 0x0f) {
    case 0x00: return 8; /* absptr */
    case 0x02: case 0x0a: return 2;
    case 0x03: case 0x0b: return 4;
    case 0x04: case 0x0c: return 8;
    default: return 0;
    }
}

/* Register `reg` saved at CFA + off: the return address column's or the frame pointer's
 * rule is noted; other registers are not read by a step. */
static void asp_rule_saved(asp_frame_rule *f, uint64_t reg, int64_t off, uint64_t ra_column) {
    if (reg == ra_column) { f->ra_where = ASP_SAVED_AT_OFFSET; f->ra_off = off; }
    else if (reg == (uint64_t)ASP_DW_FP) { f->fp_where = ASP_SAVED_AT_OFFSET; f->fp_off = off; }
}

/* Register `reg` given a rule other than "saved at an offset": `where` (not saved, or
 * elsewhere). */
static void asp_rule_other(asp_frame_rule *f, uint64_t reg, int where, uint64_t ra_column) {
    if (reg == ra_column) f->ra_where = where;
    else if (reg == (uint64_t)ASP_DW_FP) f->fp_where = where;
}

/* Register `reg` given its rule of the CIE back (DW_CFA_restore*): what the CIE's
 * instructions left (`cie`). */
static void asp_rule_restored(asp_frame_rule *f, uint64_t reg, const asp_frame_rule *cie, uint64_t ra_column) {
    if (reg == ra_column) { f->ra_where = cie->ra_where; f->ra_off = cie->ra_off; }
    else if (reg == (uint64_t)ASP_DW_FP) { f->fp_where = cie->fp_where; f->fp_off = cie->fp_off; }
}

int asp_frame_rule_read(const uint8_t *fde, uint64_t pc, asp_frame_rule *out) {
    if (!fde) return 0;
    uint32_t fde_len, cie_off;
    __builtin_memcpy(&fde_len, fde, 4);
    __builtin_memcpy(&cie_off, fde + 4, 4);
    if (fde_len < 8 || fde_len > ASP_CFI_MAX || !cie_off) return 0;
    const uint8_t *cie = fde + 4 - cie_off;
    uint32_t cie_len;
    __builtin_memcpy(&cie_len, cie, 4);
    if (cie_len < 8 || cie_len > ASP_CFI_MAX) return 0;
    asp_cfi_reader c = {cie + 8, cie + 4 + cie_len, 1};
    if (c.p >= c.end) return 0;
    const uint8_t version = *c.p++;
    const char *aug = (const char *)c.p;
    while (c.p < c.end && *c.p) c.p++;
    asp_skip(&c, 1);
    const uint64_t code_align = asp_uleb(&c); /* 1 on x86-64, 4 on aarch64 */
    const int64_t data_align = asp_sleb(&c);
    uint64_t ra_column = 0;                   /* 16 on x86-64, 30 (x30) on aarch64 */
    if (version == 1) { if (c.p < c.end) ra_column = *c.p++; else c.ok = 0; }
    else ra_column = asp_uleb(&c);
    uint8_t fde_enc = 0;
    int has_z = aug[0] == 'z';
    int b_key = 0;
    if (has_z) {
        const uint64_t n = asp_uleb(&c);
        asp_cfi_reader a = {c.p, c.p + (n < (uint64_t)(c.end - c.p) ? n : 0), c.ok};
        for (const char *x = aug + 1; *x && a.ok; x++) {
            if (*x == 'R') { asp_skip(&a, 0); if (a.p < a.end) fde_enc = *a.p++; else a.ok = 0; }
            else if (*x == 'P') {
                if (a.p >= a.end) { a.ok = 0; break; }
                const unsigned size = asp_encoded_size(*a.p++);
                if (!size) return 0;
                asp_skip(&a, size);
            } else if (*x == 'L') asp_skip(&a, 1);
            else if (*x == 'B') b_key = 1;
            else if (*x != 'S') return 0;
        }
        if (!a.ok) return 0;
        asp_skip(&c, n);
    } else if (aug[0]) {
        return 0;
    }
    const unsigned psize = asp_encoded_size(fde_enc);
    if (!c.ok || !psize || psize < 4 || !code_align || code_align > 16) return 0;
    /* the FDE's start: pc-relative or absolute, 4 or 8 bytes */
    asp_cfi_reader f = {fde + 8, fde + 4 + fde_len, 1};
    int64_t start_raw = 0;
    if (psize == 4) { int32_t v; __builtin_memcpy(&v, f.p, 4); start_raw = v; }
    else __builtin_memcpy(&start_raw, f.p, 8);
    const uint64_t start = (fde_enc & 0x70) == 0x10 ? (uint64_t)(uintptr_t)f.p + (uint64_t)start_raw : (uint64_t)start_raw;
    asp_skip(&f, 2u * psize);
    if (has_z) asp_skip(&f, asp_uleb(&f));
    if (!f.ok || pc < start) return 0;
    /* Run the CIE's initial instructions, then the FDE's up to pc. A restore (DW_CFA_restore*)
     * gives a register the CIE's rule back. */
    asp_frame_rule rule = {.cfa_reg = ASP_CFA_UNKNOWN, .ra_where = ASP_SAVED_NOT, .fp_where = ASP_SAVED_NOT, .b_key = b_key};
    asp_frame_rule remembered[8];
    int depth = 0;
    asp_frame_rule cie_rule = rule;
    uint64_t loc = start;
    asp_cfi_reader *runs[2] = {&c, &f};
    for (int k = 0; k < 2; k++) {
        asp_cfi_reader *r = runs[k];
        if (k == 1) cie_rule = rule;
        while (r->ok && r->p < r->end) {
            const uint8_t op = *r->p++;
            uint64_t advance = 0, reg = 0;
            switch (op >> 6) {
            case 1: advance = op & 0x3f; break;
            case 2: asp_rule_saved(&rule, op & 0x3f, (int64_t)asp_uleb(r) * data_align, ra_column); continue; /* offset */
            case 3: asp_rule_restored(&rule, op & 0x3f, &cie_rule, ra_column); continue; /* restore */
            default: break;
            }
            if (op >> 6 == 0) switch (op) {
            case 0x00: break;
            case 0x02: if (r->p < r->end) advance = *r->p++; else r->ok = 0; break;
            case 0x03: if (r->end - r->p >= 2) { uint16_t v; __builtin_memcpy(&v, r->p, 2); r->p += 2; advance = v; } else r->ok = 0; break;
            case 0x04: if (r->end - r->p >= 4) { uint32_t v; __builtin_memcpy(&v, r->p, 4); r->p += 4; advance = v; } else r->ok = 0; break;
            case 0x05: reg = asp_uleb(r); asp_rule_saved(&rule, reg, (int64_t)asp_uleb(r) * data_align, ra_column); break;
            case 0x11: reg = asp_uleb(r); asp_rule_saved(&rule, reg, asp_sleb(r) * data_align, ra_column); break;
            case 0x09: case 0x14: reg = asp_uleb(r); (void)asp_uleb(r); asp_rule_other(&rule, reg, ASP_SAVED_ELSEWHERE, ra_column); break;
            case 0x15: reg = asp_uleb(r); (void)asp_sleb(r); asp_rule_other(&rule, reg, ASP_SAVED_ELSEWHERE, ra_column); break;
            case 0x06: asp_rule_restored(&rule, asp_uleb(r), &cie_rule, ra_column); break;
            case 0x07: case 0x08: asp_rule_other(&rule, asp_uleb(r), ASP_SAVED_NOT, ra_column); break;
            case 0x2e: (void)asp_uleb(r); break;
            /* aarch64's DW_CFA_AARCH64_negate_ra_state (SPARC's GNU_window_save): the return
             * address is signed from here, or no longer (asp_return_target) */
            case 0x2d:
#if defined(__aarch64__)
                rule.ra_signed ^= 1;
#endif
                break;
            case 0x0a: if (depth < 8) remembered[depth] = rule; depth++; break;
            case 0x0b:
                /* the whole row, the CFA and the signing state with it, as libgcc keeps them */
                if (depth > 0 && --depth < 8) rule = remembered[depth];
                break;
            case 0x0c: rule.cfa_reg = (int)asp_uleb(r); rule.cfa_off = (int64_t)asp_uleb(r); break;
            case 0x12: rule.cfa_reg = (int)asp_uleb(r); rule.cfa_off = asp_sleb(r) * data_align; break;
            case 0x0d: rule.cfa_reg = (int)asp_uleb(r); break;
            case 0x0e: rule.cfa_off = (int64_t)asp_uleb(r); break;
            case 0x13: rule.cfa_off = asp_sleb(r) * data_align; break;
            case 0x0f: asp_skip(r, asp_uleb(r)); rule.cfa_reg = ASP_CFA_UNKNOWN; break; /* an expression */
            case 0x10: case 0x16: reg = asp_uleb(r); asp_skip(r, asp_uleb(r)); asp_rule_other(&rule, reg, ASP_SAVED_ELSEWHERE, ra_column); break;
            default: return 0;
            }
            if (k == 1 && advance) {
                loc += advance * code_align;
                if (loc > pc) { *out = rule; return r->ok; }
            }
        }
        if (!r->ok) return 0;
    }
    *out = rule;
    return 1;
}
