/* Area: prototype rules (GOT rewriting).
 * Purpose: a library of the user's own, outside the catalog, whose functions tests advise from
 * a rule's prototype: integer, pointer/string and floating-point signatures. */
#include <stdarg.h>
#include <stddef.h>

int fx_add(int a, int b) { return a + b; }
const char *fx_name(int which) { return which ? "one" : "zero"; }
double fx_scale(double x, double k) { return x * k; }
long fx_sum6(long a, long b, long c, long d, long e, long f) { return a + b + c + d + e + f; }

/* structs by value: in SSE registers (pair) and in memory (big) */
struct pair { double a, b; };
struct big { long a, b, c, d; };
struct pair fx_swap(struct pair p) { struct pair r = {p.b, p.a}; return r; }
long fx_bigsum(struct big b) { return b.a + b.b + b.c + b.d; }
/* a struct result too large for registers: through memory the caller provides (x86-64: a
 * hidden first argument; aarch64: x8) */
struct big fx_bigmake(long k) { struct big r = {k, 2 * k, 3 * k, 4 * k}; return r; }

/* variadic: sums `count` ints */
int fx_vsum(int count, ...) {
    va_list ap;
    va_start(ap, count);
    int s = 0;
    for (int i = 0; i < count; i++) s += va_arg(ap, int);
    va_end(ap);
    return s;
}
