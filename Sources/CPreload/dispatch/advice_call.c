/* advice_call.c — advice as code: loading the objects `call` rules name, and the C API of
 * aspects_advice.h over the invocation, a view of the call record (call.h) the full path (dispatch_full.c) makes.
 *
 * When objects are loaded. dlopen takes the loader's lock and allocates, so it must not run
 * where a signal handler interrupted malloc or the loader: a first firing may come from just
 * there. Hence:
 *   - at attach (start-up, our constructor), every object named by a `call` rule of the table
 *     for this program is loaded, and each rule's function looked up;
 *   - after the table changed, the first full-path call that is a safe place loads the objects
 *     of new rules; a firing whose function is not there yet loads it itself when it is a safe
 *     place;
 *   - a safe place is a call made outside the program's own dlopen, and either of a function
 *     that is not async-signal-safe (the catalog's `signal-unsafe`: a correct program never
 *     calls malloc or getaddrinfo in a handler) or on a thread that blocks no signal (inside a
 *     handler its own signal is blocked, unless the program asked for SA_NODEFER);
 *   - anywhere else a firing whose function is not loaded records an `unavailable` event
 *     (ASPECTS_ADVICE_NOT_LOADED_HERE) and the call goes on without it. It never waits there.
 * Which object is loaded (aspects_object_open, the rule shared with aspectctl): a table others
 * can write (shared with a group) lets them add rules, and a `call` rule runs code; root's
 * processes must not run code others could change either. So in such a table, and in every
 * process of root, only an object no one but this process's user or root could have changed is
 * loaded, by an absolute path without symbolic links; a member can make us run our own advice,
 * not theirs. Everywhere, the object is opened once (O_PATH: a FIFO put in its place does not
 * block), must be a regular file, and is loaded from that descriptor (/proc/self/fd/N): a name
 * looked up twice could be renamed in between. A bare name (searched for by the loader) is
 * loaded as such only from a user's own table.
 * An object is loaded once per process (RTLD_NOW | RTLD_LOCAL: its own symbols stay out of the
 * program's scope, and an unresolvable one fails now, not mid-call), and checked to have been
 * built with this major version of aspects_advice.h; a rule's function, and that version word,
 * must be the object's own definitions (dlsym also searches the object's dependencies: libc's
 * `abort` is no advice). Failures are kept per rule, so a broken rule costs one attempt, and a
 * new rule naming the same object tries again.
 *
 * The API functions are libaspects.so's exports (default visibility) and touch only the
 * record: no locks, no allocation, async-signal-safe. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "advice_call.h"
#include "aspects_trust.h"
#include "table.h"

#define ASP_API __attribute__((visibility("default")))
#define ASP_ADVICE_OBJECTS 32 /* distinct advice objects one process loads */
#define ASP_ADVICE_OBJECTS_TEXT_(n) #n
#define ASP_ADVICE_OBJECTS_TEXT(n) ASP_ADVICE_OBJECTS_TEXT_(n)
#define ASP_ADVICE_LIMIT ASP_ADVICE_OBJECTS_TEXT(ASP_ADVICE_OBJECTS) /* the number, in messages */

typedef struct asp_advice_object {
    void *handle;           /* the loaded object (kept loaded: its constructors ran) */
    uint32_t why;           /* 0: usable; else why not (enum aspects_advice_unavailable) */
    uint32_t used;
    uint64_t tried_serial;  /* the rule whose attempt `why` records: another rule tries anew */
    char path[ASPECTS_RULE_STRINGS_SIZE];
} asp_advice_object;

/* What a rule slot's `call` resolved to, for the rule of that serial. Written under the lock
 * (serial 0 first, then the answer, then the serial with release); read without it. */
typedef struct asp_advice_entry {
    uint64_t serial;
    aspects_advice_function fn;
    uint32_t why;
    uint32_t pad;
} asp_advice_entry;

static asp_advice_object asp_advice_objects[ASP_ADVICE_OBJECTS];
static asp_advice_entry asp_advice_entries[ASPECTS_MAX_RULE_CAPACITY];
/* Recursive: an advice object's constructor may fork, and our fork handler takes the lock. */
static pthread_mutex_t asp_advice_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static uint64_t asp_advice_seen;  /* table generation + 1 whose `call` rules were last looked at */

/* ---- the rule's target, from its slot ---- */

