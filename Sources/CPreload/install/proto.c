/* proto.c — advising any exported function from a rule's prototype (docs/ARCHITECTURE.md §5,
 * prototype stubs).
 *
 * A name the catalog does not export cannot be interposed by a wrapper, so the loaded objects
 * that import it are rewritten instead: each JUMP_SLOT / GLOB_DAT relocation of the name gets
 * the function's forwarding stub (a libffi closure built from the prototype's signature, the
 * same dispatcher behind it). The original is the value the loader had put in the slot —
 * exactly its choice among versions and interposers. A lazy slot (still pointing into its
 * object's PLT) is resolved first, since calling through it would let the loader overwrite
 * the patch. RELRO pages are opened with the loader's own rounding and closed again; a refusal
 * (sealed pages, W^X policies) leaves the rule "not applied", never a crash.
 *
 * When: at start-up, after each dlopen, and on the first advised call after the table's
 * prototypes changed — on the caller's own thread; on a table made with --live-prototypes also
 * as soon as they change, on the watcher thread (watch.c). Removing the last rule of a name puts the
 * original back in every slot that still holds the stub. Closures are never freed.
 *
 * Not on the hot path: this takes the loader's lock (dl_iterate_phdr) and is not
 * async-signal-safe; a process applying prototypes from a signal handler that interrupted the
 * loader would wait on itself, so the dispatcher only gets here when the table changed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "closures.h"
#include "ffi_lazy.h"
#include "objects.h"
#include "identity.h"
#include "proto.h"
#include "resolve.h"
#include "signatures.h"
#include "sys.h"
#include "table.h"
#include "thread.h"

#define ASP_PROTO_SLOTS 64u


typedef struct asp_proto_rt {
    uint64_t serial;             /* the registration this state is for (0 = none) */
    char name[ASPECTS_PROTO_NAME_SIZE];   /* the symbol, without its version */
    char version[ASPECTS_PROTO_NAME_SIZE];/* "name@VERSION" in the rule: only that version; "" = any */
    void *code;                  /* the forwarding stub */
    uint32_t nslots, objects, status, pad;
    void **slots[ASP_PROTO_SLOTS];
    uint8_t slot_relro[ASP_PROTO_SLOTS];
    uint8_t slot_live[ASP_PROTO_SLOTS];   /* seen in a loaded object on the current pass */
} asp_proto_rt;

static asp_proto_rt asp_protos[ASPECTS_PROTO_CAPACITY];

/* Every loaded object of every link-map namespace, presented as dl_iterate_phdr presents
 * them, with the loader's list lock held throughout: dlclose unlinks an object under that
 * lock before it unmaps it, so no object can vanish while a callback reads its relocations or
 * writes into its GOT. dl_iterate_phdr lists only the caller's namespace; the others
 * (dlmopen) are found through the loader's r_debug chain (r_version 2, glibc 2.35 and later)
 * while the lock is held. */
typedef int (*asp_object_fn)(struct dl_phdr_info *, size_t, void *);
typedef struct asp_walk {
    asp_object_fn fn;
    void *data;
    int others_done;
} asp_walk;

static struct r_debug *asp_r_debug;   /* the loader's, found once with dlsym */

/* Whether [p, p + n) lies inside the object's loaded range [lo, hi). Every pointer derived
 * from an object's dynamic section is checked with it before it is read or written: an
 * unusual or damaged object must not make the preload touch memory outside it (Fuzz/c/
 * elf_fuzz.c walks objects made of fuzzed bytes). */
static int asp_in(uintptr_t lo, uintptr_t hi, const void *p, size_t n) {
    const uintptr_t a = (uintptr_t)p;
    return a >= lo && a <= hi && n <= hi - a;
}

/* An ELF record *p of its own type: inside the object, and aligned as its type wants. */
#define ASP_RECORD_IN(lo, hi, p) (asp_in((lo), (hi), (p), sizeof *(p)) && ((uintptr_t)(p) % _Alignof(__typeof__(*(p)))) == 0)

/* The address `at + offset` when [that, that + size) lies inside the object, else 0 — in
 * integer arithmetic, so that no pointer outside the object is ever formed. */
