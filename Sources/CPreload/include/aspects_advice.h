/* aspects_advice.h — advice as code: the C API of a function that a rule's `"call"` action runs.
 *
 *   {"symbol": "getaddrinfo", "position": "instead", "action": {"call": "./libfake.so:fake_dns"}}
 *
 * libaspects.so loads the object (dlopen, RTLD_NOW | RTLD_LOCAL, once per process) and calls
 * the function with the call's invocation record, Aspects' AspectInfo:
 *
 *   #include <aspects_advice.h>
 *   void fake_dns(aspects_invocation *inv) {
 *       const char *host = (const char *)aspects_arg_ptr(inv, 0);
 *       if (host && strcmp(host, "example.invalid") == 0) { ...; aspects_set_return_int(inv, 0); return; }
 *       aspects_proceed(inv);                 // any other name: the real getaddrinfo
 *   }
 *
 * Build the object with `cc -shared -fPIC -o libfake.so fake.c -I <dir of this header>`; it
 * needs no library at link time (the functions below are libaspects.so's, found when the
 * object is loaded into a process that preloads it).
 *
 * The record is opaque and lives only while the advice runs: keep no pointer to it. It is the
 * call itself, not a copy: an argument, result or errno set through it is the call's. Arguments
 * are numbered as the rule numbers them: from 0, in the prototype of the function the rule
 * names (for an alias such as __xstat, stat's arguments). The functions below are safe in a
 * signal handler (no locks, no allocation); the advice itself runs wherever the call was
 * made, so it must be as careful as the code that made the call (docs/advice.md).
 *
 * Versions: an object records the version of this header it was built with (the weak symbol
 * below, emitted by including the header); libaspects.so refuses an object of another major
 * version, with an event and an ASPECTS_DEBUG line, and calls the original instead. */
#ifndef ASPECTS_ADVICE_H
#define ASPECTS_ADVICE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
/* Default visibility whatever the includer's pragmas or -fvisibility say: these are
 * libaspects.so's exports, and the object's version word must be found by dlsym. */
#pragma GCC visibility push(default)

#define ASPECTS_ADVICE_VERSION_MAJOR 1u
#define ASPECTS_ADVICE_VERSION_MINOR 0u
#define ASPECTS_ADVICE_VERSION ((ASPECTS_ADVICE_VERSION_MAJOR << 16) | ASPECTS_ADVICE_VERSION_MINOR)

/* The version an advice object was built with: one weak definition per translation unit that
 * includes this header, merged by the linker, found by libaspects.so with dlsym. (The engine
 * itself defines ASPECTS_ADVICE_ENGINE: it implements the API and is no advice object. Swift
 * imports the declarations only: AspectsAdvice's C part defines the symbol for Swift advice.) */
#if !defined(ASPECTS_ADVICE_ENGINE) && !defined(__swift__)
extern const uint32_t aspects_advice_version;
__attribute__((weak, visibility("default"), used)) const uint32_t aspects_advice_version = ASPECTS_ADVICE_VERSION;
#endif

/* The invocation record of one advised call. */
typedef struct aspects_invocation aspects_invocation;

/* What a "call" action names: `void function(aspects_invocation *)`. */
typedef void (*aspects_advice_function)(aspects_invocation *inv);

/* Where the advice runs. */
enum aspects_advice_position {
    ASPECTS_ADVICE_BEFORE = 0,  /* before the original: arguments may be changed */
    ASPECTS_ADVICE_INSTEAD = 1, /* instead of it: the advice gives the result, or proceeds once */
    ASPECTS_ADVICE_AFTER = 2    /* after it: its result and errno may be read and replaced */
};

/* The kind of an argument or of the result. */
enum aspects_advice_type {
    ASPECTS_ADVICE_T_NONE = 0,    /* no such argument; a void result */
    ASPECTS_ADVICE_T_INT = 1,     /* a signed integer (char, short, int, long, ssize_t, off_t ...) */
    ASPECTS_ADVICE_T_UINT = 2,    /* an unsigned integer (size_t, mode_t, unsigned ...) */
    ASPECTS_ADVICE_T_POINTER = 3, /* a pointer */
    ASPECTS_ADVICE_T_STRING = 4,  /* a const char * (a pointer: read with aspects_arg_ptr) */
    ASPECTS_ADVICE_T_DOUBLE = 5,  /* a float or a double */
    ASPECTS_ADVICE_T_STRUCT = 6   /* a struct by value (prototype rules): aspects_arg_address */
};

