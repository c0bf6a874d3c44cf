/* Fuzz/c/table_fuzz.c — libFuzzer target "table": the preload attaching a table (a segment
 * named by an anchor file, as aspectctl makes it) whose bytes come from the input, and copying every group's rules as an advised call would
 * (table.c's validation, rulecache.c's seqlocked, bounds-checked copies, counters.c's
 * statistics entries, glob.c's pattern plans, identity.c's process glob), then acting on
 * each copied rule as a firing call does: its counters in every scope (process, thread,
 * hierarchy entries claimed by CAS, table words), times/once/autoRemove claims, statistics
 * words, the data faults (advice_data.c: the data arguments read under the seqlock, the count
 * cut, the bits flipped), and an event record appended to the ring (events.c: head, sequence
 * claim); the `call` targets of every slot as the advice loader reads them (advice_call.c,
 * nothing loaded); and the process's attachment record (identity.c).
 *
 * The input's first byte picks how the table's bytes are made:
 *   even: the header is the input's next bytes, over a valid table (the geometry checks);
 *   odd:  a valid table with rules, patched: [offset u32 LE][length u8][bytes]... (every
 *         field of lists, rule slots, statistics and prototype entries reachable).
 * The preload's sources are included, so their static functions are the ones tested; what
 * the library's other files define (the armed base, the per-thread state, the prototype
 * pass) is given here as the library gives it to these files. */
#define _GNU_SOURCE
/* System headers first: the preload's base.h makes every declaration after it hidden
 * (libaspects.so exports only its wrappers), which in this executable would hide libc's. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <ffi.h>
#include <link.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "../../Sources/CPreload/os/sys.c"
#include "../../Sources/CPreload/os/glob.c"
#include "../../Sources/CPreload/os/thread.c"
#include "../../Sources/CPreload/os/table.c"
#include "../../Sources/CPreload/rules/counters.c"
#include "../../Sources/CPreload/rules/rulecache.c"
#include "../../Sources/CPreload/rules/gate.c"
#include "../../Sources/CPreload/os/identity.c"
#include "../../Sources/CPreload/os/frame_rule.c"
#include "../../Sources/CPreload/os/step_cache.c"
#include "../../Sources/CPreload/os/context.c"
#include "../../Sources/CPreload/events/events.c"
#include "../../Sources/CPreload/dispatch/advice_data.c"
#include "../../Sources/CPreload/dispatch/advice_call.c"
#include "../../Sources/CPreload/dispatch/advice.h"
#include "../../Sources/CPreload/generated/catalog_table.c"
#include "fuzz_wrapper_tables.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* preload.c, dispatch.c, proto.c, resolve.c, wrappers.S */
void *asp_real[ASP_EXPORT_COUNT];
int asp_is_resolved(uint32_t idx) { (void)idx; return 0; }
/* (asp_tls and asp_place_safe: os/thread.c, included above) */
uint32_t asp_pid;
void asp_protos_maybe_sync(void) {}
/* resolve.c: no original is ever called here (advice_call.c would dlopen through it) */
void *asp_original(uint32_t idx) { (void)idx; return NULL; }
/* closures.c: the exports whose stubs are built (here: every catalog export, for events) */
asp_direct_call asp_direct[ASP_ALL_EXPORTS];
asp_export_desc asp_proto_exports[ASPECTS_PROTO_CAPACITY];
static uint32_t group_export[ASP_ALL_GROUPS]; /* an export of each catalog group, +1; 0 none */

/* What an advised call does with a copied rule (dispatch_full.c's order, without calling an
 * original or raising the rule's signal): its conditions on the call's arguments (each of the
 * export's arguments a valid value of its catalog type), caller and site; counting and
 * deciding in every scope with the claims; the error chosen; argument rewrites; and the
 * event record. */
