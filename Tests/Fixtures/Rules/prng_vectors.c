/* Area: rule language / seeded probability.
 * Purpose: prints what aspects_prng.h (the preload's draws) computes for fixed vectors, so a test can check
 * that AspectConfig's SplitMix64 and FiringSchedule predict exactly the preload's decisions.
 * Output: "seed key k draw" lines (decimal) for aspects_draw; then "S threshold seed key n1 n2 ..."
 * lines: the first 12 firings of a schedule, walked with aspects_schedule_next from call 0, and
 * "F threshold seed key k fires" lines for aspects_schedule_fires. */
#include <inttypes.h>
#include <stdio.h>
#include "aspects_prng.h"

int main(void) {
    const uint64_t seeds[] = {0, 1, 7, 8, 0xffffffffffffffffull};
    const uint64_t keys[] = {0, 0xcbf29ce484222325ull, 12345};
    const uint64_t ks[] = {1, 2, 3, 1000, 10000};
    for (int s = 0; s < 5; s++)
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 5; k++)
                printf("%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", seeds[s], keys[r], ks[k], aspects_draw(seeds[s], keys[r], ks[k]));
    /* p = 0.999999, 0.5, 0.3, 0.01, 1e-6, 1e-9, 2^-62, 1 - 2^-40 as thresholds */
    const uint64_t thresholds[] = {18446725626965477376ull, 9223372036854775808ull, 5534023222112865280ull,
                                   184467440737095516ull, 18446744073709ull, 18446744073ull, 4ull,
                                   18446744073692774400ull};
    for (int t = 0; t < 8; t++)
        for (int s = 0; s < 5; s += 2)
            for (int r = 0; r < 3; r++) {
                const aspects_schedule sch = aspects_schedule_of(thresholds[t]);
                printf("S %" PRIu64 " %" PRIu64 " %" PRIu64, thresholds[t], seeds[s], keys[r]);
                uint64_t k = 0;
                for (int i = 0; i < 12 && k != UINT64_MAX; i++) {
                    k = aspects_schedule_next(seeds[s], keys[r], &sch, k);
                    printf(" %" PRIu64, k);
                }
                printf("\n");
                for (uint64_t c = 1; c <= 40; c++)
                    printf("F %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %d\n", thresholds[t], seeds[s], keys[r], c,
                           aspects_schedule_fires(seeds[s], keys[r], &sch, c));
            }
    return 0;
}
