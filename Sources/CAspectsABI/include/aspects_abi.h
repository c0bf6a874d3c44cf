/*
 * aspects_abi.h — THE binary layout of the advice table, shared by the C preload
 * (libaspects.so, the lock-free reader) and the Swift writer (AspectConfig).
 *
 * Nobody re-declares this layout: Swift imports it, C includes it. Fixed-width types only,
 * explicit padding, no pointers, no bool. abi_asserts.c pins every offset; a Swift test
 * compares MemoryLayout offsets against the same numbers; the preload checks magic, ABI
 * version and sizes when it maps a table.
 *
 * Concurrency protocol (docs/ARCHITECTURE.md §3):
 *   - writers (aspectctl, the Swift API) hold flock(LOCK_EX) on the table file while they
 *     change anything; they are therefore serialized across processes;
 *   - readers (every advised call in every process) never lock. A rule slot and a group list
 *     are seqlocks: the writer makes `seq` odd, writes the fields, then makes `seq` even with a
 *     release store. A reader loads `seq` (acquire), reads the fields, issues an acquire fence
 *     and re-loads `seq`; any difference or an odd value means "do not trust what you read";
 *   - counters and claims are updated with atomic read-modify-write by any process.
 * Everything a reader takes from the table is untrusted and bounds-checked.
 */
#ifndef ASPECTS_ABI_H
#define ASPECTS_ABI_H

#include <stdint.h>
#include <stddef.h>

#define ASPECTS_MAGIC 0x3153544345505341ULL /* "ASPECTS1", little endian */
/* A segment `create` has made and not yet filled: stored the moment it is attached, so that a
 * create killed before the header is written still leaves a segment `gc` can tell for ours
 * (no table is opened with it: only ASPECTS_MAGIC is a table). */
#define ASPECTS_MAGIC_UNFINISHED 0x3053544345505341ULL /* "ASPECTS0" */
#define ASPECTS_ABI_VERSION 10u

/* Capacities. The table's own header says what a given table uses; these are the limits. A rule
 * slot's own capacities (ASPECTS_MAX_MATCHERS, ...) are defined with the slot, below. */
#define ASPECTS_GROUP_CAPACITY 1024u          /* armed bytes: catalog groups + prototype symbols */
#define ASPECTS_GROUP_RULES 28u               /* rules on one symbol group */
#define ASPECTS_DEFAULT_RULE_CAPACITY 256u
#define ASPECTS_MAX_RULE_CAPACITY 1024u
#define ASPECTS_DEFAULT_EVENT_CAPACITY 4096u
#define ASPECTS_MAX_EVENT_CAPACITY 1048576u
#define ASPECTS_MAX_ARGS 8u
#define ASPECTS_THREAD_RULES 64u              /* thread-scoped rules one table may hold */
#define ASPECTS_DEFAULT_STAT_CAPACITY 4096u   /* (process, rule) statistics entries */
#define ASPECTS_MAX_STAT_CAPACITY 65536u
#define ASPECTS_PROTO_CAPACITY 64u            /* exported functions advised from a prototype */
#define ASPECTS_ATTACH_CAPACITY 1024u         /* attachment records kept (a ring) */
#define ASPECTS_RULE_SOURCE_SIZE 4096u        /* a rule's JSON as added (aspectctl only) */
#define ASPECTS_MAX_FAMILY 15u                /* groups besides its own one family rule is in */
#define ASPECTS_SHARE_GROUP 1u                /* header share_flags: shared with the group shared_gid */
#define ASPECTS_TABLE_LIVE_PROTOTYPES 1u      /* header options: `create --live-prototypes` (watch.c) */
#define ASPECTS_PROTO_NAME_SIZE 128u
#define ASPECTS_EVENT_STRING_SIZE 80u
#define ASPECTS_EVENT_CALLER_SIZE 56u         /* an event's caller object name, NUL included */
#define ASPECTS_TABLE_NAME_MAX 200u
#define ASPECTS_MAX_CORRUPT_BITS 64u          /* bits one `corrupt` firing flips */
#define ASPECTS_NO_ARG 0xffu                  /* data_size of a byte count: no item-size argument */

/* ---- enums (stable numbers: they are stored in shared memory) ------------------------- */

/* Argument and return types of a signature. STR is a `const char *` the advice may read. */
enum aspects_type {
    ASPECTS_T_VOID = 0,
    ASPECTS_T_I8 = 1,
    ASPECTS_T_U8 = 2,
    ASPECTS_T_I16 = 3,
    ASPECTS_T_U16 = 4,
    ASPECTS_T_I32 = 5,
    ASPECTS_T_U32 = 6,
    ASPECTS_T_I64 = 7,
    ASPECTS_T_U64 = 8,
    ASPECTS_T_PTR = 9,
    ASPECTS_T_STR = 10,
    ASPECTS_T_F32 = 11,
    ASPECTS_T_F64 = 12,
    ASPECTS_T_STRUCT = 13,   /* a struct by value (prototype rules), laid out in the proto entry */
    ASPECTS_T_COUNT = 14
};

#define ASPECTS_PROTO_STRUCTS 4u          /* struct types one prototype may pass by value */
#define ASPECTS_STRUCT_FIELDS 8u          /* scalar fields of such a struct */
#define ASPECTS_NO_STRUCT 0xffu

enum aspects_position {
    ASPECTS_POSITION_BEFORE = 0,
    ASPECTS_POSITION_INSTEAD = 1,
    ASPECTS_POSITION_AFTER = 2
};

/* Rule slot states. A writer's change is a batch: it writes its new rules as ADDING and marks
 * the rules it removes REMOVING, each with the batch's number, then commits the whole batch
 * with one release store of the header's committed_batch. Whether a slot takes part in calls
 * is aspects_rule_live(): a batch counts all at once or not at all, also for a writer killed
 * half-way (the next writer rolls an uncommitted batch back and a committed one forward). */
enum aspects_rule_state {
    ASPECTS_RULE_FREE = 0,
    ASPECTS_RULE_ACTIVE = 1,
    ASPECTS_RULE_REMOVED = 2,  /* kept for `list --all` and stats until the slot is reused */
    ASPECTS_RULE_ADDING = 3,   /* added by batch `batch`: live once that batch is committed */
    ASPECTS_RULE_REMOVING = 4  /* removed by batch `batch`: live until that batch is committed */
};

