/* Area: preload / string matchers.
 * Purpose: the preload's allocation-free glob (Sources/CPreload/os/glob.c, compiled into this
 * program) must agree with fnmatch(pattern, string, 0) on fixed cases and on random patterns
 * over a small alphabet; so must the byte-comparing matcher of "fixed" patterns (a literal,
 * "prefix*", "*suffix", "prefix*suffix"), on every pattern asp_glob_classify calls fixed.
 * Output: "N cases (F fixed), 0 mismatches" and exit 0; every mismatch printed. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "glob.h"

static int mismatches, cases, fixed_cases;

static void check(const char *p, const char *s) {
    int mine = asp_glob_match(p, strlen(p), s, 4096);
    int ref = fnmatch(p, s, 0) == 0;
    cases++;
    if (mine != ref) {
        mismatches++;
        printf("mismatch: pattern \"%s\" string \"%s\": ours %d, fnmatch %d\n", p, s, mine, ref);
    }
    asp_glob_plan plan = asp_glob_classify(p, strlen(p));
    if (plan.fixed) {
        fixed_cases++;
        int fast = asp_glob_fixed(p, strlen(p), &plan, s, 4096);
        if (fast != ref) {
            mismatches++;
            printf("mismatch: fixed pattern \"%s\" string \"%s\": ours %d, fnmatch %d\n", p, s, fast, ref);
        }
    }
}

int main(void) {
    static const char *fixed[][2] = {
        {"/etc/host*", "/etc/hostname"}, {"/etc/host*", "/etc/hosts"}, {"/etc/host*", "/etc/passwd"},
        {"*.db", "/var/lib/app/data.db"}, {"*.db", "/var/lib/app/data.db-wal"}, {"*", ""}, {"", ""}, {"", "a"},
        {"a?c", "abc"}, {"a?c", "ac"}, {"[abc]x", "bx"}, {"[!abc]x", "bx"}, {"[^abc]x", "dx"}, {"[a-c]", "b"},
        {"[a-c]", "d"}, {"[]]", "]"}, {"[!]]", "a"}, {"\\*", "*"}, {"\\*", "a"}, {"a*b*c", "aXXbYYc"},
        {"a*b*c", "aXXbYY"}, {"*/data/*.db", "/srv/data/x.db"}, {"[", "["}, {"a[", "a["}, {"**", "x/y"},
        {"*a", "aaaa"}, {"a*a*a", "aa"}, {"?*", ""}, {"*?", "x"}, {"[a-]", "-"}, {"[\\]]", "]"},
        {"ab*ba", "aba"}, {"ab*ba", "abba"}, {"/tmp/*", "/tmp"}, {"/tmp/*", "/tmp/"}, {"/dev/null", "/dev/null"},
        {"/dev/null", "/dev/nul"}, {"/dev/null", "/dev/nullx"}, {"*.db", ".db"}, {"*.db", "db"}, {"***x", "x"},
        {"/data/*.db", "/data/a/b.db"}, {"/data/*.db", "/data.db"},
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) check(fixed[i][0], fixed[i][1]);
    /* Random patterns over a small alphabet find backtracking bugs fixed cases miss. */
    const char alpha[] = "ab/*?[]!-\\";
    srand(7);
    for (int n = 0; n < 200000; n++) {
        char p[9], s[9];
        int pl = rand() % 8, sl = rand() % 8;
        for (int i = 0; i < pl; i++) p[i] = alpha[rand() % (sizeof alpha - 1)];
        for (int i = 0; i < sl; i++) s[i] = "ab/-"[rand() % 4];
        p[pl] = s[sl] = 0;
        check(p, s);
    }
    /* A pattern with a NUL in it (shared memory is untrusted) is never "fixed": the byte
     * compare would run past the string's end. */
    if (asp_glob_classify("ab\0cd", 5).fixed) {
        mismatches++;
        printf("mismatch: a pattern with a NUL classified as fixed\n");
    }
    printf("%d cases (%d fixed), %d mismatches\n", cases, fixed_cases, mismatches);
    return mismatches != 0;
}