typedef struct asp_call_target {
    uint64_t serial;
    char object[ASPECTS_RULE_STRINGS_SIZE];
    char function[ASPECTS_RULE_STRINGS_SIZE];
    uint32_t flags;
    uint16_t process_off, process_len;
} asp_call_target;

/* Copies one of the slot's strings out, NUL-terminated; 0 when it does not lie inside them. */
static int asp_copy_slot_string(const aspects_rule *r, uint32_t off, uint32_t len, char *out) {
    if (len == 0 || off >= ASPECTS_RULE_STRINGS_SIZE || len >= ASPECTS_RULE_STRINGS_SIZE - off) return 0;
    for (uint32_t i = 0; i < len; i++) {
        const char c = r->strings[off + i];
        if (!c) return 0;
        out[i] = c;
    }
    out[len] = 0;
    return 1;
}

/* 1: a live `call` rule, read whole; 0: none in this slot now; -1: its target is damaged. */
static int asp_call_target_of(uint32_t slot, asp_call_target *t) {
    if (slot >= asp_tab.rule_capacity) return 0;
    const aspects_rule *r = &asp_tab.rules[slot];
    const uint32_t s1 = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE);
    if (s1 & 1u) return 0;
    if (!aspects_rule_live(__atomic_load_n(&r->state, __ATOMIC_RELAXED), r->batch,
                           __atomic_load_n(&asp_tab.header->committed_batch, __ATOMIC_ACQUIRE))) return 0;
    if (!(r->actions & ASPECTS_ACTION_CALL)) return 0;
    t->serial = r->serial;
    t->flags = r->flags;
    t->process_off = r->process_off;
    t->process_len = r->process_len;
    const int whole = asp_copy_slot_string(r, r->call_off, r->call_len, t->object) &&
                      asp_copy_slot_string(r, r->call_fn_off, r->call_fn_len, t->function);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&r->seq, __ATOMIC_RELAXED) != s1) return 0;
    if ((uint32_t)t->process_off + t->process_len > ASPECTS_RULE_STRINGS_SIZE) return -1;
    return whole ? 1 : -1;
}

/* ---- loading (under asp_advice_lock, at a safe place, in a SEALED frame: thread.h) ---- */

/* Why an object at `path` is refused ("not loaded: /dir is writable by group or others ..."),
 * under ASPECTS_DEBUG: the component the verdict is about, and what would make it loadable. */
static void asp_advice_refused(const char *path, int verdict, uint32_t at) {
    char text[ASPECTS_RULE_STRINGS_SIZE + 320];
    size_t n = 0;
    const char *parts[4] = {"not loaded: ", NULL, " ", aspects_trust_text(verdict)};
    for (int p = 0; p < 4; p++) {
        if (p == 1) {
            for (uint32_t i = 0; i < at && path[i] && n + 1 < sizeof text; i++) text[n++] = path[i];
            if (at == 0 && n + 1 < sizeof text) text[n++] = '/';
            continue;
        }
        for (const char *c = parts[p]; *c && n + 1 < sizeof text; c++) text[n++] = *c;
    }
    const char *why = verdict == ASPECTS_TRUST_OWNER || verdict == ASPECTS_TRUST_MODE
        ? " (the table is shared with a group, or this process is root's: only code no one but this user or root could change is run)"
        : verdict == ASPECTS_TRUST_SYMLINK ? " (the table is shared with a group, or this process is root's: name the object by its real path)"
        : verdict == ASPECTS_TRUST_BAD_PATH ? " (the table is shared with a group, or this process is root's: name the object by an absolute path)"
        : "";
    for (; *why && n + 1 < sizeof text; why++) text[n++] = *why;
    text[n] = 0;
    asp_debug("advice object", path, text);
}

/* Whether `name` is already the name of a loaded object: the loader would hand that one back
 * for it without opening anything (it matches names first). */
static int asp_name_is_loaded(struct dl_phdr_info *info, size_t size, void *name) {
    (void)size;
    return info->dlpi_name && strcmp(info->dlpi_name, (const char *)name) == 0;
}

/* Loads the object of a `call` rule: opened and checked once (aspects_object_open), then
 * dlopened by the name of that descriptor, so the inode checked is the inode loaded. 0 and the
 * handle, or why not (enum aspects_advice_unavailable). */