/* Action bits of a rule; several may be combined (e.g. DELAY | LOG before). */
enum aspects_action {
    ASPECTS_ACTION_RETURN = 1u << 0, /* replace the return value with return_value */
    ASPECTS_ACTION_ERRNO = 1u << 1,  /* set errno to errno_value */
    ASPECTS_ACTION_DELAY = 1u << 2,  /* sleep delay_ns */
    ASPECTS_ACTION_LOG = 1u << 3,    /* append an event record */
    ASPECTS_ACTION_SIGNAL = 1u << 4, /* raise signal_number */
    ASPECTS_ACTION_ARGS = 1u << 5,   /* overwrite arguments before the original runs */
    ASPECTS_ACTION_HERRNO = 1u << 6, /* set h_errno (gethostbyname-style failures) */
    ASPECTS_ACTION_CALL = 1u << 7,   /* run the user's function (call_off/len, call_fn_off/len):
                                        advice as code, aspects_advice.h */
    ASPECTS_ACTION_CORRUPT = 1u << 8,/* after: flip corrupt_bits seeded bits of the bytes the
                                        call returned in argument data_buf */
    ASPECTS_ACTION_SHORT = 1u << 9   /* before: argument data_count cut to a seeded part, so the
                                        original transfers less and returns that count */
};

/* Why a process refused a table it could open (header.last_failure_reason). */
enum aspects_attach_failure {
    ASPECTS_ATTACH_FAILED_ABI = 1,      /* written for another ABI version */
    ASPECTS_ATTACH_FAILED_CATALOG = 2,  /* written for another catalog (aspectctl and preload differ) */
    ASPECTS_ATTACH_FAILED_LAYOUT = 3    /* sizes, capacities or offsets that do not add up */
};

/* Rule flags. */
enum aspects_rule_flag {
    ASPECTS_RULE_AUTOREMOVE = 1u << 0,     /* fire once in the whole table, then leave it */
    ASPECTS_RULE_ONCE_PROCESS = 1u << 1,   /* at most one firing per process */
    ASPECTS_RULE_ONCE_HIERARCHY = 1u << 2, /* at most one firing per process hierarchy */
    ASPECTS_RULE_PROBABILITY = 1u << 3,    /* fire only on the seeded schedule of `probability` */
    ASPECTS_RULE_RETURN_IS_CODE = 1u << 4, /* the return value is the chosen error code itself */
    ASPECTS_RULE_HAS_PROCESS = 1u << 5,    /* `process` glob on the program's path */
    ASPECTS_RULE_HAS_CALLER = 1u << 6,     /* `caller` glob on the calling object's path */
    ASPECTS_RULE_HAS_SITE = 1u << 7,       /* `site`: the call comes from one return address */
    ASPECTS_RULE_FAMILY = 1u << 8,         /* a family: the slot is in the lists of more groups
                                              (family_off/len), one rule with one counter */
    ASPECTS_RULE_HAS_RESULT = 1u << 9,     /* an after rule's condition on the original's result
                                              and errno (result_min/max/errno/checks) */
    ASPECTS_RULE_EVERY_FROM = 1u << 10,    /* `every` counts from the call after `after` (the rule
                                              language's `first`, strace's when=N+STEP): it fires
                                              on after + 1, after + 1 + every, ... */
    ASPECTS_RULE_HAS_CONTEXT = 1u << 11,   /* `context`: the call's calling context (its site and
                                              context_depth - 1 callers) hashes to context_hash.
                                              Always with ASPECTS_RULE_HAS_SITE, the context's first
                                              frame, which is decided first and cheaply */
    ASPECTS_RULE_RECORD_CONTEXT = 1u << 12, /* the rule's events record the call's calling context
                                              (ASPECTS_MAX_CONTEXT_DEPTH frames): `"context": true` */
    ASPECTS_RULE_STREAM_FAULT = 1u << 13,  /* `fail` on a stdio function (`fails: stream:`): its
                                              stream's own read(2)/write(2) fails under glibc */
    ASPECTS_RULE_DEFAULT_BY_KIND = 1u << 14 /* `"fail": true` where the catalog's default depends on
                                              the descriptor: chosen by fstat(2) when it fires */
};

/* Where the counters of nth/after/every/times live. */
enum aspects_scope {
    ASPECTS_SCOPE_PROCESS = 0,
    ASPECTS_SCOPE_THREAD = 1,
    ASPECTS_SCOPE_HIERARCHY = 2,
    ASPECTS_SCOPE_TABLE = 3
};

/* Argument matchers. Integer matchers compare the argument as a 64-bit value of its declared
 * type (sign-extended for signed types); string matchers read a NUL-terminated string. */
enum aspects_match_kind {
    ASPECTS_MATCH_EQ = 1,
    ASPECTS_MATCH_NE = 2,
    ASPECTS_MATCH_RANGE = 3,    /* a <= v <= b, signedness of the argument's type */
    ASPECTS_MATCH_MASK_ANY = 4, /* (v & a) != 0 */
    ASPECTS_MATCH_MASK_ALL = 5, /* (v & a) == a */
    ASPECTS_MATCH_GLOB = 6,     /* fnmatch(pattern, s, 0) semantics */
    ASPECTS_MATCH_PREFIX = 7,
    ASPECTS_MATCH_FDPATH = 8    /* glob on the path an fd argument refers to (/proc/self/fd) */
};

/* Event kinds. */
enum aspects_event_kind {
    ASPECTS_EVENT_FIRED = 1,   /* a rule's action ran */
    ASPECTS_EVENT_LOGGED = 2,  /* a `log` action recorded the call */
    ASPECTS_EVENT_SHADOWED = 3, /* an `instead` rule matched but an earlier one fired */
    ASPECTS_EVENT_UNAVAILABLE = 4, /* a `call` rule fired but its function could not run here (ret:
                                     enum aspects_advice_unavailable); the call went on without it */
    ASPECTS_EVENT_UNTAKEN = 5     /* a stream fault on a call that made no system call: a real error
                                     cannot happen there; the call ran as it does, not counted fired */
};

