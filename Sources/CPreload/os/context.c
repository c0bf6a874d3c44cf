/* context.c — the calling context of an advised call: the return address the stub saved (the
 * call site) and the return addresses of the callers above it, each as (object file, offset in
 * the file) through identity.c's maps cache, hashed with aspects_context_hash (aspects_abi.h),
 * the hash aspectctl computes from a rule's frames.
 *
 * The walk is ours: from this function's own registers (pc, stack pointer, frame pointer),
 * frame after frame by the rules of each frame's CFI (frame_rule.c) — the .eh_frame every
 * x86-64 and aarch64 object carries (Debian's x86-64 binaries have no frame pointers to
 * follow; an aarch64 build with -fomit-frame-pointer keeps no frame records either). A rule is
 * read once per pc and kept for the process (step_cache.c), so a call site's walk after its
 * first is a few loads a frame (docs/cost.md has the figures). The FDEs are found by libgcc_s's
 * _Unwind_Find_FDE, which with glibc 2.35+ and libgcc 12 asks _dl_find_object, without the
 * loader's lock and without allocating. Loading libgcc_s allocates and takes the loader's
 * lock: so backtrace() is called once and the entry point looked up then — at attach, in our
 * constructor, when the table holds a rule that needs contexts; else by the first call that
 * needs a context (a rule added later), at a safe place and sealed (asp_context_warm_up), as
 * advice objects are loaded.
 *
 * A frame whose CFI does not describe what its code did to the stack (hand-written assembly,
 * a corrupted stack) gives a stale or garbage return address or CFA. So each step is checked
 * before it is taken: the frame's pc in an executable file mapping (or a pc whose rule was
 * kept at the same maps generation); its CFA computed from the stack pointer or the frame
 * pointer only, above the last one and within reach; the words it reads — the return address
 * and the saved frame pointer — readable, asked of the kernel (EFAULT, not a fault) by
 * process_vm_readv, or futex where that is not implemented (qemu-user) or refused (a
 * container's seccomp profile), a few pages at a time as the walk climbs the stack, so a walk
 * asks once or twice; on aarch64 a return address saved signed is checked to be the one the
 * frame signed (asp_return_target). The walk ends at the first step that fails, and the
 * context is then as deep as it got. Elsewhere than on these two architectures no context is
 * known.
 * Never unwound:
 *   - re-entrantly (a handler arriving mid-walk on this thread): asp_tls.unwinding;
 *   - where a signal handler may have interrupted the loader, or inside the program's dlopen:
 *     advice_call.c's safe place;
 * and the walk is bounded: our own frames (dispatcher, libffi's closure) and then at most the
 * context's depth. An unknown context matches no `context` condition. */
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
#include "frame_rule.h"
#include "step_cache.h"
#include "identity.h"
#include "sys.h"
#include "table.h"
#include "thread.h"

/* Our frames between the walk and the call site: the dispatcher's few (with a decision
 * and an event below it) and libffi's closure entry. More than enough; bounded all the same. */
#define ASP_CONTEXT_OWN_FRAMES 16

static uint32_t asp_context_warm;

/* libgcc_s's FDE lookup, found at attach. */
struct dwarf_eh_bases { void *tbase, *dbase, *func; };
static const void *(*asp_unwind_find_fde)(void *, struct dwarf_eh_bases *);

/* How far above the walk's own frame a caller's stack pointer may lie. */
#define ASP_CONTEXT_STACK_REACH (64u * 1024u * 1024u)

/* Whether a live rule asks for contexts (a flag word, read untrusted: at worst libgcc_s is
 * loaded for nothing, or not at all and contexts stay unknown). Only listed slots are read. */
static int asp_slot_needs_contexts(uint32_t slot, void *ctx) {
    (void)ctx;
    const uint32_t need = ASPECTS_RULE_HAS_CONTEXT | ASPECTS_RULE_RECORD_CONTEXT;
    const aspects_rule *r = &asp_tab.rules[slot];
    const uint32_t state = __atomic_load_n(&r->state, __ATOMIC_RELAXED);
    return state != ASPECTS_RULE_FREE && state != ASPECTS_RULE_REMOVED &&
           (__atomic_load_n(&r->flags, __ATOMIC_RELAXED) & need);
}

static int asp_table_needs_contexts(void) {
    return asp_table_each_listed_slot(asp_slot_needs_contexts, NULL);
}

