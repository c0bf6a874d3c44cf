/* proto.h — proto.c: functions advised from a rule's prototype, by rewriting GOT slots. */
#ifndef ASP_PROTO_H
#define ASP_PROTO_H

#include "base.h"
void asp_protos_sync(void);            /* apply/restore after the table's prototypes changed */
void asp_protos_maybe_sync(void);      /* the same, only if they changed since the last sync */
int asp_protos_applied(uint64_t generation); /* applied as of that proto_generation */
void asp_protos_atfork_prepare(void);  /* fork waits for a running pass (the loader lock it holds) */
void asp_protos_atfork_parent(void);
void asp_protos_after_fork(void);      /* fork child: no pass is under way any more */

#endif
