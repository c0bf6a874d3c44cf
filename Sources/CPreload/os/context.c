/* context.c — the calling context of an advised call: the return address the stub saved (the
 * call site) and the return addresses of the callers above it, each as (object file, offset in
 * the file) through identity.c's maps cache, hashed with aspects_context_hash (aspects_abi.h),
 * the hash aspectctl computes from a rule's frames.
 *
 * Unwinding is libgcc_s's DWARF unwinder (_Unwind_Backtrace, the engine of glibc's backtrace()),
 * which reads the .eh_frame every x86-64 object carries (Debian's binaries have no frame
 * pointers to follow). With glibc 2.35+ and libgcc 12 it finds each frame's FDE through
 * _dl_find_object, without the loader's lock and without allocating (docs/ARCHITECTURE.md,
 * calling contexts, has the choice and its cost). Its FIRST use dlopens libgcc_s, which
 * allocates and takes the loader's lock: so backtrace() is called once at attach, in our
 * constructor, and the unwinder's entry points looked up then, only when the table holds a
 * rule that needs contexts; a process that did not (the rule came later) knows no context.
 *
 * The unwinder trusts the stack and the CFI: a frame whose CFI does not describe what its code
 * did to the stack (hand-written assembly, a corrupted stack) gives it a stale or garbage
 * return address, and the next step reads wherever that function's rule points (its frame
 * pointer, garbage) or, finding no FDE, the code at the address itself (libgcc's signal-frame
 * fallback): a fault in the host. So each step is checked before the unwinder takes it
 * (asp_context_step): the frame's address in an executable file mapping; its CFA rule, read
 * from the FDE (asp_cfa_rule), on the stack or frame pointer; the caller's CFA above the last
 * one, within reach, and the bytes below it readable (asked of the kernel, which answers
 * EFAULT, not a fault); the return address there in an executable file mapping. The walk ends
 * at the first step that fails, and the context is then as deep as it got.
 * Never unwound:
 *   - re-entrantly (a call the unwinder itself makes, a handler arriving mid-unwind on this
 *     thread): asp_tls.unwinding;
 *   - where a signal handler may have interrupted the unwinder or the loader, or inside the
 *     program's dlopen: advice_call.c's safe place;
 * and the walk is bounded: our own frames (dispatcher, libffi's closure) and then at most the
 * context's depth. Each address must lie in an executable file mapping (the maps cache finds
 * it) before it is used; one that does not makes the context unknown. An unknown context
 * matches no `context` condition. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <unwind.h>
#include "context.h"
#include "identity.h"
#include "sys.h"
#include "table.h"
#include "thread.h"

/* Our frames between the unwinder and the call site: the dispatcher's few (with a decision
 * and an event below it) and libffi's closure entry. More than enough; bounded all the same. */
#define ASP_CONTEXT_OWN_FRAMES 16

static uint32_t asp_context_warm;

/* libgcc_s's unwinder, looked up at attach. */
static _Unwind_Reason_Code (*asp_unwind_backtrace)(_Unwind_Trace_Fn, void *);
static _Unwind_Ptr (*asp_unwind_ip)(struct _Unwind_Context *);
static _Unwind_Word (*asp_unwind_cfa)(struct _Unwind_Context *);
static _Unwind_Word (*asp_unwind_gr)(struct _Unwind_Context *, int);
struct dwarf_eh_bases { void *tbase, *dbase, *func; };
static const void *(*asp_unwind_find_fde)(void *, struct dwarf_eh_bases *);

/* How far above the unwinder's own frame a caller's stack pointer may lie. */
#define ASP_CONTEXT_STACK_REACH (64u * 1024u * 1024u)
#define ASP_X86_64_RBP 6 /* DWARF register number of the frame pointer */

/* Whether some live rule of the table asks for contexts (a flag word, read untrusted: at
 * worst the unwinder is loaded for nothing, or not at all and contexts stay unknown). */
static int asp_table_needs_contexts(void) {
    const uint32_t need = ASPECTS_RULE_HAS_CONTEXT | ASPECTS_RULE_RECORD_CONTEXT;
    for (uint32_t s = 0; s < asp_tab.rule_capacity; s++) {
        const aspects_rule *r = &asp_tab.rules[s];
        const uint32_t state = __atomic_load_n(&r->state, __ATOMIC_RELAXED);
        if (state != ASPECTS_RULE_FREE && state != ASPECTS_RULE_REMOVED && (__atomic_load_n(&r->flags, __ATOMIC_RELAXED) & need))
            return 1;
    }
    return 0;
}