static uint32_t asp_advice_load(const char *path, void **handle) {
    const uint32_t euid = asp_sys_geteuid();
    const int guarded = asp_tab.shared || euid == 0;
    typedef void *(*dlopen_fn)(const char *, int);
    dlopen_fn real_dlopen = (dlopen_fn)asp_original(ASP_EXPORT_DLOPEN);
    if (!real_dlopen) return ASPECTS_ADVICE_LOAD_FAILED;
    if (!guarded && !strchr(path, '/')) {
        /* a bare name, in a user's own table: the loader's search, as the user asked */
        *handle = real_dlopen(path, RTLD_NOW | RTLD_LOCAL);
    } else {
        int fd = -1;
        uint32_t at = 0;
        const int verdict = aspects_object_open(path, euid, guarded, &fd, &at);
        if (verdict != ASPECTS_TRUST_OK) {
            asp_advice_refused(path, verdict, at);
            return verdict == ASPECTS_TRUST_OWNER || verdict == ASPECTS_TRUST_MODE || verdict == ASPECTS_TRUST_SYMLINK
                   || verdict == ASPECTS_TRUST_BAD_PATH ? ASPECTS_ADVICE_UNTRUSTED : ASPECTS_ADVICE_LOAD_FAILED;
        }
        /* a descriptor number another loaded object was opened by is taken by a fresh one */
        char name[ASPECTS_FD_PATH_SIZE];
        aspects_fd_path(fd, name);
        for (int tries = 0; tries < 8 && dl_iterate_phdr(asp_name_is_loaded, name); tries++) {
            const long again = syscall(SYS_fcntl, (long)fd, (long)F_DUPFD_CLOEXEC, (long)fd + 1);
            asp_sys_close(fd);
            fd = (int)again;
            if (fd < 0) break;
            aspects_fd_path(fd, name);
        }
        *handle = fd >= 0 ? real_dlopen(name, RTLD_NOW | RTLD_LOCAL) : NULL;
        if (fd >= 0) asp_sys_close(fd);
        if (!*handle && syscall(SYS_faccessat, (long)AT_FDCWD, "/proc/self/fd", (long)F_OK, 0L) != 0) {
            asp_debug("advice object", path, "not loaded: /proc is not mounted, and an object is loaded only from the descriptor it was checked by (/proc/self/fd)");
            return ASPECTS_ADVICE_LOAD_FAILED;
        }
    }
    if (!*handle) {
        const char *message = dlerror();
        asp_debug("advice object", path, message ? message : "cannot be loaded");
        return ASPECTS_ADVICE_LOAD_FAILED;
    }
    return 0;
}

/* `name` as the object `h` itself defines it, or NULL: dlsym on a handle also searches the
 * object's dependencies (libc's `abort`, `clearenv`), which are no advice. */
static void *asp_advice_own_symbol(void *h, const char *name) {
    void *p = dlsym(h, name);
    struct link_map *own = NULL, *found = NULL;
    Dl_info info;
    if (!p || dlinfo(h, RTLD_DI_LINKMAP, &own) != 0 || !dladdr1(p, &info, (void **)&found, RTLD_DL_LINKMAP)) return NULL;
    return own && found == own ? p : NULL;
}

static void *asp_advice_open(const char *path, uint64_t serial, uint32_t *why) {
    asp_advice_object *o = NULL;
    for (uint32_t i = 0; i < (uint32_t)ASP_ADVICE_OBJECTS && !o; i++)
        if (asp_advice_objects[i].used && strcmp(asp_advice_objects[i].path, path) == 0) o = &asp_advice_objects[i];
    if (o && (o->why == 0 || o->tried_serial == serial)) {
        *why = o->why;
        return o->why ? NULL : o->handle;
    }
    for (uint32_t i = 0; i < (uint32_t)ASP_ADVICE_OBJECTS && !o; i++)
        if (!asp_advice_objects[i].used) o = &asp_advice_objects[i];
    if (!o) {
        asp_debug("advice object", path,
                  "not loaded: this process has loaded " ASP_ADVICE_LIMIT
                  " advice objects already");
        *why = ASPECTS_ADVICE_TOO_MANY;
        return NULL;
    }
    if (!o->used) {
        memcpy(o->path, path, strlen(path) + 1);
        o->used = 1;
    }
    o->tried_serial = serial;
    void *h = NULL;
    o->why = asp_advice_load(path, &h);
    if (o->why == 0) {
        o->handle = h;
        const uint32_t *built = (const uint32_t *)asp_advice_own_symbol(h, "aspects_advice_version");
        if (!built) {
            asp_debug("advice object", path, "was not built with aspects_advice.h (no aspects_advice_version): refused");
            o->why = ASPECTS_ADVICE_NO_VERSION;
        } else if ((*built >> 16) != ASPECTS_ADVICE_VERSION_MAJOR) {
            char text[160] = "was built with aspects_advice.h version ";
            size_t n = strlen(text);
            asp_decimal_text(*built >> 16, text + n);
            n = strlen(text);
            text[n++] = '.';
            asp_decimal_text(*built & 0xffffu, text + n);
            n = strlen(text);
            static const char tail[] = "; this libaspects.so runs major version ";
            memcpy(text + n, tail, sizeof tail);
            n = strlen(text);
            asp_decimal_text(ASPECTS_ADVICE_VERSION_MAJOR, text + n);
            n = strlen(text);
            memcpy(text + n, ": refused", sizeof ": refused");
            asp_debug("advice object", path, text);
            o->why = ASPECTS_ADVICE_OTHER_VERSION;
        } else {
            o->why = 0;
        }
    }
    *why = o->why;
    return o->why ? NULL : o->handle;
}

