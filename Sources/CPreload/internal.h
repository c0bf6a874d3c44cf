/* internal.h — declarations shared by the preload's C files. Everything here is hidden:
 * the only exported symbols of libaspects.so are the generated wrappers. */
#ifndef ASP_INTERNAL_H
#define ASP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>  /* strnlen: libc's (not exported by us), word-at-a-time */
#include "aspects_abi.h"
#include "catalog.h"
#include "prng.h"

#pragma GCC visibility push(hidden)

_Static_assert(sizeof(void *) == 8, "libaspects supports LP64 only");

#define ASP_TLS __thread __attribute__((tls_model("initial-exec")))
#define ASP_LIKELY(x) __builtin_expect(!!(x), 1)
#define ASP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#if defined(__x86_64__)
#define ASP_CPU_RELAX() __builtin_ia32_pause()
#else
#define ASP_CPU_RELAX() __asm__ __volatile__("" ::: "memory")
#endif

/* ---- wrappers and their slow paths (arch/, generated/) ---- */
extern void *asp_real[ASP_EXPORT_COUNT];   /* the originals (lazy trampolines until resolved) */
extern void *asp_proto_original[ASPECTS_PROTO_CAPACITY]; /* originals of prototype symbols (proto.c) */
extern void *asp_entry[ASP_EXPORT_COUNT];  /* where an armed call goes (closure code once built) */
extern const uint8_t *asp_armed_base;      /* the table's armed bytes, or a zero array */
extern const uint8_t asp_nothing_armed[ASPECTS_GROUP_CAPACITY]; /* that zero array */

/* ---- per-thread state: the re-entry guards (initial-exec TLS: no allocation, signal-safe) ---- */
#include "arch/stub_layout.h"

/* What a stub hands the dispatcher about the call it enters with (arch/stub_x86_64.h): the
 * counter word it counted the call in and the number it took (0: it counted nothing), and the
 * caller's return address. A ring, not one slot: a signal handler may interrupt between the
 * stub's push and the dispatcher's pop and make an advised call of its own, which pushes and
 * pops above it. */
typedef struct asp_pending {
    uint64_t *counter;
    uint64_t call;
    uint64_t caller;
    uint64_t pad;
} asp_pending;

typedef struct asp_thread {
    uint64_t caller_ip;    /* return address of the armed call, stored by the stub (offset 0!) */
    uint32_t busy;         /* inside the engine: every wrapped call goes straight to the original */
    uint32_t group_active; /* group+1 whose original is running: the same group is advised once */
    uint32_t tid;          /* cached gettid(), 0 = not yet known */
    uint32_t export_active;/* export+1 of that running original: the same name again is recursion */
    uint32_t pend_depth;   /* entries pushed on `pend` (it only wraps: a siglongjmp between a
                              stub and its dispatcher leaves one behind, below every later one) */
    uint32_t pad;
    asp_pending pend[ASP_PEND_MASK + 1];
} asp_thread;
extern ASP_TLS asp_thread asp_tls;
_Static_assert(__builtin_offsetof(asp_thread, caller_ip) == ASP_TLS_CALLER_IP, "stub_layout.h: caller_ip");
_Static_assert(__builtin_offsetof(asp_thread, pend_depth) == ASP_TLS_PEND_DEPTH, "stub_layout.h: pend_depth");
_Static_assert(__builtin_offsetof(asp_thread, pend) == ASP_TLS_PEND, "stub_layout.h: pend");
_Static_assert(sizeof(asp_pending) == 1u << ASP_PEND_SHIFT, "stub_layout.h: pending entry size");

/* The entry the stub pushed for the call the dispatcher is now handling (every armed entry
 * into a closure comes through a stub). Read before the depth is lowered: a handler arriving
 * in between pushes above this entry, not over it. */
static inline asp_pending asp_pending_pop(asp_thread *t) {
    asp_pending p = {0, 0, 0, 0};
    const uint32_t d = __atomic_load_n(&t->pend_depth, __ATOMIC_RELAXED);
    if (!d) {
        p.caller = t->caller_ip;
        return p;
    }
    p = t->pend[(d - 1u) & ASP_PEND_MASK];
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&t->pend_depth, d - 1u, __ATOMIC_RELAXED);
    return p;
}

/* ---- resolve.c ---- */
void *asp_resolve(uint32_t idx);    /* called by asp_lazy_common: the original of export idx */
void *asp_original(uint32_t idx);   /* resolved original, resolving now if needed */
int asp_is_resolved(uint32_t idx);  /* asp_real[idx] is the original, not its lazy trampoline */
int asp_in_libc(const void *fn);    /* gate.c: 1 when fn lies in the C library's own object */

