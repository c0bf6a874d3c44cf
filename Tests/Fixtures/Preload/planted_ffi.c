/* Area: preload / trust.
 * Purpose: a library that pretends to be libffi.so.8. Tests put it beside a copy of
 * libaspects.so: the preload must never load it. If it is loaded, its constructor creates the
 * file named by PLANTED_MARKER, which the test looks for. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void planted(void) {
    const char *marker = getenv("PLANTED_MARKER");
    if (marker) close(open(marker, O_WRONLY | O_CREAT, 0600));
}
