/* Area: advice as code (the `call` action) meeting the program's signal handlers.
 * Purpose: advice that raises SIGUSR1 in the calling thread, so that the program's handler
 * runs inside the user's advice — DecisionDifferentialTests checks that the handler's calls
 * are advised and counted as calls of their own (README: a handler's call "is advised as its
 * own"), wherever the handler interrupts.
 * Build: cc -shared -fPIC -I Sources/CPreload/include -o libadvice_raise.so advice_raise.c */
#include <aspects_advice.h>
#include <signal.h>

void raise_usr1(aspects_invocation *inv) {
    (void)inv;
    raise(SIGUSR1);
}