/* ---- ffi_lazy.c: libffi, dlopened with RTLD_LOCAL on first use ---- */
#include <ffi.h>
typedef struct asp_ffi_api {
    ffi_status (*prep_cif)(ffi_cif *, ffi_abi, unsigned, ffi_type *, ffi_type **);
    ffi_status (*prep_cif_var)(ffi_cif *, ffi_abi, unsigned, unsigned, ffi_type *, ffi_type **);
    void *(*closure_alloc)(size_t, void **);
    void (*closure_free)(void *);
    ffi_status (*prep_closure_loc)(ffi_closure *, ffi_cif *, void (*)(ffi_cif *, void *, void **, void *), void *, void *);
    void (*call)(ffi_cif *, void (*)(void), void *, void **);
    ffi_type *types[ASPECTS_T_COUNT];
} asp_ffi_api;
extern asp_ffi_api asp_ffi;
int asp_ffi_load(void);   /* 1 when libffi is usable */
extern char asp_libffi_choice[512]; /* ASPECTS_LIBFFI as the program started with it, or "" */

/* ---- dispatch.c: the handler of a forwarding stub (one per arity of a direct original) ---- */
typedef void (*asp_handler)(ffi_cif *, void *, void **, void *);
asp_handler asp_handler_for(uint32_t nargs, int direct);

/* ---- closures.c ---- */
void *asp_enter(uint32_t idx);      /* called by asp_slow_common: closure code or the original */
void asp_closures_reserve(void);    /* at attach: libffi loaded, every closure's memory taken */
void asp_stub_forget(uint32_t idx); /* a prototype export registered anew: rebuild its stub */
void asp_closures_atfork_prepare(void);
void asp_closures_atfork_release(void);
void asp_call_original(uint32_t idx, void *ret, void **args, const uint64_t *vals);
/* The result an `instead`/`after` rule gives: an integer or float's bits in value, or a
 * struct's bytes from the rule (v->result_off/len). */
struct asp_rule_view;
void asp_store_rule_result(const struct asp_rule_view *v, uint32_t idx, void *ret, int64_t value);

/* Stores an integer-class result the way a libffi closure must: a full ffi_arg for types
 * narrower than a register. */
static inline void asp_store_integer(uint8_t type, void *ret, long r) {
    switch (type) {
    case ASPECTS_T_VOID: break;
    case ASPECTS_T_I8: *(ffi_sarg *)ret = (int8_t)r; break;
    case ASPECTS_T_U8: *(ffi_arg *)ret = (uint8_t)r; break;
    case ASPECTS_T_I16: *(ffi_sarg *)ret = (int16_t)r; break;
    case ASPECTS_T_U16: *(ffi_arg *)ret = (uint16_t)r; break;
    case ASPECTS_T_I32: *(ffi_sarg *)ret = (int32_t)r; break;
    case ASPECTS_T_U32: *(ffi_arg *)ret = (uint32_t)r; break;
    default: *(uint64_t *)ret = (uint64_t)r; break;
    }
}

/* Originals that can be called without ffi_call (integer/pointer-only signatures): set when
 * the export's closure is built. */
typedef struct asp_direct_call {
    void *fn;                     /* set for integer-only signatures; NULL: asp_call_original (ffi_call) */
    const asp_export_desc *desc;  /* the export (set for every built stub, before any call reaches it) */
    uint16_t group;
    uint8_t ret;                  /* enum aspects_type */
    uint8_t nargs;
    uint8_t string_arg;           /* the first string argument among the first six, 0xff: none (events) */
    uint8_t pad[3];
} asp_direct_call;
extern asp_direct_call asp_direct[ASP_ALL_EXPORTS];

/* ---- table.c: the attached table, geometry copied and validated once ---- */
typedef struct asp_table {
    char *base;
    uint64_t size;
    uint32_t group_capacity;
    uint32_t rule_capacity;
    uint32_t event_capacity;  /* a power of two */
    uint32_t attached;
    aspects_group_list *lists;
    aspects_rule *rules;
    aspects_event *events;
    aspects_process_stat *stats;
    uint32_t stat_capacity;   /* a power of two, or 0 */
    uint32_t pad;
    aspects_proto_symbol *protos;
    aspects_table_header *header;
} asp_table;
extern asp_table asp_tab;
int asp_table_attach(const char *name);  /* 0 on success; says why with ASPECTS_DEBUG otherwise */
void *asp_sys_mmap_zero_fixed(void *at, uint64_t size); /* sys.c: private zero pages over [at, at+size) */
uint32_t asp_table_rules_of(uint32_t group, uint16_t *out); /* validated snapshot of a group list */

