/* Fuzz/c/elf_fuzz.c — libFuzzer target "elf": proto.c's walk over a loaded object's dynamic
 * section, relocations, symbol and string tables and version records, for an object made of
 * the input's bytes, found the two ways proto.c finds objects:
 *   - dl_iterate_phdr (the caller's namespace): the harness gives the program headers, one
 *     PT_LOAD over the whole object and a PT_DYNAMIC whose offset comes from the input;
 *   - the loader's r_debug chain (other link-map namespaces, dlmopen): a fake r_debug_extended
 *     whose second namespace's link_map has l_addr = the object, so that the ELF header and
 *     the program headers (PT_LOAD, PT_DYNAMIC, PT_GNU_RELRO) are the input's bytes too.
 *     What the loader guarantees of an object it loaded is checked first (a full ELF header
 *     and program headers at the start of the mapping, every PT_LOAD inside it, l_addr the
 *     bias from the lowest PT_LOAD); anything else is left to proto.c.
 * The object is mapped at the end of a buffer with a PROT_NONE guard page after it and the
 * bytes before it poisoned for ASan, so any read or write outside it is reported; d_ptr
 * values are link-time offsets (below the load base), as a real object's are before
 * relocation, so the fuzzer steers every table. After the patch pass every slot proto.c
 * recorded must be an aligned word inside the object; then the slots are put back
 * (asp_restore_object) as a removed rule does.
 * Input: [dynamic offset u16 LE][selector u8: name, version, link-map mode][object bytes...]. */
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
#define dlvsym fuzz_dlvsym
#define dl_iterate_phdr fuzz_dl_iterate_phdr
#include "../../Sources/CPreload/os/sys.c"
#include "../../Sources/CPreload/install/proto.c"
#include "../../Sources/CPreload/rules/signatures.c"
#include <sanitizer/asan_interface.h>
#include <stdio.h>
#include <stdlib.h>
#undef dlsym
#undef dlvsym
#undef dl_iterate_phdr

/* What the library's other files give proto.c. */
asp_table asp_tab;
void *asp_proto_original[ASPECTS_PROTO_CAPACITY];
ASP_TLS asp_thread asp_tls;
uint32_t asp_pid;
asp_ffi_api asp_ffi;
/* no libffi here */
int asp_closures_prepare(const asp_export_desc *ex) {
    (void)ex;
    return -1;
}
void *asp_build_stub(uint32_t idx) { (void)idx; return NULL; }
void asp_stub_forget(uint32_t idx) { (void)idx; }
void asp_set_original(uint32_t idx, void *fn) { (void)idx; (void)fn; }
int asp_is_proto_stub(uint32_t k, const void *fn) { (void)k; (void)fn; return 0; }
void asp_identity_note_protos_applied(uint64_t generation) { (void)generation; } /* no attachment record here */

enum { OBJECT_MAX = 1 << 16 };
static uint8_t *object;   /* OBJECT_MAX bytes, then a PROT_NONE guard page */
static long page;
static uint8_t *start;    /* this input's object: [start, start + len) */
static size_t len;
static ElfW(Phdr) harness_phdr[2];
static int linkmap_mode;

/* objects.c finds an object's first page from /proc/self/maps; the harness's object is
 * anonymous memory, so this answers as the maps would for a file mapped there: the object's
 * mapping when `inside` is in it. */
int asp_object_header(uintptr_t inside, uintptr_t *lo, uintptr_t *hi) {
    if (inside < (uintptr_t)start || inside >= (uintptr_t)start + len) return 0;
    *lo = (uintptr_t)start;
    *hi = (uintptr_t)start + len;
    return 1;
}

/* The loader's r_debug: namespace 0 (ours, listed by dl_iterate_phdr) and one more. */
static struct link_map fake_lm;
static struct r_debug_extended fake_ns1, fake_ns0;

/* The loader's answers: a lazy slot's target is "elsewhere" (outside the object) for the
 * names it knows, NULL for others; the walk must cope with both. */
static int fuzz_elsewhere;
void *fuzz_dlsym(void *h, const char *name) {
    (void)h;
    if (strcmp(name, "_r_debug") == 0) return &fake_ns0;
    return name[0] == 'o' ? &fuzz_elsewhere : NULL;
}
void *fuzz_dlvsym(void *h, const char *name, const char *v) { (void)v; return fuzz_dlsym(h, name); }

/* Namespace 0 as dl_iterate_phdr lists it: the fuzzed object with the harness's program
 * headers, or (link-map mode) an object without any, so that only the r_debug chain leads to
 * the fuzzed one. */
