/* context.c — the calling context of an advised call: the return address the stub saved (the
 * call site) and the return addresses of the callers above it, each as (object file, offset in
 * the file) through identity.c's maps cache, hashed with aspects_context_hash (aspects_abi.h),
 * the hash aspectctl computes from a rule's frames.
 *
 * Unwinding is libgcc_s's DWARF unwinder (_Unwind_Backtrace, the engine of glibc's backtrace()),
 * which reads the .eh_frame every x86-64 and aarch64 object carries (Debian's x86-64 binaries
 * have no frame pointers to follow; an aarch64 build with -fomit-frame-pointer keeps no frame
 * records either). With glibc 2.35+ and libgcc 12 it finds each frame's FDE through
 * _dl_find_object, without the loader's lock and without allocating (docs/ARCHITECTURE.md,
 * calling contexts, has the choice and its cost). Its FIRST use dlopens libgcc_s, which
 * allocates and takes the loader's lock: so backtrace() is called once, and the unwinder's
 * entry points looked up then — at attach, in our constructor, when the table holds a rule
 * that needs contexts; else by the first call that needs a context (a rule added later), at a
 * safe place and sealed (asp_context_warm_up), as advice objects are loaded.
 *
 * The unwinder trusts the stack and the CFI: a frame whose CFI does not describe what its code
 * did to the stack (hand-written assembly, a corrupted stack) gives it a stale or garbage
 * return address, and the next step reads wherever that function's rule points (its frame
 * pointer, garbage) or, finding no FDE, the code at the address itself (libgcc's signal-frame
 * fallback): a fault in the host. So each step is checked before the unwinder takes it
 * (asp_context_step): the frame's address in an executable file mapping; its rules, read from
 * the FDE (asp_frame_rule_at): the CFA on the stack or frame pointer (x86-64: rsp or rbp;
 * aarch64: sp or x29), and the return address — x86-64: below the CFA, where `call` pushed
 * it; aarch64: where the FDE saved x30, else the walk ends; the caller's CFA above the last
 * one and within reach; the stack slots the step reads readable (asked of the kernel, which
 * answers EFAULT, not a fault — process_vm_readv, or futex where that is not implemented, as
 * under qemu-user, or refused, as under a container's seccomp profile: x86-64, the bytes below the CFA; aarch64, the range the FDE saved
 * registers to, anywhere between the frame's stack pointer and its CFA); the return
 * address in an executable file mapping (aarch64, where the frame saved it signed: stripped,
 * once signing it again gives the word back, i.e. libgcc will authenticate it).
 * The walk ends at the first step that fails, and the context is then as deep as it got.
 * Elsewhere than on these two architectures no context is known.
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
#include <linux/futex.h>
#include <execinfo.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
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

/* The DWARF register numbers the step checks name (each psABI's DWARF mapping): the stack
 * pointer and the frame pointer, the two registers a CFA rule is followed from. Elsewhere no
 * context is known (asp_context_attach). */
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

/* The unwinder's entry points, looked up once (asp_context_tried): at attach when the table
 * already asks for contexts, else at the first call that needs one, from a safe place. */
static uint32_t asp_context_tried;
static pthread_mutex_t asp_context_lock = PTHREAD_MUTEX_INITIALIZER;