static void asp_advice_store(uint32_t slot, uint64_t serial, aspects_advice_function fn, uint32_t why) {
    asp_advice_entry *e = &asp_advice_entries[slot];
    __atomic_store_n(&e->serial, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&e->fn, fn, __ATOMIC_RELAXED);
    __atomic_store_n(&e->why, why, __ATOMIC_RELAXED);
    __atomic_store_n(&e->serial, serial, __ATOMIC_RELEASE);
}

/* The function of slot `slot`'s rule of serial `serial` (any serial: 0), resolved now. */
static aspects_advice_function asp_advice_resolve(uint32_t slot, uint64_t serial, uint32_t *why) {
    asp_call_target t;
    const int found = asp_call_target_of(slot, &t);
    if (found == 0 || (serial && t.serial != serial)) {
        /* the rule left the table (or the slot holds another) while the call ran */
        *why = ASPECTS_ADVICE_BAD_TARGET;
        return NULL;
    }
    if (slot >= ASPECTS_MAX_RULE_CAPACITY || found < 0) {
        *why = ASPECTS_ADVICE_BAD_TARGET;
        if (slot < ASPECTS_MAX_RULE_CAPACITY) asp_advice_store(slot, t.serial, NULL, *why);
        return NULL;
    }
    const asp_advice_entry *e = &asp_advice_entries[slot];
    if (__atomic_load_n(&e->serial, __ATOMIC_ACQUIRE) == t.serial) {
        *why = e->why;
        return e->fn;
    }
    aspects_advice_function fn = NULL;
    void *h = asp_advice_open(t.object, t.serial, why);
    if (h) {
        fn = (aspects_advice_function)asp_advice_own_symbol(h, t.function);
        if (!fn) {
            char text[ASPECTS_RULE_STRINGS_SIZE + 96] = "does not define ";
            size_t n = strlen(text), k = strlen(t.function);
            memcpy(text + n, t.function, k);
            memcpy(text + n + k, " itself (the rule's call names it after the ':')", sizeof " itself (the rule's call names it after the ':')");
            asp_debug("advice object", t.object, text);
            *why = ASPECTS_ADVICE_NO_FUNCTION;
        }
    }
    asp_advice_store(slot, t.serial, fn, fn ? 0 : *why);
    return fn;
}

/* Every live `call` rule's object, for this program (a `process` glob that does not match it
 * loads nothing here). The slots the group lists name, not the whole array (table.c). */
static int asp_advice_scan_slot(uint32_t slot, void *ctx) {
    (void)ctx;
    asp_call_target t;
    if (slot >= ASPECTS_MAX_RULE_CAPACITY || asp_call_target_of(slot, &t) != 1) return 0;
    if (__atomic_load_n(&asp_advice_entries[slot].serial, __ATOMIC_ACQUIRE) == t.serial) return 0;
    if ((t.flags & ASPECTS_RULE_HAS_PROCESS) &&
        !asp_process_matches(asp_tab.rules[slot].strings + t.process_off, t.process_len))
        return 0;
    uint32_t why;
    asp_advice_resolve(slot, t.serial, &why);
    return 0;
}

static void asp_advice_scan(void) { (void)asp_table_each_listed_slot(asp_advice_scan_slot, NULL); }

