/* dispatch_full.c — the dispatcher's general paths (see dispatch.c for the contract and for
 * how a group's path is chosen):
 *   full  every kind of rule — after advice, claims before counting, caller and process
 *         conditions, thread scope, ffi_call originals — and every call that arrives while
 *         the engine is busy or inside its own group;
 *   several  several simple before/instead rules counted per process, original called directly. */
#define _GNU_SOURCE
#include "advice.h"
#include "advice_call.h"
#include "advice_data.h"
#include "gate.h"
#include "resolve.h"
#include "stream.h"

void (*asp_objects_loaded_hook)(void);

/* The numbers a call took on entry, one per rule of the group's list (serial 0: a rule that
 * numbers at return; call 0: the rule does not apply to the call). Decisions are made after
 * every rule has numbered the call, so a call nested in this one — a handler run by a before
 * rule's signal, say — is numbered after it by every rule, whatever the table order. Read by
 * serial, so that a rule found again after the group's rules were remade (while the original
 * ran) keeps the number it took. */
typedef struct asp_entry_numbers {
    uint32_t count;
    uint64_t serial[ASPECTS_GROUP_RULES];
    uint64_t call[ASPECTS_GROUP_RULES];
    /* an `after` stream fault (fclose's) decides before the original, since firing it acts
     * there: 0 not yet decided, ASP_DECIDED_FIRES or ASP_DECIDED_NOT */
    uint8_t decided[ASPECTS_GROUP_RULES];
    /* and the error it reports, chosen then: fclose frees the stream its kind is read from */
    int32_t code[ASPECTS_GROUP_RULES];
} asp_entry_numbers;
#define ASP_DECIDED_FIRES 1u
#define ASP_DECIDED_NOT 2u

/* The entry's index of the rule when it was numbered on entry (*call 0: not a call of its),
 * else -1. The entry of list index `hint` is tried first. */
static int asp_entry_index(const asp_entry_numbers *e, const asp_rule_view *v, uint32_t hint) {
    if (!e || !v->serial) return -1;
    if (hint < e->count && e->serial[hint] == v->serial) return (int)hint;
    for (uint32_t i = 0; i < e->count; i++)
        if (e->serial[i] == v->serial) return (int)i;
    return -1;
}

/* 1 and *call when the rule was numbered on entry (*call 0: not a call of its), else 0. */
static int asp_entry_number_of(const asp_entry_numbers *e, const asp_rule_view *v, uint32_t hint, uint64_t *call) {
    const int i = asp_entry_index(e, v, hint);
    if (i < 0) return 0;
    *call = e->call[i];
    return 1;
}

/* Whether a rule applies to this call before it is numbered: not an autoRemove rule that
 * already fired somewhere, and its argument, process, caller and site conditions hold. */
static inline int asp_rule_applies(const asp_call *c, const asp_rule_view *v) {
    if (ASP_UNLIKELY((v->flags & ASPECTS_RULE_AUTOREMOVE) && __atomic_load_n(&v->r->claim, __ATOMIC_RELAXED))) return 0;
    if (v->matcher_count | (v->flags & (ASPECTS_RULE_HAS_PROCESS | ASPECTS_RULE_HAS_CALLER | ASPECTS_RULE_HAS_SITE)))
        return asp_conditions_hold(v, c->ex, c->vals, 0, c->caller);
    return 1;
}

/* The original, called the cheap way when its signature allows, else through ffi_call. */
static inline void asp_invoke_original(asp_call *c) {
    void *fn = asp_call_fn(c);
    if (ASP_LIKELY(fn != NULL)) asp_direct_invoke(fn, c->vals, c->ret);
    else asp_call_original(c->idx, c->ret, c->args, c->vals);
}

/* The rules of a call: the group's cached copy, or (while another thread remakes it, or for a
 * group with many rules) a fresh copy of each rule read straight from the table. */