static uintptr_t asp_at(uintptr_t lo, uintptr_t hi, uintptr_t at, uint64_t offset, size_t size) {
    if (at < lo || at > hi || offset > hi - at) return 0;
    const uintptr_t a = at + offset;
    return size <= hi - a ? a : 0;
}

/* Record i of a table of `size`-byte records aligned to `align`, or 0 (asp_at). */
static uintptr_t asp_record(uintptr_t lo, uintptr_t hi, const void *table, uint64_t i, size_t size, size_t align) {
    const uintptr_t t = (uintptr_t)table;
    if (!t || t % align || i > (hi - lo) / size) return 0;
    return asp_at(lo, hi, t, i * size, size);
}

static uintptr_t asp_page(void) {
    static uintptr_t size;
    if (!size) size = (uintptr_t)sysconf(_SC_PAGESIZE);
    return size;
}

/* Whether the program headers at ph agree with what the loader recorded in the link map:
 * the lowest PT_LOAD's page is at `start` (l_addr is the bias, start - that address, and may
 * be 0 for an object at its own link-time base), and the dynamic section at l_ld. */
static int asp_header_agrees(const ElfW(Phdr) *ph, unsigned phnum, uintptr_t l_addr, uintptr_t start, uintptr_t l_ld) {
    uintptr_t low = UINTPTR_MAX;
    int dynamic = 0;
    for (unsigned i = 0; i < phnum; i++) {
        if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < low) low = ph[i].p_vaddr;
        if (ph[i].p_type == PT_DYNAMIC && l_addr + ph[i].p_vaddr == l_ld) dynamic = 1;
    }
    return dynamic && low != UINTPTR_MAX && l_addr + (low & ~(asp_page() - 1)) == start;
}

/* The objects of the other namespaces, as dl_iterate_phdr would list them. The public
 * link_map has no program headers: they are found through the ELF header of the file mapped
 * around l_ld (objects.c), checked against l_addr and l_ld, and only read inside that
 * readable mapping. */
static void asp_walk_other_namespaces(asp_object_fn fn, void *data) {
    if (!asp_r_debug || asp_r_debug->r_version < 2) return;
    for (struct r_debug_extended *ns = ((struct r_debug_extended *)asp_r_debug)->r_next; ns; ns = ns->r_next) {
        for (struct link_map *lm = ns->base.r_map; lm; lm = lm->l_next) {
            uintptr_t lo, hi;
            if (!lm->l_ld || !asp_object_header((uintptr_t)lm->l_ld, &lo, &hi)) continue;
            const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)lo;
            if (hi - lo < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_phnum == 0) continue;
            const uintptr_t ph = asp_at(lo, hi, lo, eh->e_phoff, (size_t)eh->e_phnum * sizeof(ElfW(Phdr)));
            if (!ph || ph % _Alignof(ElfW(Phdr))) continue;
            if (!asp_header_agrees((const ElfW(Phdr) *)ph, eh->e_phnum, lm->l_addr, lo, (uintptr_t)lm->l_ld)) continue;
            struct dl_phdr_info info;
            memset(&info, 0, sizeof info);
            info.dlpi_addr = lm->l_addr;
            info.dlpi_name = lm->l_name;
            info.dlpi_phdr = (const ElfW(Phdr) *)ph;
            info.dlpi_phnum = eh->e_phnum;
            fn(&info, sizeof info, data);
        }
    }
}

static int asp_walk_one(struct dl_phdr_info *info, size_t size, void *d) {
    asp_walk *w = d;
    if (!w->others_done) {
        w->others_done = 1;
        asp_walk_other_namespaces(w->fn, w->data);
    }
    return w->fn(info, size, w->data);
}

static void asp_each_object(asp_object_fn fn, void *data) {
    if (!asp_r_debug) asp_r_debug = (struct r_debug *)dlsym(RTLD_DEFAULT, "_r_debug");
    asp_walk w = {fn, data, 0};
    dl_iterate_phdr(asp_walk_one, &w);
}

