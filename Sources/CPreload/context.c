/* context.c — the calling context of an advised call: the return address the stub saved (the
 * call site) and the return addresses of the callers above it, each as (object file, offset in
 * the file) through identity.c's maps cache, hashed with aspects_context_hash (aspects_abi.h),
 * the hash aspectctl computes from a rule's frames.
 *
 * Unwinding is glibc's backtrace(): libgcc_s's DWARF unwinder, which reads the .eh_frame every
 * x86-64 object carries (Debian's binaries have no frame pointers to follow). With glibc 2.35+
 * and libgcc 12 it finds each frame's FDE through _dl_find_object, without the loader's lock
 * and without allocating (docs/ARCHITECTURE.md, calling contexts, has the choice and its cost).
 * Its FIRST call dlopens libgcc_s, which allocates and takes the loader's lock: so it is made
 * at attach, in our constructor, and only when the table holds a rule that needs contexts; a
 * process that did not make it (the rule came later) knows no context. Never unwound:
 *   - re-entrantly (a call the unwinder itself makes, a handler arriving mid-unwind on this
 *     thread): asp_tls.unwinding;
 *   - where a signal handler may have interrupted the unwinder or the loader, or inside the
 *     program's dlopen: advice_call.c's safe place;
 * and the walk is bounded: our own frames (dispatcher, libffi's closure) and then at most the
 * context's depth. Each address must lie in an executable file mapping (the maps cache finds
 * it) before it is used; one that does not makes the context unknown. An unknown context
 * matches no `context` condition. */
#define _GNU_SOURCE
#include <execinfo.h>
#include "advice_call.h"
#include "context.h"
#include "identity.h"
#include "table.h"
#include "thread.h"

/* Our frames between the unwinder and the call site: the dispatcher's few (with a decision
 * and an event below it) and libffi's closure entry. More than enough; bounded all the same. */
#define ASP_CONTEXT_OWN_FRAMES 16

static uint32_t asp_context_warm;

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
    if (!asp_tab.attached || !asp_table_needs_contexts()) return;
    void *one[2];
    (void)backtrace(one, 2); /* dlopens libgcc_s now (the engine's guard is up: its calls are plain) */
    __atomic_store_n(&asp_context_warm, 1u, __ATOMIC_RELEASE);
}

uint32_t asp_context_frames(const asp_export_desc *ex, uint64_t caller, uint32_t depth, uint64_t *ips) {
    if (!caller || depth == 0 || depth > ASPECTS_MAX_CONTEXT_DEPTH) return 0;
    if (!__atomic_load_n(&asp_context_warm, __ATOMIC_ACQUIRE)) return 0;
    asp_thread *t = &asp_tls;
    if (__atomic_load_n(&t->unwinding, __ATOMIC_RELAXED)) return 0;
    if (!asp_place_safe(ex)) return 0;
    __atomic_store_n(&t->unwinding, 1u, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    void *buf[ASP_CONTEXT_OWN_FRAMES + ASPECTS_MAX_CONTEXT_DEPTH];
    const int got = backtrace(buf, ASP_CONTEXT_OWN_FRAMES + (int)depth);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&t->unwinding, 0u, __ATOMIC_RELAXED);
    int at = 0;
    while (at < got && (uint64_t)(uintptr_t)buf[at] != caller) at++;
    if (at >= got) return 0; /* the site is not on the stack we unwound: not known */
    uint32_t n = 0;
    for (int i = at; i < got && n < depth; i++) ips[n++] = (uint64_t)(uintptr_t)buf[i];
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