/* Why a firing `call` rule's function did not run (the `ret` of its ASPECTS_EVENT_UNAVAILABLE). */
enum aspects_advice_unavailable {
    ASPECTS_ADVICE_NOT_LOADED_HERE = 1, /* not loaded yet, and this call came where loading is not
                                           safe (a signal handler may be running, or the loader) */
    ASPECTS_ADVICE_LOAD_FAILED = 2,     /* dlopen failed (ASPECTS_DEBUG=1 prints the loader's words) */
    ASPECTS_ADVICE_NO_FUNCTION = 3,     /* the object exports no function of that name */
    ASPECTS_ADVICE_NO_VERSION = 4,      /* the object was not built with aspects_advice.h */
    ASPECTS_ADVICE_OTHER_VERSION = 5,   /* built with another major version of aspects_advice.h */
    ASPECTS_ADVICE_TOO_MANY = 6,        /* more advice objects than one process loads */
    ASPECTS_ADVICE_BAD_TARGET = 7,      /* the slot's call target does not validate */
    ASPECTS_ADVICE_UNTRUSTED = 8        /* a table shared with a group, or any table of root, names an
                                           object that someone else than this process's user or root
                                           could change (or a path with a symbolic link, or a bare name) */
};

/* One error enum for the library API and the CLI (Aspects' AspectErrorCode). Stable values;
 * the message of each code lives in one table on the Swift side (AspectsError). */
enum aspects_error {
    ASPECTS_OK = 0,
    ASPECTS_ERR_MALFORMED_JSON = 1,      /* the rule text is not valid JSON */
    ASPECTS_ERR_UNKNOWN_FIELD = 2,       /* a field the rule language does not have */
    ASPECTS_ERR_MISSING_FIELD = 3,       /* a required field is absent */
    ASPECTS_ERR_WRONG_TYPE = 4,          /* a field has the wrong JSON type */
    ASPECTS_ERR_INVALID_VALUE = 5,       /* a field's value is out of its domain */
    ASPECTS_ERR_UNKNOWN_SYMBOL = 6,      /* not in the catalog and no prototype given */
    ASPECTS_ERR_REFUSED_SYMBOL = 7,      /* the engine depends on it */
    ASPECTS_ERR_PROTOTYPE_MISMATCH = 8,  /* prototype contradicts the catalog */
    ASPECTS_ERR_BAD_PROTOTYPE = 9,       /* the prototype does not parse */
    ASPECTS_ERR_POSITION_NOT_ALLOWED = 10, /* e.g. instead on a noreturn function */
    ASPECTS_ERR_ARG_OUT_OF_RANGE = 11,   /* argument index past the arity */
    ASPECTS_ERR_MATCHER_TYPE = 12,       /* string matcher on an integer argument, ... */
    ASPECTS_ERR_UNKNOWN_ERRNO = 13,      /* errno name that does not exist */
    ASPECTS_ERR_ERRNO_NOT_ALLOWED = 14,  /* the function cannot produce that errno */
    ASPECTS_ERR_DUPLICATE_ID = 15,       /* the id is already in the table or the file */
    ASPECTS_ERR_TABLE_FULL = 16,         /* no free rule slot */
    ASPECTS_ERR_GROUP_FULL = 17,         /* too many rules on one symbol */
    ASPECTS_ERR_NO_TABLE = 18,           /* the named table does not exist */
    ASPECTS_ERR_TABLE_EXISTS = 19,       /* create of a table that exists */
    ASPECTS_ERR_BAD_TABLE = 20,          /* wrong magic, ABI version, catalog or size */
    ASPECTS_ERR_SYSTEM = 21,             /* an OS call failed */
    ASPECTS_ERR_NO_SUCH_RULE = 22,       /* remove of an id that is not in the table */
    ASPECTS_ERR_BAD_TABLE_NAME = 23,     /* a table name that shm cannot hold */
    ASPECTS_ERR_USAGE = 24,              /* command-line usage */
    ASPECTS_ERR_LIMIT = 25,              /* a rule exceeds a fixed capacity of the table */
    ASPECTS_ERR_NO_INPUT = 26,           /* a rules file that cannot be read */
    ASPECTS_ERR_TABLE_BUSY = 27,         /* another writer held the table's lock past the timeout */
    ASPECTS_ERR_OUTPUT = 28              /* an output (file, stdout, report) cannot be written */
};

/* ---- the shared structures -------------------------------------------------------------- */