typedef struct asp_rules {
    const asp_rule_view *views;
    const uint16_t *list;
    uint32_t count, group;
} asp_rules;

static inline const asp_rule_view *asp_rule_at(const asp_rules *rs, uint32_t i, asp_rule_view *scratch) {
    if (ASP_LIKELY(rs->views != NULL)) return &rs->views[i];
    return asp_view_from_slot(rs->list[i], rs->group, scratch) ? scratch : NULL;
}

/* After dlopen/dlmopen returned: apply prototype rules to what was loaded (proto.c finds
 * dlmopen namespaces through the loader's r_debug chain). */
static inline void asp_after_load(uint32_t group) {
#if defined(ASP_GROUP_DLOPEN) && defined(ASP_GROUP_DLMOPEN)
    if (group == ASP_GROUP_DLOPEN || group == ASP_GROUP_DLMOPEN) { if (asp_objects_loaded_hook) asp_objects_loaded_hook(); }
#elif defined(ASP_GROUP_DLOPEN)
    if (group == ASP_GROUP_DLOPEN) { if (asp_objects_loaded_hook) asp_objects_loaded_hook(); }
#endif
    (void)group;
}

/* The generation the group's cached copy was made at (0: none, or being remade). */
static inline uint64_t asp_group_generation(uint32_t group) {
    return group < ASP_ALL_GROUPS ? __atomic_load_n(&asp_caches[group].generation, __ATOMIC_ACQUIRE) : 0;
}

/* The original, where the call runs it: in an ORIGINAL frame, with the errno the call has now;
 * its result and errno become the call's. A library loaded just now (dlopen, dlmopen) may
 * import functions advised from a prototype. The full path's call of the original, and an
 * `instead` advice's aspects_proceed (then above the advice's own frame). */
static inline __attribute__((always_inline)) void asp_run_original(asp_call *c) {
    asp_thread *t = &asp_tls;
    const asp_frame outer = asp_frame_push_original(t, c->group, c->idx);
    errno = c->err;
    asp_invoke_original(c);
    c->err = errno;
    asp_frame_pop(t, outer);
    asp_call_read_result(c);
    asp_after_load(c->group);
}

/* An `instead` advice's aspects_proceed. */
static void asp_proceed(asp_call *c) { asp_run_original(c); }

/* ---- advice as code and data faults (advice_call.c, advice_data.c): out of line, as firings
 * of such rules are rare next to the calls the full path decides ---- */

/* A firing `call` rule's function, with its event written first — an advice that crashes
 * leaves that record as its process's last — or NULL with an `unavailable` event saying why
 * (the call then goes on without it). */
static aspects_advice_function asp_call_fired(asp_call *c, const asp_rule_view *v) {
    uint32_t why = 0;
    aspects_advice_function fn = asp_advice_function(v, c->ex, &why);
    if (fn) asp_call_event(ASPECTS_EVENT_FIRED, c, v);
    else asp_event_append(ASPECTS_EVENT_UNAVAILABLE, v, c->number, c->idx, c->vals, (int64_t)why, c->err, c->caller);
    return fn;
}

/* Runs the user's function on a view of the call (advice_call.h) in an ADVICE frame, so
 * nothing it calls is advised (it cannot re-enter its own rule, nor any other) — but a signal
 * handler that interrupts it runs on a fresh level and its calls are (signals.c). Its own
 * errno changes are not the caller's: only what it sets through the view is. */
static void asp_call_run(asp_call *c, const asp_rule_view *v, aspects_advice_function fn, uint32_t position) {
    aspects_invocation inv;
    asp_invocation_init(&inv, c, v, position);
    if (position == ASPECTS_POSITION_INSTEAD) inv.proceed = asp_proceed;
    asp_thread *t = &asp_tls;
    const asp_frame engine = asp_frame_push(t, ASP_IN_ADVICE);
    fn(&inv);
    asp_frame_pop(t, engine);
    if (position != ASPECTS_POSITION_BEFORE) asp_call_read_result(c);
}