int fuzz_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data) {
    struct dl_phdr_info info;
    memset(&info, 0, sizeof info);
    info.dlpi_addr = (ElfW(Addr))start;
    info.dlpi_name = "fuzz.so";
    info.dlpi_phdr = harness_phdr;
    info.dlpi_phnum = linkmap_mode ? 0 : 2;
    return cb(&info, sizeof info, data);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    page = sysconf(_SC_PAGESIZE);
    object = mmap(NULL, OBJECT_MAX + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(object + OBJECT_MAX, page, PROT_NONE);
    fake_ns0.base.r_version = 2;
    fake_ns0.r_next = &fake_ns1;
    fake_ns1.base.r_version = 2;
    fake_ns1.base.r_map = &fake_lm;
    fake_lm.l_name = "fuzz-ns1.so";
    return 0;
}

/* What the loader guarantees of an object it has loaded: its ELF header and program headers
 * are mapped at the start of its mapping, and so is every PT_LOAD segment, with the bias
 * l_addr = mapping start - the lowest PT_LOAD address (page-aligned), and it has a dynamic
 * section (l_ld = l_addr + its PT_DYNAMIC address: "object file has no dynamic section"
 * otherwise). 0: the loader would not have loaded it (the input is skipped); *bias (the
 * lowest PT_LOAD page) and *dynamic are set otherwise. */
static int loader_would_have_loaded(uintptr_t *bias, uintptr_t *dynamic, size_t dyn_off) {
    *bias = 0;
    *dynamic = dyn_off;
    if (len < sizeof(ElfW(Ehdr))) return 0;
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)start;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) return 1; /* proto.c skips it itself */
    if (eh->e_phoff % _Alignof(ElfW(Phdr)) || eh->e_phoff > len || (size_t)eh->e_phnum * sizeof(ElfW(Phdr)) > len - eh->e_phoff) return 0;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(start + eh->e_phoff);
    uint64_t low = UINT64_MAX;
    int has_dynamic = 0;
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < low) low = ph[i].p_vaddr;
        if (ph[i].p_type == PT_DYNAMIC && !has_dynamic) { has_dynamic = 1; *dynamic = (uintptr_t)ph[i].p_vaddr; }
    }
    if (low == UINT64_MAX || !has_dynamic) return 0;
    low &= ~(uint64_t)(page - 1);
    for (unsigned i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && (ph[i].p_vaddr - low > len || ph[i].p_memsz > len - (ph[i].p_vaddr - low))) return 0;
    *bias = (uintptr_t)low;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3 + sizeof(ElfW(Dyn))) return 0;
    size_t n = size - 3 < OBJECT_MAX ? size - 3 : OBJECT_MAX;
    len = (n + 7) & ~(size_t)7;
    /* the object ends where the guard page starts: a read past it faults; the bytes before
     * it are poisoned */
    start = object + OBJECT_MAX - len;
    ASAN_UNPOISON_MEMORY_REGION(object, OBJECT_MAX);
    memset(start, 0, len);
    memcpy(start, data + 3, n);
    ASAN_POISON_MEMORY_REGION(object, (size_t)(start - object));
    linkmap_mode = (data[2] >> 4) & 1;
    size_t dyn_off = ((size_t)data[0] | (size_t)data[1] << 8) % len & ~(size_t)7;
    memset(harness_phdr, 0, sizeof harness_phdr);
    harness_phdr[0].p_type = PT_LOAD;
    harness_phdr[0].p_memsz = len;
    harness_phdr[1].p_type = PT_DYNAMIC;
    harness_phdr[1].p_vaddr = dyn_off;
    uintptr_t bias = 0, dynamic = dyn_off;
    if (linkmap_mode && !loader_would_have_loaded(&bias, &dynamic, dyn_off)) return 0;
    fake_lm.l_addr = (ElfW(Addr))start - bias;
    fake_lm.l_ld = (ElfW(Dyn) *)(fake_lm.l_addr + dynamic);
    fake_ns0.base.r_version = linkmap_mode ? 2 : 1; /* 1: no namespace chain to follow */
    /* the symbol looked for, with or without a version */
    static const char *const names[] = {"open", "a", "fx_add", ""};
    static const char *const versions[] = {"", "GLIBC_2.2.5", "V1", ""};
    asp_proto_rt *p = &asp_protos[0];
    memset(p, 0, sizeof *p);
    strcpy(p->name, names[data[2] & 3]);
    strcpy(p->version, versions[(data[2] >> 2) & 3]);
    static char stub;
    p->code = &stub;
    asp_proto_original[0] = NULL;
    asp_patch_job job = {.k = 0, .self_base = 1};
    asp_each_object(asp_patch_object, &job);
    /* every slot recorded is an aligned word inside the object */
    if (p->nslots > ASP_PROTO_SLOTS) __builtin_trap();
    for (uint32_t i = 0; i < p->nslots; i++) {
        uintptr_t a = (uintptr_t)p->slots[i];
        if (a < (uintptr_t)start || a + sizeof(void *) > (uintptr_t)start + len || a % sizeof(void *)) __builtin_trap();
        if (*p->slots[i] != p->code) __builtin_trap();
    }
    /* the rule removed: originals back, in the same object */
    asp_restore(p);
    /* RELRO pages the walk opened and closed again: writable for the next input */
    mprotect(object, OBJECT_MAX, PROT_READ | PROT_WRITE);
    return 0;
}
