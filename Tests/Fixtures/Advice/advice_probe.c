/* Area: advice as code (the `call` action, aspects_advice.h).
 * Purpose: advice functions the tests name in rules, each exercising a part of the C API; they
 * report on stderr ("probe: ...") with dprintf, whose write is the C library's own (not a call
 * through the PLT), so the report never meets the preload.
 * Build: cc -shared -fPIC -I Sources/CPreload/include -o libadvice_probe.so advice_probe.c */
#define _GNU_SOURCE
#include <aspects_advice.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Everything the record says, one line. */
void probe_describe(aspects_invocation *inv) {
    char args[512] = "";
    size_t n = 0;
    for (unsigned i = 0; i < aspects_arg_count(inv) && n < sizeof args - 64; i++) {
        switch (aspects_arg_type(inv, i)) {
        case ASPECTS_ADVICE_T_INT: case ASPECTS_ADVICE_T_UINT:
            n += (size_t)snprintf(args + n, sizeof args - n, " i%lld", (long long)aspects_arg_int(inv, i)); break;
        case ASPECTS_ADVICE_T_STRING:
            n += (size_t)snprintf(args + n, sizeof args - n, " s\"%s\"", (const char *)aspects_arg_ptr(inv, i)); break;
        case ASPECTS_ADVICE_T_POINTER: n += (size_t)snprintf(args + n, sizeof args - n, " p"); break;
        case ASPECTS_ADVICE_T_DOUBLE: n += (size_t)snprintf(args + n, sizeof args - n, " d%.2f", aspects_arg_double(inv, i)); break;
        default: n += (size_t)snprintf(args + n, sizeof args - n, " ?"); break;
        }
    }
    dprintf(2, "probe: %s rule=%s call=%llu position=%d version=0x%x args=%u%s return=%lld errno=%d caller=%s+0x%llx\n",
            aspects_symbol(inv), aspects_fired_rule(inv), (unsigned long long)aspects_call_number(inv), aspects_position(inv),
            aspects_invocation_version(inv), aspects_arg_count(inv), args, (long long)aspects_return_int(inv), aspects_errno(inv),
            aspects_caller_object(inv), (unsigned long long)aspects_caller_offset(inv));
}

/* What each position allows, checked: prints "contract ok" or the first broken promise. */
void probe_contract(aspects_invocation *inv) {
    const char *broken = NULL;
    const int p = aspects_position(inv);
#define EXPECT(cond, what) do { if (!broken && !(cond)) broken = (what); } while (0)
    EXPECT(aspects_arg_type(inv, 7) == ASPECTS_ADVICE_T_NONE, "no argument 7");
    EXPECT(aspects_set_arg_int(inv, 7, 1) == ASPECTS_ADVICE_E_RANGE, "set argument 7: E_RANGE");
    EXPECT(aspects_set_arg_ptr(inv, 0, NULL) == ASPECTS_ADVICE_E_TYPE, "set an int argument as a pointer: E_TYPE");
    EXPECT(aspects_arg_ptr(inv, 0) == NULL, "an int argument read as a pointer: NULL");
    if (p == ASPECTS_ADVICE_BEFORE) {
        EXPECT(aspects_proceed(inv) == ASPECTS_ADVICE_E_POSITION, "before: proceed refused");
        EXPECT(aspects_set_return_int(inv, 1) == ASPECTS_ADVICE_E_POSITION, "before: no result");
        EXPECT(aspects_set_errno(inv, EIO) == ASPECTS_ADVICE_E_POSITION, "before: errno is the caller's");
        EXPECT(aspects_return_address(inv) == NULL, "before: no result buffer");
        EXPECT(aspects_set_arg_int(inv, 0, aspects_arg_int(inv, 0)) == ASPECTS_ADVICE_OK, "before: arguments writable");
    } else if (p == ASPECTS_ADVICE_INSTEAD) {
        EXPECT(aspects_return_int(inv) == 0, "instead: starts from 0");
        EXPECT(!aspects_proceeded(inv), "instead: not proceeded yet");
        EXPECT(aspects_proceed(inv) == ASPECTS_ADVICE_OK, "instead: proceed once");
        EXPECT(aspects_proceeded(inv), "instead: proceeded");
        EXPECT(aspects_proceed(inv) == ASPECTS_ADVICE_E_PROCEEDED, "instead: proceed twice refused");
        EXPECT(aspects_set_arg_int(inv, 0, 1) == ASPECTS_ADVICE_E_PROCEEDED, "instead: arguments fixed once proceeded");
        EXPECT(aspects_set_return_ptr(inv, NULL) == ASPECTS_ADVICE_E_TYPE, "instead: an int result is no pointer");
    } else {
        EXPECT(aspects_proceed(inv) == ASPECTS_ADVICE_E_POSITION, "after: proceed refused");
        EXPECT(aspects_set_arg_int(inv, 0, 1) == ASPECTS_ADVICE_E_POSITION, "after: arguments are history");
        EXPECT(aspects_set_return_int(inv, aspects_return_int(inv)) == ASPECTS_ADVICE_OK, "after: result writable");
    }
    EXPECT(aspects_invocation_version(inv) >> 16 == ASPECTS_ADVICE_VERSION_MAJOR, "the record's major version");
    dprintf(2, "probe: contract %s%s\n", broken ? "broken: " : "ok", broken ? broken : "");
}

/* before write: the original writes at most 3 bytes (a correct caller writes the rest). */
void probe_write_three(aspects_invocation *inv) {
    if (aspects_arg_int(inv, 2) > 3) aspects_set_arg_int(inv, 2, 3);
}

/* instead unlink: refused as on a read-only file system, without calling the original. */
void probe_unlink_erofs(aspects_invocation *inv) {
    aspects_set_return_int(inv, -1);
    aspects_set_errno(inv, EROFS);
}

/* instead getppid: a made-up parent. */
void probe_getppid_4242(aspects_invocation *inv) { aspects_set_return_int(inv, 4242); }

/* after getppid: clobbers errno behind the API's back; the caller must not see it. */
void probe_clobber_errno(aspects_invocation *inv) {
    (void)inv;
    errno = EBADF;
    (void)close(-1); /* a failing call of its own, too */
}

/* before write: writes itself, through the PLT. Advised by its own rule, this would never end. */
void probe_reenter(aspects_invocation *inv) {
    (void)inv;
    static const char line[] = "probe: reentered write\n";
    (void)!write(2, line, sizeof line - 1);
}

/* A crash inside advice: the process dies, its firing recorded first. */
void probe_crash(aspects_invocation *inv) {
    (void)inv;
    *(volatile int *)(uintptr_t)8 = 1;
}

/* instead fx_add (prototype rule): the first argument becomes 100, then the original. */
void probe_add_hundred(aspects_invocation *inv) {
    aspects_set_arg_int(inv, 0, 100);
    aspects_proceed(inv);
}

/* after fx_scale (prototype rule, doubles): the result doubled. */
void probe_double_scale(aspects_invocation *inv) {
    aspects_set_return_double(inv, aspects_return_double(inv) * 2);
}

/* after fx_swap (prototype rule, a struct by value): its first field negated in place. */
void probe_negate_swap(aspects_invocation *inv) {
    double *fields = aspects_return_address(inv);
    if (fields) fields[0] = -fields[0];
}

/* instead fx_scale: its first double argument changed, then the original. */
void probe_scale_ten(aspects_invocation *inv) {
    aspects_set_arg_double(inv, 0, 10.0);
    aspects_proceed(inv);
}