/* Table header: at offset 0, 256 bytes. */
typedef struct aspects_table_header {
    uint64_t magic;              /* ASPECTS_MAGIC; written last at creation */
    uint32_t abi_version;        /* ASPECTS_ABI_VERSION */
    uint32_t header_size;        /* sizeof(aspects_table_header) */
    uint64_t total_size;         /* bytes of the whole mapping */
    uint64_t catalog_hash;       /* FNV-1a of the catalog spec both sides were built from */
    uint32_t group_capacity;     /* entries in the armed and group-list arrays */
    uint32_t rule_capacity;      /* rule slots */
    uint32_t event_capacity;     /* event records, a power of two */
    uint32_t rule_size;          /* sizeof(aspects_rule) */
    uint32_t event_size;         /* sizeof(aspects_event) */
    uint32_t writer_pid;         /* a writer mid-update (0 = none); the next writer repairs */
    uint64_t armed_offset;       /* uint8_t armed[group_capacity] */
    uint64_t lists_offset;       /* aspects_group_list[group_capacity] */
    uint64_t rules_offset;       /* aspects_rule[rule_capacity] */
    uint64_t events_offset;      /* aspects_event[event_capacity] */
    uint64_t generation;         /* atomic: bumped by every committed change */
    uint64_t next_rule_number;   /* writer-only: generated ids r1, r2, ... */
    uint64_t next_serial;        /* writer-only: rule serials, never reused */
    uint64_t event_head;         /* atomic: events ever reserved (ring position) */
    uint64_t next_hierarchy;     /* atomic: hierarchy ids handed to root processes */
    uint64_t created_ns;         /* CLOCK_REALTIME at creation */
    uint64_t stats_offset;       /* aspects_process_stat[stat_capacity] */
    uint32_t stat_capacity;      /* a power of two */
    uint32_t options;            /* fixed at creation: ASPECTS_TABLE_LIVE_PROTOTYPES, each attached
                                    process keeps a thread that applies prototype rules as they
                                    come (the writer wakes it on proto_generation) */
    uint64_t protos_offset;      /* aspects_proto_symbol[ASPECTS_PROTO_CAPACITY] */
    uint64_t proto_generation;   /* atomic: bumped when a prototype symbol comes or goes; a futex
                                    word too (its low half): the writer wakes every waiter on it
                                    after a batch that bumped it (aspects_wake_prototype_watchers) */
    uint64_t committed_batch;    /* atomic: the last writer batch whose changes count */
    /* Offsets 176..199 stay where they are in every ABI version: a preload that refuses a
     * table of another version still says so here (aspectctl reads them from any version). */
    uint64_t attach_head;        /* atomic: processes ever attached (ring position in attachments) */
    uint64_t attach_failures;    /* atomic: processes that found this table and refused it */
    uint32_t last_failure_pid;   /* the latest of them ... */
    uint32_t last_failure_reason;/* ... and why: enum aspects_attach_failure */
    uint64_t event_cursor;       /* aspectctl only: `events` starts here; `events --clear` moves it
                                    to event_head (the preload never reads it) */
    uint64_t sources_offset;     /* aspects_rule_source[rule_capacity] (aspectctl only) */
    uint32_t shared_gid;         /* with ASPECTS_SHARE_GROUP: the group the table is shared with */
    uint32_t share_flags;        /* ASPECTS_SHARE_GROUP: `create --share-with-group`, the file
                                    mode 0660 and group shared_gid (aspects_trust.h) */
    uint64_t identity[2];        /* the anchor's identity (aspects_table_anchor): a shmid the
                                    kernel handed out again is not this table */
    uint32_t anchored;           /* 1 from just before `create` links the anchor in: a segment
                                    of ours without it, its creator gone and nothing attached,
                                    is what a killed `create` left, and `gc` removes it */
    uint8_t reserved[12];
} aspects_table_header;

/* ---- where a table lives -------------------------------------------------------------------
 * A table's memory is a System V shared memory segment: its size is fixed when it is made, so
 * nobody can shrink it under a process that has it attached (a file could be truncated, and a
 * touch past its new end is a SIGBUS that kills a host blocking signals), and only its creator
 * (or CAP_SYS_ADMIN) can remove it — a member of a shared table's group can write it, not
 * shrink or remove it. The table's name is a small file, the anchor, which says which segment
 * holds the table; the trust rule applies to the anchor and to the segment alike
 * (aspects_trust.h). The anchor is written once, whole, when the table is made, and never
 * again: truncating or rewriting it afterwards cannot touch a process that has attached. */
#define ASPECTS_ANCHOR_MAGIC 0x524f48434e415341ULL /* "ASANCHOR", little endian */
#define ASPECTS_ANCHOR_VERSION 1u

typedef struct aspects_table_anchor {
    uint64_t magic;              /* ASPECTS_ANCHOR_MAGIC */
    uint32_t version;            /* ASPECTS_ANCHOR_VERSION */
    int32_t shmid;               /* the segment holding the table */
    uint64_t size;               /* its size in bytes (shm_segsz), the table's total_size */
    uint64_t identity[2];        /* 128 random bits, also in the segment's header */
} aspects_table_anchor;

/* The rules of one symbol group, in table order (a seqlock, see above). */
typedef struct aspects_group_list {
    uint32_t seq;
    uint32_t count;                       /* <= ASPECTS_GROUP_RULES */
    uint16_t rules[ASPECTS_GROUP_RULES];  /* rule slot indices */
} aspects_group_list;

typedef struct aspects_matcher {
    uint8_t arg;       /* argument index, 0-based, in the alias group's primary prototype */
    uint8_t kind;      /* enum aspects_match_kind */
    uint8_t type;      /* enum aspects_type of the argument, as validated */
    uint8_t pad0;
    uint16_t str_off;  /* pattern in rule->strings (GLOB, PREFIX, FDPATH) */
    uint16_t str_len;
    uint64_t a;        /* EQ/NE value, RANGE min, MASK bits */
    uint64_t b;        /* RANGE max */
} aspects_matcher;

/* Why a prototype symbol is not (or only partly) applied in a process. */
enum aspects_proto_status {
    ASPECTS_PROTO_APPLIED = 0,       /* every importing slot points at the advice */
    ASPECTS_PROTO_PENDING = 1,       /* no process has tried yet */
    ASPECTS_PROTO_NOT_IMPORTED = 2,  /* no loaded object imports the name */
    ASPECTS_PROTO_PROTECTED = 3,     /* mprotect refused to open a RELRO page (sealed, W^X) */
    ASPECTS_PROTO_UNRESOLVED = 4,    /* a lazy slot whose target the loader could not name */
    ASPECTS_PROTO_NO_CLOSURE = 5,    /* libffi could not build the forwarding stub */
    ASPECTS_PROTO_TOO_MANY = 6       /* more importing slots than a process tracks */
};

/* An exported function advised from a rule's prototype (docs/ARCHITECTURE.md §5, prototype
 * stubs): not in the catalog, so
 * the preload rewrites the GOT slots that import it. Written by the writer under the seqlock;
 * the status fields by whichever process last applied it. */