/* Whether some live `call` rule has no answer yet (a look at the slots, nothing loaded). */
static int asp_advice_pending_slot(uint32_t slot, void *ctx) {
    (void)ctx;
    const aspects_rule *r = &asp_tab.rules[slot];
    if (slot >= ASPECTS_MAX_RULE_CAPACITY ||
        !(__atomic_load_n(&r->actions, __ATOMIC_RELAXED) & ASPECTS_ACTION_CALL))
        return 0;
    asp_call_target t;
    return asp_call_target_of(slot, &t) == 1 &&
           __atomic_load_n(&asp_advice_entries[slot].serial, __ATOMIC_ACQUIRE) != t.serial;
}

static int asp_advice_pending(void) {
    return asp_table_each_listed_slot(asp_advice_pending_slot, NULL);
}

void asp_advice_attach(void) {
    if (!asp_tab.attached) return;
    pthread_mutex_lock(&asp_advice_lock);
    const uint64_t gen = __atomic_load_n(&asp_tab.header->generation, __ATOMIC_ACQUIRE);
    asp_advice_scan();
    __atomic_store_n(&asp_advice_seen, gen + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&asp_advice_lock);
}

void asp_advice_table_changed(const asp_export_desc *ex) {
    const uint64_t gen = __atomic_load_n(&asp_tab.header->generation, __ATOMIC_ACQUIRE);
    if (ASP_LIKELY(__atomic_load_n(&asp_advice_seen, __ATOMIC_ACQUIRE) == gen + 1)) return;
    /* One look per change: a firing that finds its function missing loads it itself, where
     * that is safe; this only spares a first firing in a handler the wait. */
    __atomic_store_n(&asp_advice_seen, gen + 1, __ATOMIC_RELEASE);
    if (!asp_advice_pending() || !asp_place_safe(ex)) return;
    /* sealed: a handler arriving now must not re-enter the (recursive) lock this thread holds */
    const asp_frame outer = asp_frame_push(&asp_tls, ASP_IN_SEALED);
    if (pthread_mutex_trylock(&asp_advice_lock) == 0) {
        asp_advice_scan();
        pthread_mutex_unlock(&asp_advice_lock);
    }
    asp_frame_pop(&asp_tls, outer);
}

aspects_advice_function asp_advice_function(const asp_rule_view *v, const asp_export_desc *ex, uint32_t *why) {
    if (v->slot >= ASPECTS_MAX_RULE_CAPACITY) {
        *why = ASPECTS_ADVICE_BAD_TARGET;
        return NULL;
    }
    const asp_advice_entry *e = &asp_advice_entries[v->slot];
    const uint64_t s = __atomic_load_n(&e->serial, __ATOMIC_ACQUIRE);
    if (ASP_LIKELY(s == v->serial)) {
        aspects_advice_function fn = __atomic_load_n(&e->fn, __ATOMIC_RELAXED);
        const uint32_t w = __atomic_load_n(&e->why, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&e->serial, __ATOMIC_RELAXED) == s) {
            if (fn) return fn;
            *why = w;
            return NULL;
        }
    }
    if (!asp_place_safe(ex)) {
        *why = ASPECTS_ADVICE_NOT_LOADED_HERE;
        return NULL;
    }
    const asp_frame outer = asp_frame_push(&asp_tls, ASP_IN_SEALED);
    pthread_mutex_lock(&asp_advice_lock);
    aspects_advice_function fn = asp_advice_resolve(v->slot, v->serial, why);
    pthread_mutex_unlock(&asp_advice_lock);
    asp_frame_pop(&asp_tls, outer);
    return fn;
}

void asp_advice_atfork_prepare(void) { pthread_mutex_lock(&asp_advice_lock); }
void asp_advice_atfork_parent(void) { pthread_mutex_unlock(&asp_advice_lock); }

void asp_advice_after_fork(void) {
    /* held by the forking thread (prepare), perhaps more than once (a fork from an advice
     * object's constructor): the child starts afresh */
    pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    memcpy(&asp_advice_lock, &fresh, sizeof fresh);
}

/* ---- the record ---- */

void asp_invocation_init(aspects_invocation *inv, asp_call *c, const asp_rule_view *v, uint32_t position) {
    inv->call = c;
    inv->version = ASPECTS_ADVICE_VERSION;
    inv->position = position;
    inv->proceeded = 0;
    inv->site_known = 0;
    inv->id_known = 0;
    inv->proceed = NULL;
    inv->rule_src = v->r->id; /* copied when asked for: most advice never does */
    inv->site_offset = 0;
}

