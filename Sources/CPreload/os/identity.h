/* identity.h — identity.c: who is calling — the program, the object of a call site (the cached
 * /proc/self/maps), the process hierarchy — and this process's attachment record. */
#ifndef ASP_IDENTITY_H
#define ASP_IDENTITY_H

#include "base.h"
extern uint64_t asp_hierarchy;       /* this process's hierarchy id (0 = none) */
extern uint64_t asp_image;           /* this process image's attachment number + 1 (statistics
                                        entries name it; a fork child keeps its parent's) */
int asp_process_matches(const char *pattern, size_t len);
/* 1: the object containing ip matches, 0: it does not, -1: not known this time (another
 * thread is reading /proc/self/maps). */
int asp_caller_matches(uint64_t ip, const char *pattern, size_t len);
int asp_site_matches(uint64_t ip, const char *name, size_t len, uint64_t offset); /* 1, 0, -1 not known now */
void asp_site_describe(uint64_t ip, char *name, size_t cap, uint64_t *offset);     /* for event records */
/* Folds the frame returning to `ip` into a calling context's hash (aspects_context_hash_frame);
 * 1: folded, 0: not known now (in no file mapping we know, or the maps were being reread). */
int asp_context_fold(uint64_t ip, uint64_t *hash);
/* How many times the maps cache was (re)read: what it knows of the mappings changed since a
 * value that differs. */
uint64_t asp_maps_generation(void);
/* 1: ip lies in an executable file mapping the maps cache knows; 0: not, or not known now. */
int asp_in_code(uint64_t ip);
/* 1: both addresses lie in one mapped file, 0: not, -1: not known now. */
int asp_same_object(uint64_t a, uint64_t b);
void asp_identity_init(void);
void asp_identity_after_fork(void);   /* fork child: no maps read is under way any more */

void asp_identity_register(void); /* this process's attachment record */
void asp_identity_note_stub_failure(uint32_t idx); /* a forwarding stub not built, in that record */
void asp_identity_note_protos_applied(uint64_t generation); /* a prototype pass done, in that record */
/* 0: every process of hierarchy `id` the attachments ring records has ended (and it records one). */
int asp_hierarchy_alive(uint64_t id);
/* Reads lowercase hex digits at *p (as /proc/self/maps writes addresses) and moves past them. */
static inline uint64_t asp_parse_hex(const char **p) {
    uint64_t v = 0;
    for (;;) {
        const char c = **p;
        uint64_t d;
        if (c >= '0' && c <= '9') d = (uint64_t)(c - '0');
        else if (c >= 'a' && c <= 'f') d = (uint64_t)(c - 'a' + 10);
        else return v;
        v = v * 16 + d;
        (*p)++;
    }
}

#endif
