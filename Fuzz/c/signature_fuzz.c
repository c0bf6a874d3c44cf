/* Fuzz/c/signature_fuzz.c — libFuzzer target "signature": the prototype entries of the table
 * (aspects_proto_symbol: state, group, name@version, return and argument types, variadic
 * split, struct layouts by value) as the preload reads them from shared memory, turns them
 * into libffi call interfaces and forwarding stubs, and applies them to an object's GOT.
 *
 * The input's bytes overlay the table's prototype region (ASPECTS_PROTO_CAPACITY entries),
 * whose untouched part holds two valid entries (so short inputs reach deep). Then, as a
 * process would see the table change:
 *   1. asp_protos_sync(): every entry validated (proto.c), struct layouts copied into ffi
 *      types (asp_proto_structs), a stub built with the real libffi (closures.c, ffi_lazy.c),
 *      the GOT slot of a fake object importing the entry's name rewritten;
 *   2. every built stub is called through its own call interface (ffi_call with zeroed
 *      arguments): a cif that libffi accepted must also be callable;
 *   3. entry 0 is registered anew (new serial): the other closure is built, slots re-patched;
 *   4. every entry freed: asp_protos_sync puts the original back.
 * Checked: no sanitizer report, every slot written lies inside the fake object's GOT, and
 * after step 4 the GOT holds the original again.
 * The region lies at the end of a mapping with a PROT_NONE page after it: a read past the
 * last entry faults. */
#define _GNU_SOURCE
/* System headers first: the preload's base.h makes every declaration after it hidden
 * (libaspects.so exports only its wrappers), which in this executable would hide libc's. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <ffi.h>
#include <link.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
/* The loader, as these targets present it (defined below). */
void *fuzz_dlsym(void *h, const char *name);
void *fuzz_dlvsym(void *h, const char *name, const char *version);
int fuzz_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data);
#define dlsym fuzz_dlsym
#define dl_iterate_phdr fuzz_dl_iterate_phdr
#include "../../Sources/CPreload/os/sys.c"
#include "../../Sources/CPreload/install/proto.c"
#include "../../Sources/CPreload/os/objects.c"
#include "../../Sources/CPreload/install/closures.c"
#include "../../Sources/CPreload/originals/originals.c"
#include "../../Sources/CPreload/rules/signatures.c"
#include "../../Sources/CPreload/originals/ffi_lazy.c"
#include "../../Sources/CPreload/generated/catalog_table.c"
#include "fuzz_wrapper_tables.h"
#include <stdio.h>
#include <stdlib.h>
#undef dlsym
#undef dl_iterate_phdr

/* What the library's other files give these. */
asp_table asp_tab;
ASP_TLS asp_thread asp_tls;
uint32_t asp_pid;
void *asp_entry[ASP_EXPORT_COUNT];
void *asp_proto_original[ASPECTS_PROTO_CAPACITY];
void *asp_resolve(uint32_t idx) { (void)idx; return NULL; }
void asp_identity_note_stub_failure(uint32_t idx) { (void)idx; } /* no attachment record here */
void asp_identity_note_protos_applied(uint64_t generation) { (void)generation; }
/* where closures.c asks whether loading libffi is safe: always here (no signal handler, no
 * dlopen of a program's around it) */
int asp_place_safe(const asp_export_desc *ex) {
    (void)ex;
    return 1;
}
int asp_in_program_dlopen(void) { return 0; }
int asp_in_handler(asp_thread *t) {
    (void)t;
    return 0;
}
int asp_signals_untracked_handler(void) { return 0; }
void *asp_original(uint32_t idx) {
    if (idx == ASP_EXPORT_DLOPEN) return (void *)dlopen; /* ffi_lazy.c loads libffi with it */
    if (idx >= ASP_EXPORT_COUNT && idx < ASP_ALL_EXPORTS) return __atomic_load_n(&asp_proto_original[idx - ASP_EXPORT_COUNT], __ATOMIC_ACQUIRE);
    return NULL;
}
static unsigned long fuzz_calls;
/* The dispatcher, as a closure sees it: answers zero (ffi_arg-wide for small integers). */
static void fuzz_handler(ffi_cif *cif, void *ret, void **args, void *user) {
    (void)args; (void)user;
    fuzz_calls++;
    size_t n = cif->rtype->size;
    if (cif->rtype->type != FFI_TYPE_VOID) memset(ret, 0, n < sizeof(ffi_arg) ? sizeof(ffi_arg) : n);
}
asp_handler asp_handler_for(uint32_t nargs, int direct) { (void)nargs; (void)direct; return fuzz_handler; }

/* The original the fake object's GOT points at. */
static int fuzz_original(void) { return 42; }

/* A fake loaded object importing one name through one JUMP_SLOT (rebuilt for each input
 * from entry 0's name), presented by our dl_iterate_phdr. */
