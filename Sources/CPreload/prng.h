/* prng.h — the seeded draw of `probability` rules: SplitMix64's finalizer as a counter-based
 * generator. The decision for call k of rule R is a pure function of (seed, R, k), so the
 * same program making the same calls fails the same calls on every run, whatever other
 * threads and rules do. AspectConfig's SplitMix64.swift implements the same functions; a
 * test compares both on shared vectors. */
#ifndef ASP_PRNG_H
#define ASP_PRNG_H

#include <stdint.h>

static inline uint64_t asp_mix64(uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The draw for call number k (1-based, in the rule's scope) of the rule whose key is rule_key. */
static inline uint64_t asp_draw(uint64_t seed, uint64_t rule_key, uint64_t k) {
    return asp_mix64(seed ^ asp_mix64(rule_key ^ asp_mix64(k)));
}

#endif
