/* glob.h — glob.c: string matchers for rule conditions, with fnmatch(3)'s semantics and a fast
 * form for the usual path patterns. */
#ifndef ASP_GLOB_H
#define ASP_GLOB_H

#include "base.h"
/* A glob matcher's pattern, classified when the rule copy is made: most path patterns are a
 * literal, "prefix*" or "*suffix", which are matched by comparing bytes, not by the general
 * backtracking matcher. */
typedef struct asp_glob_plan {
    uint16_t prefix;   /* bytes before the first '*' */
    uint16_t suffix;   /* bytes after the last '*' */
    uint8_t fixed;     /* 1: no metacharacter but '*' runs in one place; 0: general matcher */
    uint8_t star;      /* the pattern has a '*' */
} asp_glob_plan;

int asp_glob_match(const char *pattern, size_t plen, const char *s, size_t smax);
asp_glob_plan asp_glob_classify(const char *pattern, size_t plen);
/* asp_glob_match's answer for a pattern asp_glob_classify found fixed, by comparing bytes:
 * the prefix from the front (a mismatch or s's NUL ends it: the pattern has no NUL), then the
 * suffix from the back, whose last byte rejects most strings at once. Inline: it is the
 * matcher of the commonest path rules ("*.db", "/tmp/STAR"). */
static inline int asp_glob_fixed(const char *p, size_t plen, const asp_glob_plan *plan, const char *s, size_t smax) {
    const size_t prefix = plan->prefix, suffix = plan->suffix;
    for (size_t i = 0; i < prefix; i++)
        if (i >= smax || s[i] != p[i]) return 0;
    if (!plan->star) return prefix >= smax || s[prefix] == 0;
    if (!suffix) return 1;
    const size_t n = strnlen(s, smax);
    if (n < prefix + suffix) return 0;
    for (size_t j = 1; j <= suffix; j++)
        if (s[n - j] != p[plen - j]) return 0;
    return 1;
}
int asp_prefix_match(const char *prefix, size_t plen, const char *s, size_t smax);
/* A glob on a file path: against the whole path if the pattern has a '/', else the base name. */
int asp_path_glob(const char *pattern, size_t plen, const char *path, size_t max);

#endif
