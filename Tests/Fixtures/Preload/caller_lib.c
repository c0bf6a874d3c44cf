/* Area: preload / caller conditions.
 * Purpose: a library that calls getppid itself, so that a program linked with it makes the
 * same advised call from two objects (see caller_mix.c). */
#include <unistd.h>

int caller_lib_getppid(void) { return (int)getppid(); }