static void act_on(const asp_rule_view *v, uint32_t group) {
    static const char path[] = "/tmp/a.db";
    static char buffer[64];
    const uint64_t caller = (uint64_t)(uintptr_t)__builtin_return_address(0);
    if (group >= ASP_ALL_GROUPS || !group_export[group]) {
        const uint64_t call = asp_count_matching(v);
        (void)asp_decide_counted(v, call);
        asp_gate_advance(group, v, asp_next_possible(v, call));
        return;
    }
    const uint32_t idx = group_export[group] - 1;
    const asp_export_desc *ex = &asp_exports[idx];
    uint64_t vals[ASP_MAX_ARGS] = {0};
    uint64_t storage[ASP_MAX_ARGS] = {0};
    void *args[ASP_MAX_ARGS];
    for (uint32_t a = 0; a < ASP_MAX_ARGS; a++) {
        const uint8_t t = a < ex->nargs ? ex->args[a] : ASPECTS_T_VOID;
        vals[a] = t == ASPECTS_T_STR ? (uint64_t)(uintptr_t)path : t == ASPECTS_T_PTR ? (uint64_t)(uintptr_t)buffer : 3 + a;
        storage[a] = vals[a];
        args[a] = &storage[a];
    }
    int holds = 1;
    for (uint32_t i = 0; i < v->matcher_count && holds; i++) {
        const uint32_t arg = ex->argmap[v->matchers[i].arg];
        holds = arg < ex->nargs && asp_matcher_holds(v, i, ex->args[arg], vals[arg]);
    }
    if (v->flags & ASPECTS_RULE_HAS_CALLER) (void)asp_caller_ok(v, caller);
    if (v->flags & ASPECTS_RULE_HAS_SITE) (void)asp_site_ok(v, ex, caller);
    const uint64_t call = asp_count_matching(v);
    (void)holds;
    (void)asp_decide_counted(v, call);
    /* the stubs' gate moves past the call, as the dispatcher moves it */
    asp_gate_advance(group, v, asp_next_possible(v, call));
    (void)asp_claim_once_hierarchy(v->r);
    (void)asp_chosen_error(v, call);
    /* the call's record (dispatch/call.h), as the dispatcher's entry fills it */
    asp_call c = {.idx = idx, .group = group, .h = &asp_direct[idx], .ex = ex, .args = args, .caller = caller, .number = call};
    __builtin_memcpy(c.vals, vals, sizeof c.vals);
    if (v->actions & ASPECTS_ACTION_ARGS) asp_apply_arg_sets(&c, v);
    /* the data faults on the buffer (64 bytes) as a read of 40 would have filled it */
    if ((v->actions & ASPECTS_ACTION_SHORT) && asp_data_shortable(v, ex, c.vals)) asp_data_short(&c, v);
    if ((v->actions & ASPECTS_ACTION_CORRUPT) && asp_data_corruptible(v, ex, c.vals, 40)) asp_data_corrupt(&c, v, 40);
    asp_event_append(ASPECTS_EVENT_FIRED, v, call, idx, c.vals, -1, 5, caller);
}

static char fuzz_dir[64];
static uint8_t *pristine, *image;
static size_t pristine_size;

