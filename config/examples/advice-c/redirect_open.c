/* redirect_open — opens of one path go to another: an `instead` advice that changes an
 * argument and proceeds, as an Aspects block sets an argument of the originalInvocation and
 * invokes it. Which path is redirected where comes from the environment of the advised
 * program (REDIRECT_FROM, REDIRECT_TO), so one object serves any test.
 *
 *   cc -shared -fPIC -O2 -I ../../../Sources/CPreload/include -o libredirect_open.so redirect_open.c
 *   (installed: -I PREFIX/include/aspects)
 *   REDIRECT_FROM=/etc/hostname REDIRECT_TO=$PWD/hostname.test \
 *     aspectctl run --rules redirect-open.json -- cat /etc/hostname
 *
 * The rule is on the whole `open` family, whose members have the path at different places
 * (open's argument 0, openat's 1): the advice finds it by its kind, the first string. */
#include <aspects_advice.h>
#include <stdlib.h>
#include <string.h>

void redirect_open(aspects_invocation *inv) {
    const char *from = getenv("REDIRECT_FROM"), *to = getenv("REDIRECT_TO");
    for (unsigned i = 0; i < aspects_arg_count(inv); i++) {
        if (aspects_arg_type(inv, i) != ASPECTS_ADVICE_T_STRING) continue;
        const char *path = aspects_arg_ptr(inv, i);
        /* `to` outlives the call: the environment's string, not a buffer of ours */
        if (from && to && path && strcmp(path, from) == 0) aspects_set_arg_ptr(inv, i, (void *)to);
        break;
    }
    aspects_proceed(inv);
}