/* libgcc_s's FDE lookup, found once (asp_context_tried): at attach when the table
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
    asp_unwind_find_fde = (const void *(*)(void *, struct dwarf_eh_bases *))dlsym(gcc, "_Unwind_Find_FDE");
    if (asp_unwind_find_fde)
        __atomic_store_n(&asp_context_warm, 1u, __ATOMIC_RELEASE);
}

void asp_context_attach(void) {
    if (!ASP_CONTEXT_ARCH) return; /* the walk follows x86-64's and aarch64's registers only */
    if (!asp_tab.attached || !asp_table_needs_contexts()) return;
    asp_context_load(); /* in the constructor's SEALED frame */
}

/* A rule that needs contexts, added after attach: libgcc_s is loaded by the first call
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
#define ASP_READ_PAGES 16u /* pages asked about at once, at most */
#define ASP_READ_AHEAD 4u  /* pages asked about beyond the one a step needs: the frames above it */

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

/* How many of the `pages` pages from `first` on can be read, in a row, asked of the kernel
 * (EFAULT, never a fault) with one word of each (a page is readable whole or not at all): by
 * one process_vm_readv, which stops at the first page it cannot read, else one futex probe
 * a page. */
static unsigned asp_readable_pages(uint64_t first, unsigned pages) {
    if (first < ASP_PAGE || pages == 0) return 0;
    if (pages > ASP_READ_PAGES) pages = ASP_READ_PAGES;
    const int saved = errno;
    unsigned ok = 0;
    if (!__atomic_load_n(&asp_no_vm_readv, __ATOMIC_RELAXED)) {
        struct iovec remote[ASP_READ_PAGES];
        uint64_t copy[ASP_READ_PAGES];
        for (unsigned i = 0; i < pages; i++) remote[i] = (struct iovec){(void *)(uintptr_t)(first + (uint64_t)i * ASP_PAGE), 8};
        struct iovec local = {copy, (size_t)pages * 8u};
        const long r = syscall(SYS_process_vm_readv, (long)asp_sys_getpid(), &local, 1L, remote, (long)pages, 0L);
        if (r > 0) ok = (unsigned)(r / 8);
        else if (r < 0 && (errno == ENOSYS || errno == EPERM)) __atomic_store_n(&asp_no_vm_readv, 1u, __ATOMIC_RELAXED);
    }
    if (__atomic_load_n(&asp_no_vm_readv, __ATOMIC_RELAXED))
        while (ok < pages && asp_word_readable(first + (uint64_t)ok * ASP_PAGE)) ok++;
    errno = saved;
    return ok;
}

typedef struct asp_walk {
    uint64_t *ips;
    uint32_t n, max;
    uint64_t caller;        /* the call site: the walk ends `depth` frames after it, from it */
    uint32_t site_at, depth; /* its index in ips (max when not met yet) */
    uint64_t low, high;     /* the reach of the walk's CFAs: from its own stack pointer up */
    uint64_t known, known_to; /* pages known readable: [known, known_to), from the walk's own
                                 page up, one stack mapping climbed as the walk climbs */
} asp_walk;

/* Whether the word at `at` (a stack slot a step reads) can be read. Above the pages known
 * readable and near them: the pages from there up to it and a few beyond, in one question
 * (the frames above read them next); elsewhere (another stack: a handler's alternate one) its
 * page alone, remembered for nothing. */
static int asp_walk_readable(asp_walk *w, uint64_t at) {
    if (at & 7u) return 0; /* no step reads a slot that is not a word's */
    if (at >= w->known && at < w->known_to) return 1;
    const uint64_t page = at & ~(uint64_t)(ASP_PAGE - 1);
    if (at >= w->known && page < w->known_to + (uint64_t)ASP_READ_PAGES * ASP_PAGE) {
        const unsigned need = (unsigned)((page - w->known_to) / ASP_PAGE) + 1;
        w->known_to += (uint64_t)asp_readable_pages(w->known_to, need + ASP_READ_AHEAD) * ASP_PAGE;
        return at < w->known_to;
    }
    return asp_readable_pages(page, 1) == 1;
}