/* ---- rulecache.c: the process's validated copy of each group's rules ---- */
#define ASP_CACHE_RULES 8u   /* rules per group a copy holds; a group with more is read directly */

/* A glob matcher's pattern, classified when the rule copy is made: most path patterns are a
 * literal, "prefix*" or "*suffix", which are matched by comparing bytes, not by the general
 * backtracking matcher. */
typedef struct asp_glob_plan {
    uint16_t prefix;   /* bytes before the first '*' */
    uint16_t suffix;   /* bytes after the last '*' */
    uint8_t fixed;     /* 1: no metacharacter but '*' runs in one place; 0: general matcher */
    uint8_t star;      /* the pattern has a '*' */
} asp_glob_plan;

typedef struct asp_rule_view {
    aspects_rule *r;                /* the slot: claims, shared counters, strings */
    aspects_process_stat *stat;     /* this process's statistics entry, or NULL */
    uint64_t *counter;              /* the call counter of the rule's scope when it is one word
                                       (process, table, a claimed hierarchy entry), else NULL */
    uint64_t *matched_word;         /* where a matching call is counted for statistics: for
                                       process scope the very counter word (this process's
                                       statistics entry counts its calls), so one add does both */
    uint64_t gate;                  /* calls numbered below this never fire (nth/after/every folded) */
    uint32_t slot, position, actions, scope, flags, signal_number;
    int32_t errno_value;
    uint32_t matcher_count, arg_set_count, errno_choice_count;
    uint32_t plain;                 /* no conditions, a counter word, no autoRemove: the single path's shortest way */
    uint32_t process_ok;            /* the rule's `process` glob matches this program (or it has none) */
    uint32_t gate_moves;            /* a decision can move the stubs' gate (nth, every, a schedule,
                                       claims); without, its bound stays where it was published */
    uint64_t caller_memo;           /* the last caller address << 2 | 2 | whether it matched; 0: none */
    uint64_t site_memo;             /* the same for the `site` condition */
    uint64_t site_offset;           /* `site`: the return address's offset in the file r->strings names */
    uint16_t site_off, site_len;
    int64_t return_value;
    uint64_t delay_ns, nth, after, every, times, serial, probability, seed, rule_key;
    asp_schedule schedule;          /* the firing schedule of a probability rule (prng.h) */
    int64_t result_min, result_max;  /* ASPECTS_RULE_HAS_RESULT */
    int32_t result_errno;
    uint32_t result_checks;
    uint32_t result_arg;             /* `lt_arg` (result_checks bit 2): the group's argument index */
    uint16_t process_off, process_len, caller_off, caller_len;
    uint16_t result_off, result_len;  /* a struct result's bytes in r->strings (0 bytes: none) */
    aspects_matcher matchers[ASPECTS_MAX_MATCHERS];
    asp_glob_plan plans[ASPECTS_MAX_MATCHERS];
} asp_rule_view;

/* Which dispatch path a group's rules take (rulecache.c decides when it copies them). */
enum asp_path {
    ASP_PATH_FULL = 0,   /* anything: after advice, claims before counting, caller/process conditions */
    ASP_PATH_LEAN = 1,   /* several simple before/instead rules counted per process */
    ASP_PATH_SINGLE = 2, /* one rule with a fixed counter word: the hot path */
};

typedef struct asp_group_cache {
    uint64_t generation;            /* table generation + 1 the active copy was made at; 0 = none */
    const struct asp_rule_view *single;       /* the active copy's rule: single path, before/instead */
    const struct asp_rule_view *single_after; /* the active copy's rule: single path, after */
    uint32_t lock;                  /* 1 while one thread rebuilds the inactive copy */
    uint32_t active;                /* which of the two copies readers use */
    uint32_t count[2];
    uint32_t path[2];               /* enum asp_path of each copy */
    uint32_t pad;
    asp_rule_view views[2][ASP_CACHE_RULES];
} asp_group_cache;

int asp_view_from_slot(uint32_t slot, uint32_t group, asp_rule_view *v);
const asp_rule_view *asp_group_rules_slow(uint32_t group, uint16_t *list, uint32_t *count);
extern asp_group_cache asp_caches[ASP_ALL_GROUPS];

