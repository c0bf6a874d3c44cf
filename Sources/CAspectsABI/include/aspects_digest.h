/*
 * aspects_digest.h — 128-bit FNV-1a over a byte stream, for aspectctl's explore: a run's
 * output is compared with its baseline's by size and digest, never kept whole. In C because
 * it runs over every byte a program writes (gigabytes for a hang that prints for ever), and
 * the same loop in Swift is slow in debug builds. Not used by the preload.
 */
#ifndef ASPECTS_DIGEST_H
#define ASPECTS_DIGEST_H

#include <stddef.h>
#include <stdint.h>

/* The offset basis, as h[0] (low 64 bits) and h[1] (high). */
#define ASPECTS_FNV128_BASIS_LO 0x62b821756295c58dULL
#define ASPECTS_FNV128_BASIS_HI 0x6c62272e07bb0142ULL

/* Adds `n` bytes at `p` to the digest `h` (low, high). The prime is 2^88 + 0x13b, so
 * h * prime = h * 0x13b + (low << 88): one 64×64 multiplication and a shift per byte. */
static inline void aspects_fnv1a128_add(uint64_t h[2], const unsigned char *p, size_t n) {
    uint64_t lo = h[0], hi = h[1];
    for (size_t i = 0; i < n; i++) {
        lo ^= p[i];
        unsigned __int128 low = (unsigned __int128)lo * 0x13bu;
        hi = hi * 0x13bu + (uint64_t)(low >> 64) + (lo << 24);
        lo = (uint64_t)low;
    }
    h[0] = lo;
    h[1] = hi;
}

#endif
