/* Area: prototype rules (GOT rewriting) in other link-map namespaces.
 * Purpose: a library linked at a fixed base (-Wl,-Ttext-segment=0x20000000) that imports
 * atoi. dlmopened into a namespace of its own it is loaded at that base (l_addr 0); a second
 * copy in another namespace is relocated, and its ELF header is then not at l_addr. Both
 * must be rewritten, and neither may make the preload read outside them. */
#include <stdlib.h>
int based_value(void) { return atoi("5"); }
