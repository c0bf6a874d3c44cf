/* table.c — attaching to the advice table and reading it without locks.
 *
 * The geometry (capacities, offsets) is validated once at attach (aspects_geometry.h, the check
 * aspectctl makes too) and copied into process memory; from then on nothing read from shared memory is used as an index or length without
 * a bounds check against that private copy. A corrupt table can make advice misfire, never
 * crash the host. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include "sys.h"
#include "table.h"
#include "wrapper_tables.h"
#include "aspects_geometry.h"
#include "aspects_trust.h"

asp_table asp_tab;

/* The armed bytes before a table is attached: nothing is armed. */
const uint8_t asp_nothing_armed[ASPECTS_GROUP_CAPACITY];
const uint8_t *asp_armed_base = asp_nothing_armed;

static int asp_name_ok(const char *name) {
    size_t n = 0;
    for (; name[n]; n++) {
        char c = name[n];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        if (!ok) return 0;
    }
    return n > 0 && n <= ASPECTS_TABLE_NAME_MAX && name[0] != '.';
}

/* Same rule as AspectConfig's TableName: "demo" is /dev/shm/aspects.demo; a name starting with
 * '/' is a file path (a table outside /dev/shm, e.g. in a test's temporary directory). */
static int asp_table_path(const char *name, char *out, size_t cap) {
    const char *prefix = name[0] == '/' ? "" : "/dev/shm/aspects.";
    if (name[0] != '/' && !asp_name_ok(name)) return -1;
    size_t p = strlen(prefix), n = strlen(name);
    if (p + n + 1 > cap) return -1;
    memcpy(out, prefix, p);
    memcpy(out + p, name, n + 1);
    return 0;
}

/* A table this process will not obey: why, under ASPECTS_DEBUG, and once on stderr under
 * ASPECTS_STRICT (a test that sets a table and gets no advice must not pass quietly). */
static void asp_refused(const char *path, const char *why) {
    if (asp_strict_enabled) {
        asp_strict_say("table", path, why);
        return;
    }
    char text[256];
    const char *tail = "; ignored (pass-through)";
    size_t n = 0;
    for (; why && *why && n < sizeof text - 1; why++) text[n++] = *why;
    for (; *tail && n < sizeof text - 1; tail++) text[n++] = *tail;
    text[n] = 0;
    asp_debug("table", path, text);
}

/* A table of another user, obeyed as a member of its group: said on stderr, always — a member
 * who made a table under a name others use catches their processes, and they must know. */
static void asp_say_whose(const char *path, uint32_t owner, uint32_t gid) {
    char user[64], group[64], text[256];
    if (!aspects_user_name(owner, user, sizeof user)) user[0] = 0;
    if (!aspects_group_name(gid, group, sizeof group)) group[0] = 0;
    char uid_text[12], gid_text[12];
    asp_decimal_text(owner, uid_text);
    asp_decimal_text(gid, gid_text);
    const char *parts[] = {"owned by user ", user, " (uid ", uid_text, "), shared with group ", group, " (gid ", gid_text, ")"};
    size_t n = 0;
    for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++)
        for (const char *c = parts[p]; *c && n + 1 < sizeof text; c++) text[n++] = *c;
    text[n] = 0;
    asp_note("obeying table", path, text);
}