/* The result buffer as the advice may see it: none before the original. */
static void *asp_inv_ret(const aspects_invocation *inv) {
    return inv->position == ASPECTS_POSITION_BEFORE ? NULL : inv->call->ret;
}

static int asp_kind_of(uint8_t t) {
    switch (t) {
    case ASPECTS_T_I8: case ASPECTS_T_I16: case ASPECTS_T_I32: case ASPECTS_T_I64: return ASPECTS_ADVICE_T_INT;
    case ASPECTS_T_U8: case ASPECTS_T_U16: case ASPECTS_T_U32: case ASPECTS_T_U64: return ASPECTS_ADVICE_T_UINT;
    case ASPECTS_T_PTR: return ASPECTS_ADVICE_T_POINTER;
    case ASPECTS_T_STR: return ASPECTS_ADVICE_T_STRING;
    case ASPECTS_T_F32: case ASPECTS_T_F64: return ASPECTS_ADVICE_T_DOUBLE;
    case ASPECTS_T_STRUCT: return ASPECTS_ADVICE_T_STRUCT;
    default: return ASPECTS_ADVICE_T_NONE;
    }
}

/* The export's index of the rule's argument i (arguments as the rule numbers them), or -1. */
static int asp_arg_index(const aspects_invocation *inv, unsigned i) {
    if (!inv || i >= ASP_MAX_ARGS) return -1;
    const uint32_t a = inv->call->ex->argmap[i];
    return a < inv->call->ex->nargs ? (int)a : -1;
}

/* Stores an integer-class argument where the original reads it: its own width in args, and the
 * widened value the dispatcher calls a direct original with. */
static void asp_store_arg(aspects_invocation *inv, int a, uint64_t v) {
    asp_call *c = inv->call;
    const uint8_t t = c->ex->args[a];
    v = asp_int_fit(t, v); /* what vals keeps: the value as the type holds it, extended back */
    asp_int_store(t, c->args[a], v);
    c->vals[a] = v;
}

/* Arguments change what the original receives: before it, or instead of it until it ran. */
static int asp_args_writable(const aspects_invocation *inv) {
    if (inv->position == ASPECTS_POSITION_AFTER) return ASPECTS_ADVICE_E_POSITION;
    return inv->proceeded ? ASPECTS_ADVICE_E_PROCEEDED : ASPECTS_ADVICE_OK;
}

ASP_API uint32_t aspects_invocation_version(const aspects_invocation *inv) { return inv ? inv->version : 0; }
ASP_API const char *aspects_symbol(const aspects_invocation *inv) { return inv && inv->call->ex->name ? inv->call->ex->name : ""; }
ASP_API const char *aspects_fired_rule(const aspects_invocation *inv) {
    if (!inv) return "";
    aspects_invocation *w = (aspects_invocation *)inv; /* a cache in the record, which is ours */
    if (!w->id_known) {
        /* from shared memory: bounded and terminated in our copy */
        for (uint32_t i = 0; i + 1 < ASPECTS_RULE_ID_SIZE; i++) w->rule_id[i] = w->rule_src[i];
        w->rule_id[ASPECTS_RULE_ID_SIZE - 1] = 0;
        w->id_known = 1;
    }
    return w->rule_id;
}
ASP_API uint64_t aspects_call_number(const aspects_invocation *inv) { return inv ? inv->call->number : 0; }
ASP_API int aspects_position(const aspects_invocation *inv) { return inv ? (int)inv->position : -1; }

ASP_API unsigned aspects_arg_count(const aspects_invocation *inv) {
    unsigned n = 0;
    while (asp_arg_index(inv, n) >= 0) n++;
    return n;
}

ASP_API int aspects_arg_type(const aspects_invocation *inv, unsigned i) {
    const int a = asp_arg_index(inv, i);
    return a < 0 ? ASPECTS_ADVICE_T_NONE : asp_kind_of(inv->call->ex->args[a]);
}

ASP_API int64_t aspects_arg_int(const aspects_invocation *inv, unsigned i) {
    const int k = aspects_arg_type(inv, i);
    return k == ASPECTS_ADVICE_T_INT || k == ASPECTS_ADVICE_T_UINT ? (int64_t)inv->call->vals[asp_arg_index(inv, i)] : 0;
}