/* The code address a step takes the return address `raw` (read from this frame's slot)
 * to, or 0 when it would not take it to one. On aarch64 a function built with return address
 * signing (-mbranch-protection=pac-ret: paciasp, DW_CFA_AARCH64_negate_ra_state) saves x30
 * with a pointer authentication code in its top bits, signed with the stack pointer at entry
 * (the CFA): authenticating it (autia1716 with the CFA) would fault on a CPU with FEAT_FPAC
 * when the word is a lying CFI's stale or garbage one. So a signed frame's word is stripped
 * (xpaclri) and signed again the same way (pacia1716/pacib1716, which never fault); only a
 * word equal to that is the one the frame signed (with a 7-bit code, 48-bit addresses and the
 * top byte ignored, one garbage code address in 128 passes: the walk then checks the next
 * step as any other). An unsigned frame's word
 * is taken as it is (a signed word there is no code address: the walk ends). All four are
 * hints: on a CPU without pointer authentication nothing is signed or stripped, and the word
 * is the address. Debian 12's arm64 libraries are not built so (`readelf -n` shows no
 * GNU_PROPERTY_AARCH64_FEATURE_1_AND note, objdump no paciasp); the tests build fixtures that
 * are, and run them on qemu's `max` CPU, which signs. */
static uint64_t asp_return_target(const asp_step *f, uint64_t cfa, uint64_t raw) {
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

/* The step of the frame at `pc` (`key`: the pc, or the call instruction before a return
 * address): the one kept, else read from the CFI and kept. *in_code: the pc lies in code (a
 * kept one did when it was kept, at this generation). */
static int asp_step_for(uint64_t key, uint64_t pc, uint64_t generation, asp_step *step, int *in_code) {
    if (asp_step_cache_get(key, generation, step)) { *in_code = 1; return 1; }
    *in_code = asp_in_code(pc);
    if (!*in_code) return 0;
    struct dwarf_eh_bases bases;
    asp_frame_rule rule;
    if (!asp_frame_rule_read((const uint8_t *)asp_unwind_find_fde((void *)(uintptr_t)key, &bases), key, &rule) ||
        !asp_step_of(&rule, step))
        return 0;
    asp_step_cache_put(key, generation, step);
    return 1;
}

/* The walk from a frame whose registers are (pc, sp, fp): each frame's pc into w->ips, until
 * the call site and the callers the context needs are in, w->max of them, or the first step
 * that fails its checks (the top of this file). */
static void asp_walk_stack(asp_walk *w, uint64_t pc, uint64_t sp, uint64_t fp) {
    const uint64_t generation = asp_maps_generation();
    int fp_known = 1;
    uint64_t last_cfa = 0;
    /* frame 0's pc is where its registers were read; a return address's call is the
     * instruction before it, whose rule describes the frame */
    for (uint64_t key = pc; w->n < w->max; key = pc - 1) {
        asp_step rule;
        int in_code = 0;
        const int known = asp_step_for(key, pc, generation, &rule, &in_code);
        if (!in_code) return;
        if (pc == w->caller && w->site_at == w->max) w->site_at = w->n;
        w->ips[w->n++] = pc;
        if (!known || w->n >= w->max || (w->site_at != w->max && w->n - w->site_at >= w->depth)) return;
        uint64_t base;
        if (!rule.cfa_fp) base = sp;
        else if (fp_known) base = fp;
        else return;
        const uint64_t cfa = base + (uint64_t)rule.cfa_off;
        if (cfa <= last_cfa || cfa < w->low || cfa >= w->high) return;
        last_cfa = cfa;
        const uint64_t ra_slot = cfa + (uint64_t)rule.ra_off;
        if (!asp_walk_readable(w, ra_slot)) return;
        uint64_t raw;
        __builtin_memcpy(&raw, (const void *)(uintptr_t)ra_slot, 8);
        if (rule.fp_where == ASP_SAVED_AT_OFFSET) {
            const uint64_t fp_slot = cfa + (uint64_t)rule.fp_off;
            fp_known = asp_walk_readable(w, fp_slot);
            if (fp_known) __builtin_memcpy(&fp, (const void *)(uintptr_t)fp_slot, 8);
        } else if (rule.fp_where == ASP_SAVED_ELSEWHERE) {
            fp_known = 0; /* a frame above that needs it ends the walk */
        }
        pc = asp_return_target(&rule, cfa, raw);
        if (!pc) return;
        sp = cfa;
    }
}

/* The walk's frames from `caller` on, into ips (asp_context_frames). Inlined into both its
 * callers: a frame of ours less to step past. */
static inline __attribute__((always_inline)) uint32_t asp_context_walk(const asp_export_desc *ex, uint64_t caller, uint32_t depth, uint64_t *ips) {
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
    asp_walk w = {.ips = buf, .max = ASP_CONTEXT_OWN_FRAMES + depth, .caller = caller, .depth = depth};
    w.site_at = w.max;
    /* This frame's registers, read together: the pc of the label, where the stack pointer and
     * the frame pointer hold what they hold at it (the CFI at that pc describes them). Every
     * slot the walk reads lies above this stack pointer, where nothing we call writes. */
    uint64_t pc = 0, sp = 0, fp = 0;
#if defined(__x86_64__)
    __asm__ volatile("leaq 1f(%%rip), %0\n1:\n\tmovq %%rsp, %1\n\tmovq %%rbp, %2" : "=&r"(pc), "=&r"(sp), "=&r"(fp));
#elif defined(__aarch64__)
    __asm__ volatile("adr %0, 1f\n1:\n\tmov %1, sp\n\tmov %2, x29" : "=&r"(pc), "=&r"(sp), "=&r"(fp));
#endif
    w.low = sp;
    w.high = sp + ASP_CONTEXT_STACK_REACH;
    w.known = sp & ~(uint64_t)(ASP_PAGE - 1); /* the page this function runs on */
    w.known_to = w.known + ASP_PAGE;
    asp_walk_stack(&w, pc, sp, fp);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&t->unwinding, 0u, __ATOMIC_RELAXED);
    if (w.site_at >= w.n) return 0; /* the site is not on the stack we walked: not known */
    uint32_t n = 0;
    for (uint32_t i = w.site_at; i < w.n && n < depth; i++) ips[n++] = buf[i];
    return n;
}