/* The rules of a group for this call: the cached copy when it is current (the common case:
 * two loads and a compare), else rulecache.c remakes it, or returns NULL with the raw slot
 * list in `list` for the caller to read each rule directly. */
static inline const asp_rule_view *asp_group_rules(uint32_t group, uint16_t *list, uint32_t *count) {
    if (ASP_LIKELY(group < ASP_ALL_GROUPS)) {
        asp_group_cache *c = &asp_caches[group];
        uint64_t gen = __atomic_load_n(&asp_tab.header->generation, __ATOMIC_ACQUIRE);
        if (ASP_LIKELY(__atomic_load_n(&c->generation, __ATOMIC_ACQUIRE) == gen + 1)) {
            uint32_t b = __atomic_load_n(&c->active, __ATOMIC_ACQUIRE) & 1u;
            *count = __atomic_load_n(&c->count[b], __ATOMIC_RELAXED);
            return c->views[b];
        }
    }
    return asp_group_rules_slow(group, list, count);
}
void asp_rule_caches_reset_after_fork(void);


/* ---- counters.c: counters per scope, claims, per-process statistics ---- */
typedef struct asp_local_counter {
    uint64_t serial;  /* the rule these counts belong to (asp_local_adopt resets on change) */
    uint64_t calls;
    uint64_t fired;
    uint64_t once;
} asp_local_counter;
extern asp_local_counter asp_local[ASPECTS_MAX_RULE_CAPACITY];

void asp_local_adopt(uint32_t slot, uint64_t serial);
aspects_process_stat *asp_stat_entry(uint32_t slot, uint64_t serial);
uint64_t asp_count_call_slow(const asp_rule_view *v);
int asp_claim_times(const asp_rule_view *v);
aspects_hierarchy_counter *asp_hierarchy_counter_of(aspects_rule *r); /* claimed on first use; NULL: none */
int asp_claim_once_hierarchy(aspects_rule *r);
int asp_claim_autoremove(aspects_rule *r);
void asp_counters_reset_after_fork(void);

/* A matching call, counted in the rule's scope and in the statistics: one atomic add when
 * the counter is one word (for process scope that word is the statistics entry too), else
 * the statistics word and the scope's counter (thread, or a hierarchy entry found per call).
 * Returns the call's number in the scope (0: it could not be counted, and never fires). */
static inline uint64_t asp_count_matching(const asp_rule_view *v) {
    if (ASP_LIKELY(v->counter != NULL)) {
        const uint64_t k = __atomic_add_fetch(v->counter, 1, __ATOMIC_RELAXED);
        if (v->counter != v->matched_word) __atomic_fetch_add(v->matched_word, 1, __ATOMIC_RELAXED);
        return k;
    }
    __atomic_fetch_add(v->matched_word, 1, __ATOMIC_RELAXED);
    return asp_count_call_slow(v);
}

/* The same for a call the stub already counted as number `k` in `counter` (asp_pending):
 * only what the stub did not do. Returns 0 when the stub counted for another rule (the
 * group's rules changed between the stub and here): the call is counted anew. */
static inline uint64_t asp_count_counted(const asp_rule_view *v, const uint64_t *counter, uint64_t k) {
    if (!k || counter != v->counter) return 0;
    if (v->counter != v->matched_word) __atomic_fetch_add(v->matched_word, 1, __ATOMIC_RELAXED);
    return k;
}

static inline void asp_stat_fired(const asp_rule_view *v) {
    __atomic_fetch_add(v->stat ? &v->stat->fired : &v->r->fired, 1, __ATOMIC_RELAXED);
}

/* ---- proto.c: functions advised from a rule's prototype, by rewriting GOT slots ---- */
void *asp_build_stub(uint32_t idx);   /* closures.c: the forwarding stub of any export index */
void asp_set_original(uint32_t idx, void *fn);
void asp_protos_sync(void);            /* apply/restore after the table's prototypes changed */
ffi_type *asp_proto_struct_type(uint32_t k, uint32_t arg); /* arg ASP_MAX_ARGS: the return value */
void asp_protos_maybe_sync(void);      /* the same, only if they changed since the last sync */
void asp_protos_atfork_prepare(void); /* fork waits for a running pass (the loader lock it holds) */
void asp_protos_atfork_parent(void);
void asp_protos_after_fork(void);      /* fork child: no pass is under way any more */
/* Reads lowercase hex digits at *p (as /proc/self/maps writes addresses) and moves past them. */
static inline uint64_t asp_parse_hex(const char **p) {
    uint64_t v = 0;
    for (;;) {
        const char c = **p;
        uint64_t d;
        if (c >= '0' && c <= '9') d = (uint64_t)(c - '0');
        else if (c >= 'a' && c <= 'f') d = (uint64_t)(c - 'a' + 10);
        else return v;
        v = v * 16 + d;
        (*p)++;
    }
}