static uint32_t asp_protos_lock;
static uint32_t asp_protos_again;   /* a sync found a pass under way: that pass goes once more */
/* this thread is inside a pass; this thread took asp_protos_lock for a fork (atfork) */
static ASP_TLS int asp_protos_in_pass, asp_protos_held_for_fork;
static uint64_t asp_protos_seen = (uint64_t)-1;

/* Writes one slot, opening a RELRO page if the slot is in one. */
static int asp_write_slot(void **slot, void *value, uintptr_t relro_lo, uintptr_t relro_hi) {
    uintptr_t a = (uintptr_t)slot;
    if (a >= relro_lo && a < relro_hi) {
        uintptr_t page = a & ~(asp_page() - 1);
        if (syscall(SYS_mprotect, page, asp_page(), (long)(PROT_READ | PROT_WRITE)) != 0) return -1;
        __atomic_store_n(slot, value, __ATOMIC_RELEASE);
        syscall(SYS_mprotect, page, asp_page(), (long)PROT_READ);
        return 0;
    }
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
    return 0;
}

typedef struct asp_patch_job {
    uint32_t k;                  /* which prototype */
    uintptr_t self_base;         /* libaspects.so, never patched */
} asp_patch_job;

static int asp_skip_object(const struct dl_phdr_info *info, uintptr_t self_base) {
    const char *n = info->dlpi_name ? info->dlpi_name : "";
    if (info->dlpi_addr == self_base && self_base) return 1;
    /* libffi (the stubs themselves), the dynamic loader, the vDSO: never rewritten. */
    return strstr(n, "libffi.so") || strstr(n, "ld-linux") || strstr(n, "linux-vdso") || strstr(n, "linux-gate");
}

/* The NUL-terminated name at s, inside [lo, hi), equals `name`. */
static int asp_name_is(uintptr_t lo, uintptr_t hi, const char *s, const char *name) {
    if (!s || !asp_in(lo, hi, s, 1)) return 0;
    const size_t room = hi - (uintptr_t)s;
    size_t i = 0;
    for (; name[i]; i++)
        if (i >= room || s[i] != name[i]) return 0;
    return i < room && s[i] == 0;
}

/* A d_ptr of the dynamic section: glibc relocates some tags in place and leaves others (the
 * version tags of the main program, seen here) as link-time addresses. A value below the
 * load base is the latter. */
/* Whether a relocation of this type fills a slot with an imported symbol's address: the PLT's
 * lazily bound slot or a function pointer's GOT entry (each architecture names them). */
static int asp_reloc_names_import(uint32_t type) {
#if defined(__x86_64__)
    return type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
    return type == R_AARCH64_JUMP_SLOT || type == R_AARCH64_GLOB_DAT;
#else
#error "libaspects: name this architecture's JUMP_SLOT and GLOB_DAT relocations"
#endif
}

static uintptr_t asp_dyn_ptr(uintptr_t base, uintptr_t value) { return value < base ? base + value : value; }

/* The version a relocation's symbol is bound to in this object: from DT_VERSYM and the
 * object's DT_VERNEED (imports) or DT_VERDEF (its own definitions). NULL when unversioned. */