/* A firing `before` rule with a `short` or `call` action: cut the count first (the event shows
 * what the original is given), the event, the effects, the argument settings, then the code
 * (which sees the caller's errno and cannot change it: the original starts with that). */
__attribute__((noinline)) static void asp_fire_before_code(asp_call *c, const asp_rule_view *v) {
    if (v->actions & ASPECTS_ACTION_SHORT) asp_data_short(c, v);
    aspects_advice_function fn = NULL;
    if (v->actions & ASPECTS_ACTION_CALL) fn = asp_call_fired(c, v);
    else asp_call_event(ASPECTS_EVENT_FIRED, c, v);
    asp_run_effects(v);
    if (v->actions & ASPECTS_ACTION_ARGS) asp_apply_arg_sets(c, v);
    if (fn) asp_call_run(c, v, fn, ASPECTS_POSITION_BEFORE);
}

/* The result an `instead` advice starts from when its rule declares none: zero (a struct's
 * bytes too), so a function that neither proceeds nor sets one returns 0, never a stale value. */
static void asp_zero_result(const asp_call *c) {
    if (c->ex->ret != ASPECTS_T_STRUCT) {
        asp_store_integer(c->ex->ret, c->ret, 0);
        return;
    }
    const ffi_type *t = c->idx >= ASP_EXPORT_COUNT ? asp_proto_struct_type(c->idx - ASP_EXPORT_COUNT, ASP_MAX_ARGS) : NULL;
    if (t) __builtin_memset(c->ret, 0, t->size);
}

/* A firing `instead` rule with a `call` action: its effects, its own result if it declares one
 * (`return`, `fail`: what the advice starts from), then the code, which may proceed to the
 * original once. Returns 0 when the code could not run and the rule has no result of its own:
 * the original then runs as if the rule had not fired. */
__attribute__((noinline)) static int asp_fire_instead_code(asp_call *c, const asp_rule_view *v) {
    asp_run_effects(v);
    const int declared = (v->actions & (ASPECTS_ACTION_RETURN | ASPECTS_ACTION_ERRNO | ASPECTS_ACTION_HERRNO)) != 0;
    if (declared) asp_apply_code(c, v, asp_firing_error(c, v));
    else asp_zero_result(c);
    aspects_advice_function fn = asp_call_fired(c, v);
    if (!fn) return declared;
    asp_call_run(c, v, fn, ASPECTS_POSITION_INSTEAD);
    return 1;
}

/* A firing `after` rule with a `corrupt` or `call` action: effects, its result, the bytes the
 * original returned (`original_result` of them) corrupted, then the code, which sees all of
 * that. */
__attribute__((noinline)) static void asp_fire_after_code(asp_call *c, const asp_rule_view *v, int64_t original_result) {
    asp_run_effects(v);
    asp_apply_code(c, v, asp_firing_error(c, v));
    if (v->actions & ASPECTS_ACTION_CORRUPT) asp_data_corrupt(c, v, original_result);
    if (!(v->actions & ASPECTS_ACTION_CALL)) {
        asp_call_event(ASPECTS_EVENT_FIRED, c, v);
        return;
    }
    aspects_advice_function fn = asp_call_fired(c, v);
    if (fn) asp_call_run(c, v, fn, ASPECTS_POSITION_AFTER);
}

/* The `after` rules, in table order, on a call that returned (or was replaced by an `instead`
 * rule): of `rules`, or when NULL of the group's current rules. A rule numbered on entry
 * decides with the number it took then (`entry`); a rule numbered at return, or one added
 * while the original ran, is matched and numbered now. */
