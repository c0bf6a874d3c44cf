/* stream.h — stream.c: stdio faults true to glibc, and the default errno by descriptor kind.
 *
 * A `fail` on a stdio function whose catalog entry says `fails: stream: read|write` does not
 * return the failure value itself: the dispatcher runs glibc's own function with the stream's
 * descriptor set to -1 (asp_stream_begin .. asp_stream_end, under the stream's lock), so
 * glibc's internal read(2)/write(2) — which no PLT slot reaches — fails with EBADF and glibc
 * leaves the stream as a real error does: error indicator, return value, position, buffer.
 * The caller then sees the rule's errno. A call that made no system call (served from the
 * buffer, or buffered whole) could not fail for real: the fault does not take. Not async-signal
 * -safe, as stdio is not; never on the hot path (only a firing stream rule comes here). */
#ifndef ASP_STREAM_H
#define ASP_STREAM_H

#include <stdio.h>
#include "base.h"

/* What asp_stream_begin found. */
enum asp_stream_mode {
    ASP_STREAM_NONE = 0,  /* no stream to fail (NULL, fflush(NULL)) or nothing to write: run as is */
    ASP_STREAM_NO_FD,     /* a stream without a descriptor (fmemopen, fopencookie, open_memstream) */
    ASP_STREAM_FD         /* the descriptor is -1 until asp_stream_end */
};

typedef struct asp_stream_hold {
    FILE *fp;
    int fd;       /* the stream's descriptor, put back by asp_stream_end */
    int stand_in; /* what the stream has meanwhile: -1, or an O_PATH descriptor of its file */
    int locked;
} asp_stream_hold;

/* The stream of export `ex`'s call: its FILE * argument, or stdin/stdout; NULL: none. */
FILE *asp_stream_arg(const asp_export_desc *ex, const uint64_t *vals);

/* Locks the stream of export `ex`'s call (its FILE * argument in vals) and, when it has a
 * descriptor, sets it to one that read(2), write(2) and lseek(2) refuse with EBADF. `write`: only a stream with output pending in its buffer (a write
 * function's, or fflush's and fclose's flush) — glibc's sync of a reading stream would lseek(-1). */
int asp_stream_begin(const asp_export_desc *ex, const uint64_t *vals, int pending_only, asp_stream_hold *h);
/* Puts the descriptor back and unlocks. Returns 1 when the call's own system call failed
 * under it (errno EBADF from the call, and the stream's error indicator set), else 0. */
int asp_stream_end(asp_stream_hold *h, int call_errno);
/* A stream without a descriptor: its error indicator, as glibc sets it when the stream's
 * read or write function fails. Then asp_stream_end. */
void asp_stream_set_error(asp_stream_hold *h);

/* The errno of a default fault (`"fail": true`) whose catalog default depends on the
 * descriptor: the group's entry for what fstat(2) says the call's descriptor is; `code` (the
 * rule's, the `file` one) when the kind has none or the descriptor cannot be read. */
int32_t asp_kind_errno(const asp_export_desc *ex, const uint64_t *vals, int32_t code);

#endif
