/* events.c — appending to the table's event ring: lock-free, multi-producer, never blocking.
 *
 * A writer reserves position i with one fetch_add on event_head, claims the record by turning
 * its sequence odd (2i+1) with a compare-and-swap, fills it, and publishes 2i+2. Readers copy a
 * record and accept it only if its sequence is 2i+2 before and after the copy; a record
 * overwritten by a writer one lap ahead fails that check and counts as dropped.
 *
 * Two writers laps apart (positions i and i + k * capacity, same record) must never fill it
 * at once: the record would mix both and could pass the reader's check. So a record is
 * written only by the writer whose compare-and-swap claimed it: a writer that finds it
 * claimed by any other, or already written by a later lap, drops its own event (readers
 * count it dropped) rather than wait. A claim is never taken over, however old: the claimer
 * may be alive and merely descheduled (hundreds of threads on two cores), and a late store of
 * its would land in the new writer's record. The price is a writer that dies holding a claim
 * (killed, or a handler that longjmps out of this function): its record takes no event again,
 * one event a lap is dropped there, until the table is made anew. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netdb.h>
#include <time.h>
#include "context.h"
#include "events.h"
#include "identity.h"
#include "originals.h"
#include "sys.h"
#include "table.h"
#include "thread.h"

/* libc's clock_gettime, which reads the vDSO without entering the kernel. Found with
 * dlsym(RTLD_NEXT) at start-up, so that advising clock_gettime never times our own events. */
static int (*asp_clock_gettime)(clockid_t, struct timespec *);

/* At start-up (dlsym is not async-signal-safe, and events may be recorded in handlers). */
void asp_events_init(void) {
    asp_clock_gettime = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
}

