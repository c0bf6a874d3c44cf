/* Area: re-entry / alias chains.
 * Purpose: an interposer between libaspects.so and libc whose open64 calls open through its
 * PLT, as a libc whose one name of a function reaches another would: preloaded after
 * libaspects.so, it is the original of open64, and its call of open is part of the same call
 * (advised once), not a call of its own. */
#define _GNU_SOURCE
#include <fcntl.h>
int open64(const char *path, int flags, ...) { return open(path, flags); }
