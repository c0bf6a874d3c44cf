/* stub.h — picks the per-architecture stub macros for the generated wrappers.S. */
#if defined(__x86_64__)
#include "stub_x86_64.h"
#elif defined(__aarch64__)
#include "stub_aarch64.h"
#else
#error "libaspects: stubs exist for x86-64 and aarch64 (see stubs/stub_x86_64.h for the contract)"
#endif