static void asp_context_load(void) {
    if (__atomic_load_n(&asp_context_tried, __ATOMIC_ACQUIRE)) return;
    __atomic_store_n(&asp_context_tried, 1u, __ATOMIC_RELEASE);
    void *one[2];
    (void)backtrace(one, 2); /* dlopens libgcc_s now (in a SEALED frame: its calls are plain) */
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

void asp_context_attach(void) {
    if (!ASP_CONTEXT_ARCH) return; /* the step checks name x86-64's and aarch64's registers only */
    if (!asp_tab.attached || !asp_table_needs_contexts()) return;
    asp_context_load(); /* in the constructor's SEALED frame */
}

/* A rule that needs contexts, added after attach: the unwinder is loaded by the first call
 * that needs one, where loading is safe (the caller checked asp_place_safe: not inside the
 * program's dlopen, not in a handler), sealed (a handler arriving now runs unadvised rather
 * than wait for the lock this thread holds) and only by the thread that takes the lock: any
 * other goes on without a context for this call. */
static int asp_context_warm_up(void) {
    if (__atomic_load_n(&asp_context_tried, __ATOMIC_ACQUIRE)) return (int)__atomic_load_n(&asp_context_warm, __ATOMIC_ACQUIRE);
    asp_thread *t = &asp_tls;
    const asp_frame outer = asp_frame_push(t, ASP_IN_SEALED);
    if (pthread_mutex_trylock(&asp_context_lock) == 0) {
        asp_context_load();
        pthread_mutex_unlock(&asp_context_lock);
    }
    asp_frame_pop(t, outer);
    return (int)__atomic_load_n(&asp_context_warm, __ATOMIC_ACQUIRE);
}

#define ASP_PAGE 4096u
#define ASP_READ_PAGES 16u /* a range over more pages than this is not one a frame's step reads */

/* Set once process_vm_readv answered ENOSYS or EPERM: not implemented here (qemu-user, which
 * runs the aarch64 tests, does not implement it; nor does a kernel without cross-memory
 * attach), or refused by a seccomp profile (Docker's default denies it with EPERM to a
 * container without CAP_SYS_PTRACE: CI runs there). futex is never refused: glibc's locks
 * need it. */
static uint32_t asp_no_vm_readv;

/* Whether the word at `at` can be read, asked of the kernel by futex(FUTEX_WAIT) with a zero
 * timeout, where process_vm_readv is not implemented: the kernel reads the word to compare it
 * (EFAULT where a read would fault), then answers EAGAIN for any other value or waits no time
 * for this one (ETIMEDOUT); nothing is queued or changed either way. */
static int asp_word_readable(uint64_t at) {
    const struct timespec zero = {0, 0};
    const long r = syscall(SYS_futex, (long)at, (long)FUTEX_WAIT_PRIVATE, 0x5eed0a11L, &zero, 0L, 0L);
    return r == 0 || errno == EAGAIN || errno == ETIMEDOUT;
}

/* Whether [from, to) can be read, asked of the kernel (EFAULT, never a fault): the whole range
 * when it is short (x86-64's 128 bytes below a CFA), else one word of each page it touches (a
 * page is readable whole or not at all); by process_vm_readv in one call, else one futex
 * probe a page. */
static int asp_readable(uint64_t from, uint64_t to) {
    if (from < 4096 || to <= from || to - from < 8 || to - from > (uint64_t)ASP_READ_PAGES * ASP_PAGE) return 0;
    struct iovec remote[ASP_READ_PAGES + 1];
    uint64_t copy[ASP_READ_PAGES + 1];
    unsigned n = 0;
    size_t bytes = 0;
    if (to - from <= sizeof copy) {
        remote[0] = (struct iovec){(void *)(uintptr_t)from, (size_t)(to - from)};
        n = 1, bytes = (size_t)(to - from);
    } else {
        for (uint64_t at = from; at < to && n <= ASP_READ_PAGES; at = (at | (ASP_PAGE - 1)) + 1) {
            remote[n++] = (struct iovec){(void *)(uintptr_t)(at + 8 <= to ? at : to - 8), 8};
            bytes += 8;
        }
    }
    const int saved = errno;
    int ok = 0;
    if (!__atomic_load_n(&asp_no_vm_readv, __ATOMIC_RELAXED)) {
        struct iovec local = {copy, bytes};
        const long r = syscall(SYS_process_vm_readv, (long)asp_sys_getpid(), &local, 1L, remote, (long)n, 0L);
        ok = r == (long)bytes;
        if (r < 0 && (errno == ENOSYS || errno == EPERM)) __atomic_store_n(&asp_no_vm_readv, 1u, __ATOMIC_RELAXED);
    }
    if (!ok && __atomic_load_n(&asp_no_vm_readv, __ATOMIC_RELAXED)) {
        ok = 1;
        for (uint64_t at = from; at < to && ok; at = (at | (ASP_PAGE - 1)) + 1)
            ok = asp_word_readable(at + 8 <= to ? at : to - 8);
    }
    errno = saved;
    return ok;
}

/* ---- a frame's rules (its CFI, read as the unwinder will): where its CFA is computed from,
 * where its return address is saved, which stack slots the unwinder reads ---- */

#define ASP_CFA_UNKNOWN -1
#define ASP_CFI_MAX 4096 /* bytes of one CIE or FDE read at most */

/* Where the return address column's value lies, by the rules run so far. */
enum { ASP_RA_UNSAVED, ASP_RA_AT_OFFSET, ASP_RA_ELSEWHERE };

typedef struct asp_frame_rule {
    int cfa_reg;      /* the CFA's register, or ASP_CFA_UNKNOWN (an expression, CFI we do not read) */
    int64_t cfa_off;
    int ra_where;     /* ASP_RA_*: saved at CFA + ra_off, not saved (still in its register: the
                         frame's caller's return address is not on the stack), or elsewhere
                         (another register, an expression) */
    int64_t ra_off;
    int ra_signed;    /* aarch64: the return address is saved signed (DW_CFA_AARCH64_negate_ra_state) */
    int b_key;        /* aarch64: signed with the B key (the CIE's augmentation has 'B'), else A */
    int64_t low, high; /* the lowest and highest CFA offsets any register was saved at (a
                          superset of the slots the unwinder reads: a later restore is kept) */
} asp_frame_rule;

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

/* Whether a step reads the return address and the saved slots where the CFI says (aarch64),
 * or knows them without it (x86-64: `call` pushed the return address below the CFA, and the
 * registers pushed after it lie below that): there the CFA's rule alone is kept. */
#if defined(__aarch64__)
#define ASP_SAVES_FROM_CFI 1
#else
#define ASP_SAVES_FROM_CFI 0
#endif

/* Register `reg` saved at CFA + off: the slot range grows; the return address column's rule
 * is noted. */
static void asp_rule_saved(asp_frame_rule *f, uint64_t reg, int64_t off, uint64_t ra_column) {
    if (!ASP_SAVES_FROM_CFI) return;
    if (off < f->low) f->low = off;
    if (off > f->high) f->high = off;
    if (reg == ra_column) { f->ra_where = ASP_RA_AT_OFFSET; f->ra_off = off; }
}

/* Register `reg` given a rule other than "saved at an offset": for the return address
 * column, `where` (unsaved, or elsewhere); other registers are not read by a backtrace. */
static void asp_rule_other(asp_frame_rule *f, uint64_t reg, int where, uint64_t ra_column) {
    if (!ASP_SAVES_FROM_CFI) return;
    if (reg == ra_column) f->ra_where = where;
}

/* Register `reg` given its rule of the CIE back (DW_CFA_restore*): for the return address
 * column, what the CIE's instructions left (`cie`). */
static void asp_rule_restored(asp_frame_rule *f, uint64_t reg, const asp_frame_rule *cie, uint64_t ra_column) {
    if (!ASP_SAVES_FROM_CFI) return;
    if (reg == ra_column) { f->ra_where = cie->ra_where; f->ra_off = cie->ra_off; }
}

/* The rules of the function holding `pc` at `pc` (*out), read from the FDE the unwinder
 * itself finds, bounded: the CFA's register — the stack pointer, the frame pointer, another,
 * or ASP_CFA_UNKNOWN — and offset, the return address column's rule and the saved slots.
 * 0 when the CFI is not one we read. */
static int asp_frame_rule_at(uint64_t pc, asp_frame_rule *out) {
    struct dwarf_eh_bases bases;
    const uint8_t *fde = (const uint8_t *)asp_unwind_find_fde((void *)(uintptr_t)pc, &bases);
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
    /* Run the CIE's initial instructions, then the FDE's up to pc: the CFA's rule and the
     * return address column's, with remember/restore_state, and every slot saved to. A
     * restore (DW_CFA_restore*) of the return address column gives it the CIE's rule back. */
    asp_frame_rule rule = {.cfa_reg = ASP_CFA_UNKNOWN, .ra_where = ASP_RA_UNSAVED, .b_key = b_key, .low = INT64_MAX, .high = INT64_MIN};
    int saved_reg[8], saved_ra[8], saved_signed[8], depth = 0;
    int64_t saved_off[8], saved_ra_off[8];
    asp_frame_rule cie_rule = rule;
    uint64_t loc = start;
    asp_cfi_reader *runs[2] = {&c, &f};
    for (int k = 0; k < 2; k++) {
        asp_cfi_reader *r = runs[k];
        if (k == 1 && ASP_SAVES_FROM_CFI) cie_rule = rule;
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
            case 0x09: case 0x14: reg = asp_uleb(r); (void)asp_uleb(r); asp_rule_other(&rule, reg, ASP_RA_ELSEWHERE, ra_column); break;
            case 0x15: reg = asp_uleb(r); (void)asp_sleb(r); asp_rule_other(&rule, reg, ASP_RA_ELSEWHERE, ra_column); break;
            case 0x06: asp_rule_restored(&rule, asp_uleb(r), &cie_rule, ra_column); break;
            case 0x07: case 0x08: asp_rule_other(&rule, asp_uleb(r), ASP_RA_UNSAVED, ra_column); break;
            case 0x2e: (void)asp_uleb(r); break;
            /* aarch64's DW_CFA_AARCH64_negate_ra_state (SPARC's GNU_window_save): the return
             * address is signed from here, or no longer (asp_return_target) */
            case 0x2d: if (ASP_SAVES_FROM_CFI) rule.ra_signed ^= 1; break;
            case 0x0a:
                if (depth < 8) {
                    saved_reg[depth] = rule.cfa_reg, saved_off[depth] = rule.cfa_off;
                    if (ASP_SAVES_FROM_CFI) saved_ra[depth] = rule.ra_where, saved_ra_off[depth] = rule.ra_off, saved_signed[depth] = rule.ra_signed;
                }
                depth++;
                break;
            case 0x0b:
                if (depth > 0) {
                    depth--;
                    if (depth < 8) {
                        rule.cfa_reg = saved_reg[depth], rule.cfa_off = saved_off[depth];
                        if (ASP_SAVES_FROM_CFI) rule.ra_where = saved_ra[depth], rule.ra_off = saved_ra_off[depth], rule.ra_signed = saved_signed[depth];
                    }
                }
                break;
            case 0x0c: rule.cfa_reg = (int)asp_uleb(r); rule.cfa_off = (int64_t)asp_uleb(r); break;
            case 0x12: rule.cfa_reg = (int)asp_uleb(r); rule.cfa_off = asp_sleb(r) * data_align; break;
            case 0x0d: rule.cfa_reg = (int)asp_uleb(r); break;
            case 0x0e: rule.cfa_off = (int64_t)asp_uleb(r); break;
            case 0x13: rule.cfa_off = asp_sleb(r) * data_align; break;
            case 0x0f: asp_skip(r, asp_uleb(r)); rule.cfa_reg = ASP_CFA_UNKNOWN; break; /* an expression */
            case 0x10: case 0x16: reg = asp_uleb(r); asp_skip(r, asp_uleb(r)); asp_rule_other(&rule, reg, ASP_RA_ELSEWHERE, ra_column); break;
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

typedef struct asp_walk {
    uint64_t *ips;
    uint32_t n, max;
    uint64_t low, high;   /* the reach of the walk's stack pointers (the unwinder's own below us) */
    uint64_t last_cfa;
    uint64_t live, readable_to; /* x86-64: the stack is readable from `live` (a frame of ours)
                                   up to here: it is one contiguous mapping */
} asp_walk;

/* ---- what differs between the architectures: where the return address lies, which slots
 * the unwinder reads, how a return address is made a code address ---- */

/* Where the unwinder will read this frame's return address (its caller's pc), at *slot; 0
 * when it is not on the stack. x86-64: the word below the CFA, where `call` pushed it.
 * aarch64: where the FDE's rule for the return address column (x30) saved it; a rule that
 * leaves x30 in its register describes a leaf or a frame interrupted mid-prologue, which no
 * call site above our own frames is: the walk ends there. */
static int asp_return_slot(const asp_frame_rule *f, uint64_t cfa, uint64_t *slot) {
#if defined(__aarch64__)
    if (f->ra_where != ASP_RA_AT_OFFSET) return 0;
    *slot = cfa + (uint64_t)f->ra_off;
    return 1;
#else
    (void)f;
    *slot = cfa - 8;
    return 1;
#endif
}

/* Whether the stack slots the unwinder reads for this step can be read. x86-64: the saved
 * registers and the return address lie just below the caller's CFA (pushed on entry): the 128
 * bytes below it. aarch64: the saved registers (x29 and x30 among them) lie anywhere between
 * the frame's stack pointer and its CFA, often at the bottom of the frame (stp x29, x30,
 * [sp, #-N]!): the range the FDE saved to. */
static int asp_slots_readable(asp_walk *w, const asp_frame_rule *f, uint64_t cfa) {
#if defined(__aarch64__)
    (void)w;
    /* the return address is among the saved (asp_return_slot), so the range holds it */
    return asp_readable(cfa + (uint64_t)f->low, cfa + (uint64_t)f->high + 8);
#else
    (void)f;
    if (cfa < w->live + 128 || cfa > w->readable_to) {
        if (!asp_readable(cfa - 128, cfa)) return 0;
        if (cfa >= w->live + 128 && cfa > w->readable_to) w->readable_to = cfa;
    }
    return 1;
#endif
}

/* The code address the unwinder takes the return address `raw` (read from this frame's slot)
 * to, or 0 when it would not take it to one. On aarch64 a function built with return address
 * signing (-mbranch-protection=pac-ret: paciasp, DW_CFA_AARCH64_negate_ra_state) saves x30
 * with a pointer authentication code in its top bits, signed with the stack pointer at entry
 * (the CFA), and libgcc authenticates it so (autia1716/autib1716 with the CFA): a value that
 * does not authenticate — a lying CFI's stale or garbage word — faults there on a CPU with
 * FEAT_FPAC, or becomes a poisoned pointer whose code the unwinder reads (no FDE). So a signed
 * frame's word is stripped (xpaclri) and signed again the same way (pacia1716/pacib1716, which
 * never fault); only a word equal to that is one the unwinder authenticates (with a 7-bit code,
 * 48-bit addresses and the top byte ignored, one garbage code address in 128 is: the unwinder
 * then takes it too, and the walk checks the next step as any other). An unsigned frame's word
 * is taken as it is (a signed word there is no code address: the walk ends). All four are
 * hints: on a CPU without pointer authentication nothing is signed or stripped, and the word
 * is the address. Debian 12's arm64 libraries are not built so (`readelf -n` shows no
 * GNU_PROPERTY_AARCH64_FEATURE_1_AND note, objdump no paciasp); the tests build fixtures that
 * are, and run them on qemu's `max` CPU, which signs. */
static uint64_t asp_return_target(const asp_frame_rule *f, uint64_t cfa, uint64_t raw) {
#if defined(__aarch64__)
    if (!f->ra_signed) return raw;
    register uint64_t x30 __asm__("x30") = raw;
    __asm__("hint #7" : "+r"(x30)); /* xpaclri */
    const uint64_t code = x30;
    register uint64_t x17 __asm__("x17") = code;
    register uint64_t x16 __asm__("x16") = cfa;
    if (f->b_key) __asm__("hint #10" : "+r"(x17) : "r"(x16)); /* pacib1716 */
    else __asm__("hint #8" : "+r"(x17) : "r"(x16));           /* pacia1716 */
    return x17 == raw ? code : 0;
#else
    (void)f, (void)cfa;
    return raw;
#endif
}

/* One frame of the walk: kept, then checked before the unwinder steps past it (the top of
 * this file): the step computes the caller's CFA by this frame's rule — from the stack pointer
 * (the CFA the unwinder reports for this frame) or the frame pointer, anything else is not
 * followed — reads the return address where the frame saved it, and looks that address up,
 * reading its code when it finds no FDE. So the CFA must lie in reach, the slots the step
 * reads be readable, and the return address lie in an executable file mapping, before the
 * unwinder goes there. Stopping returns anything but _URC_NO_REASON. */
static _Unwind_Reason_Code asp_context_step(struct _Unwind_Context *ctx, void *arg) {
    asp_walk *w = (asp_walk *)arg;
    const uint64_t ip = (uint64_t)asp_unwind_ip(ctx);
    if (!ip || w->n >= w->max || !asp_in_code(ip)) return _URC_END_OF_STACK;
    w->ips[w->n++] = ip;
    if (w->n >= w->max) return _URC_END_OF_STACK;
    asp_frame_rule rule;
    if (!asp_frame_rule_at(ip - 1, &rule)) return _URC_END_OF_STACK;
    uint64_t base;
    if (rule.cfa_reg == ASP_DW_SP) base = (uint64_t)asp_unwind_cfa(ctx);
    else if (rule.cfa_reg == ASP_DW_FP) base = (uint64_t)asp_unwind_gr(ctx, ASP_DW_FP);
    else return _URC_END_OF_STACK;
    const uint64_t cfa = base + (uint64_t)rule.cfa_off;
    if (cfa <= w->last_cfa || cfa < w->low || cfa >= w->high) return _URC_END_OF_STACK;
    w->last_cfa = cfa;
    uint64_t slot;
    if (!asp_return_slot(&rule, cfa, &slot) || !asp_slots_readable(w, &rule, cfa)) return _URC_END_OF_STACK;
    uint64_t ra;
    __builtin_memcpy(&ra, (const void *)(uintptr_t)slot, 8);
    const uint64_t code = asp_return_target(&rule, cfa, ra);
    return code && asp_in_code(code) ? _URC_NO_REASON : _URC_END_OF_STACK;
}

uint32_t asp_context_frames(const asp_export_desc *ex, uint64_t caller, uint32_t depth, uint64_t *ips) {
    if (!ASP_CONTEXT_ARCH || !caller || depth == 0 || depth > ASPECTS_MAX_CONTEXT_DEPTH) return 0;
    const int warm = (int)__atomic_load_n(&asp_context_warm, __ATOMIC_ACQUIRE);
    /* loading was tried and failed (no libgcc_s): no context, without asking more each call */
    if (!warm && __atomic_load_n(&asp_context_tried, __ATOMIC_ACQUIRE)) return 0;
    asp_thread *t = &asp_tls;
    if (__atomic_load_n(&t->unwinding, __ATOMIC_RELAXED)) return 0;
    if (!asp_place_safe(ex)) return 0;
    if (!warm && !asp_context_warm_up()) return 0;
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