static uint64_t asp_now_ns(void) {
    struct timespec ts;
    if (!asp_clock_gettime || asp_clock_gettime(CLOCK_REALTIME, &ts) != 0) return asp_sys_realtime_ns();
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t asp_current_tid(void) {
    uint32_t t = asp_tls.tid;
    if (!t) asp_tls.tid = t = asp_sys_gettid();
    return t;
}

/* Copies a string argument into the record. Pointers below the first page are not read (a
 * NULL path must not crash the host; the original will report EFAULT itself). */
static void asp_copy_string(char *dst, size_t cap, uint64_t ptr) {
    size_t n = 0;
    if (ptr >= 4096) {
        const char *s = (const char *)(uintptr_t)ptr;
        while (n + 1 < cap && s[n]) { dst[n] = s[n]; n++; }
    }
    dst[n] = 0; /* readers stop at the first NUL: no need to clear the rest */
}

/* The errno an event records: the one the caller sees when the result is a failure (or the
 * rule itself set errno), else 0 — errno after a successful call is stale, left by whatever
 * failed earlier. A `before` rule's record is made before the call: no result, no errno. */
static int32_t asp_recorded_errno(uint16_t kind, const asp_rule_view *v, const asp_export_desc *ex, int64_t ret, int32_t err) {
    if (kind != ASPECTS_EVENT_FIRED || v->position == ASPECTS_POSITION_BEFORE) return 0;
    if (v->actions & ASPECTS_ACTION_ERRNO) return err;
    switch (ex->failure) {
    case ASP_FAILURE_MINUS_ONE_ERRNO: case ASP_FAILURE_EOF_ERRNO: case ASP_FAILURE_MAP_FAILED_ERRNO:
        return ret == -1 ? err : 0;
    case ASP_FAILURE_NULL_ERRNO: case ASP_FAILURE_ZERO_ERRNO:
        return ret == 0 ? err : 0;
    case ASP_FAILURE_EAI:
        return ret == EAI_SYSTEM ? err : 0;
    case ASP_FAILURE_UNKNOWN:
        return err;
    default: /* the code is the result itself, or h_errno, or it cannot fail */
        return 0;
    }
}

/* The calling context, for a rule that records it: its frames above the site (the site is
 * the caller fields) and the hash of them all; depth 0 when not known here. */
static void asp_event_context(aspects_event *e, const asp_rule_view *v, const asp_export_desc *ex, uint64_t caller) {
    e->context_depth = 0;
    e->context_hash = 0;
    if (!(v->flags & ASPECTS_RULE_RECORD_CONTEXT)) return;
    uint64_t ips[ASPECTS_MAX_CONTEXT_DEPTH];
    const uint32_t n = asp_context_frames(ex, caller, ASPECTS_MAX_CONTEXT_DEPTH, ips);
    uint64_t h = aspects_context_hash_start(n);
    for (uint32_t i = 0; i < n; i++)
        if (!asp_context_fold(ips[i], &h)) return;
    for (uint32_t i = 1; i < n; i++)
        asp_site_describe(ips[i], e->context_objects[i - 1], ASPECTS_EVENT_CALLER_SIZE, &e->context_offsets[i - 1]);
    e->context_hash = h;
    e->context_depth = n;
}

/* Claims the record of ring position i for writing, or NULL when the event is to be dropped. */
static aspects_event *asp_event_claim(uint64_t i) {
    const uint64_t cap = asp_tab.event_capacity;
    aspects_event *e = &asp_tab.events[i & (cap - 1)];
    const uint64_t mine = 2 * i + 1;
    /* Acquire: the previous writer's fields (published with release) are behind us before we
     * overwrite them; without it, its late stores could land after ours. */
    uint64_t s = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
    for (;;) {
        if (s >= mine) return NULL; /* a later lap has it, or a corrupt sequence: ours is lost */
        if (s & 1u) return NULL;    /* another writer holds it (see the top of this file) */
        if (__atomic_compare_exchange_n(&e->seq, &s, mine, 0, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) break;
    }
    /* The odd sequence is visible before any field changes (a reader then rejects the copy). */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    return e;
}

/* Called only from the dispatcher, hence for an export whose stub is built: asp_direct[idx]
 * describes it. The fixed part is plain stores. */
void asp_event_append(uint16_t kind, const asp_rule_view *v, uint64_t call_number, uint32_t idx,
                      const uint64_t *vals, int64_t ret, int32_t err, uint64_t caller) {
    if (ASP_UNLIKELY(!asp_tab.attached || idx >= ASP_ALL_EXPORTS)) return;
    const asp_direct_call *h = &asp_direct[idx];
    const asp_export_desc *ex = h->desc;
    if (ASP_UNLIKELY(!ex)) return;
    const uint64_t i = __atomic_fetch_add(&asp_tab.header->event_head, 1, __ATOMIC_RELAXED);
    aspects_event *e = asp_event_claim(i);
    if (!e) return;
    e->pid = asp_pid;
    e->tid = asp_current_tid();
    e->hierarchy = asp_hierarchy;
    e->rule_serial = v->serial;
    e->call_number = call_number;
    e->seed = v->seed;
    e->ret = ret;
    e->err = asp_recorded_errno(kind, v, ex, ret, err);
    e->kind = kind;
    e->position = (uint8_t)v->position;
    e->arg_count = h->nargs;
    e->rule_slot = v->slot;
    e->group = h->group;
    e->export_index = idx;
    /* ex->args is zero past nargs, vals too (the dispatcher's): plain block copies */
    _Static_assert(sizeof e->arg_types == sizeof ex->args, "arg types");
    __builtin_memcpy(e->arg_types, ex->args, sizeof e->arg_types);
    e->ret_type = h->ret;
    const uint32_t sa = h->string_arg;
    e->string_arg = (uint8_t)sa;
    /* the id as four words: it is NUL-padded in the slot */
    const uint64_t *id = (const uint64_t *)(const void *)v->r->id;
    uint64_t *out = (uint64_t *)(void *)e->rule_id;
    out[0] = id[0]; out[1] = id[1]; out[2] = id[2]; out[3] = id[3] & 0x00ffffffffffffffull;
    __builtin_memcpy(e->args, vals, sizeof e->args);
    if (sa < 6) asp_copy_string(e->string, ASPECTS_EVENT_STRING_SIZE, vals[sa]);
    else e->string[0] = 0;
    /* The call's site (a lookup in the cached /proc/self/maps: firings are rare by nature). */
    asp_site_describe(caller, e->caller_object, sizeof e->caller_object, &e->caller_offset);
    asp_event_context(e, v, ex, caller);
    /* The clock last: across its call only e and i stay live, not every argument. */
    e->time_ns = asp_now_ns();
    /* No writer moves another's odd sequence; a compare-and-swap all the same, because any
     * attached process can scribble on the table: we publish over our own claim only. */
    uint64_t mine = 2 * i + 1;
    __atomic_compare_exchange_n(&e->seq, &mine, 2 * i + 2, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}
