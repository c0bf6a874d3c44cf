/* aspects_prng.h — THE seeded randomness of rules, for the preload and for aspectctl's
 * predictions alike: SplitMix64's finalizer as a counter-based generator, the error a `fail`
 * list reports, the firing schedule of `probability` rules, and the draws of the data faults.
 *
 * All are pure functions of (seed, rule, call number), so the same program making the same
 * calls fails the same calls on every run, whatever other threads and rules do. */
#ifndef ASPECTS_PRNG_H
#define ASPECTS_PRNG_H

#include <stdint.h>
#include "aspects_abi.h"

static inline uint64_t aspects_mix64(uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The draw for call number k (1-based, in the rule's scope) of the rule whose key is rule_key
 * (which error of a `fail` list a firing reports). */
static inline uint64_t aspects_draw(uint64_t seed, uint64_t rule_key, uint64_t k) {
    return aspects_mix64(seed ^ aspects_mix64(rule_key ^ aspects_mix64(k)));
}

/* Which of `n` (> 0) errors of a `fail` list call k reports when it fires. */
static inline uint32_t aspects_choice(uint64_t seed, uint64_t rule_key, uint64_t k, uint32_t n) {
    return (uint32_t)(aspects_mix64(aspects_draw(seed, rule_key, k)) % n);
}

/* ---- the schedule of a probability rule ------------------------------------------------
 *
 * A rule that fires with probability p fires on a Bernoulli(p) set of call numbers. Drawing
 * each call separately would make the next firing unknowable without looking at every call;
 * the schedule instead draws the *distances* between firings (geometric gaps), so the next
 * firing after any call is found in O(1) and the wrapper stub can let every call before it
 * through without entering the dispatcher (gate.c).
 *
 * Call numbers are cut into windows of W = 2^wlog calls, W about 1/p (one or two firings a
 * window); window w covers calls [w*W + 1, (w+1)*W]. Within a window the positions are
 * g(w,0), g(w,0) + g(w,1), ... while they stay <= W, each gap g(w,j) >= 1 drawn from
 * (seed, rule, w, j). Because geometric gaps are memoryless, restarting at every window is
 * still one Bernoulli(p) process over all calls, and "does call k fire" needs only the gaps
 * of k's own window: a pure function of (seed, rule, k).
 *
 * The gap is 1 + floor(ln U / ln(1 - p)) for U uniform in (0, 1]. The logarithm is our own,
 * made of IEEE additions, multiplications and divisions in a fixed order, so C and Swift get
 * the same bits (no libm, whose last bit differs between versions; contraction into fused
 * multiply-adds is off for the same reason). */
#if defined(__clang__)
#pragma clang fp contract(off)
#else
#pragma STDC FP_CONTRACT OFF
#endif

#define ASPECTS_SCHEDULE_GAPS 4096u   /* gaps drawn in one window at most (expected: 1 or 2) */
#define ASPECTS_SCHEDULE_WINDOWS 64u  /* windows searched for the next firing (each is empty with
                                     probability about 1/e; past them a lower bound is given) */

/* ln x for a normal double 0 < x <= 1: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), then
 * ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, by its series to s^15. */
static inline double aspects_ln(double x) {
    union { double d; uint64_t u; } b = {.d = x};
    int64_t e = (int64_t)((b.u >> 52) & 0x7ffu) - 1023;
    b.u = (b.u & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
    double m = b.d;
    if (m > 1.4142135623730951) {
        m = m * 0.5;
        e = e + 1;
    }
    const double s = (m - 1.0) / (m + 1.0);
    const double z = s * s;
    const double series =
        1.0 + z * (0.3333333333333333 + z * (0.2 + z * (0.14285714285714285 + z * (0.1111111111111111 +
        z * (0.09090909090909091 + z * (0.07692307692307693 + z * 0.06666666666666667))))));
    return (double)e * 0.6931471805599453 + (2.0 * s) * series;
}

/* What a rule copy keeps of its probability: the window and ln(1 - p). */
typedef struct aspects_schedule {
    double ln_q;        /* ln(1 - p), < 0 */
    uint32_t wlog;      /* W = 2^wlog */
    uint32_t always;    /* p rounds to 1: every call fires */
} aspects_schedule;

/* From the table's threshold t (p = t / 2^64; UINT64_MAX: always). t = 0 never fires: ln_q 0. */
static inline aspects_schedule aspects_schedule_of(uint64_t t) {
    aspects_schedule s = {0.0, 1, 0};
    if (t == UINT64_MAX) { s.always = 1; return s; }
    if (t == 0) return s;
    const double p = (double)t * 0x1p-64;
    if (p >= 0.9999999999999999) { s.always = 1; return s; }
    /* ln(1 - p): the series where 1 - p would lose p's digits */
    s.ln_q = p < 0x1p-20 ? -(p + (p * p) / 2.0 + ((p * p) * p) / 3.0) : aspects_ln(1.0 - p);
    /* W = 2^(1 + clz t): the power of two at or above 1/p, so a window expects 1 to 2 firings */
    uint32_t wlog = 1u + (uint32_t)__builtin_clzll(t);
    s.wlog = wlog > 62u ? 62u : wlog;
    return s;
}

/* Gap j of window w: at least 1. */
static inline uint64_t aspects_schedule_gap(uint64_t seed, uint64_t rule_key, const aspects_schedule *s, uint64_t w, uint64_t j) {
    const uint64_t x = aspects_mix64(aspects_draw(seed, rule_key, w) + j);
    const double u = (double)((x >> 11) + 1u) * 0x1p-53; /* u in (0, 1] */
    const double q = aspects_ln(u) / s->ln_q;                                  /* >= 0 */
    const uint64_t floor_q = q < 4.0e18 ? (uint64_t)q : UINT64_C(4000000000000000000);
    return 1u + floor_q;
}

/* Whether call k (>= 1) is in the schedule. */
static inline int aspects_schedule_fires(uint64_t seed, uint64_t rule_key, const aspects_schedule *s, uint64_t k) {
    if (s->always) return 1;
    if (s->ln_q == 0.0 || k == 0) return 0;
    const uint64_t w = (k - 1u) >> s->wlog, base = w << s->wlog, size = UINT64_C(1) << s->wlog;
    uint64_t pos = 0;
    for (uint64_t j = 0; j < ASPECTS_SCHEDULE_GAPS; j++) {
        const uint64_t g = aspects_schedule_gap(seed, rule_key, s, w, j);
        if (g > size - pos) return 0; /* past the window's end */
        pos += g;
        if (base + pos >= k) return base + pos == k;
    }
    return 0;
}

/* The first call number after k that is in the schedule, or a lower bound of it (a call
 * number every scheduled firing after k is at or past) when ASPECTS_SCHEDULE_WINDOWS windows in
 * a row hold none; UINT64_MAX for a rule that never fires. */
static inline uint64_t aspects_schedule_next(uint64_t seed, uint64_t rule_key, const aspects_schedule *s, uint64_t k) {
    if (s->always) return k + 1u;
    if (s->ln_q == 0.0) return UINT64_MAX;
    const uint64_t size = UINT64_C(1) << s->wlog;
    uint64_t w = k >> s->wlog; /* the window of call k + 1 */
    for (uint32_t n = 0; n < ASPECTS_SCHEDULE_WINDOWS; n++, w++) {
        const uint64_t base = w << s->wlog;
        if (base >> s->wlog != w) return UINT64_MAX; /* past 2^64 calls */
        uint64_t pos = 0;
        for (uint64_t j = 0; j < ASPECTS_SCHEDULE_GAPS; j++) {
            const uint64_t g = aspects_schedule_gap(seed, rule_key, s, w, j);
            if (g > size - pos) break;
            pos += g;
            if (base + pos > k) return base + pos;
        }
    }
    return w << s->wlog; /* first call of the window not searched, minus one: a lower bound */
}

/* ---- the data faults: each salts the call's draw with its own constant, so a rule that also
 * draws an error from a `fail` list does not cut and choose with the same bits ---- */
#define ASPECTS_SHORT_SALT 0x73686f7274000000ull   /* "short" */
#define ASPECTS_CORRUPT_SALT 0x636f727275707400ull /* "corrupt" */

/* The count a `short` firing passes on instead of `count` (at least 2): 1 to count - 1, so the
 * transfer is partial and never empty (an empty read means end of file to every caller). */
static inline uint64_t aspects_short_count(uint64_t seed, uint64_t rule_key, uint64_t call, uint64_t count) {
    if (count < 2) return count;
    return 1u + aspects_mix64(aspects_draw(seed, rule_key, call) ^ ASPECTS_SHORT_SALT) % (count - 1u);
}

/* The bits a `corrupt` firing flips among the `nbits` bits the call returned (bit p is bit
 * p % 8 of byte p / 8): `bits` distinct positions in out[], in the order drawn, or every bit
 * when there are no more than that. Distinct, because a bit flipped twice is not corrupted.
 * Returns how many. */
static inline uint32_t aspects_corrupt_positions(uint64_t seed, uint64_t rule_key, uint64_t call, uint64_t nbits, uint32_t bits,
                                                 uint64_t out[ASPECTS_MAX_CORRUPT_BITS]) {
    if (bits > ASPECTS_MAX_CORRUPT_BITS) bits = ASPECTS_MAX_CORRUPT_BITS;
    if (nbits <= bits) {
        for (uint32_t i = 0; i < nbits; i++) out[i] = i;
        return (uint32_t)nbits;
    }
    const uint64_t d = aspects_draw(seed, rule_key, call) ^ ASPECTS_CORRUPT_SALT;
    uint32_t n = 0;
    /* nbits > bits, so enough distinct positions exist; the bound only guards a pathological
     * run of repeats (never met: each try is a fresh 64-bit draw) */
    for (uint64_t j = 0; n < bits && j < 64u * ASPECTS_MAX_CORRUPT_BITS; j++) {
        const uint64_t p = aspects_mix64(d + j) % nbits;
        uint32_t i = 0;
        while (i < n && out[i] != p) i++;
        if (i == n) out[n++] = p;
    }
    return n;
}

#endif