void asp_context_attach(void) {
#if !defined(__x86_64__)
    return; /* the step checks read x86-64's CFA registers: elsewhere no context is known */
#endif
    if (!asp_tab.attached || !asp_table_needs_contexts()) return;
    void *one[2];
    (void)backtrace(one, 2); /* dlopens libgcc_s now (in the constructor's SEALED frame: its calls are plain) */
    void *gcc = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!gcc) return;
    asp_unwind_backtrace = (_Unwind_Reason_Code (*)(_Unwind_Trace_Fn, void *))dlsym(gcc, "_Unwind_Backtrace");
    asp_unwind_ip = (_Unwind_Ptr (*)(struct _Unwind_Context *))dlsym(gcc, "_Unwind_GetIP");
    asp_unwind_cfa = (_Unwind_Word (*)(struct _Unwind_Context *))dlsym(gcc, "_Unwind_GetCFA");
    asp_unwind_gr = (_Unwind_Word (*)(struct _Unwind_Context *, int))dlsym(gcc, "_Unwind_GetGR");
    asp_unwind_find_fde = (const void *(*)(void *, struct dwarf_eh_bases *))dlsym(gcc, "_Unwind_Find_FDE");
    if (asp_unwind_backtrace && asp_unwind_ip && asp_unwind_cfa && asp_unwind_gr && asp_unwind_find_fde)
        __atomic_store_n(&asp_context_warm, 1u, __ATOMIC_RELEASE);
}

/* Whether [at, at + n) can be read, asked of the kernel (EFAULT, never a fault). */
static int asp_readable(uint64_t at, size_t n) {
    if (at < 4096 || at > UINT64_MAX - n) return 0;
    char copy[128];
    if (n > sizeof copy) n = sizeof copy;
    struct iovec local = {copy, n}, remote = {(void *)(uintptr_t)at, n};
    const int saved = errno;
    const long r = syscall(SYS_process_vm_readv, (long)asp_sys_getpid(), &local, 1L, &remote, 1L, 0L);
    errno = saved;
    return r == (long)n;
}

/* ---- which register a frame's CFA is computed from (its CFI, read as the unwinder will) ---- */

#define ASP_CFA_RSP 7
#define ASP_CFA_UNKNOWN -1
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

/* The CFA rule of the function holding `pc` at `pc`: its register — 7 (the stack pointer), 6
 * (the frame pointer), another, or ASP_CFA_UNKNOWN (an expression, or CFI we do not read) —
 * and *offset. Reads only the FDE the unwinder itself found, bounded. */
