/* fuzz_wrapper_tables.h — what generated/wrappers.S defines (declared by os/wrapper_tables.h), for fuzz targets that #include the
 * preload's C files without assembling the wrapper stubs: the stub tables gate.h names. The
 * stub addresses only need to be distinct from any original (they are written into GOT
 * slots and compared, never called here). */
#ifndef FUZZ_WRAPPER_TABLES_H
#define FUZZ_WRAPPER_TABLES_H
static char fuzz_stub_code[4];
static long fuzz_missing(void) { return -1; }
void *const asp_proto_stubs[2u * ASPECTS_PROTO_CAPACITY] = {[0 ... 2u * ASPECTS_PROTO_CAPACITY - 1u] = &fuzz_stub_code[0]};
void *const asp_proto_vstubs[2u * ASPECTS_PROTO_CAPACITY] = {[0 ... 2u * ASPECTS_PROTO_CAPACITY - 1u] = &fuzz_stub_code[1]};
void *asp_proto_entry[2u * ASPECTS_PROTO_CAPACITY];
void *asp_proto_jump[2u * ASPECTS_PROTO_CAPACITY];
void *asp_gate_next[ASP_GATE_STUBS];
void *const asp_lazy[ASP_EXPORT_COUNT];
void *const asp_gate_count_stats[ASP_GATE_STUBS] = {[0 ... ASP_GATE_STUBS - 1u] = &fuzz_stub_code[2]};
long asp_proto_missing(void) { return fuzz_missing(); }
#endif