/* What the setters and aspects_proceed return. */
enum aspects_advice_status {
    ASPECTS_ADVICE_OK = 0,
    ASPECTS_ADVICE_E_RANGE = -1,    /* no argument of that number */
    ASPECTS_ADVICE_E_TYPE = -2,     /* the argument or result is of another kind */
    ASPECTS_ADVICE_E_POSITION = -3, /* not at this position (proceed before/after, a result before) */
    ASPECTS_ADVICE_E_PROCEEDED = -4 /* the original already ran for this call */
};

/* ---- the call ---- */
uint32_t aspects_invocation_version(const aspects_invocation *inv); /* the engine's ASPECTS_ADVICE_VERSION */
const char *aspects_symbol(const aspects_invocation *inv);          /* the name called ("open64") */
const char *aspects_fired_rule(const aspects_invocation *inv);      /* the id of the rule that fired */
uint64_t aspects_call_number(const aspects_invocation *inv);        /* the call's number in the rule's scope */
int aspects_position(const aspects_invocation *inv);                /* enum aspects_advice_position */

/* ---- arguments: read as their kind; integers are sign- or zero-extended ---- */
unsigned aspects_arg_count(const aspects_invocation *inv);
int aspects_arg_type(const aspects_invocation *inv, unsigned i);    /* enum aspects_advice_type */
int64_t aspects_arg_int(const aspects_invocation *inv, unsigned i); /* 0 unless INT or UINT */
void *aspects_arg_ptr(const aspects_invocation *inv, unsigned i);   /* NULL unless POINTER or STRING */
double aspects_arg_double(const aspects_invocation *inv, unsigned i); /* 0 unless DOUBLE */
void *aspects_arg_address(aspects_invocation *inv, unsigned i);     /* where the value is held: any kind */
/* Changed values go to the original (before; instead, then proceed); narrowed to the type. */
int aspects_set_arg_int(aspects_invocation *inv, unsigned i, int64_t value);
int aspects_set_arg_ptr(aspects_invocation *inv, unsigned i, void *value);
int aspects_set_arg_double(aspects_invocation *inv, unsigned i, double value);

/* ---- the original (Aspects' [originalInvocation invoke]) ---- */
/* instead only, at most once: calls the original with the arguments as they are now; its
 * result and errno become the call's, for the advice to read and replace. */
int aspects_proceed(aspects_invocation *inv);
int aspects_proceeded(const aspects_invocation *inv);              /* 1 once the original ran */

/* ---- the result: after (the original's, or an earlier rule's), instead ---- */
int aspects_return_type(const aspects_invocation *inv);            /* enum aspects_advice_type */
int64_t aspects_return_int(const aspects_invocation *inv);
void *aspects_return_ptr(const aspects_invocation *inv);
double aspects_return_double(const aspects_invocation *inv);
void *aspects_return_address(aspects_invocation *inv);             /* NULL before */
int aspects_set_return_int(aspects_invocation *inv, int64_t value);
int aspects_set_return_ptr(aspects_invocation *inv, void *value);
int aspects_set_return_double(aspects_invocation *inv, double value);

/* ---- errno: what the caller had (before), or will see (instead, after) ---- */
int aspects_errno(const aspects_invocation *inv);
int aspects_set_errno(aspects_invocation *inv, int value);          /* instead and after only */

/* ---- who called ---- */
const void *aspects_caller_address(const aspects_invocation *inv);  /* the return address */
const char *aspects_caller_object(aspects_invocation *inv);         /* its object's file name, "" unknown */
uint64_t aspects_caller_offset(aspects_invocation *inv);            /* the address's offset in that file */

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif /* ASPECTS_ADVICE_H */
