/* filter.h — filter.c: a single rule's conditions decided in front of the closure, on the
 * argument registers (the stubs call it through asp_filter_common, stubs/). */
#ifndef ASP_FILTER_H
#define ASP_FILTER_H

#include "base.h"
/* The integer argument registers as the call left them, in the ABI's order (the stub saves
 * the first six), and the caller's return address. 0: the rule's conditions do not hold (the original runs, nothing is
 * counted); 1: they hold, count the call at the gate; 2: enter the closure uncounted (the
 * dispatcher decides everything, e.g. the group's copy just changed). */
uint32_t asp_filter(uint32_t slot, const uint64_t *regs, uint64_t caller);

#endif
