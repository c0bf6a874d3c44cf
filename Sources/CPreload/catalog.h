/* catalog.h — the preload's view of the catalog: one descriptor per exported name, generated
 * from config/catalog.spec into generated/catalog_table.c. */
#ifndef ASP_CATALOG_H
#define ASP_CATALOG_H

#include <stdint.h>
#include "aspects_abi.h"
#include "generated/catalog_ids.h"

#define ASP_F_VARIADIC 1u
#define ASP_F_NORETURN 2u
#define ASP_F_SIGNAL_UNSAFE 4u /* not async-signal-safe: never called from a handler (advice_call.c) */
#define ASP_F_STREAM_READ 8u    /* `fails: stream: read`: its FILE's read(2) fails under glibc (stream.c) */
#define ASP_F_STREAM_WRITE 16u  /* `fails: stream: write`: its FILE's write(2) fails under glibc */
#define ASP_MAX_ARGS 8u        /* parameters of an advised function (6 travel in registers) */
#define ASP_DIRECT_ARGS 6u     /* at most this many: the original is called without ffi_call */

/* How a function reports failure (the catalog's `failure:`), so that an event records errno
 * only for a result that is a failure: errno after a successful call is whatever an earlier
 * call left. Prototype functions are ASP_FAILURE_UNKNOWN: errno is recorded as the caller
 * sees it. */
enum asp_failure {
    ASP_FAILURE_UNKNOWN = 0,
    ASP_FAILURE_MINUS_ONE_ERRNO,
    ASP_FAILURE_NULL_ERRNO,
    ASP_FAILURE_EOF_ERRNO,
    ASP_FAILURE_MAP_FAILED_ERRNO,
    ASP_FAILURE_ERRNO_RETURNED,
    ASP_FAILURE_EAI,
    ASP_FAILURE_ZERO_ERRNO,
    ASP_FAILURE_NULL_H_ERRNO,
    ASP_FAILURE_NULL,
    ASP_FAILURE_NONE
};

/* Where an export's descriptor is (the catalog's fd, FILE * or DIR * argument, or stdin or
 * stdout for puts, putchar, getchar): set only for functions with a stream model or a default
 * by descriptor kind. */
enum asp_handle { ASP_HANDLE_NONE = 0, ASP_HANDLE_FD, ASP_HANDLE_FILE, ASP_HANDLE_DIR, ASP_HANDLE_STDIN, ASP_HANDLE_STDOUT };

/* What a descriptor is, for the catalog's `default: file=E pipe=E socket=E` (DescriptorKind's
 * order); file: a regular file and every kind not named. */
enum asp_kind { ASP_KIND_FILE = 0, ASP_KIND_PIPE, ASP_KIND_SOCKET, ASP_KIND_COUNT };

typedef struct asp_export_desc {
    const char *name;
    uint16_t group;       /* alias group: the armed byte and the rule list */
    uint8_t ret;          /* enum aspects_type */
    uint8_t nargs;        /* parameters, with a variadic function's forwarded argument */
    uint8_t nfixed;       /* fixed parameters (== nargs unless variadic) */
    uint8_t flags;        /* ASP_F_* */
    uint8_t args[ASP_MAX_ARGS];
    uint8_t argmap[ASP_MAX_ARGS]; /* this export's index of the group's argument i; 0xff: none.
                                     Rules speak of group arguments (`path` of stat and of __xstat). */
    uint8_t failure;      /* enum asp_failure */
    uint8_t handle;       /* enum asp_handle */
    uint8_t handle_arg;   /* its argument index (0xff: none) */
} asp_export_desc;

/* hidden: the hot path reaches these PC-relative, not through the GOT */
#define ASP_HIDDEN __attribute__((visibility("hidden")))
extern ASP_HIDDEN const asp_export_desc asp_exports[ASP_EXPORT_COUNT];
/* Per group, the default errno by descriptor kind (0: the rule's errno for every kind). */
extern ASP_HIDDEN const int16_t asp_kind_errnos[ASP_GROUP_COUNT][ASP_KIND_COUNT];

/* Exports past the catalog's are functions advised from a rule's prototype (signatures.h):
 * their groups follow the catalog's. */
#define ASP_ALL_EXPORTS (ASP_EXPORT_COUNT + ASPECTS_PROTO_CAPACITY)
#define ASP_ALL_GROUPS (ASP_GROUP_COUNT + ASPECTS_PROTO_CAPACITY)

#endif