uint32_t asp_context_frames(const asp_export_desc *ex, uint64_t caller, uint32_t depth, uint64_t *ips) {
    return asp_context_walk(ex, caller, depth, ips);
}

/* The last context this thread hashed: a call site in a loop is reached through the same
 * frames every time, and naming them (the maps cache, the file's name) is most of a match's
 * cost. Valid at the maps generation it was made at; `valid` is cleared while it is written,
 * so a handler on this thread that hashes meanwhile neither reads nor keeps a torn one. */
typedef struct asp_context_memo {
    uint32_t valid, depth;
    uint64_t generation, hash;
    uint64_t ips[ASPECTS_MAX_CONTEXT_DEPTH];
} asp_context_memo;
static ASP_TLS asp_context_memo asp_last_context;

static int asp_context_memo_has(const asp_context_memo *m, const uint64_t *ips, uint32_t n, uint64_t generation, uint64_t *hash) {
    if (!__atomic_load_n(&m->valid, __ATOMIC_RELAXED) || m->depth != n || m->generation != generation) return 0;
    for (uint32_t i = 0; i < n; i++)
        if (m->ips[i] != ips[i]) return 0;
    *hash = m->hash;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return __atomic_load_n(&m->valid, __ATOMIC_RELAXED) != 0;
}

static void asp_context_memo_keep(asp_context_memo *m, const uint64_t *ips, uint32_t n, uint64_t generation, uint64_t hash) {
    __atomic_store_n(&m->valid, 0u, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    m->depth = n, m->generation = generation, m->hash = hash;
    for (uint32_t i = 0; i < n; i++) m->ips[i] = ips[i];
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&m->valid, 1u, __ATOMIC_RELAXED);
}

int asp_context_matches(const asp_export_desc *ex, uint64_t caller, uint32_t depth, uint64_t hash) {
    uint64_t ips[ASPECTS_MAX_CONTEXT_DEPTH];
    const uint32_t n = asp_context_walk(ex, caller, depth, ips);
    if (n != depth) return 0;
    const uint64_t generation = asp_maps_generation();
    uint64_t h;
    if (asp_context_memo_has(&asp_last_context, ips, n, generation, &h)) return h == hash;
    h = aspects_context_hash_start(n);
    for (uint32_t i = 0; i < n; i++)
        if (!asp_context_fold(ips[i], &h)) return 0;
    /* kept only when no reload of the maps came between: the names are the generation's */
    if (asp_maps_generation() == generation) asp_context_memo_keep(&asp_last_context, ips, n, generation, h);
    return h == hash;
}
