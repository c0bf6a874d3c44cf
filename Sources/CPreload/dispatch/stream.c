/* stream.c — see stream.h. glibc's struct _IO_FILE is public (<bits/types/struct_FILE.h>):
 * _fileno, _flags with _IO_ERR_SEEN, the write pointers and _lock are what its own inline
 * getc/putc macros read. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "stream.h"
#include "sys.h"

#ifndef _IO_ERR_SEEN
#define _IO_ERR_SEEN 0x0020
#endif
#ifndef _IO_UNBUFFERED
#define _IO_UNBUFFERED 0x0002 /* glibc's libio.h: the stream has no buffer of its own */
#endif

/* A stream's first I/O allocates its buffer, sized (st_blksize) and, on a terminal, made line
 * buffered from fstat(2) of its descriptor: with -1 there, glibc would choose otherwise and
 * the stream would keep that after the fault. An O_PATH descriptor of the same file answers
 * fstat as the real one does and refuses read, write and lseek with EBADF, as -1 does.
 * -1 when none can be had (no /proc). */
static int asp_stream_stand_in(FILE *fp, int fd) {
    if (fp->_IO_buf_base || (fp->_flags & _IO_UNBUFFERED)) return -1;
    char path[32] = "/proc/self/fd/";
    asp_decimal_text((uint32_t)fd, path + 14);
    const long r = syscall(SYS_openat, (long)AT_FDCWD, path, (long)(O_PATH | O_CLOEXEC), 0L);
    return r < 0 ? -1 : (int)r;
}

FILE *asp_stream_arg(const asp_export_desc *ex, const uint64_t *vals) {
    /* (the program's stdin/stdout: a copy relocation in the executable, which libc uses too) */
    if (ex->handle == ASP_HANDLE_STDOUT) return stdout;
    if (ex->handle == ASP_HANDLE_STDIN) return stdin;
    if (ex->handle != ASP_HANDLE_FILE || ex->handle_arg >= ex->nargs) return NULL;
    return (FILE *)(uintptr_t)vals[ex->handle_arg];
}

int asp_stream_begin(const asp_export_desc *ex, const uint64_t *vals, int pending_only, asp_stream_hold *h) {
    h->fp = asp_stream_arg(ex, vals);
    h->fd = h->stand_in = -1;
    h->locked = 0;
    if (!h->fp) return ASP_STREAM_NONE;
    /* The lock glibc's functions take recursively: no other thread uses the stream (and sees
     * the -1) while the call runs. A stream without a lock is one glibc made for itself. */
    if (h->fp->_lock) {
        flockfile(h->fp);
        h->locked = 1;
    }
    if (pending_only && !(h->fp->_IO_write_ptr > h->fp->_IO_write_base)) {
        asp_stream_end(h, 0);
        return ASP_STREAM_NONE;
    }
    h->fd = h->fp->_fileno;
    if (h->fd < 0) return ASP_STREAM_NO_FD;
    const int saved = errno;
    h->stand_in = asp_stream_stand_in(h->fp, h->fd);
    errno = saved;
    h->fp->_fileno = h->stand_in;
    return ASP_STREAM_FD;
}

int asp_stream_end(asp_stream_hold *h, int call_errno) {
    if (!h->fp) return 0;
    int took = 0;
    if (h->fd >= 0) {
        h->fp->_fileno = h->fd;
        took = call_errno == EBADF && (h->fp->_flags & _IO_ERR_SEEN);
    }
    if (h->stand_in >= 0) {
        const int saved = errno;
        asp_sys_close(h->stand_in);
        errno = saved;
        h->stand_in = -1;
    }
    if (h->locked) funlockfile(h->fp);
    h->locked = 0;
    return took;
}

void asp_stream_set_error(asp_stream_hold *h) {
    if (h->fp) h->fp->_flags |= _IO_ERR_SEEN;
    asp_stream_end(h, 0);
}

int32_t asp_kind_errno(const asp_export_desc *ex, const uint64_t *vals, int32_t code) {
    if (ex->group >= ASP_GROUP_COUNT || (ex->handle_arg >= ex->nargs && ex->handle != ASP_HANDLE_STDIN && ex->handle != ASP_HANDLE_STDOUT))
        return code;
    const int16_t *row = asp_kind_errnos[ex->group];
    int fd = -1;
    if (ex->handle == ASP_HANDLE_FD) fd = (int)vals[ex->handle_arg];
    else if (ex->handle == ASP_HANDLE_FILE || ex->handle == ASP_HANDLE_STDIN || ex->handle == ASP_HANDLE_STDOUT) {
        FILE *fp = asp_stream_arg(ex, vals);
        fd = fp ? fp->_fileno : -1;
    }
    if (fd < 0) return code;
    struct stat st;
    const int saved = errno;
    const long r = asp_sys_fstat(fd, &st);
    errno = saved;
    if (r != 0) return code;
    const int kind = S_ISFIFO(st.st_mode) ? ASP_KIND_PIPE : S_ISSOCK(st.st_mode) ? ASP_KIND_SOCKET : ASP_KIND_FILE;
    return row[kind] ? row[kind] : code;
}
