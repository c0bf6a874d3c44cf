/* stub.h — picks the per-architecture stub macros for the generated wrappers.S. */
#if defined(__x86_64__)
#include "stub_x86_64.h"
#else
#error "libaspects: only x86-64 stubs exist so far (see arch/stub_x86_64.h for the contract)"
#endif