static int asp_cfa_rule(uint64_t pc, int64_t *offset) {
    struct dwarf_eh_bases bases;
    const uint8_t *fde = (const uint8_t *)asp_unwind_find_fde((void *)(uintptr_t)pc, &bases);
    if (!fde) return ASP_CFA_UNKNOWN;
    uint32_t fde_len, cie_off;
    __builtin_memcpy(&fde_len, fde, 4);
    __builtin_memcpy(&cie_off, fde + 4, 4);
    if (fde_len < 8 || fde_len > ASP_CFI_MAX || !cie_off) return ASP_CFA_UNKNOWN;
    const uint8_t *cie = fde + 4 - cie_off;
    uint32_t cie_len;
    __builtin_memcpy(&cie_len, cie, 4);
    if (cie_len < 8 || cie_len > ASP_CFI_MAX) return ASP_CFA_UNKNOWN;
    asp_cfi_reader c = {cie + 8, cie + 4 + cie_len, 1};
    if (c.p >= c.end) return ASP_CFA_UNKNOWN;
    const uint8_t version = *c.p++;
    const char *aug = (const char *)c.p;
    while (c.p < c.end && *c.p) c.p++;
    asp_skip(&c, 1);
    (void)asp_uleb(&c);                       /* code alignment: 1 on x86-64 */
    const int64_t data_align = asp_sleb(&c);
    if (version == 1) asp_skip(&c, 1); else (void)asp_uleb(&c); /* return address register */
    uint8_t fde_enc = 0;
    int has_z = aug[0] == 'z';
    if (has_z) {
        const uint64_t n = asp_uleb(&c);
        asp_cfi_reader a = {c.p, c.p + (n < (uint64_t)(c.end - c.p) ? n : 0), c.ok};
        for (const char *x = aug + 1; *x && a.ok; x++) {
            if (*x == 'R') { asp_skip(&a, 0); if (a.p < a.end) fde_enc = *a.p++; else a.ok = 0; }
            else if (*x == 'P') {
                if (a.p >= a.end) { a.ok = 0; break; }
                const unsigned size = asp_encoded_size(*a.p++);
                if (!size) return ASP_CFA_UNKNOWN;
                asp_skip(&a, size);
            } else if (*x == 'L') asp_skip(&a, 1);
            else if (*x != 'S' && *x != 'B') return ASP_CFA_UNKNOWN;
        }
        if (!a.ok) return ASP_CFA_UNKNOWN;
        asp_skip(&c, n);
    } else if (aug[0]) {
        return ASP_CFA_UNKNOWN;
    }
    const unsigned psize = asp_encoded_size(fde_enc);
    if (!c.ok || !psize || psize < 4) return ASP_CFA_UNKNOWN;
    /* the FDE's start: pc-relative or absolute, 4 or 8 bytes */
    asp_cfi_reader f = {fde + 8, fde + 4 + fde_len, 1};
    int64_t start_raw = 0;
    if (psize == 4) { int32_t v; __builtin_memcpy(&v, f.p, 4); start_raw = v; }
    else __builtin_memcpy(&start_raw, f.p, 8);
    const uint64_t start = (fde_enc & 0x70) == 0x10 ? (uint64_t)(uintptr_t)f.p + (uint64_t)start_raw : (uint64_t)start_raw;
    asp_skip(&f, 2u * psize);
    if (has_z) asp_skip(&f, asp_uleb(&f));
    if (!f.ok || pc < start) return ASP_CFA_UNKNOWN;
    /* Run the CIE's initial instructions, then the FDE's up to pc: only the CFA's register
     * matters, with remember/restore_state. */
    int reg = ASP_CFA_UNKNOWN, saved[8], depth = 0;
    int64_t off = 0, saved_off[8];
    uint64_t loc = start;
    asp_cfi_reader *runs[2] = {&c, &f};
    for (int k = 0; k < 2; k++) {
        asp_cfi_reader *r = runs[k];
        while (r->ok && r->p < r->end) {
            const uint8_t op = *r->p++;
            uint64_t advance = 0;
            switch (op >> 6) {
            case 1: advance = op & 0x3f; break;
            case 2: (void)asp_uleb(r); continue;   /* offset */
            case 3: continue;                      /* restore */
            default: break;
            }
            if (op >> 6 == 0) switch (op) {
            case 0x00: break;
            case 0x02: if (r->p < r->end) advance = *r->p++; else r->ok = 0; break;
            case 0x03: if (r->end - r->p >= 2) { uint16_t v; __builtin_memcpy(&v, r->p, 2); r->p += 2; advance = v; } else r->ok = 0; break;
            case 0x04: if (r->end - r->p >= 4) { uint32_t v; __builtin_memcpy(&v, r->p, 4); r->p += 4; advance = v; } else r->ok = 0; break;
            case 0x05: case 0x09: case 0x14: (void)asp_uleb(r); (void)asp_uleb(r); break;
            case 0x11: case 0x15: (void)asp_uleb(r); (void)asp_sleb(r); break;
            case 0x06: case 0x07: case 0x08: case 0x2e: (void)asp_uleb(r); break;
            case 0x0a: if (depth < 8) { saved[depth] = reg; saved_off[depth] = off; } depth++; break;
            case 0x0b: if (depth > 0) { depth--; if (depth < 8) { reg = saved[depth]; off = saved_off[depth]; } } break;
            case 0x0c: reg = (int)asp_uleb(r); off = (int64_t)asp_uleb(r); break;
            case 0x12: reg = (int)asp_uleb(r); off = asp_sleb(r) * data_align; break;
            case 0x0d: reg = (int)asp_uleb(r); break;
            case 0x0e: off = (int64_t)asp_uleb(r); break;
            case 0x13: off = asp_sleb(r) * data_align; break;
            case 0x0f: asp_skip(r, asp_uleb(r)); reg = ASP_CFA_UNKNOWN; break; /* an expression */
            case 0x10: case 0x16: (void)asp_uleb(r); asp_skip(r, asp_uleb(r)); break;
            default: return ASP_CFA_UNKNOWN;
            }
            if (k == 1 && advance) {
                loc += advance; /* code alignment 1 */
                if (loc > pc) { *offset = off; return r->ok ? reg : ASP_CFA_UNKNOWN; }
            }
        }
        if (!r->ok) return ASP_CFA_UNKNOWN;
    }
    *offset = off;
    return reg;
}

