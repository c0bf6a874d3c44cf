/* sys.h — sys.c: the preload's only way to the kernel (raw system calls through syscall(2), never
 * an exported wrapper), and its two voices: ASPECTS_DEBUG and ASPECTS_STRICT. */
#ifndef ASP_SYS_H
#define ASP_SYS_H

#include "base.h"
long asp_sys_close(int fd);
long asp_sys_open_ro(const char *path);
long asp_sys_read(int fd, void *buf, size_t n);
long asp_sys_create_new(const char *path);  /* write-only, 0600; fails when it exists */
long asp_sys_write(int fd, const void *buf, size_t n);  /* -1/EFAULT, not a fault, on unreadable buf */
long asp_sys_readlink(const char *path, char *buf, size_t n);
long asp_sys_fstat_size(int fd, uint64_t *size);
uint32_t asp_sys_geteuid(void);
uint32_t asp_sys_getpid(void);
uint32_t asp_sys_getppid(void);
uint32_t asp_sys_gettid(void);
uint64_t asp_sys_realtime_ns(void);
void asp_sys_sleep_ns(uint64_t ns);
void asp_sys_yield(void);            /* sched_yield: lets another thread run */
void asp_sys_raise(int sig);
void asp_debug(const char *a, const char *b, const char *c);
void asp_note(const char *a, const char *b, const char *c);  /* always: "libaspects: a b c" */
struct stat;
long asp_sys_fstat(int fd, struct stat *st);
void asp_decimal_text(uint32_t v, char out[12]);  /* v in decimal, NUL-terminated */
extern int asp_debug_enabled;
void asp_strict_say(const char *a, const char *b, const char *c); /* once, with ASPECTS_STRICT */
extern int asp_strict_enabled;
extern uint32_t asp_pid;     /* cached getpid(), refreshed in the fork child */


#endif
