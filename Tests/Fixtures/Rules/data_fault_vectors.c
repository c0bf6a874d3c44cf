/* Area: data faults (`short`, `corrupt`).
 * Purpose: prints what aspects_prng.h's data-fault draws (the preload's) give for fixed vectors, so a test can check
 * that AspectConfig's SplitMix64.shortCount and corruptedBits predict exactly the preload.
 * Output: "S seed key call count cut" and "C seed key call nbits bits p1 p2 ..." lines. */
#include <inttypes.h>
#include <stdio.h>
#include "aspects_prng.h"

int main(void) {
    const uint64_t seeds[] = {0, 7, 0xffffffffffffffffull};
    const uint64_t keys[] = {0xcbf29ce484222325ull, 12345};
    const uint64_t calls[] = {1, 2, 1000};
    const uint64_t counts[] = {2, 3, 4096, 65536};
    const uint64_t nbits[] = {8, 64, 65, 1048576};
    const uint32_t bits[] = {1, 3, 64};
    for (int s = 0; s < 3; s++)
        for (int k = 0; k < 2; k++)
            for (int c = 0; c < 3; c++) {
                for (int n = 0; n < 4; n++)
                    printf("S %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", seeds[s], keys[k], calls[c], counts[n],
                           aspects_short_count(seeds[s], keys[k], calls[c], counts[n]));
                for (int n = 0; n < 4; n++)
                    for (int b = 0; b < 3; b++) {
                        uint64_t at[ASPECTS_MAX_CORRUPT_BITS];
                        const uint32_t got = aspects_corrupt_positions(seeds[s], keys[k], calls[c], nbits[n], bits[b], at);
                        printf("C %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %u", seeds[s], keys[k], calls[c], nbits[n], bits[b]);
                        for (uint32_t i = 0; i < got; i++) printf(" %" PRIu64, at[i]);
                        printf("\n");
                    }
            }
    return 0;
}
