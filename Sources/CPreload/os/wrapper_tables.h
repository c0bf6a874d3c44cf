/* wrapper_tables.h — the tables of the wrapper stubs (generated/wrappers.S, stubs/stub_x86_64.h): where
 * each exported name and each prototype stub goes, un-armed, armed and below its gate. */
#ifndef ASP_WRAPPER_TABLES_H
#define ASP_WRAPPER_TABLES_H

#include "base.h"
/* Slots of the gate's per-stub tables: the catalog's exports, then two stubs per prototype
 * entry (2k + b: one per build of its closure). */
#define ASP_GATE_STUBS (ASP_EXPORT_COUNT + 2u * ASPECTS_PROTO_CAPACITY)

extern void *asp_real[ASP_EXPORT_COUNT];   /* the originals (lazy trampolines until resolved) */
extern void *const asp_lazy[ASP_EXPORT_COUNT]; /* those trampolines */
extern void *asp_entry[ASP_EXPORT_COUNT];  /* where an armed call goes (closure code once built) */
/* Per stub slot: where a call below the gate goes (the original, or its `count_stats` thunk). */
extern void *asp_gate_next[ASP_GATE_STUBS];
extern void *const asp_gate_count_stats[ASP_GATE_STUBS];
/* The prototype entries' stubs (2k + b), their closures and their originals. */
extern void *const asp_proto_stubs[2u * ASPECTS_PROTO_CAPACITY];
extern void *const asp_proto_vstubs[2u * ASPECTS_PROTO_CAPACITY]; /* the same, keeping %rax: variadic prototypes */
extern void *asp_proto_entry[2u * ASPECTS_PROTO_CAPACITY];
extern void *asp_proto_jump[2u * ASPECTS_PROTO_CAPACITY];

#endif
