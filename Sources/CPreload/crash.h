/* crash.h — the crash recorder (crash.c): explore's view of crashes anywhere in a process tree. */
#ifndef ASP_CRASH_H
#define ASP_CRASH_H

#pragma GCC visibility push(hidden)

/* With ASPECTS_RECORD_CRASH=1 in the environment (explore sets it for its runs), records in
 * this process's attachment record the crash signal that ends it, and with ASPECTS_CRASH_DIR
 * the crashing thread's stack and the process's mappings in files there (crash.c). Called once from the
 * constructor, after the attachment record is written; does nothing otherwise. */
void asp_crash_recorder_install(void);

#pragma GCC visibility pop

#endif
