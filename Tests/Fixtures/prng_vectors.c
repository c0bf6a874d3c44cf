/* Area: rule language / seeded probability.
 * Purpose: prints asp_draw(seed, key, k) of the preload's prng.h for fixed vectors, so a test
 * can check that AspectConfig's SplitMix64 predicts exactly the preload's decisions.
 * Output: one line per vector: "seed key k draw" (decimal). */
#include <inttypes.h>
#include <stdio.h>
#include "prng.h"

int main(void) {
    const uint64_t seeds[] = {0, 1, 7, 8, 0xffffffffffffffffull};
    const uint64_t keys[] = {0, 0xcbf29ce484222325ull, 12345};
    const uint64_t ks[] = {1, 2, 3, 1000, 10000};
    for (int s = 0; s < 5; s++)
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 5; k++)
                printf("%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", seeds[s], keys[r], ks[k], asp_draw(seeds[s], keys[r], ks[k]));
    return 0;
}
