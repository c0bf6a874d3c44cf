/* identity.c — who is calling: the process hierarchy, the program, and the object that made
 * an advised call. Everything the hot path asks here is answered from process memory with no
 * lock and no allocation; the caches are filled with raw system calls only (async-signal-safe).
 *
 * Hierarchy: a root process and all its descendants share one id. It travels to exec'd
 * children in ASPECTS_HIERARCHY ("<table creation time>:<id>", so an id of another table is
 * not taken), and to forked children in memory. A process without a valid one becomes a root:
 * it takes a new id from the table and exports it. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include "glob.h"
#include "identity.h"
#include "sys.h"
#include "table.h"
#include "thread.h"

uint64_t asp_hierarchy;

static char asp_exe[4096];
static size_t asp_exe_len;

static int asp_parse_u64(const char *s, const char **end, uint64_t *out) {
    uint64_t v = 0;
    const char *p = s;
    if (*p < '0' || *p > '9') return 0;
    while (*p >= '0' && *p <= '9') {
        if (v > (UINT64_MAX - 9) / 10) return 0;
        v = v * 10 + (uint64_t)(*p++ - '0');
    }
    *out = v;
    *end = p;
    return 1;
}

static size_t asp_format_u64(char *out, uint64_t v) {
    char tmp[24];
    size_t n = 0;
    do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    for (size_t i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    return n;
}

/* Called from the constructor once the table is attached (setenv allocates: not signal-safe,
 * but the constructor runs before the program's code). */
void asp_identity_init(void) {
    long n = asp_sys_readlink("/proc/self/exe", asp_exe, sizeof asp_exe - 1);
    asp_exe_len = n > 0 ? (size_t)n : 0;
    asp_exe[asp_exe_len] = 0;

    uint64_t created = asp_tab.header->created_ns;
    const char *env = getenv("ASPECTS_HIERARCHY");
    uint64_t t = 0, id = 0;
    const char *p;
    if (env && asp_parse_u64(env, &p, &t) && *p == ':' && asp_parse_u64(p + 1, &p, &id) && *p == 0 && t == created && id) {
        asp_hierarchy = id;
        return;
    }
    asp_hierarchy = __atomic_add_fetch(&asp_tab.header->next_hierarchy, 1, __ATOMIC_RELAXED);
    char value[64];
    size_t len = asp_format_u64(value, created);
    value[len++] = ':';
    len += asp_format_u64(value + len, asp_hierarchy);
    value[len] = 0;
    setenv("ASPECTS_HIERARCHY", value, 1);
}

/* From /proc/<pid>/stat (path): starttime (field 22, clock ticks since boot), which with the
 * pid names a process and no later one that reuses the pid, and the state letter (field 3).
 * 0 if it cannot be read. */