static const char *asp_symbol_version(uintptr_t base, uintptr_t lo, uintptr_t hi, const ElfW(Dyn) *dyn, const char *strtab,
                                      uint32_t sym, int defined) {
    const ElfW(Versym) *versym = NULL;
    const ElfW(Verneed) *verneed = NULL;
    const ElfW(Verdef) *verdef = NULL;
    size_t neednum = 0, defnum = 0;
    for (const ElfW(Dyn) *d = dyn; ASP_RECORD_IN(lo, hi, d) && d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_VERSYM: versym = (const ElfW(Versym) *)asp_dyn_ptr(base, d->d_un.d_ptr); break;
        case DT_VERNEED: verneed = (const ElfW(Verneed) *)asp_dyn_ptr(base, d->d_un.d_ptr); break;
        case DT_VERNEEDNUM: neednum = d->d_un.d_val; break;
        case DT_VERDEF: verdef = (const ElfW(Verdef) *)asp_dyn_ptr(base, d->d_un.d_ptr); break;
        case DT_VERDEFNUM: defnum = d->d_un.d_val; break;
        }
    }
    const uintptr_t vs = asp_record(lo, hi, versym, sym, sizeof *versym, _Alignof(ElfW(Versym)));
    if (!vs) return NULL;
    uint16_t index = *(const ElfW(Versym) *)vs & 0x7fff;
    if (index < 2) return NULL; /* local or global: unversioned */
    /* Chains are followed only inside the object, and only as far as they could be long. */
    if (!defined) {
        const ElfW(Verneed) *vn = verneed;
        for (size_t i = 0; vn && i < neednum && i < 4096 && ASP_RECORD_IN(lo, hi, vn); i++) {
            const ElfW(Vernaux) *aux = (const ElfW(Vernaux) *)asp_at(lo, hi, (uintptr_t)vn, vn->vn_aux, sizeof *aux);
            for (unsigned j = 0; j < vn->vn_cnt && j < 4096 && aux && ASP_RECORD_IN(lo, hi, aux); j++) {
                if (aux->vna_other == index) return (const char *)asp_at(lo, hi, (uintptr_t)strtab, aux->vna_name, 1);
                aux = (const ElfW(Vernaux) *)asp_at(lo, hi, (uintptr_t)aux, aux->vna_next, sizeof *aux);
            }
            if (!vn->vn_next) break;
            vn = (const ElfW(Verneed) *)asp_at(lo, hi, (uintptr_t)vn, vn->vn_next, sizeof *vn);
        }
    } else {
        const ElfW(Verdef) *vd = verdef;
        for (size_t i = 0; vd && i < defnum && i < 4096 && ASP_RECORD_IN(lo, hi, vd); i++) {
            if (vd->vd_ndx == index) {
                const ElfW(Verdaux) *aux = (const ElfW(Verdaux) *)asp_at(lo, hi, (uintptr_t)vd, vd->vd_aux, sizeof(ElfW(Verdaux)));
                if (!aux || !ASP_RECORD_IN(lo, hi, aux)) return NULL;
                return (const char *)asp_at(lo, hi, (uintptr_t)strtab, aux->vda_name, 1);
            }
            if (!vd->vd_next) break;
            vd = (const ElfW(Verdef) *)asp_at(lo, hi, (uintptr_t)vd, vd->vd_next, sizeof *vd);
        }
    }
    return NULL;
}

