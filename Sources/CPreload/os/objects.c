/* objects.c — where a loaded object's ELF header is, found from /proc/self/maps.
 *
 * proto.c reaches the objects of other link-map namespaces (dlmopen) through the loader's
 * r_debug chain, whose public link_map gives only l_addr (the load bias), l_name and l_ld
 * (the dynamic section). The ELF header is at l_addr only for an object whose lowest PT_LOAD
 * is at address 0: a library linked at another base is elsewhere when relocated (FUZZING.md,
 * E1: reading at l_addr crashed the host), and l_addr is 0 when it sits at its own base (E2:
 * such objects were skipped). l_ld, though, is inside the object for certain: the file mapped
 * around it is the object's file, and the loader mapped that file's first page (offset 0, the
 * ELF and program headers) at the object's start — the nearest such mapping below l_ld, since
 * the loader reserves an object's whole span at once. proto.c then checks the header against
 * l_addr and l_ld before it trusts it.
 *
 * Not on any hot path: called for each object of another namespace when prototype rules are
 * applied or put back, under proto.c's lock (one caller at a time: the buffers are static).
 * Raw system calls, no stdio, no malloc: it may run inside any advised call. */
#define _GNU_SOURCE /* struct dl_phdr_info, in objects.h */
#include "identity.h"
#include "objects.h"
#include "sys.h"

typedef struct asp_map_line {
    uint64_t start, end, offset, dev, inode;
    int readable;
} asp_map_line;

/* "start-end perms offset major:minor inode [path]" */
static void asp_map_parse(const char *p, asp_map_line *m) {
    m->start = asp_parse_hex(&p);
    if (*p == '-') p++;
    m->end = asp_parse_hex(&p);
    while (*p == ' ') p++;
    m->readable = p[0] == 'r';
    while (*p && *p != ' ') p++;
    while (*p == ' ') p++;
    m->offset = asp_parse_hex(&p);
    while (*p == ' ') p++;
    const uint64_t major = asp_parse_hex(&p);
    if (*p == ':') p++;
    m->dev = major << 32 | asp_parse_hex(&p);
    while (*p == ' ') p++;
    uint64_t inode = 0;
    while (*p >= '0' && *p <= '9') inode = inode * 10 + (uint64_t)(*p++ - '0');
    m->inode = inode;
}

typedef int (*asp_map_fn)(const asp_map_line *, void *);

/* Calls fn for each mapping until it returns nonzero; 0 when the maps could not be read. */
static int asp_each_mapping(asp_map_fn fn, void *data) {
    static char buf[8192];
    static char line[512]; /* the fields come first; a long path is cut, never needed here */
    const long fd = asp_sys_open_ro("/proc/self/maps");
    if (fd < 0) return 0;
    size_t ll = 0;
    long n;
    int stop = 0;
    while (!stop && (n = asp_sys_read((int)fd, buf, sizeof buf)) > 0) {
        for (long i = 0; i < n && !stop; i++) {
            if (buf[i] != '\n') {
                if (ll < sizeof line - 1) line[ll++] = buf[i];
                continue;
            }
            line[ll] = 0;
            ll = 0;
            asp_map_line m;
            asp_map_parse(line, &m);
            stop = fn(&m, data);
        }
    }
    asp_sys_close((int)fd);
    return 1;
}

typedef struct asp_header_search {
    uint64_t inside;
    uint64_t dev, inode;      /* the file mapped at `inside` */
    uint64_t lo, hi;          /* the best first-page mapping so far */
} asp_header_search;

static int asp_find_file(const asp_map_line *m, void *d) {
    asp_header_search *s = d;
    if (s->inside < m->start || s->inside >= m->end) return 0;
    s->dev = m->dev;
    s->inode = m->inode;
    return 1;
}

static int asp_find_first_page(const asp_map_line *m, void *d) {
    asp_header_search *s = d;
    if (m->start > s->inside) return 1; /* ascending: nothing below `inside` follows */
    if (m->readable && m->offset == 0 && m->inode == s->inode && m->dev == s->dev && m->start >= s->lo) {
        s->lo = m->start;
        s->hi = m->end;
    }
    return 0;
}

int asp_object_header(uintptr_t inside, uintptr_t *lo, uintptr_t *hi) {
    asp_header_search s = {.inside = inside};
    if (!inside || !asp_each_mapping(asp_find_file, &s) || !s.inode) return 0; /* anonymous: no file */
    if (!asp_each_mapping(asp_find_first_page, &s) || !s.hi) return 0;
    *lo = (uintptr_t)s.lo;
    *hi = (uintptr_t)s.hi;
    return 1;
}