static int asp_proc_stat(const char *path, uint64_t *ticks, char *state) {
    char buf[1024];
    long fd = asp_sys_open_ro(path);
    if (fd < 0) return 0;
    long n = asp_sys_read((int)fd, buf, sizeof buf - 1);
    asp_sys_close((int)fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    /* after the command name's closing parenthesis (the name may hold spaces and parens) */
    const char *p = NULL;
    for (long i = n - 1; i >= 0; i--) if (buf[i] == ')') { p = buf + i + 1; break; }
    if (!p) return 0;
    while (*p == ' ') p++;
    *state = *p;
    for (int field = 3; field < 22 && *p; field++) { /* skip fields 3 ("state") to 21 */
        while (*p == ' ') p++;
        while (*p && *p != ' ') p++;
    }
    while (*p == ' ') p++;
    const char *end;
    return asp_parse_u64(p, &end, ticks);
}

static uint64_t asp_start_ticks(void) {
    uint64_t ticks = 0;
    char state;
    return asp_proc_stat("/proc/self/stat", &ticks, &state) ? ticks : 0;
}

/* Whether the process an attachment record names still runs: its pid, started at the
 * recorded time, not a zombie. */
static int asp_process_runs(uint32_t pid, uint64_t start_ticks) {
    char path[32] = "/proc/";
    size_t n = 6 + asp_format_u64(path + 6, pid);
    const char *tail = "/stat";
    while (*tail) path[n++] = *tail++;
    path[n] = 0;
    uint64_t ticks = 0;
    char state = 0;
    if (!asp_proc_stat(path, &ticks, &state)) return 0;
    return state != 'Z' && state != 'X' && (!start_ticks || ticks == start_ticks);
}

/* This process's record among the table's attachments (aspects_abi.h): who attached, so that
 * `run` can tell a run in which nothing attached from one in which nothing fired. */
uint64_t asp_image;
static uint64_t asp_image_attached_ns; /* the record's attached_ns: tells it from a later one in its ring slot */

static aspects_attachment *asp_own_attachment(uint64_t image) {
    return (aspects_attachment *)(asp_tab.base + aspects_attachments_offset(
        asp_tab.group_capacity, asp_tab.rule_capacity, asp_tab.event_capacity, asp_tab.stat_capacity)) + ((image - 1) % ASPECTS_ATTACH_CAPACITY);
}

void asp_identity_register(void) {
    const uint64_t i = __atomic_fetch_add(&asp_tab.header->attach_head, 1, __ATOMIC_RELAXED);
    asp_image = i + 1;
    aspects_attachment *a = (aspects_attachment *)(asp_tab.base + aspects_attachments_offset(
        asp_tab.group_capacity, asp_tab.rule_capacity, asp_tab.event_capacity, asp_tab.stat_capacity)) + (i % ASPECTS_ATTACH_CAPACITY);
    uint32_t s = __atomic_load_n(&a->seq, __ATOMIC_RELAXED);
    __atomic_store_n(&a->seq, s | 1u, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    a->pid = asp_pid;
    a->ppid = asp_sys_getppid();
    a->uid = asp_sys_geteuid();
    a->hierarchy = asp_hierarchy;
    a->attached_ns = asp_sys_realtime_ns();
    asp_image_attached_ns = a->attached_ns;
    a->start_ticks = asp_start_ticks();
    /* the end of the path is the part that names the program */
    const size_t cap = sizeof a->program - 1, from = asp_exe_len > cap ? asp_exe_len - cap : 0;
    size_t k = 0;
    for (size_t j = from; j < asp_exe_len; j++) a->program[k++] = asp_exe[j];
    a->program[k] = 0;
    __atomic_store_n(&a->seq, (s | 1u) + 1u, __ATOMIC_RELEASE);
}

/* Not in a fork child that did not exec (the record is its parent's), nor once the ring has
 * given the slot to a later process. */
void asp_identity_note_stub_failure(uint32_t idx) {
    if (!asp_tab.attached || !asp_image) return;
    aspects_attachment *a = asp_own_attachment(asp_image);
    if (__atomic_load_n(&a->pid, __ATOMIC_RELAXED) != asp_pid ||
        __atomic_load_n(&a->attached_ns, __ATOMIC_RELAXED) != asp_image_attached_ns) return;
    uint32_t none = 0;
    __atomic_compare_exchange_n(&a->stub_failed_export, &none, idx + 1u, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    __atomic_fetch_add(&a->stub_failures, 1u, __ATOMIC_RELEASE);
}

/* This process image's prototype pass applied the header's proto_generation `generation`:
 * what `add` waits for on a --live-prototypes table (watch.c). Only while the ring slot is
 * still this image's own. */
void asp_identity_note_protos_applied(uint64_t generation) {
    if (!asp_tab.attached || !asp_image) return;
    aspects_attachment *a = asp_own_attachment(asp_image);
    if (__atomic_load_n(&a->pid, __ATOMIC_RELAXED) != asp_pid ||
        __atomic_load_n(&a->attached_ns, __ATOMIC_RELAXED) != asp_image_attached_ns) return;
    __atomic_store_n(&a->protos_applied, generation + 1u, __ATOMIC_RELEASE);
}

/* Whether hierarchy `id` may still have a process: the attachments ring holds a record of
 * it whose process runs, or none at all (the ring has moved past its processes, which may
 * well run on: never taken for ended). A fork child that did not exec has no record of its
 * own: one that outlives every recorded process of its hierarchy is not seen. For reusing a
 * hierarchy's entries in rule slots (counters.c): not a hot path, a ring scan and a /proc
 * read per record of it. A record being written is skipped (its process is the child of a
 * running one, which the ring holds, or a root of a new hierarchy). */
int asp_hierarchy_alive(uint64_t id) {
    const uint64_t head = __atomic_load_n(&asp_tab.header->attach_head, __ATOMIC_ACQUIRE);
    const uint64_t from = head > ASPECTS_ATTACH_CAPACITY ? head - ASPECTS_ATTACH_CAPACITY : 0;
    const aspects_attachment *ring = (const aspects_attachment *)(asp_tab.base + aspects_attachments_offset(
        asp_tab.group_capacity, asp_tab.rule_capacity, asp_tab.event_capacity, asp_tab.stat_capacity));
    int recorded = 0;
    for (uint64_t i = from; i < head; i++) {
        const aspects_attachment *a = &ring[i % ASPECTS_ATTACH_CAPACITY];
        const uint32_t s1 = __atomic_load_n(&a->seq, __ATOMIC_ACQUIRE);
        const uint64_t h = __atomic_load_n(&a->hierarchy, __ATOMIC_RELAXED);
        const uint32_t pid = __atomic_load_n(&a->pid, __ATOMIC_RELAXED);
        const uint64_t ticks = __atomic_load_n(&a->start_ticks, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if ((s1 & 1u) || __atomic_load_n(&a->seq, __ATOMIC_RELAXED) != s1 || h != id) continue;
        recorded = 1;
        if (asp_process_runs(pid, ticks)) return 1;
    }
    return !recorded;
}

int asp_process_matches(const char *pattern, size_t len) {
    return asp_exe_len && asp_path_glob(pattern, len, asp_exe, asp_exe_len);
}

/* ---- caller: /proc/self/maps, cached ---------------------------------------------------- */

#define ASP_MAPS_MAX 1024
#define ASP_MAPS_NAMES (64 * 1024)

typedef struct asp_mapping {
    uint64_t start, end;
    uint64_t file_offset;   /* of `start` in the file: sites are offsets in the file */
    uint32_t name_off, name_len;
    uint32_t base;          /* where the file's own name starts in its path (after the last '/') */
    uint32_t pad;
} asp_mapping;

/* Two copies: a reload fills the one readers are not using and then publishes it, so a
 * reader never waits for a reload while the published copy has its answer. Each copy is a
 * seqlock (odd `seq` while it is filled): a reader that outlives two reloads finds its copy's
 * sequence changed and answers "not known" rather than read a half-written one. */
typedef struct asp_maps_copy {
    uint32_t seq;
    uint32_t count;
    asp_mapping maps[ASP_MAPS_MAX];
    char names[ASP_MAPS_NAMES];
} asp_maps_copy;
static asp_maps_copy asp_maps_copies[2];
static asp_maps_copy *asp_maps_current;  /* the complete copy (atomic), NULL before the first */
static uint64_t asp_maps_loads;          /* copies published so far (the site memo's generation) */
static uint32_t asp_maps_state;    /* 0 empty, 2 ready, odd while being read: (reader's tid << 2) | 1 */
static uint32_t asp_maps_reloads;  /* bounded: JIT code matches no file, and must not cost a reload per call */
static uint64_t asp_maps_started;  /* reads begun so far: names the one under way */
static uint64_t asp_maps_abandoned;/* a read given up waiting for (its asp_maps_started) */

static int asp_maps_being_read(uint32_t state) { return (state & 1u) != 0; }

/* Reads the executable mappings with their file names. One reader at a time: a concurrent
 * caller waits for it (asp_maps_settled). */
static void asp_maps_load(void) {
    uint32_t expected = __atomic_load_n(&asp_maps_state, __ATOMIC_RELAXED);
    if (asp_maps_being_read(expected)) return;
    const uint32_t reading = asp_sys_gettid() << 2 | 1u;
    if (!__atomic_compare_exchange_n(&asp_maps_state, &expected, reading, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return;
    __atomic_fetch_add(&asp_maps_started, 1, __ATOMIC_RELEASE);
    asp_maps_copy *const cur = __atomic_load_n(&asp_maps_current, __ATOMIC_RELAXED);
    asp_maps_copy *const into = cur == &asp_maps_copies[0] ? &asp_maps_copies[1] : &asp_maps_copies[0];
    const uint32_t seq = __atomic_load_n(&into->seq, __ATOMIC_RELAXED);
    __atomic_store_n(&into->seq, seq | 1u, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    asp_mapping *const asp_maps = into->maps;
    char *const asp_map_names = into->names;
    int saved = errno;
    long fd = asp_sys_open_ro("/proc/self/maps");
    uint32_t count = 0, names = 0;
    if (fd >= 0) {
        /* static: one loader at a time, and no 20 KB on a signal handler's stack */
        static char buf[16384];
        static char line[4608];
        size_t ll = 0;
        long n;
        while ((n = asp_sys_read((int)fd, buf, sizeof buf)) > 0) {
            for (long i = 0; i < n; i++) {
                char c = buf[i];
                if (c != '\n') { if (ll < sizeof line - 1) line[ll++] = c; continue; }
                line[ll] = 0;
                /* start-end perms offset dev inode path */
                const char *p = line;
                uint64_t start = asp_parse_hex(&p);
                if (*p == '-') p++;
                uint64_t end = asp_parse_hex(&p);
                while (*p == ' ') p++;
                int exec = p[0] && p[1] && p[2] == 'x';
                while (*p && *p != ' ') p++; /* perms */
                while (*p == ' ') p++;
                const uint64_t file_offset = asp_parse_hex(&p);
                while (*p == ' ') p++;
                int fields = 0; /* dev, inode */
                while (*p && fields < 2) { while (*p && *p != ' ') p++; while (*p == ' ') p++; fields++; }
                size_t len = 0;
                while (p[len]) len++;
                if (exec && len && p[0] == '/' && count < ASP_MAPS_MAX && names + len + 1 <= ASP_MAPS_NAMES) {
                    for (size_t k = 0; k < len; k++) asp_map_names[names + k] = p[k];
                    asp_map_names[names + len] = 0;
                    asp_maps[count].start = start;
                    asp_maps[count].end = end;
                    asp_maps[count].file_offset = file_offset;
                    asp_maps[count].name_off = names;
                    asp_maps[count].name_len = (uint32_t)len;
                    uint32_t base = 0;
                    for (size_t k = 0; k < len; k++)
                        if (p[k] == '/') base = (uint32_t)k + 1;
                    asp_maps[count].base = base;
                    names += (uint32_t)len + 1;
                    count++;
                }
                ll = 0;
            }
        }
        asp_sys_close((int)fd);
    }
    into->count = count;
    __atomic_store_n(&into->seq, (seq | 1u) + 1u, __ATOMIC_RELEASE);
    __atomic_fetch_add(&asp_maps_loads, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&asp_maps_current, into, __ATOMIC_RELEASE);
    __atomic_store_n(&asp_maps_state, 2, __ATOMIC_RELEASE);
    errno = saved;
}

/* Waits while another thread reads the maps: a caller condition decided "not known" would
 * leave the call unadvised, and then a thread that starts with the other's first read
 * misses every call it makes while that read lasts (issue #20, 7). Never for a read of this
 * very thread (a signal handler arrived in the middle of it: it cannot end before the
 * handler does), and not for ever: a read that has not ended after about a second (its
 * thread stopped, or left by longjmp) is given up, by this wait and every later one.
 * 1: the maps are ready. */
static int asp_maps_settled(void) {
    const uint64_t started = __atomic_load_n(&asp_maps_started, __ATOMIC_ACQUIRE);
    for (uint32_t waits = 0;; waits++) {
        const uint32_t state = __atomic_load_n(&asp_maps_state, __ATOMIC_ACQUIRE);
        if (!asp_maps_being_read(state)) return state == 2;
        if (state >> 2 == (asp_sys_gettid() & 0x3fffffffu)) return 0;
        if (__atomic_load_n(&asp_maps_abandoned, __ATOMIC_RELAXED) == started) return 0;
        if (waits == 20000u) {
            __atomic_store_n(&asp_maps_abandoned, started, __ATOMIC_RELAXED);
            return 0;
        }
        const int saved = errno;
        asp_sys_sleep_ns(50000);
        errno = saved;
    }
}

/* The copy to read, loading it first if no thread has (NULL: not known now), and its sequence
 * as seen before reading (asp_maps_unchanged). */
static const asp_maps_copy *asp_maps_ready(uint32_t *seq) {
    if (__atomic_load_n(&asp_maps_state, __ATOMIC_ACQUIRE) == 0) asp_maps_load();
    const asp_maps_copy *c = __atomic_load_n(&asp_maps_current, __ATOMIC_ACQUIRE);
    if (!c) {
        if (!asp_maps_settled()) return NULL;
        c = __atomic_load_n(&asp_maps_current, __ATOMIC_ACQUIRE);
        if (!c) return NULL;
    }
    *seq = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
    return (*seq & 1u) ? NULL : c;
}

/* Whether what was read from copy c is what its sequence `seq` promised (no reload wrote it). */
static int asp_maps_unchanged(const asp_maps_copy *c, uint32_t seq) {
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return __atomic_load_n(&c->seq, __ATOMIC_RELAXED) == seq;
}

/* The mapping holding ip: a binary search, since /proc/self/maps lists mappings in address
 * order (a program with hundreds of libraries asks this on every firing's event). */
static const asp_mapping *asp_maps_find(const asp_maps_copy *c, uint64_t ip) {
    if (!c) return NULL;
    uint32_t lo = 0, hi = c->count < ASP_MAPS_MAX ? c->count : ASP_MAPS_MAX;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2u;
        const asp_mapping *m = &c->maps[mid];
        if (ip < m->start) hi = mid;
        else if (ip >= m->end) lo = mid + 1u;
        else return m;
    }
    return NULL;
}

/* The mapping holding ip in the copy asp_maps_ready gives (*copy, *seq), reading the maps
 * again once for an address the copy lacks (a library dlopened since the last read); NULL
 * when not known now. */
static const asp_mapping *asp_maps_lookup(uint64_t ip, const asp_maps_copy **copy, uint32_t *seq) {
    if (!ip) return NULL;
    const asp_maps_copy *c = asp_maps_ready(seq);
    const asp_mapping *m = asp_maps_find(c, ip);
    if (c && !m && __atomic_add_fetch(&asp_maps_reloads, 1, __ATOMIC_RELAXED) <= 32) {
        asp_maps_load();
        if (!asp_maps_settled()) return NULL;
        c = asp_maps_ready(seq);
        m = asp_maps_find(c, ip);
    }
    *copy = c;
    return m;
}

int asp_caller_matches(uint64_t ip, const char *pattern, size_t len) {
    if (!ip) return 0;
    const asp_maps_copy *c = NULL;
    uint32_t seq = 0;
    const asp_mapping *m = asp_maps_lookup(ip, &c, &seq);
    if (!c) return -1;
    if (!m) return asp_maps_unchanged(c, seq) ? 0 : -1;
    uint32_t off = m->name_off, nlen = m->name_len;
    if (off >= ASP_MAPS_NAMES || nlen > ASP_MAPS_NAMES - off) return -1;
    const int ok = asp_path_glob(pattern, len, c->names + off, nlen);
    return asp_maps_unchanged(c, seq) ? ok : -1;
}

/* The mapping of `ip` as a caller condition finds it; NULL when not known now. *name and
 * *len are its file name without the directory, in *copy, read at *seq. */
static const asp_mapping *asp_site_of(uint64_t ip, const char **name, uint32_t *len, const asp_maps_copy **copy, uint32_t *seq) {
    const asp_maps_copy *c = NULL;
    const asp_mapping *m = asp_maps_lookup(ip, &c, seq);
    if (!m) return NULL;
    uint32_t off = m->name_off, nlen = m->name_len, base = m->base;
    if (off >= ASP_MAPS_NAMES || nlen > ASP_MAPS_NAMES - off || base > nlen) return NULL;
    *name = c->names + off + base;
    *len = nlen - base;
    *copy = c;
    return m;
}

/* Whether the call returning to `ip` comes from `offset` in the file named `name` (no
 * directory): 1 yes, 0 no, -1 not known now. The `site` condition: explore's reproducers name
 * one call site so that other calls of the function, from anywhere, leave its count alone. */
int asp_site_matches(uint64_t ip, const char *name, size_t len, uint64_t offset) {
    const char *n;
    uint32_t nl, seq;
    const asp_maps_copy *c;
    const asp_mapping *m = asp_site_of(ip, &n, &nl, &c, &seq);
    if (!m) return -1;
    int ok = ip - m->start + m->file_offset == offset && nl == len;
    for (uint32_t i = 0; ok && i < nl; i++) ok = n[i] == name[i];
    return asp_maps_unchanged(c, seq) ? ok : -1;
}

int asp_context_fold(uint64_t ip, uint64_t *hash) {
    const char *n;
    uint32_t nl, seq;
    const asp_maps_copy *c;
    const asp_mapping *m = asp_site_of(ip, &n, &nl, &c, &seq);
    if (!m) return 0;
    const uint64_t h = aspects_context_hash_frame(*hash, n, nl, ip - m->start + m->file_offset);
    if (!asp_maps_unchanged(c, seq)) return 0;
    *hash = h;
    return 1;
}

uint64_t asp_maps_generation(void) { return __atomic_load_n(&asp_maps_loads, __ATOMIC_ACQUIRE); }

int asp_in_code(uint64_t ip) {
    const char *n;
    uint32_t nl, seq;
    const asp_maps_copy *c;
    return asp_site_of(ip, &n, &nl, &c, &seq) != NULL && asp_maps_unchanged(c, seq);
}

/* The site of the call returning to `ip` for an event record: the file name (no directory,
 * cut to fit, NUL-terminated) and the offset in it; "" and 0 when not known. */
/* The last site this thread described, as an event stores it: a rule that fires in a loop
 * fires from one place, and the lookup and the name's copy are then one compare and a block
 * copy. Valid while no reload of the maps happened (an object may have moved). Written ip last,
 * after a zero: a signal handler on this thread that describes a site meanwhile misses it. */
typedef struct asp_site_memo {
    uint64_t ip;
    uint64_t loads;
    uint64_t offset;
    char name[ASPECTS_EVENT_CALLER_SIZE];
} asp_site_memo;
static ASP_TLS asp_site_memo asp_last_site;

void asp_site_describe(uint64_t ip, char *name, size_t cap, uint64_t *offset) {
    asp_site_memo *memo = &asp_last_site;
    if (cap == sizeof memo->name && ip && __atomic_load_n(&memo->ip, __ATOMIC_RELAXED) == ip &&
        memo->loads == __atomic_load_n(&asp_maps_loads, __ATOMIC_ACQUIRE)) {
        __builtin_memcpy(name, memo->name, sizeof memo->name);
        *offset = memo->offset;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (__atomic_load_n(&memo->ip, __ATOMIC_RELAXED) == ip) return;
    }
    const char *n;
    uint32_t nl, seq;
    const asp_maps_copy *c;
    const asp_mapping *m = cap ? asp_site_of(ip, &n, &nl, &c, &seq) : NULL;
    *offset = 0;
    if (!cap) return;
    __builtin_memset(name, 0, cap);
    if (!m) return;
    size_t k = nl < cap - 1 ? nl : cap - 1;
    for (size_t i = 0; i < k; i++) name[i] = n[i];
    *offset = ip - m->start + m->file_offset;
    if (!asp_maps_unchanged(c, seq)) { /* a reload wrote the copy meanwhile: not known */
        __builtin_memset(name, 0, cap);
        *offset = 0;
        return;
    }
    if (cap != sizeof memo->name) return;
    __atomic_store_n(&memo->ip, 0, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __builtin_memcpy(memo->name, name, sizeof memo->name);
    memo->offset = *offset;
    memo->loads = __atomic_load_n(&asp_maps_loads, __ATOMIC_ACQUIRE);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&memo->ip, ip, __ATOMIC_RELAXED);
}

/* 1: addresses a and b lie in one mapped file, 0: they do not, -1: not known now (the maps
 * are being read, or an address lies in no file mapping we know). Async-signal-safe. */
int asp_same_object(uint64_t a, uint64_t b) {
    const asp_maps_copy *c = NULL;
    uint32_t seq = 0;
    const asp_mapping *ma = asp_maps_lookup(a, &c, &seq), *mb = c ? asp_maps_find(c, b) : NULL;
    if (!ma || !mb) return -1;
    int same = ma == mb;
    uint32_t ao = ma->name_off, al = ma->name_len, bo = mb->name_off, bl = mb->name_len;
    if (!same) {
        if (ao >= ASP_MAPS_NAMES || al > ASP_MAPS_NAMES - ao || bo >= ASP_MAPS_NAMES || bl > ASP_MAPS_NAMES - bo) return -1;
        same = al == bl;
        for (uint32_t i = 0; same && i < al; i++) same = c->names[ao + i] == c->names[bo + i];
    }
    return asp_maps_unchanged(c, seq) ? same : -1;
}

/* In a fork child only the forking thread exists: a /proc/self/maps read that another thread
 * had under way will never finish, and its half-filled cache must not stay "being read"
 * (caller conditions would be unknown forever). The child has the parent's mappings: a cache
 * that was complete stays valid. */
void asp_identity_after_fork(void) {
    if (asp_maps_being_read(__atomic_load_n(&asp_maps_state, __ATOMIC_RELAXED))) __atomic_store_n(&asp_maps_state, 0, __ATOMIC_RELEASE);
}
