/* Fuzz/c/elf_fuzz.c — libFuzzer target "elf": proto.c's walk over a loaded object's dynamic
 * section, relocations, symbol and string tables and version records, for an object made of
 * the input's bytes. The harness maps the bytes as the object's one PT_LOAD segment (with a
 * guard page after it) and presents it as dl_iterate_phdr does: a PT_DYNAMIC header whose
 * offset comes from the input's first bytes. d_ptr values are link-time offsets (below the
 * load base), as a real object's are before relocation, so the fuzzer steers every table;
 * the walk must stay inside the object (proto.c asp_in) — ASan and the guard page say when
 * it does not — and write only 8-byte slots inside it.
 * Input: [dynamic offset u16 LE][name/version selector u8][object bytes...]. */
#define _GNU_SOURCE
#define getenv fuzz_getenv
#define setenv fuzz_setenv
#define dlsym fuzz_dlsym
#define dlvsym fuzz_dlvsym
#define dl_iterate_phdr fuzz_dl_iterate_phdr
#include "../../Sources/CPreload/sys.c"
#include "../../Sources/CPreload/proto.c"
#include <stdio.h>
#include <stdlib.h>
#undef getenv
#undef setenv
#undef dlsym
#undef dlvsym
#undef dl_iterate_phdr
/* The loader's answers: a lazy slot's target is not known here (the walk must cope). */
void *fuzz_dlsym(void *h, const char *name) { (void)h; (void)name; return NULL; }
void *fuzz_dlvsym(void *h, const char *name, const char *v) { (void)h; (void)name; (void)v; return NULL; }
int fuzz_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data) { (void)cb; (void)data; return 0; }
extern char *getenv(const char *) __attribute__((visibility("default")));
extern int setenv(const char *, const char *, int) __attribute__((visibility("default")));
char *fuzz_getenv(const char *name) { return getenv(name); }
int fuzz_setenv(const char *name, const char *value, int overwrite) { return setenv(name, value, overwrite); }

/* What the library's other files give proto.c. */
asp_table asp_tab;
ASP_TLS asp_thread asp_tls;
uint32_t asp_pid;
asp_ffi_api asp_ffi;
int asp_ffi_load(void) { return 0; }
void *asp_build_stub(uint32_t idx) { (void)idx; return NULL; }
void asp_stub_forget(uint32_t idx) { (void)idx; }
void asp_set_original(uint32_t idx, void *fn) { (void)idx; (void)fn; }
asp_export_desc asp_proto_exports[ASPECTS_PROTO_CAPACITY];

enum { OBJECT_MAX = 1 << 16 };
static uint8_t *object;   /* OBJECT_MAX bytes, then a PROT_NONE guard page */
static long page;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    page = sysconf(_SC_PAGESIZE);
    object = mmap(NULL, OBJECT_MAX + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(object + OBJECT_MAX, page, PROT_NONE);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3 + sizeof(ElfW(Dyn))) return 0;
    size_t n = size - 3 < OBJECT_MAX ? size - 3 : OBJECT_MAX;
    /* the object ends where the guard page starts: a read past it faults */
    uint8_t *start = object + OBJECT_MAX - ((n + 7) & ~(size_t)7);
    memcpy(start, data + 3, n);
    size_t len = (n + 7) & ~(size_t)7;
    size_t dyn_off = ((size_t)data[0] | (size_t)data[1] << 8) % len & ~(size_t)7;
    ElfW(Phdr) ph[2];
    memset(ph, 0, sizeof ph);
    ph[0].p_type = PT_LOAD;
    ph[0].p_vaddr = 0;
    ph[0].p_memsz = len;
    ph[1].p_type = PT_DYNAMIC;
    ph[1].p_vaddr = dyn_off;
    struct dl_phdr_info info;
    memset(&info, 0, sizeof info);
    info.dlpi_addr = (ElfW(Addr))start;
    info.dlpi_name = "fuzz.so";
    info.dlpi_phdr = ph;
    info.dlpi_phnum = 2;
    /* the symbol looked for, with or without a version */
    static const char *const names[] = {"open", "a", "fx_add", ""};
    static const char *const versions[] = {"", "GLIBC_2.2.5", "V1", ""};
    asp_proto_rt *p = &asp_protos[0];
    memset(p, 0, sizeof *p);
    strcpy(p->name, names[data[2] & 3]);
    strcpy(p->version, versions[(data[2] >> 2) & 3]);
    static char stub;
    p->code = &stub;
    asp_patch_job job = {.k = 0, .self_base = 1};
    asp_patch_object(&info, sizeof info, &job);
    /* every slot written lies inside the object */
    for (uint32_t i = 0; i < p->nslots; i++) {
        uintptr_t a = (uintptr_t)p->slots[i];
        if (a < (uintptr_t)start || a + sizeof(void *) > (uintptr_t)start + len) __builtin_trap();
    }
    return 0;
}