ASP_API void *aspects_arg_ptr(const aspects_invocation *inv, unsigned i) {
    const int k = aspects_arg_type(inv, i);
    return k == ASPECTS_ADVICE_T_POINTER || k == ASPECTS_ADVICE_T_STRING ? (void *)(uintptr_t)inv->call->vals[asp_arg_index(inv, i)] : NULL;
}

ASP_API double aspects_arg_double(const aspects_invocation *inv, unsigned i) {
    const int a = asp_arg_index(inv, i);
    if (a < 0) return 0;
    const asp_call *c = inv->call;
    if (c->ex->args[a] == ASPECTS_T_F64) return *(const double *)c->args[a];
    if (c->ex->args[a] == ASPECTS_T_F32) return *(const float *)c->args[a];
    return 0;
}

ASP_API void *aspects_arg_address(aspects_invocation *inv, unsigned i) {
    const int a = asp_arg_index(inv, i);
    return a < 0 ? NULL : inv->call->args[a];
}

/* The argument a setter may write: its index, or the (negative) ASPECTS_ADVICE_E_* when `i` is
 * out of range, its kind is neither `k1` nor `k2`, or the position does not allow rewriting. */
static int asp_settable_arg(aspects_invocation *inv, unsigned i, int k1, int k2) {
    const int a = asp_arg_index(inv, i);
    if (a < 0) return ASPECTS_ADVICE_E_RANGE;
    const int k = asp_kind_of(inv->call->ex->args[a]);
    if (k != k1 && k != k2) return ASPECTS_ADVICE_E_TYPE;
    const int w = asp_args_writable(inv);
    return w ? w : a;
}

ASP_API int aspects_set_arg_int(aspects_invocation *inv, unsigned i, int64_t value) {
    const int a = asp_settable_arg(inv, i, ASPECTS_ADVICE_T_INT, ASPECTS_ADVICE_T_UINT);
    if (a < 0) return a;
    asp_store_arg(inv, a, (uint64_t)value);
    return ASPECTS_ADVICE_OK;
}

ASP_API int aspects_set_arg_ptr(aspects_invocation *inv, unsigned i, void *value) {
    const int a = asp_settable_arg(inv, i, ASPECTS_ADVICE_T_POINTER, ASPECTS_ADVICE_T_STRING);
    if (a < 0) return a;
    asp_store_arg(inv, a, (uint64_t)(uintptr_t)value);
    return ASPECTS_ADVICE_OK;
}

ASP_API int aspects_set_arg_double(aspects_invocation *inv, unsigned i, double value) {
    const int a = asp_arg_index(inv, i);
    if (a < 0) return ASPECTS_ADVICE_E_RANGE;
    asp_call *c = inv->call;
    const uint8_t t = c->ex->args[a];
    if (t != ASPECTS_T_F32 && t != ASPECTS_T_F64) return ASPECTS_ADVICE_E_TYPE;
    const int w = asp_args_writable(inv);
    if (w) return w;
    if (t == ASPECTS_T_F64) {
        *(double *)c->args[a] = value;
        memcpy(&c->vals[a], &value, sizeof value);
    } else {
        const float f = (float)value;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        *(float *)c->args[a] = f;
        c->vals[a] = bits;
    }
    return ASPECTS_ADVICE_OK;
}

ASP_API int aspects_proceed(aspects_invocation *inv) {
    if (!inv || inv->position != ASPECTS_POSITION_INSTEAD || !inv->proceed) return ASPECTS_ADVICE_E_POSITION;
    if (inv->proceeded) return ASPECTS_ADVICE_E_PROCEEDED;
    inv->proceeded = 1;
    inv->proceed(inv->call);
    return ASPECTS_ADVICE_OK;
}

ASP_API int aspects_proceeded(const aspects_invocation *inv) { return inv ? (int)inv->proceeded : 0; }

ASP_API int aspects_return_type(const aspects_invocation *inv) { return inv ? asp_kind_of(inv->call->ex->ret) : ASPECTS_ADVICE_T_NONE; }

/* The result as the closure holds it: a narrow integer fills a whole ffi_arg (see
 * asp_store_integer), so it is read back at its own width. */
