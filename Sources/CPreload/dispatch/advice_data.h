/* advice_data.h — the declarative data faults, `short` and `corrupt` (advice_data.c), and the
 * seeded draws they make.
 *
 * The draws are aspects_prng.h's (aspects_short_count, aspects_corrupt_positions): pure
 * functions of (seed, rule key, call number), so a run repeats with the same seed. */
#ifndef ASP_ADVICE_DATA_H
#define ASP_ADVICE_DATA_H

#include <stdint.h>
#include "aspects_abi.h"
#include "aspects_prng.h"

#include "call.h"
#include "signatures.h"
#include "view.h"

/* `short` (before): whether this call can be cut short — its count is 2 or more, and the rule
 * is still the one the view was copied from — decided before the call is counted, so `nth`
 * counts the calls it could act on. */
int asp_data_shortable(const asp_rule_view *v, const asp_export_desc *ex, const uint64_t *vals);
/* Cuts the call's count argument (as the original reads it, and its value) to the seeded part
 * of firing c->number. */
void asp_data_short(asp_call *c, const asp_rule_view *v);
/* `corrupt` (after): whether the original returned bytes into its buffer (`result` of them,
 * or items), decided before the call is counted: `nth` counts the reads that returned data. */
int asp_data_corruptible(const asp_rule_view *v, const asp_export_desc *ex, const uint64_t *vals, int64_t result);
/* Flips the seeded bits (of firing c->number) of the bytes the original returned in the
 * buffer argument: `result` of them, or items (what the original returned, before any rule
 * replaced it). */
void asp_data_corrupt(const asp_call *c, const asp_rule_view *v, int64_t result);

#endif