static int asp_patch_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    asp_patch_job *job = data;
    asp_proto_rt *p = &asp_protos[job->k];
    if (asp_skip_object(info, job->self_base)) return 0;
    uintptr_t base = info->dlpi_addr, lo, hi, relro_lo = 0, relro_hi = 0;
    asp_object_range(info, &lo, &hi);
    /* Slots patched on an earlier pass that lie in this object are still live. */
    for (uint32_t i = 0; i < p->nslots; i++)
        if ((uintptr_t)p->slots[i] >= lo && (uintptr_t)p->slots[i] < hi) p->slot_live[i] = 1;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC) {
            dyn = (const ElfW(Dyn) *)(base + ph->p_vaddr);
        } else if (ph->p_type == PT_GNU_RELRO) {
            /* the loader protects whole pages from the start down to the end's page boundary */
            relro_lo = (base + ph->p_vaddr) & ~(asp_page() - 1);
            relro_hi = (base + ph->p_vaddr + ph->p_memsz) & ~(asp_page() - 1);
        }
    }
    if (!dyn) return 0;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) *jmprel = NULL, *rela = NULL;
    size_t jmprelsz = 0, relasz = 0;
    for (const ElfW(Dyn) *d = dyn; ASP_RECORD_IN(lo, hi, d) && d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)asp_dyn_ptr(base, d->d_un.d_ptr); break;
        case DT_STRTAB: strtab = (const char *)asp_dyn_ptr(base, d->d_un.d_ptr); break;
        case DT_JMPREL: jmprel = (const ElfW(Rela) *)asp_dyn_ptr(base, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: jmprelsz = d->d_un.d_val; break;
        case DT_RELA: rela = (const ElfW(Rela) *)asp_dyn_ptr(base, d->d_un.d_ptr); break;
        case DT_RELASZ: relasz = d->d_un.d_val; break;
        }
    }
    if (!symtab || !strtab) return 0;
    int imported = 0;
    const ElfW(Rela) *tables[2] = {jmprel, rela};
    size_t sizes[2] = {jmprelsz, relasz};
    for (int t = 0; t < 2; t++) {
        if (!tables[t]) continue;
        for (size_t i = 0; i < sizes[t] / sizeof(ElfW(Rela)); i++) {
            const ElfW(Rela) *r = (const ElfW(Rela) *)asp_record(lo, hi, tables[t], i, sizeof(ElfW(Rela)), _Alignof(ElfW(Rela)));
            if (!r) break;
            uint32_t type = ELF64_R_TYPE(r->r_info), sym = ELF64_R_SYM(r->r_info);
            if (!asp_reloc_names_import(type) || sym == 0) continue;
            const ElfW(Sym) *sy = (const ElfW(Sym) *)asp_record(lo, hi, symtab, sym, sizeof(ElfW(Sym)), _Alignof(ElfW(Sym)));
            if (!sy || !asp_name_is(lo, hi, (const char *)asp_at(lo, hi, (uintptr_t)strtab, sy->st_name, 1), p->name)) continue;
            if (p->version[0]) {
                const char *v = asp_symbol_version(base, lo, hi, dyn, strtab, sym, sy->st_shndx != SHN_UNDEF);
                if (!v || !asp_name_is(lo, hi, v, p->version)) continue;
            }
            /* A slot may also name a definition of this very object: a library calling its own
             * export through its PLT (libsqlite3 does), which is interposable and so rewritten.
             * Calls bound locally (-Bsymbolic, hidden aliases, an executable calling itself)
             * have no slot at all and cannot be caught. */
            void **slot = (void **)(uintptr_t)(base + r->r_offset); /* integers: checked below */
            /* never written outside the object, nor misaligned */
            if (!asp_in(lo, hi, slot, sizeof *slot) || ((uintptr_t)slot & (sizeof *slot - 1))) continue;
            imported = 1;
            void *value = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
            if (value == p->code) continue; /* done on an earlier pass */
            if (asp_is_proto_stub(job->k, value)) {
                /* our stub of an earlier registration, never put back: not an original */
                value = __atomic_load_n(&asp_proto_original[job->k], __ATOMIC_ACQUIRE);
                if (!value) continue;
            }
            if ((uintptr_t)value >= lo && (uintptr_t)value < hi) {
                /* Lazy: still the PLT. A definition of this object is its own symbol value;
                 * otherwise ask the loader, which must not answer with this object (in a
                 * non-PIE program dlsym can return the program's own PLT entry). */
                const ElfW(Sym) *s = sy;
                int own = s->st_shndx != SHN_UNDEF && s->st_value != 0;
                void *resolved = own ? (void *)(base + s->st_value)
                               : p->version[0] ? dlvsym(RTLD_DEFAULT, p->name, p->version) : dlsym(RTLD_DEFAULT, p->name);
                if (!resolved || (!own && (uintptr_t)resolved >= lo && (uintptr_t)resolved < hi)) {
                    p->status = ASPECTS_PROTO_UNRESOLVED;
                    continue;
                }
                value = resolved;
            }
            void *orig = __atomic_load_n(&asp_proto_original[job->k], __ATOMIC_ACQUIRE);
            if (!orig) __atomic_store_n(&asp_proto_original[job->k], orig = value, __ATOMIC_RELEASE);
            /* the stub's own way to the original, before any slot leads a call to the stub */
            asp_set_original(ASP_EXPORT_COUNT + job->k, orig);
            /* An object loaded where a dlclosed one was has its slots at the same addresses:
             * one entry per address. */
            uint32_t at = 0;
            while (at < p->nslots && p->slots[at] != slot) at++;
            if (at == p->nslots && p->nslots >= ASP_PROTO_SLOTS) { p->status = ASPECTS_PROTO_TOO_MANY; continue; }
            if (asp_write_slot(slot, p->code, relro_lo, relro_hi) != 0) {
                p->status = ASPECTS_PROTO_PROTECTED;
                asp_debug("cannot open the RELRO page of a slot of", p->name, "(mprotect refused)");
                continue;
            }
            p->slot_relro[at] = (uintptr_t)slot >= relro_lo && (uintptr_t)slot < relro_hi;
            p->slot_live[at] = 1;
            p->slots[at] = slot;
            if (at == p->nslots) p->nslots++;
        }
    }
    p->objects += (uint32_t)imported;
    return 0;
}