typedef struct aspects_proto_symbol {
    uint32_t seq;
    uint32_t state;               /* 0 free, 1 active */
    uint32_t group;               /* its rule group (>= the catalog's groups) */
    uint32_t rules;               /* active rules on it (writer's bookkeeping) */
    uint8_t ret;                  /* enum aspects_type */
    uint8_t nargs;                /* parameters incl. forwarded variadic ones, <= 8 */
    uint8_t nfixed;
    uint8_t flags;                /* 1 = variadic */
    uint8_t args[ASPECTS_MAX_ARGS];
    uint32_t pad0;
    uint64_t serial;              /* unique per registration */
    char name[ASPECTS_PROTO_NAME_SIZE];
    uint32_t status;              /* enum aspects_proto_status, of the last attempt */
    uint32_t status_pid;          /* the process that made it */
    uint32_t patched;             /* GOT slots it points at the advice */
    uint32_t objects;             /* objects that import the name */
    uint8_t struct_count;         /* struct types passed or returned by value */
    uint8_t struct_field_count[ASPECTS_PROTO_STRUCTS];
    uint8_t struct_fields[ASPECTS_PROTO_STRUCTS][ASPECTS_STRUCT_FIELDS]; /* scalar aspects_type */
    uint8_t arg_struct[ASPECTS_MAX_ARGS]; /* for ASPECTS_T_STRUCT arguments: which struct */
    uint8_t ret_struct;
    uint8_t reserved[26];
} aspects_proto_symbol;

/* Per-hierarchy counters of a rule (scope hierarchy, once: hierarchy). An entry whose
 * hierarchy has ended (no process of it runs) is taken over by another one: compare-and-swap
 * to the new id with bit 63 set, counts zeroed, then the id alone. */
typedef struct aspects_hierarchy_counter {
    uint64_t hierarchy; /* 0 = free; claimed with compare-and-swap */
    uint64_t calls;     /* matching calls in this hierarchy */
    uint64_t fired;     /* firings counted against `times` */
    uint64_t once;      /* 0, then 1 once the hierarchy's one firing is claimed */
} aspects_hierarchy_counter;

/* Calls matched and firings of one rule in one process ("stats by process"). Claimed by the
 * process with a compare-and-swap of `key` from 0; a process that finds no free entry counts
 * into the rule's own matched/fired fields instead. */
typedef struct aspects_process_stat {
    uint64_t key;       /* ((rule serial) << 22) | pid; 0 = free */
    uint32_t pid;
    uint32_t slot;
    uint64_t matched;
    uint64_t fired;
    uint64_t image;     /* the process image's attachment number + 1 (attach_head when it
                           registered); an exec'd image with the same pid takes entries of its
                           own, so counts are told apart by program. Written after the key is
                           claimed: a lookup that sees another image's (or 0) moves on */
} aspects_process_stat;

/* BEGIN GENERATED by aspects-gen from config/rule-slot.spec: edit the spec, then `swift run aspects-gen` */

/* Capacities of one rule slot. */
#define ASPECTS_MAX_MATCHERS 4u               /* argument conditions of one rule */
#define ASPECTS_MAX_ARG_SETS 4u               /* arguments one rule overwrites */
#define ASPECTS_RULE_ID_SIZE 32u              /* a rule's id, including the terminating NUL */
#define ASPECTS_RULE_STRINGS_SIZE 512u        /* glob / prefix patterns and other bytes of one rule */
#define ASPECTS_HIERARCHY_SLOTS 8u            /* process hierarchies one rule counts separately */
#define ASPECTS_MAX_ERRNO_CHOICES 8u          /* the codes `fail` with a list draws from */
#define ASPECTS_MAX_CONTEXT_DEPTH 4u          /* return addresses in a calling context: the site, then
                                                 its callers (`when.context`, docs/ARCHITECTURE.md) */

/* A rule slot: 1280 bytes.
 * `matched` and `fired` count the calls of processes that found no aspects_process_stat
 * entry; a rule's totals are those plus its entries in the stats region.
 * Its bytes:
 *   [0, 384)     written by the writer under the seqlock
 *   [384, 680)   live counters, own cache lines: readers update them atomically
 *   [680, 736)   written by the writer under the seqlock (added after the counters)
 *   [736, 768)   reserved: zero; room for fields written by the writer
 *   [768, 1280)  the rule's strings: patterns, a struct result, a family's groups (the *_off/_len fields) */
