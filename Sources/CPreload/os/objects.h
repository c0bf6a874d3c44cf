/* objects.h — objects.c: where a loaded object's ELF header is (objects of other link-map
 * namespaces, for proto.c). */
#ifndef ASP_OBJECTS_H
#define ASP_OBJECTS_H

#include <link.h> /* struct dl_phdr_info: includers define _GNU_SOURCE first */
#include "base.h"
/* objects.c: [*lo, *hi) the readable first-page mapping (ELF header) of the file mapped at
 * `inside`, the nearest below it; 0 when there is none (anonymous memory, maps unreadable). */
int asp_object_header(uintptr_t inside, uintptr_t *lo, uintptr_t *hi);

/* [*lo, *hi) the loaded segments (PT_LOAD) of the object dl_iterate_phdr presents. */
static inline void asp_object_range(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi) {
    *lo = UINTPTR_MAX;
    *hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        if (info->dlpi_addr + ph->p_vaddr < *lo) *lo = info->dlpi_addr + ph->p_vaddr;
        if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > *hi) *hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    }
}

#endif