typedef struct asp_walk {
    uint64_t *ips;
    uint32_t n, max;
    uint64_t low, high;   /* the reach of the walk's stack pointers (the unwinder's own below us) */
    uint64_t last_cfa;
    uint64_t live, readable_to; /* the stack is readable from `live` (a frame of ours) up to
                                   here: it is one contiguous mapping */
} asp_walk;

/* One frame of the walk: kept, then checked before the unwinder steps past it (the top of
 * this file): the step computes the caller's CFA by this frame's rule — from the stack pointer
 * (the CFA the unwinder reports for this frame) or the frame pointer, anything else is not
 * followed — reads the return address below it, and looks that address up, reading its code
 * when it finds no FDE. So the CFA must lie in reach and be readable, and the return address
 * must lie in an executable file mapping, before the unwinder goes there. Stopping returns
 * anything but _URC_NO_REASON. */
static _Unwind_Reason_Code asp_context_step(struct _Unwind_Context *ctx, void *arg) {
    asp_walk *w = (asp_walk *)arg;
    const uint64_t ip = (uint64_t)asp_unwind_ip(ctx);
    if (!ip || w->n >= w->max || !asp_in_code(ip)) return _URC_END_OF_STACK;
    w->ips[w->n++] = ip;
    if (w->n >= w->max) return _URC_END_OF_STACK;
    int64_t off = 0;
    const int reg = asp_cfa_rule(ip - 1, &off);
    uint64_t base;
    if (reg == ASP_CFA_RSP) base = (uint64_t)asp_unwind_cfa(ctx);
    else if (reg == ASP_X86_64_RBP) base = (uint64_t)asp_unwind_gr(ctx, ASP_X86_64_RBP);
    else return _URC_END_OF_STACK;
    const uint64_t cfa = base + (uint64_t)off;
    if (cfa <= w->last_cfa || cfa < w->low || cfa >= w->high) return _URC_END_OF_STACK;
    w->last_cfa = cfa;
    /* the saved registers and the return address lie just below the caller's CFA */
    if (cfa < w->live + 128 || cfa > w->readable_to) {
        if (!asp_readable(cfa - 128, 128)) return _URC_END_OF_STACK;
        if (cfa >= w->live + 128 && cfa > w->readable_to) w->readable_to = cfa;
    }
    uint64_t ra;
    __builtin_memcpy(&ra, (const void *)(uintptr_t)(cfa - 8), 8);
    return asp_in_code(ra) ? _URC_NO_REASON : _URC_END_OF_STACK;
}

uint32_t asp_context_frames(const asp_export_desc *ex, uint64_t caller, uint32_t depth, uint64_t *ips) {
    if (!caller || depth == 0 || depth > ASPECTS_MAX_CONTEXT_DEPTH) return 0;
    if (!__atomic_load_n(&asp_context_warm, __ATOMIC_ACQUIRE)) return 0;
    asp_thread *t = &asp_tls;
    if (__atomic_load_n(&t->unwinding, __ATOMIC_RELAXED)) return 0;
    if (!asp_place_safe(ex)) return 0;
    __atomic_store_n(&t->unwinding, 1u, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uint64_t buf[ASP_CONTEXT_OWN_FRAMES + ASPECTS_MAX_CONTEXT_DEPTH];
    asp_walk w = {.ips = buf, .max = ASP_CONTEXT_OWN_FRAMES + depth};
    w.live = w.readable_to = (uint64_t)(uintptr_t)&w;
    w.low = w.live - 65536;
    w.high = w.live + ASP_CONTEXT_STACK_REACH;
    (void)asp_unwind_backtrace(asp_context_step, &w);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&t->unwinding, 0u, __ATOMIC_RELAXED);
    uint32_t at = 0;
    while (at < w.n && buf[at] != caller) at++;
    if (at >= w.n) return 0; /* the site is not on the stack we unwound: not known */
    uint32_t n = 0;
    for (uint32_t i = at; i < w.n && n < depth; i++) ips[n++] = buf[i];
    return n;
}

int asp_context_matches(const asp_export_desc *ex, uint64_t caller, uint32_t depth, uint64_t hash) {
    uint64_t ips[ASPECTS_MAX_CONTEXT_DEPTH];
    const uint32_t n = asp_context_frames(ex, caller, depth, ips);
    if (n != depth) return 0;
    uint64_t h = aspects_context_hash_start(n);
    for (uint32_t i = 0; i < n; i++)
        if (!asp_context_fold(ips[i], &h)) return 0;
    return h == hash;
}
