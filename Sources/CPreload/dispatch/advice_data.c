/* advice_data.c — the data faults of the rule language, run on the full path (dispatch_full.c):
 *   short    before the original: its count argument is cut to a seeded part, so it transfers
 *            less and returns that (a partial read, write, send or recv: the caller continues);
 *   corrupt  after the original: seeded bits of the bytes it returned are flipped.
 * Where a function's data is comes from the catalog's `data:` line, which the writer stores as
 * the group's argument numbers (data_buf, data_count, data_size). They are read from the slot
 * under its seqlock, for the very rule the call's copy was made from (its serial), and checked
 * against this export's arguments and their types: a damaged table never makes us write
 * through a number or past what the call returned. Async-signal-safe: no locks, no calls. */
#include "advice_data.h"
#include "integer_width.h"

/* The export's argument numbers of a rule's data, validated. */
typedef struct asp_data_args {
    uint32_t buf, count, size; /* size: ASP_MAX_ARGS when the count is in bytes */
    uint32_t bits;
} asp_data_args;

static int asp_is_integer(uint8_t t) { return t >= ASPECTS_T_I8 && t <= ASPECTS_T_U64; }

static int asp_data_args_of(const asp_rule_view *v, const asp_export_desc *ex, asp_data_args *out) {
    const aspects_rule *r = v->r;
    const uint32_t s1 = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE);
    if (s1 & 1u) return 0;
    const uint32_t b = r->data_buf, c = r->data_count, z = r->data_size, bits = r->corrupt_bits;
    const uint64_t serial = r->serial;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&r->seq, __ATOMIC_RELAXED) != s1 || serial != v->serial) return 0;
    if (b >= ASP_MAX_ARGS || c >= ASP_MAX_ARGS) return 0;
    const uint32_t eb = ex->argmap[b], ec = ex->argmap[c];
    if (eb >= ex->nargs || ec >= ex->nargs) return 0;
    if ((ex->args[eb] != ASPECTS_T_PTR && ex->args[eb] != ASPECTS_T_STR) || !asp_is_integer(ex->args[ec])) return 0;
    uint32_t es = ASP_MAX_ARGS;
    if (z != ASPECTS_NO_ARG) {
        if (z >= ASP_MAX_ARGS || ex->argmap[z] >= ex->nargs || !asp_is_integer(ex->args[ex->argmap[z]])) return 0;
        es = ex->argmap[z];
    }
    *out = (asp_data_args){eb, ec, es, bits};
    return 1;
}

/* An integer argument's value as a count: a negative signed one is none (0). */
static uint64_t asp_count_value(uint8_t type, uint64_t widened) {
    return asp_int_signed(type) && (int64_t)widened < 0 ? 0 : widened;
}

int asp_data_shortable(const asp_rule_view *v, const asp_export_desc *ex, const uint64_t *vals) {
    asp_data_args d;
    return asp_data_args_of(v, ex, &d) && asp_count_value(ex->args[d.count], vals[d.count]) >= 2;
}

void asp_data_short(asp_call *c, const asp_rule_view *v) {
    const asp_export_desc *ex = c->ex;
    asp_data_args d;
    if (!asp_data_args_of(v, ex, &d)) return;
    const uint64_t count = asp_count_value(ex->args[d.count], c->vals[d.count]);
    const uint64_t cut = aspects_short_count(v->seed, v->rule_key, c->number, count);
    c->vals[d.count] = cut;
    /* the argument as the original receives it: at its type's width (cut < count fits) */
    asp_int_store(ex->args[d.count], c->args[d.count], cut);
}

/* The bytes the original returned in the buffer: `result` items of the item size (fread) or
 * bytes, never more than the count it was given asked for. 0: none, or not to be trusted. */
static uint64_t asp_returned_bytes(const asp_data_args *d, const asp_export_desc *ex, const uint64_t *vals, int64_t result) {
    if (result <= 0) return 0;
    uint64_t n = (uint64_t)result;
    const uint64_t count = asp_count_value(ex->args[d->count], vals[d->count]);
    if (n > count) n = count;
    if (d->size < ASP_MAX_ARGS) {
        const uint64_t size = asp_count_value(ex->args[d->size], vals[d->size]);
        if (size && n > UINT64_MAX / 8u / size) return 0;
        n *= size;
    }
    return n > UINT64_MAX / 8u ? 0 : n;
}

int asp_data_corruptible(const asp_rule_view *v, const asp_export_desc *ex, const uint64_t *vals, int64_t result) {
    asp_data_args d;
    return asp_data_args_of(v, ex, &d) && asp_returned_bytes(&d, ex, vals, result) > 0 && vals[d.buf] >= 4096;
}

void asp_data_corrupt(const asp_call *c, const asp_rule_view *v, int64_t result) {
    asp_data_args d;
    if (!asp_data_args_of(v, c->ex, &d) || d.bits == 0 || d.bits > ASPECTS_MAX_CORRUPT_BITS) return;
    const uint64_t bytes = asp_returned_bytes(&d, c->ex, c->vals, result);
    uint8_t *buf = (uint8_t *)(uintptr_t)c->vals[d.buf];
    /* a NULL or near-NULL buffer is never written (the original reported EFAULT, or returned
     * nothing into it) */
    if (!bytes || (uintptr_t)buf < 4096) return;
    uint64_t at[ASPECTS_MAX_CORRUPT_BITS];
    const uint32_t n = aspects_corrupt_positions(v->seed, v->rule_key, c->number, bytes * 8u, d.bits, at);
    for (uint32_t i = 0; i < n; i++) buf[at[i] >> 3] ^= (uint8_t)(1u << (at[i] & 7u));
}