/* Our own load address (the linker's __ehdr_start is our ELF header), so that
 * libaspects.so is never rewritten. */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));
static uintptr_t asp_self_base(void) { return (uintptr_t)__ehdr_start; }

/* Puts the original back in the slots of one loaded object that still hold our stub (someone
 * else may have rewritten a slot since). Runs under the loader's lock (asp_each_object). */
static int asp_restore_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    asp_proto_rt *p = data;
    void *orig = __atomic_load_n(&asp_proto_original[p - asp_protos], __ATOMIC_ACQUIRE);
    uintptr_t lo, hi;
    asp_object_range(info, &lo, &hi);
    for (uint32_t i = 0; orig && i < p->nslots; i++) {
        uintptr_t a = (uintptr_t)p->slots[i];
        if (a < lo || a >= hi) continue;
        if (__atomic_load_n(p->slots[i], __ATOMIC_ACQUIRE) != p->code) continue;
        asp_write_slot(p->slots[i], orig, p->slot_relro[i] ? a : 1, p->slot_relro[i] ? a + 1 : 0);
    }
    return 0;
}

/* Only slots inside objects that are loaded now are written: those of a dlclosed object are
 * dropped unread (its memory may be unmapped, or another object's by now). */
static void asp_restore(asp_proto_rt *p) {
    if (p->nslots) asp_each_object(asp_restore_object, p);
    p->nslots = 0;
}

/* Whether anything is to do: a prototype in the table, or slots of ours to put back. None
 * while the table's proto_generation is still 0 (no prototype has ever come), which spares
 * every process of a table without prototypes the pages of the entries and of asp_protos. */
static int asp_protos_any(uint64_t generation) {
    if (generation == 0) return 0;
    for (uint32_t k = 0; k < ASPECTS_PROTO_CAPACITY; k++)
        if (__atomic_load_n(&asp_tab.protos[k].state, __ATOMIC_RELAXED) || asp_protos[k].serial) return 1;
    return 0;
}

static void asp_protos_pass(void);

/* Brings this process in line with the table's prototype symbols. One pass at a time: a
 * thread that finds one under way leaves asp_protos_seen alone and asks the running pass to go
 * once more (asp_protos_again), so what that pass started too early to see — a change of the
 * table, an object a dlopen just loaded — is taken up now, not at some later call. */
