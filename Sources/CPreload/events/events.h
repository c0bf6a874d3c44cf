/* events.h — events.c: appending to the table's event ring, lock-free, one exclusive claim per record. */
#ifndef ASP_EVENTS_H
#define ASP_EVENTS_H

#include "view.h"
void asp_event_append(uint16_t kind, const asp_rule_view *v, uint64_t call, uint32_t idx, const uint64_t *vals, int64_t ret, int32_t err,
                      uint64_t caller);
void asp_events_init(void);

#endif