typedef struct aspects_rule {
    /* ---- [0, 384): written by the writer under the seqlock ---- */
    uint32_t seq;                 /* seqlock: odd while the writer changes the slot */
    uint32_t state;               /* enum aspects_rule_state */
    uint32_t group;               /* symbol group (catalog index or prototype group) */
    uint32_t position;            /* enum aspects_position */
    char id[ASPECTS_RULE_ID_SIZE]; /* the token, NUL-terminated */
    uint32_t actions;             /* enum aspects_action bits */
    int32_t errno_value;          /* with ASPECTS_ACTION_ERRNO */
    int64_t return_value;         /* with ASPECTS_ACTION_RETURN: an integer per the return type, the
                                     IEEE bits of a float/double result (float in the low half) */
    uint64_t delay_ns;            /* with ASPECTS_ACTION_DELAY */
    uint32_t signal_number;       /* with ASPECTS_ACTION_SIGNAL */
    uint32_t scope;               /* enum aspects_scope */
    uint64_t nth;                 /* fire on exactly the nth matching call (0 = unset) */
    uint64_t after;               /* fire only on matching calls after this many */
    uint64_t every;               /* fire on every k-th matching call (0 = unset) */
    uint64_t times;               /* at most this many firings in the scope (0 = unlimited) */
    uint64_t probability;         /* with ASPECTS_RULE_PROBABILITY: fire when draw < this (2^-64 units) */
    uint64_t seed;                /* probability seed */
    uint32_t flags;               /* enum aspects_rule_flag bits */
    uint32_t matcher_count;       /* <= ASPECTS_MAX_MATCHERS */
    aspects_matcher matchers[ASPECTS_MAX_MATCHERS];
    uint32_t arg_set_count;       /* <= ASPECTS_MAX_ARG_SETS */
    uint8_t arg_set_index[ASPECTS_MAX_ARG_SETS];
    int64_t arg_set_value[ASPECTS_MAX_ARG_SETS];
    uint64_t serial;              /* unique per added rule: per-process counters key on it */
    uint64_t added_ns;            /* CLOCK_REALTIME of add */
    uint64_t removed_ns;          /* CLOCK_REALTIME of remove (0 while active) */
    uint32_t removed_by_pid;      /* pid that removed it (autoRemove: the one that fired) */
    uint16_t result_off;          /* a struct result (ASPECTS_ACTION_RETURN of a function returning */
    uint16_t result_len;          /* a struct by value): its bytes, laid out as C does, in strings */
    uint32_t named_export;        /* the catalog export the rule named (display only) */
    uint16_t site_off;            /* `site` (ASPECTS_RULE_HAS_SITE): the calling object's file */
    uint16_t site_len;            /*   name (no directory) in strings, and site_offset below */
    uint64_t rule_key;            /* FNV-1a of the id: the rule's part of the seeded draw */
    int32_t errno_choices[ASPECTS_MAX_ERRNO_CHOICES]; /* `fail` with a list: one is drawn */
    uint32_t errno_choice_count;  /* 0 = errno_value as is */
    uint16_t process_off;         /* `process` pattern in strings (ASPECTS_RULE_HAS_PROCESS) */
    uint16_t process_len;
    uint16_t caller_off;          /* `caller` pattern in strings (ASPECTS_RULE_HAS_CALLER) */
    uint16_t caller_len;
    uint16_t family_off;          /* ASPECTS_RULE_FAMILY: the other groups, uint16_t each, in */
    uint16_t family_len;          /*   strings (2-byte aligned); family_len of them, at most ASPECTS_MAX_FAMILY;
                                     right after them, family_len rows of matcher_count bytes: each
                                     matcher's argument number in that group (a condition naming its
                                     argument: open's path is 0, openat's 1); `matchers[].arg` is the
                                     own group's */
    uint64_t batch;               /* the writer batch of an ADDING or REMOVING slot */
    uint64_t site_offset;         /* `site`: the return address's offset in that file */
    /* ---- [384, 680): live counters, own cache lines: readers update them atomically ---- */
    uint64_t matched;             /* calls whose arguments matched */
    uint64_t fired;               /* calls on which the action ran */
    uint64_t table_calls;         /* scope table: the matching-call counter */
    uint64_t table_fired;         /* scope table: firings, for `times` */
    uint32_t claim;               /* autoRemove: 0, then the pid of the one firing */
    uint32_t hierarchies_full;    /* processes that found every entry below taken by a hierarchy
                                     still running: the rule does not advise them */
    aspects_hierarchy_counter hierarchies[ASPECTS_HIERARCHY_SLOTS];
    /* ---- [680, 736): written by the writer under the seqlock (added after the counters) ---- */
    /* `when.result` / `when.errno` of an after rule (ASPECTS_RULE_HAS_RESULT): what the
     * original returned lies in [result_min, result_max] (check bit 0), the errno it left
     * is result_errno (bit 1), and it is below the value of the group's integer argument
     * result_arg (bit 2, `lt_arg`). */
    int64_t result_min;
    int64_t result_max;
    int32_t result_errno;
    uint32_t result_checks;
    uint32_t result_arg;
    /* `call` (ASPECTS_ACTION_CALL): the object as dlopen takes it (an absolute path, or a bare
     * soname for the loader's search) and the function's name, each NUL-terminated in strings. */
    uint16_t call_off;
    uint16_t call_len;
    uint16_t call_fn_off;
    uint16_t call_fn_len;
    /* `corrupt` and `short`: the group's arguments holding the data, its count, and (fread)
     * the item size (ASPECTS_NO_ARG: the count is in bytes), from the catalog's `data:` line. */
    uint8_t data_buf;
    uint8_t data_count;
    uint8_t data_size;
    uint8_t pad2;
    uint32_t corrupt_bits;        /* bits one `corrupt` firing flips, 1..ASPECTS_MAX_CORRUPT_BITS */
    uint32_t context_depth;       /* ASPECTS_RULE_HAS_CONTEXT: frames in the context, 1..ASPECTS_MAX_CONTEXT_DEPTH */
    uint64_t context_hash;        /*   and their aspects_context_hash */
    /* ---- [736, 768): reserved: zero; room for fields written by the writer ---- */
    uint8_t reserved1[32];
    /* ---- [768, 1280): the rule's strings: patterns, a struct result, a family's groups (the *_off/_len fields) ---- */
    char strings[ASPECTS_RULE_STRINGS_SIZE];
} aspects_rule;

/* END GENERATED from config/rule-slot.spec */

/* A process that attached the table: 192 bytes, in a ring of ASPECTS_ATTACH_CAPACITY entries
 * (header.attach_head counts them all), so `run`, `list` and `stats` can say who attached —
 * and that nobody did. Written once by the process itself at start-up (seqlock), except the
 * crash words, which a dying process stores on its own (atomically, outside the seqlock). */
typedef struct aspects_attachment {
    uint32_t seq;            /* odd while written */
    uint32_t pid;
    uint32_t ppid;
    uint32_t uid;
    uint64_t hierarchy;
    uint64_t attached_ns;    /* CLOCK_REALTIME */
    uint64_t start_ticks;    /* /proc/PID/stat starttime: tells the process from a later one with its pid */
    char program[88];        /* its executable's path, the start cut off to fit ("" unknown) */
    /* With ASPECTS_RECORD_CRASH=1 (explore's runs, crash.c): the crash signal (SIGSEGV, SIGBUS,
     * SIGFPE, SIGILL, SIGABRT, SIGSYS) that ended this process image, or a fork child of it
     * that did not exec; 0: none. crash_pid is stored first, crash_signal with release. */
    uint32_t crash_signal;
    uint32_t crash_pid;
    /* Forwarding stubs this process could not build (libffi missing or refusing a signature):
     * how many, and the first one's export index + 1 (0: none) — rules on those functions
     * advise nothing here, which `run` and `list` say without ASPECTS_DEBUG. Stored by the
     * process itself, atomically, outside the seqlock, like the crash words. */
    uint32_t stub_failures;
    uint32_t stub_failed_export;
    /* The header's proto_generation + 1 that this process's last prototype pass applied (0:
     * none yet), stored by the process (proto.c) atomically outside the seqlock: on a
     * --live-prototypes table `add` waits until the running processes have applied its batch. */
    uint64_t protos_applied;
    /* With ASPECTS_RECORD_CRASH=1: a crash signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT)
     * that a handler of the program's caught and did not return from — it exited, or jumped
     * out — whose stack the crash files hold, as for crash_signal; 0: none, or the handler
     * returned (the program went on). crash_pid is stored first, this with release. */
    uint32_t crash_caught;
    uint32_t pad;
    uint8_t reserved[32];
} aspects_attachment;