/* objects.c: [*lo, *hi) the readable first-page mapping (ELF header) of the file mapped at
 * `inside`, the nearest below it; 0 when there is none (anonymous memory, maps unreadable). */
int asp_object_header(uintptr_t inside, uintptr_t *lo, uintptr_t *hi);

/* ---- identity.c: who is calling ---- */
extern uint64_t asp_hierarchy;       /* this process's hierarchy id (0 = none) */
extern uint64_t asp_image;           /* this process image's attachment number + 1 (statistics
                                        entries name it; a fork child keeps its parent's) */
int asp_process_matches(const char *pattern, size_t len);
/* 1: the object containing ip matches, 0: it does not, -1: not known this time (another
 * thread is reading /proc/self/maps). */
int asp_caller_matches(uint64_t ip, const char *pattern, size_t len);
int asp_site_matches(uint64_t ip, const char *name, size_t len, uint64_t offset); /* 1, 0, -1 not known now */
void asp_site_describe(uint64_t ip, char *name, size_t cap, uint64_t *offset);     /* for event records */
/* 1: both addresses lie in one mapped file, 0: not, -1: not known now. */
int asp_same_object(uint64_t a, uint64_t b);
void asp_identity_init(void);
void asp_identity_after_fork(void);   /* fork child: no maps read is under way any more */

/* ---- events.c ---- */
void asp_event_append(uint16_t kind, const asp_rule_view *v, uint64_t call, uint32_t idx, const uint64_t *vals, int64_t ret, int32_t err,
                      uint64_t caller);
void asp_events_init(void);


/* ---- glob.c ---- */
int asp_glob_match(const char *pattern, size_t plen, const char *s, size_t smax);
asp_glob_plan asp_glob_classify(const char *pattern, size_t plen);
/* asp_glob_match's answer for a pattern asp_glob_classify found fixed, by comparing bytes:
 * the prefix from the front (a mismatch or s's NUL ends it: the pattern has no NUL), then the
 * suffix from the back, whose last byte rejects most strings at once. Inline: it is the
 * matcher of the commonest path rules ("*.db", "/tmp/STAR"). */
static inline int asp_glob_fixed(const char *p, size_t plen, const asp_glob_plan *plan, const char *s, size_t smax) {
    const size_t prefix = plan->prefix, suffix = plan->suffix;
    for (size_t i = 0; i < prefix; i++)
        if (i >= smax || s[i] != p[i]) return 0;
    if (!plan->star) return prefix >= smax || s[prefix] == 0;
    if (!suffix) return 1;
    const size_t n = strnlen(s, smax);
    if (n < prefix + suffix) return 0;
    for (size_t j = 1; j <= suffix; j++)
        if (s[n - j] != p[plen - j]) return 0;
    return 1;
}
int asp_prefix_match(const char *prefix, size_t plen, const char *s, size_t smax);
/* A glob on a file path: against the whole path if the pattern has a '/', else the base name. */
int asp_path_glob(const char *pattern, size_t plen, const char *path, size_t max);

/* ---- sys.c: raw system calls; never calls an exported wrapper ---- */
long asp_sys_close(int fd);
long asp_sys_open_ro(const char *path);
long asp_sys_read(int fd, void *buf, size_t n);
long asp_sys_readlink(const char *path, char *buf, size_t n);
long asp_sys_fstat_size(int fd, uint64_t *size);
void *asp_sys_mmap_shared(int fd, uint64_t size);
void asp_sys_munmap(void *p, uint64_t size);
uint32_t asp_sys_geteuid(void);
uint32_t asp_sys_getpid(void);
uint32_t asp_sys_getppid(void);
uint32_t asp_sys_gettid(void);
uint64_t asp_sys_realtime_ns(void);
void asp_sys_sleep_ns(uint64_t ns);
void asp_sys_raise(int sig);
void asp_debug(const char *a, const char *b, const char *c);
extern int asp_debug_enabled;
void asp_strict_say(const char *a, const char *b, const char *c); /* once, with ASPECTS_STRICT */
extern int asp_strict_enabled;
void asp_identity_register(void); /* identity.c: this process's attachment record */
extern uint32_t asp_pid;     /* cached getpid(), refreshed in the fork child */

#endif