typedef struct fake_object {
    ElfW(Dyn) dyn[6];
    ElfW(Sym) sym[2];
    ElfW(Rela) rela[1];
    void *got[2];
    char strtab[ASPECTS_PROTO_NAME_SIZE + 2];
} fake_object;
static fake_object *fake;
static int fake_present;

static void fake_build(const char *name_with_version) {
    memset(fake, 0, sizeof *fake);
    size_t n = 0;
    while (name_with_version[n] && name_with_version[n] != '@' && n < ASPECTS_PROTO_NAME_SIZE - 1) n++;
    memcpy(fake->strtab + 1, name_with_version, n);
    fake->sym[1].st_name = 1;
    fake->sym[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
    fake->sym[1].st_shndx = SHN_UNDEF;
    fake->rela[0].r_offset = offsetof(fake_object, got);
    fake->rela[0].r_info = ELF64_R_INFO(1, R_X86_64_JUMP_SLOT);
    fake->got[0] = (void *)fuzz_original;
    fake->got[1] = (void *)fuzz_original; /* a second word nobody imports: must stay as is */
    /* d_ptr values as link-time offsets (below the base), as the loader leaves some */
    fake->dyn[0] = (ElfW(Dyn)){DT_SYMTAB, {offsetof(fake_object, sym)}};
    fake->dyn[1] = (ElfW(Dyn)){DT_STRTAB, {offsetof(fake_object, strtab)}};
    fake->dyn[2] = (ElfW(Dyn)){DT_JMPREL, {offsetof(fake_object, rela)}};
    fake->dyn[3] = (ElfW(Dyn)){DT_PLTRELSZ, {sizeof fake->rela}};
    fake->dyn[4] = (ElfW(Dyn)){DT_NULL, {0}};
}

int fuzz_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data) {
    if (!fake_present) return 0;
    ElfW(Phdr) ph[2];
    memset(ph, 0, sizeof ph);
    ph[0].p_type = PT_LOAD;
    ph[0].p_memsz = sizeof *fake;
    ph[1].p_type = PT_DYNAMIC;
    ph[1].p_vaddr = offsetof(fake_object, dyn);
    struct dl_phdr_info info;
    memset(&info, 0, sizeof info);
    info.dlpi_addr = (ElfW(Addr))fake;
    info.dlpi_name = "fake.so";
    info.dlpi_phdr = ph;
    info.dlpi_phnum = 2;
    return cb(&info, sizeof info, data);
}
/* No other link-map namespace here (the elf target has them); libffi's own symbols are real. */
void *fuzz_dlsym(void *h, const char *name) {
    if (h == RTLD_DEFAULT) return NULL;
    return dlsym(h, name);
}

static aspects_table_header *header;
static aspects_proto_symbol *protos, *pristine;
static const size_t region = sizeof(aspects_proto_symbol) * ASPECTS_PROTO_CAPACITY;