/* A valid table as aspectctl makes it (AdviceTable.create), with two rules on group 0. */
static void make_pristine(void) {
    const uint32_t groups = ASP_ALL_GROUPS, rules = 4, events = 16, stats = 16;
    pristine_size = aspects_table_size(groups, rules, events, stats);
    /* mmap, not malloc: the preload's headers make libc's declarations hidden, and a hidden
     * malloc/free pair would miss the sanitizer's allocator on one side */
    pristine = mmap(NULL, pristine_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    image = mmap(NULL, pristine_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    aspects_table_header *h = (aspects_table_header *)pristine;
    h->abi_version = ASPECTS_ABI_VERSION;
    h->header_size = sizeof(aspects_table_header);
    h->total_size = pristine_size;
    h->catalog_hash = ASP_CATALOG_HASH;
    h->group_capacity = groups;
    h->rule_capacity = rules;
    h->event_capacity = events;
    h->rule_size = sizeof(aspects_rule);
    h->event_size = sizeof(aspects_event);
    h->armed_offset = aspects_armed_offset();
    h->lists_offset = aspects_lists_offset(groups);
    h->rules_offset = aspects_rules_offset(groups);
    h->events_offset = aspects_events_offset(groups, rules);
    h->stats_offset = aspects_stats_offset(groups, rules, events);
    h->protos_offset = aspects_protos_offset(groups, rules, events, stats);
    h->stat_capacity = stats;
    h->generation = 1;
    h->committed_batch = 1;
    for (uint32_t k = 0; k < 2; k++) {
        aspects_rule *r = aspects_rule_at(pristine, k);
        r->state = ASPECTS_RULE_ACTIVE;
        r->group = 0;
        r->position = k ? ASPECTS_POSITION_AFTER : ASPECTS_POSITION_INSTEAD;
        r->actions = ASPECTS_ACTION_RETURN | ASPECTS_ACTION_ERRNO;
        r->serial = k + 1;
        r->matcher_count = 1;
        r->matchers[0].kind = k ? ASPECTS_MATCH_GLOB : ASPECTS_MATCH_EQ;
        r->matchers[0].type = k ? ASPECTS_T_STR : ASPECTS_T_I32;
        memcpy(r->strings, "*.d?[ab]", 9);
        r->matchers[0].str_len = 8;
        r->flags = k ? ASPECTS_RULE_HAS_PROCESS : ASPECTS_RULE_HAS_SITE;
        r->process_len = 8;
        r->site_len = 3;
    }
    aspects_group_list *l = aspects_list(pristine, 0);
    l->count = 2;
    aspects_list_set_rule(l, 0, 0);
    aspects_list_set_rule(l, 1, 1);
    aspects_armed(pristine)[0] = 1;
    h->magic = ASPECTS_MAGIC;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    snprintf(fuzz_dir, sizeof fuzz_dir, "/tmp/aspects-fuzz-table-%d", (int)getpid());
    mkdir(fuzz_dir, 0700);
    asp_pid = asp_sys_getpid();
    asp_gates_init();
    for (uint32_t i = 0; i < ASP_EXPORT_COUNT; i++) {
        asp_direct[i].desc = &asp_exports[i];
        asp_direct[i].group = asp_exports[i].group;
        asp_direct[i].ret = asp_exports[i].ret;
        asp_direct[i].nargs = asp_exports[i].nargs;
        asp_direct[i].string_arg = asp_exports[i].args[0] == ASPECTS_T_STR ? 0 : 0xff;
        if (!group_export[asp_exports[i].group]) group_export[asp_exports[i].group] = i + 1;
    }
    make_pristine();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    memcpy(image, pristine, pristine_size);
    size_t n = pristine_size;
    if (!(data[0] & 1)) {
        /* the header from the input (the file may also end early: its size is the input's) */
        size_t h = size - 1 < sizeof(aspects_table_header) ? size - 1 : sizeof(aspects_table_header);
        memcpy(image, data + 1, h);
        if (data[0] & 2) n = size - 1 < 4096 ? (size - 1) * 64 + 1 : pristine_size; /* a short file */
        if (n > pristine_size) n = pristine_size;
    } else {
        for (size_t i = 1; i + 5 <= size;) {
            size_t off = (size_t)data[i] | (size_t)data[i + 1] << 8 | (size_t)data[i + 2] << 16 | (size_t)data[i + 3] << 24;
            size_t len = data[i + 4];
            i += 5;
            for (size_t k = 0; k < len && i + k < size; k++) image[(off + k) % pristine_size] = data[i + k];
            i += len;
        }
    }
    char path[96];
    snprintf(path, sizeof path, "%s/table", fuzz_dir);
    /* As aspectctl makes a table (aspects_abi.h): a segment of the image's size, named by an
     * anchor file. The image carries the anchor's identity, or attaching stops there. */
    static const uint64_t identity[2] = {0x6675727a7a, 0x7461626c65};
    if (n >= sizeof(aspects_table_header)) memcpy(((aspects_table_header *)image)->identity, identity, sizeof identity);
    void *segment;
    int32_t shmid = aspects_segment_create(n, 0, 0, &segment);
    if (shmid < 0) return 0;
    memcpy(segment, image, n);
    aspects_segment_detach(segment);
    aspects_table_anchor anchor = {ASPECTS_ANCHOR_MAGIC, ASPECTS_ANCHOR_VERSION, shmid, n, {identity[0], identity[1]}};
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, &anchor, sizeof anchor) != (ssize_t)sizeof anchor) {
        if (fd >= 0) close(fd);
        aspects_segment_remove(shmid);
        return 0;
    }
    close(fd);
    if (asp_table_attach(path) == 0) {
        /* as the constructor goes on (preload.c): the hierarchy (identity.c, from the
         * header's counters and ASPECTS_HIERARCHY) and the attachment record, whose ring
         * position comes from the table */
        asp_identity_init();
        asp_identity_register();
        uint16_t list[ASPECTS_GROUP_RULES];
        uint32_t count;
        for (uint32_t g = 0; g < ASP_ALL_GROUPS; g++) {
            if (!asp_armed_base[g] && g > 2) continue;
            const asp_rule_view *views = asp_group_rules_slow(g, list, &count);
            asp_rule_view scratch;
            for (uint32_t i = 0; i < count; i++) {
                const asp_rule_view *v = views ? &views[i] : (asp_view_from_slot(list[i], g, &scratch) ? &scratch : NULL);
                if (!v) continue;
                if (v->matcher_count && v->plans[0].fixed) (void)asp_glob_fixed(v->r->strings + v->matchers[0].str_off, v->matchers[0].str_len, &v->plans[0], "a/b.db", 7);
                act_on(v, g);
            }
        }
        /* every slot's `call` target, as the loader reads it before any dlopen */
        for (uint32_t slot = 0; slot < asp_tab.rule_capacity; slot++) {
            asp_call_target t;
            (void)asp_call_target_of(slot, &t);
        }
        /* detach, as a new process would start */
        aspects_segment_detach(asp_tab.base);
        memset(&asp_tab, 0, sizeof asp_tab);
        asp_armed_base = asp_nothing_armed;
        asp_rule_caches_reset_after_fork();
        asp_counters_reset_after_fork();
    }
    aspects_segment_remove(shmid);
    return 0;
}
