/* advice_data.h — the declarative data faults, `short` and `corrupt` (advice_data.c), and the
 * seeded draws they make.
 *
 * The draws are pure functions of (seed, rule key, call number), like every other draw of a
 * rule (prng.h), so a run repeats with the same seed; AspectConfig's SplitMix64.swift computes
 * the same numbers (DataFaultPrediction), and a test compares both on a real program. Each
 * fault salts the call's draw with its own constant, so a rule that also draws an error from a
 * `fail` list does not cut and choose with the same bits. */
#ifndef ASP_ADVICE_DATA_H
#define ASP_ADVICE_DATA_H

#include <stdint.h>
#include "aspects_abi.h"
#include "prng.h"

#define ASP_SHORT_SALT 0x73686f7274000000ull   /* "short" */
#define ASP_CORRUPT_SALT 0x636f727275707400ull /* "corrupt" */

/* The count a `short` firing passes on instead of `count` (at least 2): 1 to count - 1, so the
 * transfer is partial and never empty (an empty read means end of file to every caller). */
static inline uint64_t asp_short_count(uint64_t seed, uint64_t rule_key, uint64_t call, uint64_t count) {
    if (count < 2) return count;
    return 1u + asp_mix64(asp_draw(seed, rule_key, call) ^ ASP_SHORT_SALT) % (count - 1u);
}

/* The bits a `corrupt` firing flips among the `nbits` bits the call returned (bit p is bit
 * p % 8 of byte p / 8): `bits` distinct positions in out[], in the order drawn, or every bit
 * when there are no more than that. Distinct, because a bit flipped twice is not corrupted.
 * Returns how many. */
static inline uint32_t asp_corrupt_positions(uint64_t seed, uint64_t rule_key, uint64_t call, uint64_t nbits, uint32_t bits,
                                             uint64_t out[ASPECTS_MAX_CORRUPT_BITS]) {
    if (bits > ASPECTS_MAX_CORRUPT_BITS) bits = ASPECTS_MAX_CORRUPT_BITS;
    if (nbits <= bits) {
        for (uint32_t i = 0; i < nbits; i++) out[i] = i;
        return (uint32_t)nbits;
    }
    const uint64_t d = asp_draw(seed, rule_key, call) ^ ASP_CORRUPT_SALT;
    uint32_t n = 0;
    /* nbits > bits, so enough distinct positions exist; the bound only guards a pathological
     * run of repeats (never met: each try is a fresh 64-bit draw) */
    for (uint64_t j = 0; n < bits && j < 64u * ASPECTS_MAX_CORRUPT_BITS; j++) {
        const uint64_t p = asp_mix64(d + j) % nbits;
        uint32_t i = 0;
        while (i < n && out[i] != p) i++;
        if (i == n) out[n++] = p;
    }
    return n;
}

#ifndef ASP_ADVICE_DATA_PURE /* the draws alone: Tests/Fixtures/data_fault_vectors.c prints them */
#include "signatures.h"
#include "view.h"

/* `short` (before): whether this call can be cut short — its count is 2 or more, and the rule
 * is still the one the view was copied from — decided before the call is counted, so `nth`
 * counts the calls it could act on. */
int asp_data_shortable(const asp_rule_view *v, const asp_export_desc *ex, const uint64_t *vals);
/* Cuts the count argument (args and vals) to the seeded part of firing `call`. */
void asp_data_short(const asp_rule_view *v, const asp_export_desc *ex, void **args, uint64_t *vals, uint64_t call);
/* `corrupt` (after): whether the original returned bytes into its buffer (`result` of them,
 * or items), decided before the call is counted: `nth` counts the reads that returned data. */
int asp_data_corruptible(const asp_rule_view *v, const asp_export_desc *ex, const uint64_t *vals, int64_t result);
/* Flips the seeded bits of the bytes the original returned in the buffer argument. */
void asp_data_corrupt(const asp_rule_view *v, const asp_export_desc *ex, const uint64_t *vals, int64_t result, uint64_t call);
#endif

#endif