int asp_table_attach(const char *name) {
    char path[4096];
    if (asp_table_path(name, path, sizeof path) != 0) {
        asp_refused(name, "is not a valid table name (letters, digits, '.', '_', '-', or an absolute path)");
        return -1;
    }
    /* The trust rule (aspects_trust.h): only an anchor file of our own euid, not writable by
     * others, reached without symbolic links, naming a segment that agrees with it. Anything
     * else is ignored, and says why. The segment's size is fixed: nobody can shrink it under
     * this process, so no access to it can fault (no SIGBUS to guard against). */
    int fd = -1;
    uint32_t owner = 0;
    aspects_table_segment seg;
    const uint32_t euid =
        asp_sys_geteuid(); /* once: the trust rule and what follows judge by the same */
    int verdict = aspects_table_open(path, 1, euid, &fd, &owner, &seg);
    if (verdict != ASPECTS_TRUST_OK) {
        asp_refused(path, verdict == ASPECTS_TRUST_NO_SEGMENT
                              ? "has lost its shared memory segment (a reboot, ipcrm, or another IPC namespace): "
                                "re-create it (aspectctl destroy, then aspectctl create)"
                              : aspects_trust_text(verdict));
        return -1;
    }
    asp_sys_close((int)fd);
    const uint64_t size = seg.size;
    char *base = (char *)seg.base;
    const aspects_table_header *h = (const aspects_table_header *)base;
    const uint32_t groups = h->group_capacity, rules = h->rule_capacity, events = h->event_capacity, stats = h->stat_capacity;
    const enum aspects_geometry_failure failure = aspects_table_geometry_check(h, size, ASP_CATALOG_HASH, ASP_GROUP_COUNT);
    const char *why = failure == ASPECTS_GEOMETRY_OK ? NULL : aspects_geometry_text(failure);
    const uint32_t reason = failure == ASPECTS_GEOMETRY_OK || failure == ASPECTS_GEOMETRY_NO_MAGIC ? 0
                            : failure == ASPECTS_GEOMETRY_ABI_VERSION ? ASPECTS_ATTACH_FAILED_ABI
                            : failure == ASPECTS_GEOMETRY_CATALOG ? ASPECTS_ATTACH_FAILED_CATALOG
                            : ASPECTS_ATTACH_FAILED_LAYOUT;
    if (why) {
        /* Our own trusted table, refused: leave a mark its owner sees (`list`, `run`), at
         * header offsets every ABI version keeps. */
        if (reason && size >= sizeof(aspects_table_header)) {
            aspects_table_header *w = (aspects_table_header *)base;
            __atomic_fetch_add(&w->attach_failures, 1, __ATOMIC_RELAXED);
            __atomic_store_n(&w->last_failure_pid, asp_pid, __ATOMIC_RELAXED);
            __atomic_store_n(&w->last_failure_reason, reason, __ATOMIC_RELAXED);
        }
        aspects_segment_detach(base);
        asp_refused(path, why);
        return -1;
    }
    asp_tab.base = base;
    asp_tab.size = size;
    asp_tab.group_capacity = groups;
    asp_tab.rule_capacity = rules;
    asp_tab.event_capacity = events;
    asp_tab.header = (aspects_table_header *)base;
    asp_tab.lists = (aspects_group_list *)(base + aspects_lists_offset(groups));
    asp_tab.rules = (aspects_rule *)(base + aspects_rules_offset(groups));
    asp_tab.events = (aspects_event *)(base + aspects_events_offset(groups, rules));
    asp_tab.stats = (aspects_process_stat *)(base + aspects_stats_offset(groups, rules, events));
    asp_tab.stat_capacity = stats;
    asp_tab.protos = (aspects_proto_symbol *)(base + aspects_protos_offset(groups, rules, events, stats));
    /* As the trust rule saw it: a member could clear the header's word later, not the past */
    asp_tab.shared = owner != euid || (h->share_flags & ASPECTS_SHARE_GROUP) != 0;
    __atomic_store_n(&asp_tab.attached, 1, __ATOMIC_RELEASE);
    /* Publishing the armed bytes last: from here on the wrappers look at the table. */
    __atomic_store_n(&asp_armed_base, (const uint8_t *)(base + aspects_armed_offset()), __ATOMIC_RELEASE);
    asp_debug("attached table", path, NULL);
    if (owner != euid) asp_say_whose(path, owner, seg.gid);
    return 0;
}

/* Copies the rule list of a group (a seqlock read). A writer that died mid-update leaves the
 * sequence odd: after a bounded number of tries the group simply has no rules for this call,
 * and the next writer repairs the list. */
uint32_t asp_table_rules_of(uint32_t group, uint16_t *out) {
    if (ASP_UNLIKELY(group >= asp_tab.group_capacity)) return 0;
    aspects_group_list *l = &asp_tab.lists[group];
    for (int attempt = 0; attempt < 64; attempt++) {
        uint32_t s1 = __atomic_load_n(&l->seq, __ATOMIC_ACQUIRE);
        if (s1 & 1u) { ASP_CPU_RELAX(); continue; }
        uint32_t n = __atomic_load_n(&l->count, __ATOMIC_RELAXED);
        if (n > ASPECTS_GROUP_RULES) n = ASPECTS_GROUP_RULES;
        for (uint32_t i = 0; i < n; i++) out[i] = __atomic_load_n(&l->rules[i], __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&l->seq, __ATOMIC_RELAXED) == s1) return n;
    }
    return 0;
}

/* The slots the lists of armed groups name: the rules that can run (a rule no list names is
 * never reached). Reads the armed bytes and those lists, none of the slot array: a table's
 * capacity costs a process nothing, only the rules it holds do. visit's first nonzero return
 * stops the walk and is returned. A slot may be visited twice (a rule in two groups). */
int asp_table_each_listed_slot(int (*visit)(uint32_t slot, void *ctx), void *ctx) {
    if (!__atomic_load_n(&asp_tab.attached, __ATOMIC_ACQUIRE)) return 0;
    const uint8_t *armed = __atomic_load_n(&asp_armed_base, __ATOMIC_ACQUIRE);
    for (uint32_t g = 0; g < asp_tab.group_capacity; g++) {
        if (!__atomic_load_n(&armed[g], __ATOMIC_RELAXED)) continue;
        uint16_t list[ASPECTS_GROUP_RULES];
        const uint32_t n = asp_table_rules_of(g, list);
        for (uint32_t i = 0; i < n; i++) {
            if (list[i] >= asp_tab.rule_capacity) continue;
            const int r = visit(list[i], ctx);
            if (r) return r;
        }
    }
    return 0;
}