/* A rule's JSON as `add` was given it (with its id and any drawn seed written in), kept so
 * that `list --rules` gives back rules `add` accepts. Written by the writer with the slot;
 * valid while `serial` equals the slot's. Only aspectctl reads it. */
typedef struct aspects_rule_source {
    uint64_t serial;
    uint32_t length;     /* bytes of text; 0: none kept (too long) */
    uint32_t pad;
    char text[ASPECTS_RULE_SOURCE_SIZE - 16];
} aspects_rule_source;

/* An event record: 576 bytes, in a ring of event_capacity records. */
typedef struct aspects_event {
    uint64_t seq;          /* 2*i+1 while record i is written, 2*i+2 once complete */
    uint64_t time_ns;      /* CLOCK_REALTIME */
    uint32_t pid;
    uint32_t tid;
    uint64_t hierarchy;
    uint64_t rule_serial;
    uint64_t call_number;  /* the rule's matching-call count in its scope */
    uint64_t seed;
    int64_t ret;           /* return value (after the original or the advice) */
    int32_t err;           /* errno the caller sees (0 when unchanged and none) */
    uint16_t kind;         /* enum aspects_event_kind */
    uint8_t position;
    uint8_t arg_count;
    uint32_t rule_slot;
    uint32_t group;
    uint32_t export_index; /* which name of the group was called */
    uint8_t arg_types[ASPECTS_MAX_ARGS];
    uint8_t ret_type;
    uint8_t string_arg;    /* index of the argument copied into `string`, 0xff = none */
    uint8_t pad0[2];
    char rule_id[ASPECTS_RULE_ID_SIZE];
    uint64_t args[6];
    char string[ASPECTS_EVENT_STRING_SIZE];
    uint64_t caller_offset;  /* the call's site: the return address's offset in the file ... */
    char caller_object[ASPECTS_EVENT_CALLER_SIZE]; /* ... named here (no directory; "" unknown) */
    /* A rule with ASPECTS_RULE_RECORD_CONTEXT: the calling context, frame 0 being the site
     * above; context_depth frames were found (0: not known here). Frames 1.. are the callers. */
    uint64_t context_hash;   /* aspects_context_hash of all context_depth frames */
    uint32_t context_depth;
    uint32_t pad1;
    uint64_t context_offsets[ASPECTS_MAX_CONTEXT_DEPTH - 1];
    char context_objects[ASPECTS_MAX_CONTEXT_DEPTH - 1][ASPECTS_EVENT_CALLER_SIZE];
    uint8_t reserved[48];
} aspects_event;

/* Whether a rule slot in `state`, written by writer batch `batch`, takes part in calls while
 * the table's committed batch is `committed` (see enum aspects_rule_state). The one definition
 * for the preload, the writer's repair and `list`. */
static inline int aspects_rule_live(uint32_t state, uint64_t batch, uint64_t committed) {
    return state == ASPECTS_RULE_ACTIVE || (state == ASPECTS_RULE_ADDING && batch <= committed) ||
           (state == ASPECTS_RULE_REMOVING && batch > committed);
}

/* Whether a rule slot applies to `group`: its own, or (a family rule) one of its others.
 * Bounds-checked: the family list is read only inside the slot's strings. */
static inline int aspects_rule_in_group(const aspects_rule *r, uint32_t group) {
    if (r->group == group) return 1;
    if (!(r->flags & ASPECTS_RULE_FAMILY)) return 0;
    const uint32_t off = r->family_off, n = r->family_len;
    if (n > ASPECTS_MAX_FAMILY || off % 2 || off > ASPECTS_RULE_STRINGS_SIZE || n * 2u > ASPECTS_RULE_STRINGS_SIZE - off) return 0;
    for (uint32_t i = 0; i < n; i++) {
        uint16_t g;
        __builtin_memcpy(&g, r->strings + off + 2u * i, 2);
        if (g == group) return 1;
    }
    return 0;
}

/* ---- calling contexts: one hash for the preload and aspectctl ---------------------------- */

/* A calling context's hash: FNV-1a over the frame count, then each frame's object file name
 * (no directory) and a NUL, then its return address's offset in that file (8 bytes, little
 * end first). The preload folds the frames it unwinds, aspectctl the frames a rule writes
 * ("sqlite3+0x1a2b"); equal frames give equal hashes whatever the addresses the objects were
 * loaded at. Start with aspects_context_hash_start, fold each frame, site first. */
static inline uint64_t aspects_context_hash_byte(uint64_t h, uint8_t b) {
    return (h ^ b) * 0x100000001b3ULL;
}
static inline uint64_t aspects_context_hash_start(uint32_t depth) {
    return aspects_context_hash_byte(0xcbf29ce484222325ULL, (uint8_t)depth);
}
static inline uint64_t aspects_context_hash_frame(uint64_t h, const char *name, uint32_t len, uint64_t offset) {
    for (uint32_t i = 0; i < len; i++) h = aspects_context_hash_byte(h, (uint8_t)name[i]);
    h = aspects_context_hash_byte(h, 0);
    for (uint32_t i = 0; i < 8; i++) h = aspects_context_hash_byte(h, (uint8_t)(offset >> (8 * i)));
    return h;
}
static inline uint64_t aspects_event_context_offset(const aspects_event *e, uint32_t i) {
    return i < ASPECTS_MAX_CONTEXT_DEPTH - 1 ? e->context_offsets[i] : 0;
}
static inline const char *aspects_event_context_object(const aspects_event *e, uint32_t i) {
    return i < ASPECTS_MAX_CONTEXT_DEPTH - 1 ? e->context_objects[i] : "";
}

/* ---- layout helpers (used by both sides; Swift cannot compute with C macros) ----------- */

static inline uint64_t aspects_align64(uint64_t v) { return (v + 63u) & ~(uint64_t)63u; }