void asp_protos_sync(void) {
    if (!asp_tab.attached || !asp_tab.protos) return;
    for (;;) {
        uint32_t expected = 0;
        if (!__atomic_compare_exchange_n(&asp_protos_lock, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            __atomic_store_n(&asp_protos_again, 1, __ATOMIC_RELEASE);
            return;
        }
        __atomic_store_n(&asp_protos_again, 0, __ATOMIC_RELAXED);
        asp_protos_pass();
        __atomic_store_n(&asp_protos_lock, 0, __ATOMIC_RELEASE);
        if (!__atomic_load_n(&asp_protos_again, __ATOMIC_ACQUIRE)) return;
    }
}

/* Whether this process has applied the table's prototypes as of `generation`. */
int asp_protos_applied(uint64_t generation) { return __atomic_load_n(&asp_protos_seen, __ATOMIC_ACQUIRE) == generation; }

/* One pass, under asp_protos_lock. */
static void asp_protos_pass(void) {
    asp_protos_in_pass = 1;
    /* The generation is read before the entries: a change after this load bumps it again
     * and brings the next call back here, so what this pass misses is never marked seen. */
    const uint64_t generation = __atomic_load_n(&asp_tab.header->proto_generation, __ATOMIC_ACQUIRE);
    if (!asp_protos_any(generation)) {
        __atomic_store_n(&asp_protos_seen, generation, __ATOMIC_RELEASE);
        asp_identity_note_protos_applied(generation);
        asp_protos_in_pass = 0;
        return;
    }
    int saved_errno = errno;
    const asp_frame outer = asp_frame_push(&asp_tls, ASP_IN_SEALED);
    uintptr_t self = asp_self_base();
    int deferred = 0; /* libffi could not be loaded here: this generation is not applied yet */
    for (uint32_t k = 0; k < ASPECTS_PROTO_CAPACITY; k++) {
        aspects_proto_symbol *e = &asp_tab.protos[k];
        asp_proto_rt *p = &asp_protos[k];
        uint32_t s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
        if (s1 & 1u) continue;
        uint32_t state = e->state, group = e->group, nargs = e->nargs, nfixed = e->nfixed, ret = e->ret, flags = e->flags;
        uint64_t serial = e->serial;
        char name[ASPECTS_PROTO_NAME_SIZE];
        memcpy(name, e->name, sizeof name);
        name[sizeof name - 1] = 0;
        uint8_t args[ASPECTS_MAX_ARGS];
        memcpy(args, e->args, sizeof args);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) != s1) continue;
        /* serial 0 is "no registration" here (asp_protos[k].serial): an entry claiming it
         * would be applied and never restored (Fuzz/regressions/signature) */
        int valid = state == 1 && serial != 0 && nargs <= ASP_MAX_ARGS && nfixed <= nargs && ret <= ASPECTS_T_STRUCT &&
                    group == ASP_GROUP_COUNT + k && name[0];
        for (uint32_t a = 0; valid && a < nargs; a++) valid = args[a] <= ASPECTS_T_STRUCT && args[a] != ASPECTS_T_VOID;
        if (!valid) {
            if (p->serial) { asp_restore(p); p->serial = 0; }
            continue;
        }
        if (p->serial != serial) {
            /* a new registration in this entry: start over (its stub stays, unused, if any) */
            if (p->serial) asp_restore(p);
            if (p->serial && strcmp(p->name, name) != 0) __atomic_store_n(&asp_proto_original[k], NULL, __ATOMIC_RELEASE);
            /* "name@VERSION" (or "name@@VERSION"): that version only */
            memcpy(p->name, name, sizeof name);
            p->version[0] = 0;
            char *at = strchr(p->name, '@');
            if (at) {
                *at = 0;
                const char *v = at + 1 + (at[1] == '@');
                size_t vl = strlen(v);
                memcpy(p->version, v, vl + 1 < sizeof p->version ? vl + 1 : sizeof p->version - 1);
                p->version[sizeof p->version - 1] = 0;
            }
            asp_export_desc *d = &asp_proto_exports[k];
            d->name = p->name;
            d->group = (uint16_t)group;
            d->ret = (uint8_t)ret;
            d->nargs = (uint8_t)nargs;
            d->nfixed = (uint8_t)nfixed;
            d->flags = (flags & 1u) ? ASP_F_VARIADIC : 0;
            for (uint32_t a = 0; a < ASP_MAX_ARGS; a++) {
                d->args[a] = a < nargs ? args[a] : 0;
                d->argmap[a] = a < nargs ? (uint8_t)a : 0xff;
            }
            p->serial = serial;
            p->code = NULL;
            asp_stub_forget(ASP_EXPORT_COUNT + k);
        }
        p->objects = 0;
        p->status = ASPECTS_PROTO_APPLIED;
        if (!p->code) {
            /* Struct layouts need libffi's types, so libffi first (and the closures' memory
             * with it: closures.c). Where loading is not safe, a later pass does it. */
            const int ready = asp_closures_prepare(NULL);
            if (ready == 0) deferred = 1;
            if (ready != 1 || !asp_signature_structs(k, e, nargs, asp_ffi.types)) {
                p->status = ASPECTS_PROTO_NO_CLOSURE;
                goto report;
            }
            /* The original comes from the first importing slot (asp_patch_object); until then
             * the stub finds it through asp_original. */
            p->code = asp_build_stub(ASP_EXPORT_COUNT + k);
            if (!p->code) { p->status = ASPECTS_PROTO_NO_CLOSURE; goto report; }
        }
        asp_patch_job job = {.k = k, .self_base = self};
        for (uint32_t i = 0; i < p->nslots; i++) p->slot_live[i] = 0;
        asp_each_object(asp_patch_object, &job);
        /* Slots of objects dlclosed since the last pass are forgotten. */
        uint32_t kept = 0;
        for (uint32_t i = 0; i < p->nslots; i++) {
            if (!p->slot_live[i]) continue;
            p->slots[kept] = p->slots[i];
            p->slot_relro[kept] = p->slot_relro[i];
            p->slot_live[kept] = 1;
            kept++;
        }
        p->nslots = kept;
        void *orig = __atomic_load_n(&asp_proto_original[k], __ATOMIC_ACQUIRE);
        if (orig) asp_set_original(ASP_EXPORT_COUNT + k, orig);
        if (!p->objects && p->status == ASPECTS_PROTO_APPLIED) p->status = ASPECTS_PROTO_NOT_IMPORTED;
    report:
        __atomic_store_n(&e->status, p->status, __ATOMIC_RELAXED);
        __atomic_store_n(&e->status_pid, asp_pid, __ATOMIC_RELAXED);
        __atomic_store_n(&e->patched, p->nslots, __ATOMIC_RELAXED);
        __atomic_store_n(&e->objects, p->objects, __ATOMIC_RELAXED);
    }
    if (!deferred) {
        __atomic_store_n(&asp_protos_seen, generation, __ATOMIC_RELEASE);
        asp_identity_note_protos_applied(generation);
    }
    asp_frame_pop(&asp_tls, outer);
    errno = saved_errno;
    asp_protos_in_pass = 0;
}