static inline __attribute__((always_inline)) void asp_run_after_rules(asp_call *c, const asp_rules *rules, const asp_entry_numbers *entry) {
    uint16_t list[ASPECTS_GROUP_RULES];
    asp_rules now = {.list = list, .group = c->group};
    if (!rules) {
        now.views = asp_group_rules(c->group, list, &now.count);
        rules = &now;
    }
    asp_rule_view scratch;
    asp_call_read_result(c);
    /* conditions on the result are on what the original did, not on an earlier rule's change */
    const int64_t original_result = c->result;
    const int original_errno = c->err;
    for (uint32_t i = 0; i < rules->count; i++) {
        const asp_rule_view *v = asp_rule_at(rules, i, &scratch);
        if (!v || v->position != ASPECTS_POSITION_AFTER) continue;
        const int e = asp_entry_index(entry, v, i);
        /* a stream fault decided before the original, with the error it reports (`early`) */
        const int early = e >= 0 && entry->decided[e] == ASP_DECIDED_FIRES;
        if (e >= 0 && entry->decided[e]) {
            if (!early) continue;
            c->number = entry->call[e];
        } else if (e >= 0) {
            if (!entry->call[e] || !asp_decide_call(c, v, entry->call[e], 1)) continue;
        } else {
            if (!asp_rule_applies(c, v)) continue;
            if (!asp_result_holds(v, c->ex, NULL, c->vals, original_result, original_errno)) continue;
            if ((v->actions & ASPECTS_ACTION_CORRUPT) && !asp_data_corruptible(v, c->ex, c->vals, original_result)) continue;
            if (!asp_decide_call(c, v, asp_take_number(c, v), 1)) continue;
        }
        if (ASP_UNLIKELY(v->actions & (ASPECTS_ACTION_CALL | ASPECTS_ACTION_CORRUPT))) {
            asp_fire_after_code(c, v, original_result);
        } else if (early) {
            asp_run_effects(v);
            asp_apply_code(c, v, entry->code[e]);
            asp_call_event(ASPECTS_EVENT_FIRED, c, v);
        } else {
            asp_fire_result(c, v);
        }
    }
}

/* ---- stream faults (stream.h): glibc's own function runs with the stream's descriptor -1 ---- */

static inline int asp_has_stream(const asp_export_desc *ex) {
    return ex->handle == ASP_HANDLE_FILE || ex->handle == ASP_HANDLE_STDIN || ex->handle == ASP_HANDLE_STDOUT;
}

/* fflush's stream fault fails only a flush of pending output: with none, glibc's fflush of a
 * reading stream would lseek(-1), which no real write error does. */
#ifndef ASP_EXPORT_FFLUSH
#define ASP_EXPORT_FFLUSH UINT32_MAX
#endif

/* A firing `instead` stream fault. Taken when the call's own read(2)/write(2) failed under
 * it: glibc's result, position and error indicator stand, and the caller sees the rule's
 * errno. A stream without a descriptor gets the error indicator and the failure value, as
 * glibc leaves one whose read or write function failed. A call that made no system call (or
 * fflush with nothing to write, fflush(NULL)) could not fail for real: it ran as it does, and
 * the firing is taken back (an `untaken` event). */
__attribute__((noinline)) static void asp_fire_stream(asp_call *c, const asp_rule_view *v) {
    asp_run_effects(v);
    asp_stream_hold hold;
    const int is_fflush = ASP_EXPORT_FFLUSH < ASP_EXPORT_COUNT && c->group == asp_exports[ASP_EXPORT_FFLUSH].group; /* fflush_unlocked too */
    const int mode = asp_stream_begin(c->ex, c->vals, is_fflush, &hold);
    if (mode == ASP_STREAM_NO_FD) {
        asp_stream_set_error(&hold);
        asp_apply_code(c, v, asp_firing_error(c, v));
        asp_call_event(ASPECTS_EVENT_FIRED, c, v);
        return;
    }
    asp_thread *t = &asp_tls;
    const asp_frame engine = asp_frame_push_original(t, c->group, c->idx);
    errno = mode == ASP_STREAM_FD ? 0 : c->caller_errno;
    asp_invoke_original(c);
    const int call_errno = errno;
    asp_frame_pop(t, engine);
    const int took = asp_stream_end(&hold, call_errno);
    asp_call_read_result(c);
    if (took) {
        c->err = asp_firing_error(c, v);
        asp_call_event(ASPECTS_EVENT_FIRED, c, v);
        return;
    }
    c->err = mode == ASP_STREAM_FD && call_errno == 0 ? c->caller_errno : call_errno;
    asp_stat_unfired(v);
    asp_call_event(ASPECTS_EVENT_UNTAKEN, c, v);
}