static inline uint64_t aspects_armed_offset(void) { return aspects_align64(sizeof(aspects_table_header)); }
static inline uint64_t aspects_lists_offset(uint32_t groups) {
    return aspects_align64(aspects_armed_offset() + groups);
}
static inline uint64_t aspects_rules_offset(uint32_t groups) {
    return aspects_align64(aspects_lists_offset(groups) + (uint64_t)groups * sizeof(aspects_group_list));
}
static inline uint64_t aspects_events_offset(uint32_t groups, uint32_t rules) {
    return aspects_align64(aspects_rules_offset(groups) + (uint64_t)rules * sizeof(aspects_rule));
}
static inline uint64_t aspects_stats_offset(uint32_t groups, uint32_t rules, uint32_t events) {
    return aspects_align64(aspects_events_offset(groups, rules) + (uint64_t)events * sizeof(aspects_event));
}
static inline uint64_t aspects_protos_offset(uint32_t groups, uint32_t rules, uint32_t events, uint32_t stats) {
    return aspects_align64(aspects_stats_offset(groups, rules, events) + (uint64_t)stats * sizeof(aspects_process_stat));
}
static inline uint64_t aspects_attachments_offset(uint32_t groups, uint32_t rules, uint32_t events, uint32_t stats) {
    return aspects_align64(aspects_protos_offset(groups, rules, events, stats) + (uint64_t)ASPECTS_PROTO_CAPACITY * sizeof(aspects_proto_symbol));
}
static inline uint64_t aspects_sources_offset(uint32_t groups, uint32_t rules, uint32_t events, uint32_t stats) {
    return aspects_align64(aspects_attachments_offset(groups, rules, events, stats) + (uint64_t)ASPECTS_ATTACH_CAPACITY * sizeof(aspects_attachment));
}
static inline uint64_t aspects_table_size(uint32_t groups, uint32_t rules, uint32_t events, uint32_t stats) {
    return aspects_align64(aspects_sources_offset(groups, rules, events, stats) + (uint64_t)rules * sizeof(aspects_rule_source));
}

/* ---- atomics for Swift (which cannot see _Atomic fields) and for C ------------------------ */

static inline uint32_t aspects_load_acquire_u32(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline uint64_t aspects_load_acquire_u64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline uint8_t aspects_load_acquire_u8(const uint8_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void aspects_store_release_u32(uint32_t *p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline void aspects_store_release_u64(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline void aspects_store_release_u8(uint8_t *p, uint8_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline uint64_t aspects_fetch_add_u64(uint64_t *p, uint64_t v) { return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL); }
/* Raises *p to v unless it is already there or beyond; the value it holds afterwards. */
static inline uint64_t aspects_raise_u64(uint64_t *p, uint64_t v) {
    uint64_t old = __atomic_load_n(p, __ATOMIC_ACQUIRE);
    while (old < v && !__atomic_compare_exchange_n(p, &old, v, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {}
    return old < v ? v : old;
}
static inline void aspects_fence_acquire(void) { __atomic_thread_fence(__ATOMIC_ACQUIRE); }
static inline void aspects_fence_release(void) { __atomic_thread_fence(__ATOMIC_RELEASE); }

/* Pointers into a mapped table, for the writer (which validated the header first). */
static inline aspects_table_header *aspects_header(void *base) { return (aspects_table_header *)base; }
static inline uint8_t *aspects_armed(void *base) {
    return (uint8_t *)base + aspects_header(base)->armed_offset;
}
static inline aspects_group_list *aspects_list(void *base, uint32_t group) {
    return (aspects_group_list *)((char *)base + aspects_header(base)->lists_offset) + group;
}
static inline aspects_rule *aspects_rule_at(void *base, uint32_t slot) {
    return (aspects_rule *)((char *)base + aspects_header(base)->rules_offset) + slot;
}
static inline aspects_event *aspects_event_at(void *base, uint32_t index) {
    return (aspects_event *)((char *)base + aspects_header(base)->events_offset) + index;
}
static inline aspects_process_stat *aspects_stat_at(void *base, uint32_t index) {
    return (aspects_process_stat *)((char *)base + aspects_header(base)->stats_offset) + index;
}
static inline aspects_proto_symbol *aspects_proto_at(void *base, uint32_t index) {
    return (aspects_proto_symbol *)((char *)base + aspects_header(base)->protos_offset) + index;
}
static inline char *aspects_proto_name(aspects_proto_symbol *p) { return p->name; }
static inline void aspects_proto_set_arg(aspects_proto_symbol *p, uint32_t i, uint8_t type) {
    if (i < ASPECTS_MAX_ARGS) p->args[i] = type;
}
static inline void aspects_proto_set_arg_struct(aspects_proto_symbol *p, uint32_t i, uint8_t s) {
    if (i < ASPECTS_MAX_ARGS) p->arg_struct[i] = s;
}
static inline void aspects_proto_set_struct_field(aspects_proto_symbol *p, uint32_t s, uint32_t f, uint8_t type) {
    if (s < ASPECTS_PROTO_STRUCTS && f < ASPECTS_STRUCT_FIELDS) p->struct_fields[s][f] = type;
}
static inline void aspects_proto_set_struct_count(aspects_proto_symbol *p, uint32_t s, uint8_t n) {
    if (s < ASPECTS_PROTO_STRUCTS) p->struct_field_count[s] = n;
}

/* Fixed arrays, which Swift imports as tuples (the rule slot's: RuleSlot.swift, generated). */
static inline uint16_t aspects_list_rule(const aspects_group_list *l, uint32_t i) {
    return i < ASPECTS_GROUP_RULES ? l->rules[i] : 0xffffu;
}
static inline void aspects_list_set_rule(aspects_group_list *l, uint32_t i, uint16_t slot) {
    if (i < ASPECTS_GROUP_RULES) l->rules[i] = slot;
}
static inline char *aspects_event_rule_id(aspects_event *e) { return e->rule_id; }
static inline char *aspects_event_string(aspects_event *e) { return e->string; }
static inline uint64_t aspects_event_arg(const aspects_event *e, uint32_t i) { return i < 6 ? e->args[i] : 0; }
static inline uint8_t aspects_event_arg_type(const aspects_event *e, uint32_t i) {
    return i < ASPECTS_MAX_ARGS ? e->arg_types[i] : 0;
}

#endif /* ASPECTS_ABI_H */
