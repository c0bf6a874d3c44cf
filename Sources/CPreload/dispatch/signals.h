/* signals.h — signals.c: the program's signal handlers behind the trampoline entries, and
 * what the crash recorder (crash.c, on top) asks of them. */
#ifndef ASP_SIGNALS_H
#define ASP_SIGNALS_H

#include <signal.h>
#include "base.h"

typedef void (*asp_siginfo_handler)(int, siginfo_t *, void *);

/* The crash recorder's handler becomes what stands for SIG_DFL on `sig`: installed now if
 * the disposition is the default, and whenever the program asks for SIG_DFL later; read back
 * by the program as SIG_DFL (a program that installs its crash handler only "if none is
 * installed" behaves as without the recorder). Called at start-up, before any thread. */
void asp_signal_record_default(int sig, asp_siginfo_handler recorder);

/* The real default disposition on `sig`, for the recorder's own handler, which hands the
 * signal to it: the raw system call (async-signal-safe), past the mapping above. */
void asp_signal_really_default(int sig);

/* Set by the crash recorder (the top layer's hook): called by the trampoline with every
 * signal it delivers to a program's handler — `returned` 0 before the handler runs (the
 * context, when it is the kernel's, else NULL), 1 after it returned. */
extern void (*asp_signal_caught_hook)(int sig, const void *context, int returned);

/* Whether some signal's handler, as the kernel holds it, is neither behind an entry nor the
 * recorder: installed with the raw system call (or past the entries' pool), so it may run
 * without the trampoline counting it (asp_in_handler). One system call per signal: for a
 * path taken once, never a hot one. */
int asp_signals_untracked_handler(void);

/* Whether the program has put a handler behind an entry already (entries fill in order). */
int asp_signals_entry_taken(void);

/* Set by the top layer at attach: called after the program put a handler of its own behind
 * an entry, outside the engine, so that what a handler's first advised call needs can be
 * taken now, where loading is safe (closures.c). */
extern void (*asp_signal_installed_hook)(void);

#endif