/* fclose's stream fault (`after`: fclose releases the stream whatever happens), decided before
 * the original: output pending in the buffer is flushed by glibc's fflush with the descriptor
 * -1, so it is lost as a failing write(2) loses it; then fclose closes and frees as it does,
 * and the after rule reports the failure (with nothing pending, the close(2) error). */
__attribute__((noinline)) static void asp_stream_before_close(const asp_call *c) {
    asp_stream_hold hold;
    if (asp_stream_begin(c->ex, c->vals, 1, &hold) != ASP_STREAM_FD) {
        asp_stream_end(&hold, 0);
        return;
    }
    void *fflush_fn = ASP_EXPORT_FFLUSH < ASP_EXPORT_COUNT ? asp_original(ASP_EXPORT_FFLUSH) : NULL;
    const int saved = errno;
    if (fflush_fn) {
        uint64_t a[ASP_DIRECT_ARGS] = {(uint64_t)(uintptr_t)hold.fp};
        uint64_t r;
        asp_direct_invoke(fflush_fn, a, &r);
    }
    asp_stream_end(&hold, errno);
    errno = saved;
}

/* ---- the full path ---- */

/* A call of a group whose original is running on this thread (the top frame is that
 * original's): is it part of that same call? Not when it is the very name that is running, called again: that only
 * happens when the code calls it anew — recursion through the PLT (rec calling rec@plt, or
 * through rec_step), whose caller a prototype stub cannot even tell. Yes when another name of
 * the group is reached from the original's own object — an alias chain (open64 reaching
 * open), advised once per call, as Aspects advises a method once per class hierarchy. No when
 * that comes from elsewhere: a signal handler that interrupted the original makes a call of
 * its own, counted and advised like any other. When it cannot be told (an original called
 * through ffi_call, maps being read), the same call. */
static int asp_part_of_running_call(const asp_thread *t, const asp_call *c) {
    const uint32_t running = t->top.export;
    if (running == c->idx + 1u) return 0;
    /* the running original's object (its own name's direct original; a plain load) */
    const uint32_t of = running && running - 1u < ASP_ALL_EXPORTS ? running - 1u : c->idx;
    void *fn = __atomic_load_n(&asp_direct[of].fn, __ATOMIC_RELAXED);
    return !fn || !c->caller || asp_same_object(c->caller, (uint64_t)(uintptr_t)fn) != 0;
}

/* Every rule numbers the call first, in table order, so that a call nested in this one — a
 * handler run by a before rule's signal, say — is numbered after it by every rule, whatever
 * the table order. Returns whether the group has an `after` rule. */
static inline __attribute__((always_inline)) int asp_number_on_entry(asp_call *c, const asp_rules *rs, asp_entry_numbers *entry) {
    asp_rule_view scratch;
    int have_after = 0;
    entry->count = rs->count;
    for (uint32_t i = 0; i < rs->count; i++) {
        const asp_rule_view *v = asp_rule_at(rs, i, &scratch);
        entry->serial[i] = entry->call[i] = 0;
        entry->decided[i] = 0;
        if (!v) continue;
        have_after |= v->position == ASPECTS_POSITION_AFTER;
        if (asp_numbered_at_return(v)) continue;
        entry->serial[i] = v->serial;
        if (!asp_rule_applies(c, v)) continue;
        if ((v->actions & ASPECTS_ACTION_SHORT) && !asp_data_shortable(v, c->ex, c->vals)) continue;
        entry->call[i] = asp_take_number(c, v);
    }
    return have_after;
}

