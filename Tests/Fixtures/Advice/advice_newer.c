/* Area: advice as code (versions).
 * Purpose: an advice object that says it was built with aspects_advice.h 2.0, a major version
 * this preload does not speak: check and the preload must refuse it. It does not include the
 * header (which would say 1.x); it defines the version word as a later header would. */
#include <stdint.h>

__attribute__((visibility("default"))) const uint32_t aspects_advice_version = 2u << 16;
__attribute__((visibility("default"))) void probe_describe(void *inv) { (void)inv; }