static void pristine_entry(aspects_proto_symbol *e, uint32_t k, const char *name, uint8_t ret, const uint8_t *args, uint8_t nargs,
                           uint8_t nfixed, uint8_t flags) {
    memset(e, 0, sizeof *e);
    e->state = 1;
    e->group = ASP_GROUP_COUNT + k;
    e->ret = ret;
    e->nargs = nargs;
    e->nfixed = nfixed;
    e->flags = flags;
    memcpy(e->args, args, nargs);
    e->serial = 100 + k;
    strcpy(e->name, name);
    memset(e->arg_struct, ASPECTS_NO_STRUCT, sizeof e->arg_struct);
    e->ret_struct = ASPECTS_NO_STRUCT;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    long page = sysconf(_SC_PAGESIZE);
    size_t span = (sizeof *header + region + (size_t)page - 1) & ~(size_t)(page - 1);
    char *m = mmap(NULL, span + (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(m + span, (size_t)page, PROT_NONE);
    protos = (aspects_proto_symbol *)(m + span - region);
    header = (aspects_table_header *)m;
    pristine = mmap(NULL, region, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    fake = mmap(NULL, sizeof *fake, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    static const uint8_t scale_args[] = {ASPECTS_T_STRUCT, ASPECTS_T_F64};
    pristine_entry(&pristine[0], 0, "fx_scale", ASPECTS_T_STRUCT, scale_args, 2, 2, 0);
    pristine[0].struct_count = 1;
    pristine[0].struct_field_count[0] = 2;
    pristine[0].struct_fields[0][0] = ASPECTS_T_F64;
    pristine[0].struct_fields[0][1] = ASPECTS_T_F64;
    pristine[0].arg_struct[0] = 0;
    pristine[0].ret_struct = 0;
    static const uint8_t printf_args[] = {ASPECTS_T_STR, ASPECTS_T_I32, ASPECTS_T_F64};
    pristine_entry(&pristine[1], 1, "fx_printf@V1", ASPECTS_T_I32, printf_args, 3, 1, 1);
    asp_tab.header = header;
    asp_tab.protos = protos;
    asp_tab.attached = 1;
    asp_pid = asp_sys_getpid();
    /* libffi loaded, every closure's memory taken (as a prototype pass does) */
    if (asp_closures_prepare(NULL) != 1 || !asp_ffi.prep_cif) {
        fprintf(stderr, "signature: libffi could not be loaded\n");
        exit(2);
    }
    return 0;
}

static void check_slots(void) {
    for (uint32_t k = 0; k < ASPECTS_PROTO_CAPACITY; k++) {
        const asp_proto_rt *p = &asp_protos[k];
        if (p->nslots > ASP_PROTO_SLOTS) __builtin_trap();
        for (uint32_t i = 0; i < p->nslots; i++)
            if ((void *)p->slots[i] != (void *)&fake->got[0]) __builtin_trap(); /* the one importing slot */
    }
    if (fake->got[1] != (void *)fuzz_original) __builtin_trap(); /* nothing else written */
}

/* Calls every stub built for a valid entry through the interface it was built with. */
static void call_stubs(void) {
    for (uint32_t k = 0; k < ASPECTS_PROTO_CAPACITY; k++) {
        const uint32_t idx = ASP_EXPORT_COUNT + k;
        asp_export_rt *rt = &asp_rt[idx];
        if (__atomic_load_n(&rt->state, __ATOMIC_ACQUIRE) != ASP_CLOSURE_READY || !asp_protos[k].serial) continue;
        asp_stub *st = &rt->stubs[rt->current];
        ffi_cif *cif = &st->closure_cif;
        if (cif->nargs > ASP_MAX_ARGS) __builtin_trap();
        _Alignas(16) unsigned char storage[ASP_MAX_ARGS][256];
        void *args[ASP_MAX_ARGS];
        for (unsigned a = 0; a < cif->nargs; a++) {
            if (cif->arg_types[a]->size > sizeof storage[a]) __builtin_trap();
            memset(storage[a], 0, sizeof storage[a]);
            args[a] = storage[a];
        }
        _Alignas(16) unsigned char ret[256];
        if (cif->rtype->size > sizeof ret) __builtin_trap();
        unsigned long before = fuzz_calls;
        asp_ffi.call(cif, FFI_FN(st->code), ret, args);
        if (fuzz_calls != before + 1) __builtin_trap();
    }
}

/* Two or more entries (valid or not: the name is what counts) name the fake object's symbol:
 * the later one takes the earlier one's stub for the original, and puts that back. */
static int shared_name(void) {
    const char *n0 = fake->strtab + 1;
    const size_t l0 = strlen(n0);
    int seen = 0;
    for (uint32_t k = 0; k < ASPECTS_PROTO_CAPACITY; k++) {
        const char *n = protos[k].name;
        size_t l = strnlen(n, ASPECTS_PROTO_NAME_SIZE - 1);
        const char *at = memchr(n, '@', l);
        if (at) l = (size_t)(at - n);
        if (n[0] && l == l0 && memcmp(n, n0, l) == 0) seen++;
    }
    return seen > 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    memcpy(protos, pristine, region);
    memcpy(protos, data, size < region ? size : region);
    memset(header, 0, sizeof *header);
    fake_build(protos[0].name[0] ? protos[0].name : "fx_scale");
    fake_present = 1;
    header->proto_generation = 1;
    /* 1. apply */
    asp_protos_sync();
    check_slots();
    /* 2. call */
    call_stubs();
    /* 3. entry 0 registered anew: the other closure */
    protos[0].serial += 1000;
    header->proto_generation = 2;
    asp_protos_sync();
    check_slots();
    call_stubs();
    /* 4. every entry freed: originals back */
    for (uint32_t k = 0; k < ASPECTS_PROTO_CAPACITY; k++) protos[k].state = 0;
    header->proto_generation = 3;
    asp_protos_sync();
    for (uint32_t k = 0; k < ASPECTS_PROTO_CAPACITY; k++)
        if (asp_protos[k].serial || asp_protos[k].nslots) __builtin_trap();
    /* The original is back — unless two entries name the same symbol (a corrupt table). */
    if (fake->got[1] != (void *)fuzz_original) __builtin_trap();
    if (fake->got[0] != (void *)fuzz_original && !shared_name()) __builtin_trap();
    /* The next input starts as a new process would: no registration, no stub built, no
     * original known (the reserved closures stay). */
    for (uint32_t k = 0; k < ASPECTS_PROTO_CAPACITY; k++) {
        asp_protos[k].code = NULL;
        asp_protos[k].name[0] = 0;
        asp_protos[k].version[0] = 0;
        asp_protos[k].nslots = 0;
        asp_rt[ASP_EXPORT_COUNT + k].state = ASP_CLOSURE_NONE;
    }
    memset(asp_proto_original, 0, sizeof asp_proto_original);
    fake_present = 0;
    return 0;
}