/* The `instead` rule that fires on this call, if any: a copy of its own when it was read into
 * the scratch copy that the next rule reuses. */
typedef struct asp_chosen {
    const asp_rule_view *v;
    uint64_t number;
    asp_rule_view copy;
} asp_chosen;

/* Then each rule decides on its number, in table order: a firing `before` rule acts now; the
 * first firing `instead` rule is chosen (a later one that matched is counted and shadowed);
 * an `after` stream fault decides now, since it acts before the original. */
static inline __attribute__((always_inline)) void asp_decide_on_entry(asp_call *c, const asp_rules *rs, asp_entry_numbers *entry,
                                                                       asp_chosen *chosen) {
    asp_rule_view scratch;
    uint64_t k;
    for (uint32_t i = 0; i < rs->count; i++) {
        const asp_rule_view *v = asp_rule_at(rs, i, &scratch);
        if (!v || !asp_entry_number_of(entry, v, i, &k) || !k) continue;
        if (v->position == ASPECTS_POSITION_AFTER) {
            if (ASP_UNLIKELY(v->flags & ASPECTS_RULE_STREAM_FAULT) && asp_has_stream(c->ex)) {
                const int fires = asp_decide_call(c, v, k, 1);
                entry->decided[i] = fires ? ASP_DECIDED_FIRES : ASP_DECIDED_NOT;
                if (fires) {
                    entry->code[i] = asp_firing_error(c, v);
                    asp_stream_before_close(c);
                }
            }
            continue;
        }
        if (v->position == ASPECTS_POSITION_INSTEAD) {
            if (chosen->v) {
                asp_shadowed(c, v, k);
            } else if (asp_decide_call(c, v, k, 1)) {
                if (v == &scratch) { chosen->copy = scratch; v = &chosen->copy; }
                chosen->v = v;
                chosen->number = k;
            }
            continue;
        }
        if (!asp_decide_call(c, v, k, 1)) continue;
        if (ASP_UNLIKELY(v->actions & (ASPECTS_ACTION_CALL | ASPECTS_ACTION_SHORT))) asp_fire_before_code(c, v);
        else asp_fire_before(c, v);
    }
}

/* The chosen `instead` rule fires: 1 when it replaced the call, 0 when it could not (its code
 * is not there, and it has no result of its own) and the original runs. */
static inline int asp_fire_instead(asp_call *c, const asp_chosen *chosen) {
    const asp_rule_view *v = chosen->v;
    c->number = chosen->number;
    if (ASP_UNLIKELY(v->actions & ASPECTS_ACTION_CALL)) return asp_fire_instead_code(c, v);
    if (ASP_UNLIKELY(v->flags & ASPECTS_RULE_STREAM_FAULT) && asp_has_stream(c->ex)) asp_fire_stream(c, v);
    else asp_fire_result(c, v);
    return 1;
}

/* The full path: every kind of rule, and the re-entry cases. An advised call is: every rule
 * numbers it; the `before` rules fire in table order; the first firing `instead` rule replaces
 * the original, or the original runs; the `after` rules fire in table order; the caller gets
 * the call's result and errno. */