ASP_API int64_t aspects_return_int(const aspects_invocation *inv) {
    const void *ret = inv ? asp_inv_ret(inv) : NULL;
    if (!ret) return 0;
    const uint8_t t = inv->call->ex->ret;
    const int k = asp_kind_of(t);
    if (k != ASPECTS_ADVICE_T_INT && k != ASPECTS_ADVICE_T_UINT) return 0;
    return (int64_t)asp_int_fit(t, *(const uint64_t *)ret);
}

ASP_API void *aspects_return_ptr(const aspects_invocation *inv) {
    const void *ret = inv ? asp_inv_ret(inv) : NULL;
    if (!ret) return NULL;
    const int k = asp_kind_of(inv->call->ex->ret);
    return k == ASPECTS_ADVICE_T_POINTER || k == ASPECTS_ADVICE_T_STRING ? *(void *const *)ret : NULL;
}

ASP_API double aspects_return_double(const aspects_invocation *inv) {
    const void *ret = inv ? asp_inv_ret(inv) : NULL;
    if (!ret) return 0;
    if (inv->call->ex->ret == ASPECTS_T_F64) return *(const double *)ret;
    if (inv->call->ex->ret == ASPECTS_T_F32) return *(const float *)ret;
    return 0;
}

ASP_API void *aspects_return_address(aspects_invocation *inv) { return inv ? asp_inv_ret(inv) : NULL; }

static int asp_return_writable(const aspects_invocation *inv, int want) {
    if (!inv || !asp_inv_ret(inv)) return ASPECTS_ADVICE_E_POSITION;
    const int k = asp_kind_of(inv->call->ex->ret);
    if (want == ASPECTS_ADVICE_T_INT ? (k != ASPECTS_ADVICE_T_INT && k != ASPECTS_ADVICE_T_UINT)
                                     : want == ASPECTS_ADVICE_T_POINTER ? (k != ASPECTS_ADVICE_T_POINTER && k != ASPECTS_ADVICE_T_STRING)
                                                                        : k != want)
        return ASPECTS_ADVICE_E_TYPE;
    return ASPECTS_ADVICE_OK;
}

ASP_API int aspects_set_return_int(aspects_invocation *inv, int64_t value) {
    const int w = asp_return_writable(inv, ASPECTS_ADVICE_T_INT);
    if (w) return w;
    asp_store_integer(inv->call->ex->ret, inv->call->ret, (long)value);
    return ASPECTS_ADVICE_OK;
}

ASP_API int aspects_set_return_ptr(aspects_invocation *inv, void *value) {
    const int w = asp_return_writable(inv, ASPECTS_ADVICE_T_POINTER);
    if (w) return w;
    *(void **)inv->call->ret = value;
    return ASPECTS_ADVICE_OK;
}

ASP_API int aspects_set_return_double(aspects_invocation *inv, double value) {
    const int w = asp_return_writable(inv, ASPECTS_ADVICE_T_DOUBLE);
    if (w) return w;
    void *ret = inv->call->ret;
    if (inv->call->ex->ret == ASPECTS_T_F64) {
        *(double *)ret = value;
    } else {
        *(uint64_t *)ret = 0; /* the buffer is a register's 8 bytes: no stale upper half */
        *(float *)ret = (float)value;
    }
    return ASPECTS_ADVICE_OK;
}

ASP_API int aspects_errno(const aspects_invocation *inv) { return inv ? inv->call->err : 0; }

ASP_API int aspects_set_errno(aspects_invocation *inv, int value) {
    if (!inv || inv->position == ASPECTS_POSITION_BEFORE) return ASPECTS_ADVICE_E_POSITION;
    inv->call->err = value;
    return ASPECTS_ADVICE_OK;
}

ASP_API const void *aspects_caller_address(const aspects_invocation *inv) { return inv ? (const void *)(uintptr_t)inv->call->caller : NULL; }

static void asp_inv_site(aspects_invocation *inv) {
    if (inv->site_known) return;
    const int saved = errno;
    asp_site_describe(inv->call->caller, inv->site_object, sizeof inv->site_object, &inv->site_offset);
    errno = saved;
    inv->site_known = 1;
}

ASP_API const char *aspects_caller_object(aspects_invocation *inv) {
    if (!inv) return "";
    asp_inv_site(inv);
    return inv->site_object;
}

ASP_API uint64_t aspects_caller_offset(aspects_invocation *inv) {
    if (!inv) return 0;
    asp_inv_site(inv);
    return inv->site_offset;
}
