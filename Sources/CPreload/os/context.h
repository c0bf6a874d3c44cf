/* context.h — context.c: the calling context of an advised call (its site and the callers
 * above it), for `when.context` and for events of rules that record contexts. */
#ifndef ASP_CONTEXT_H
#define ASP_CONTEXT_H

#include "base.h"

/* At attach, when the table holds a rule that needs contexts: the unwinder's first use. */
void asp_context_attach(void);
/* The return addresses of the call of `ex` that returns to `caller`: caller itself, then its
 * callers, at most `depth` (<= ASPECTS_MAX_CONTEXT_DEPTH) into ips. The number found; 0 when not
 * known here (see context.c: where unwinding is not safe, or `caller` is not on the stack). */
uint32_t asp_context_frames(const asp_export_desc *ex, uint64_t caller, uint32_t depth, uint64_t *ips);
/* Whether that call's context of `depth` frames hashes to `hash`; an unknown context never does. */
int asp_context_matches(const asp_export_desc *ex, uint64_t caller, uint32_t depth, uint64_t hash);

#endif
