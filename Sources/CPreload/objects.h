/* objects.h — objects.c: where a loaded object's ELF header is (objects of other link-map
 * namespaces, for proto.c). */
#ifndef ASP_OBJECTS_H
#define ASP_OBJECTS_H

#include "base.h"
/* objects.c: [*lo, *hi) the readable first-page mapping (ELF header) of the file mapped at
 * `inside`, the nearest below it; 0 when there is none (anonymous memory, maps unreadable). */
int asp_object_header(uintptr_t inside, uintptr_t *lo, uintptr_t *hi);

#endif
