/* table.h — table.c: the attached table, its geometry copied and validated once; the armed bytes
 * the wrapper stubs read. */
#ifndef ASP_TABLE_H
#define ASP_TABLE_H

#include "base.h"
typedef struct asp_table {
    char *base;
    uint64_t size;
    uint32_t group_capacity;
    uint32_t rule_capacity;
    uint32_t event_capacity;  /* a power of two */
    uint32_t attached;
    aspects_group_list *lists;
    aspects_rule *rules;
    aspects_event *events;
    aspects_process_stat *stats;
    uint32_t stat_capacity;   /* a power of two, or 0 */
    uint32_t pad;
    aspects_proto_symbol *protos;
    aspects_table_header *header;
    uint32_t shared;          /* others may write it: another user's (obeyed as a member of its group),
                                 or ours shared with a group (aspects_trust.h); known at attach */
} asp_table;
extern asp_table asp_tab;
int asp_table_attach(const char *name);  /* 0 on success; says why with ASPECTS_DEBUG otherwise */
uint32_t asp_table_rules_of(uint32_t group, uint16_t *out); /* validated snapshot of a group list */
/* visit(slot, ctx) for each slot an armed group's list names; the first nonzero return */
int asp_table_each_listed_slot(int (*visit)(uint32_t slot, void *ctx), void *ctx);

extern const uint8_t *asp_armed_base;      /* the table's armed bytes, or a zero array (the stubs read it) */
extern const uint8_t asp_nothing_armed[ASPECTS_GROUP_CAPACITY]; /* that zero array */

#endif
