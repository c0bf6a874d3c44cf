/* glob.c — string matchers for rule conditions, with fnmatch(3) semantics and no flags
 * (`*` also matches '/', so "*.db" matches "/var/lib/app/x.db"): `*`, `?`, `[abc]`, `[a-z]`,
 * `[!x]` / `[^x]`, and `\` escapes. Written here because libc's fnmatch may allocate in
 * multibyte locales; this one is iterative (one backtrack point), allocation-free and
 * signal-safe. Strings are read up to `smax` bytes: an unterminated string ends there. */
#include "glob.h"

/* Matches one bracket expression starting at pattern[pi] == '['. Returns the index after the
 * closing ']' and sets *matched, or 0 when the bracket is not closed (then '[' is literal). */
static size_t asp_bracket(const char *p, size_t plen, size_t pi, unsigned char c, int *matched) {
    size_t i = pi + 1;
    int negate = 0, hit = 0;
    if (i < plen && (p[i] == '!' || p[i] == '^')) { negate = 1; i++; }
    int first = 1;
    while (i < plen && (p[i] != ']' || first)) {
        first = 0;
        unsigned char lo = (unsigned char)p[i];
        if (lo == '\\' && i + 1 < plen) lo = (unsigned char)p[++i];
        unsigned char hi = lo;
        if (i + 2 < plen && p[i + 1] == '-' && p[i + 2] != ']') {
            hi = (unsigned char)p[i + 2];
            if (hi == '\\' && i + 3 < plen) { hi = (unsigned char)p[i + 3]; i++; }
            i += 2;
        }
        if (c >= lo && c <= hi) hit = 1;
        i++;
    }
    if (i >= plen) return 0;
    *matched = hit != negate;
    return i + 1;
}

int asp_glob_match(const char *p, size_t plen, const char *s, size_t smax) {
    size_t pi = 0, si = 0;
    size_t star_p = (size_t)-1, star_s = 0;
    for (;;) {
        unsigned char c = si < smax ? (unsigned char)s[si] : 0;
        if (pi < plen) {
            char pc = p[pi];
            if (pc == '*') {
                while (pi < plen && p[pi] == '*') pi++;
                if (pi == plen) return 1; /* a trailing star matches the rest */
                star_p = pi;
                star_s = si;
                continue;
            }
            if (c != 0) {
                if (pc == '?') { pi++; si++; continue; }
                if (pc == '[') {
                    int m = 0;
                    size_t next = asp_bracket(p, plen, pi, c, &m);
                    if (next) {
                        if (m) { pi = next; si++; continue; }
                        goto backtrack;
                    }
                    /* unclosed '[': literal */
                }
                size_t step = 1;
                if (pc == '\\' && pi + 1 < plen) { pc = p[pi + 1]; step = 2; }
                if ((unsigned char)pc == c) { pi += step; si++; continue; }
            }
        } else if (c == 0) {
            return 1;
        }
    backtrack:
        if (star_p != (size_t)-1 && star_s < smax && s[star_s] != 0) {
            star_s++;
            pi = star_p;
            si = star_s;
            continue;
        }
        return 0;
    }
}

/* A pattern whose only metacharacters are one run of stars (or none) is fixed: "x.db",
 * "/tmp/STAR", "STAR.db", "/data/STAR.db" (STAR: a run of asterisks). Anything with '?', '[' or '\\' takes the general matcher. */
asp_glob_plan asp_glob_classify(const char *p, size_t plen) {
    asp_glob_plan plan = {0, 0, 0, 0};
    size_t first = plen, last = plen;
    for (size_t i = 0; i < plen; i++) {
        char c = p[i];
        /* a NUL would let the byte compare run past the string's end: not fixed */
        if (c == '?' || c == '[' || c == '\\' || c == 0) return plan;
        if (c == '*') {
            if (first == plen) first = i;
            else if (last + 1 != i) return plan; /* a second run of stars */
            last = i;
        }
    }
    if (plen > UINT16_MAX) return plan;
    plan.fixed = 1;
    plan.star = first != plen;
    plan.prefix = (uint16_t)(plan.star ? first : plen);
    plan.suffix = (uint16_t)(plan.star ? plen - last - 1 : 0);
    return plan;
}

int asp_prefix_match(const char *prefix, size_t plen, const char *s, size_t smax) {
    if (plen > smax) return 0;
    for (size_t i = 0; i < plen; i++)
        if (s[i] != prefix[i]) return 0; /* also stops at s's NUL, since prefix has none */
    return 1;
}

int asp_path_glob(const char *pattern, size_t plen, const char *path, size_t max) {
    int has_slash = 0;
    for (size_t i = 0; i < plen; i++) has_slash |= pattern[i] == '/';
    if (!has_slash) {
        size_t base = 0;
        for (size_t i = 0; i < max && path[i]; i++)
            if (path[i] == '/') base = i + 1;
        path += base;
        max -= base;
    }
    return asp_glob_match(pattern, plen, path, max);
}