void asp_dispatch_full(asp_call *c) {
    asp_thread *t = &asp_tls;
    asp_call_widen(c);
    const uint32_t kind = t->top.kind;
    if (kind >= ASP_IN_ENGINE || !asp_tab.attached ||
        (kind == ASP_IN_ORIGINAL && t->top.group == c->group + 1u && asp_part_of_running_call(t, c))) {
        asp_invoke_original(c);
        return;
    }
    asp_call_arrived(c);
    const asp_frame program = asp_frame_push(t, ASP_IN_ENGINE);
    /* `call` rules added since the last look: their objects are loaded here if it is safe */
    asp_advice_table_changed(c->ex);

    uint16_t list[ASPECTS_GROUP_RULES];
    asp_rules rs = {.list = list, .group = c->group};
    rs.views = asp_group_rules(c->group, list, &rs.count);
    asp_entry_numbers entry;
    const int have_after = asp_number_on_entry(c, &rs, &entry);
    asp_chosen chosen;
    chosen.v = NULL; /* (not the whole copy: it is written only when needed) */
    asp_decide_on_entry(c, &rs, &entry, &chosen);

    const uint64_t generation = asp_group_generation(c->group);
    if (!chosen.v || !asp_fire_instead(c, &chosen)) asp_run_original(c);

    /* If the group's copy was remade while the original ran, its buffer may have been reused:
     * the after advice then comes from the group's rules as they are now. */
    const int remade = rs.views && asp_group_generation(c->group) != generation;
    if (have_after || remade) asp_run_after_rules(c, remade ? NULL : &rs, &entry);

    asp_frame_pop(t, program);
    errno = c->err;
}

void asp_dispatch_after_now(asp_call *c, uint64_t numbered_serial) {
    asp_thread *t = &asp_tls;
    asp_call_widen(c);
    asp_entry_numbers entry;
    entry.count = 0;
    if (numbered_serial) {
        entry.serial[0] = numbered_serial;
        entry.decided[0] = 0;
        entry.call[0] = c->number;
        entry.count = 1;
    }
    const asp_frame program = asp_frame_push(t, ASP_IN_ENGINE);
    asp_run_after_rules(c, NULL, &entry);
    asp_frame_pop(t, program);
    errno = c->err;
}

/* ---- the several-rules path ---- */

/* A firing `before` rule of the several-rules path (an event, nothing else), which leaves the
 * caller's errno as it is: the record's errno is the caller's, read when an event needs it. */
static inline __attribute__((always_inline)) void asp_several_fire_before(asp_call *c, const asp_rule_view *v) {
    c->caller_errno = c->err = errno;
    asp_fire_before(c, v);
    errno = c->caller_errno;
}

/* A group of several simple rules (rulecache.c, asp_views_path) and a function whose original
 * is called directly. It keeps the full path's semantics for those rules, with less
 * bookkeeping: it calls nothing that could re-enter the engine (the event writer's clock is
 * libc's own clock_gettime, found past our wrapper: events.c) and runs no effect, so it pushes
 * no frame, numbers and decides each rule in turn (no rule of it runs a handler), and leaves
 * errno alone unless a rule sets it. */
void asp_dispatch_several(asp_call *c, const asp_rule_view *views, uint32_t n) {
    /* The register slots as they are (events record them so); widened for matchers only. */
    asp_call_slots(c);
    c->result = 0;
    int widened = 0;
    const asp_rule_view *chosen = NULL;
    uint64_t chosen_number = 0;
    for (uint32_t i = 0; i < n; i++) {
        const asp_rule_view *v = &views[i];
        if (v->matcher_count) {
            if (!widened) {
                asp_call_widen(c);
                widened = 1;
            }
            if (!asp_conditions_hold(v, c->ex, c->vals, 0, 0)) continue;
        }
        const uint64_t k = asp_take_number(c, v);
        if (v->position == ASPECTS_POSITION_INSTEAD) {
            if (chosen) {
                const int saved = errno;
                asp_shadowed(c, v, k);
                errno = saved;
            } else if (asp_decide_call(c, v, k, 1)) {
                chosen = v;
                chosen_number = k;
            }
            continue;
        }
        if (asp_decide_call(c, v, k, 1)) asp_several_fire_before(c, v);
    }
    if (chosen) {
        c->number = chosen_number;
        asp_call_arrived(c);
        asp_fire_result(c, chosen);
        errno = c->err;
        return;
    }
    asp_call_direct(c->h, asp_call_fn(c), c->vals, c->ret);
}