void asp_protos_maybe_sync(void) {
    if (!asp_tab.attached) return;
    if (__atomic_load_n(&asp_tab.header->proto_generation, __ATOMIC_ACQUIRE) != __atomic_load_n(&asp_protos_seen, __ATOMIC_ACQUIRE))
        asp_protos_sync();
}

/* A pass runs inside dl_iterate_phdr, holding the loader's list lock, which glibc does not
 * reset in a fork child: a fork in the middle of a pass would leave the child's next pass (and
 * its dlopen) waiting for ever. So fork waits for a running pass to end (prepare), and a child
 * then starts from the parent's finished state. The wait is bounded, and skipped on the thread
 * whose own pass a signal handler interrupted to fork: the child continues that pass itself. */

void asp_protos_atfork_prepare(void) {
    asp_protos_held_for_fork = 0;
    if (asp_protos_in_pass) return;
    for (int spins = 0; spins < 100000; spins++) {
        uint32_t expected = 0;
        if (__atomic_compare_exchange_n(&asp_protos_lock, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            asp_protos_held_for_fork = 1;
            return;
        }
        asp_sys_yield(); /* raw: the engine calls no wrapped function of its own */
    }
}

void asp_protos_atfork_parent(void) {
    if (asp_protos_held_for_fork) __atomic_store_n(&asp_protos_lock, 0, __ATOMIC_RELEASE);
    asp_protos_held_for_fork = 0;
}

/* In a fork child only the forking thread exists. When prepare could not wait for a running
 * pass, that pass holds asp_protos_lock for ever and may have left a prototype half patched:
 * free the lock and redo the pass on the next advised call. */
void asp_protos_after_fork(void) {
    if (!asp_protos_held_for_fork && !asp_protos_in_pass) __atomic_store_n(&asp_protos_seen, (uint64_t)-1, __ATOMIC_RELEASE);
    asp_protos_held_for_fork = 0;
    if (!asp_protos_in_pass) __atomic_store_n(&asp_protos_lock, 0, __ATOMIC_RELEASE);
}
