/* watch.h — watch.c: the thread that applies prototype rules as they come (--live-prototypes). */
#ifndef ASP_WATCH_H
#define ASP_WATCH_H

#include "base.h"
void asp_watch_start(void);        /* after attach: start the watcher when the table asks for one */
void asp_watch_after_fork(void);   /* fork child: no watcher; start one at the next table check */
void asp_watch_table_moved(void);  /* the dispatcher saw the table change (rulecache.c's hook) */

#endif
