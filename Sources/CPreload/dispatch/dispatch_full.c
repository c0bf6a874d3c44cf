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

/* Numbers a matching call (setting *call) and decides whether the rule fires on it: the
 * decision of every path (advice.h). */
static int asp_decide(const asp_rule_view *v, uint32_t group, int may_fire, uint64_t *call, asp_pending *pre) {
    *call = asp_take_number(v, pre);
    return asp_decide_number(group, v, *call, may_fire);
}

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
static inline int asp_rule_applies(const asp_rule_view *v, const asp_export_desc *ex, const uint64_t *vals, uint64_t caller) {
    if (ASP_UNLIKELY((v->flags & ASPECTS_RULE_AUTOREMOVE) && __atomic_load_n(&v->r->claim, __ATOMIC_RELAXED))) return 0;
    if (v->matcher_count | (v->flags & (ASPECTS_RULE_HAS_PROCESS | ASPECTS_RULE_HAS_CALLER | ASPECTS_RULE_HAS_SITE)))
        return asp_conditions_hold(v, ex, vals, 0, caller);
    return 1;
}

/* The error a firing rule reports: drawn from its list, or for `"fail": true` where the
 * catalog's default depends on the descriptor, the default of what the descriptor is. */
static int32_t asp_rule_error(const asp_rule_view *v, uint64_t call, uint32_t idx, const uint64_t *vals) {
    const int32_t code = asp_chosen_error(v, call);
    if (ASP_UNLIKELY(v->flags & ASPECTS_RULE_DEFAULT_BY_KIND) && idx < ASP_EXPORT_COUNT) return asp_kind_errno(asp_export_at(idx), vals, code);
    return code;
}

/* What an `instead` or `after` rule makes the call return with the error `code`, and the
 * errno the caller sees. */
static void asp_apply_code(const asp_rule_view *v, int32_t code, uint32_t idx, void *ret, int64_t *result, int *result_errno) {
    if (v->actions & ASPECTS_ACTION_RETURN) {
        int64_t value = (v->flags & ASPECTS_RULE_RETURN_IS_CODE) ? code : v->return_value;
        asp_store_rule_result(v, idx, ret, value);
        *result = asp_read_return(asp_export_at(idx)->ret, ret);
    }
    if (v->actions & ASPECTS_ACTION_ERRNO) *result_errno = code;
    if (v->actions & ASPECTS_ACTION_HERRNO) *__h_errno_location() = code;
}

static void asp_apply_result(const asp_rule_view *v, uint64_t call, uint32_t idx, const uint64_t *vals, void *ret, int64_t *result,
                             int *result_errno) {
    asp_apply_code(v, asp_rule_error(v, call, idx, vals), idx, ret, result, result_errno);
}

/* The original, called the cheap way when its signature allows, else through ffi_call. */
static inline void asp_invoke_original(uint32_t idx, void *ret, void **args, const uint64_t *vals) {
    const asp_direct_call *h = &asp_direct[idx];
    void *fn = __atomic_load_n(&h->fn, __ATOMIC_RELAXED);
    if (ASP_LIKELY(fn != NULL)) asp_direct_invoke(fn, vals, ret);
    else asp_call_original(idx, ret, args, vals);
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

/* ---- advice as code and data faults (advice_call.c, advice_data.c): out of line, as firings
 * of such rules are rare next to the calls the full path decides ---- */

/* The original, from an `instead` advice's aspects_proceed: called as this path calls it when
 * no rule replaces the call (in an ORIGINAL frame above the advice's), with the record's
 * arguments and errno; its errno becomes the record's. */
static void asp_proceed_original(aspects_invocation *inv) {
    asp_thread *t = &asp_tls;
    const asp_frame outer = asp_frame_push_original(t, inv->ex->group, inv->idx);
    errno = inv->err;
    asp_invoke_original(inv->idx, inv->ret, inv->args, inv->vals);
    inv->err = errno;
    asp_frame_pop(t, outer);
    asp_after_load(inv->ex->group);
}

/* A firing `call` rule's function, with its event written first — an advice that crashes
 * leaves that record as its process's last — or NULL with an `unavailable` event saying why
 * (the call then goes on without it). */
static aspects_advice_function asp_call_fired(const asp_rule_view *v, const asp_export_desc *ex, uint32_t idx, const uint64_t *vals,
                                              uint64_t call, uint64_t caller, int64_t result, int err) {
    uint32_t why = 0;
    aspects_advice_function fn = asp_advice_function(v, ex, &why);
    asp_event_append(fn ? ASPECTS_EVENT_FIRED : ASPECTS_EVENT_UNAVAILABLE, v, call, idx, vals, fn ? result : (int64_t)why, err, caller);
    return fn;
}

/* Runs the user's function in an ADVICE frame, so nothing it calls is advised (it cannot
 * re-enter its own rule, nor any other) — but a signal handler that interrupts it runs on a
 * fresh level and its calls are (signals.c). Its own errno changes are not the caller's: only
 * what it sets through the record is (*err). */
static void asp_call_run(aspects_advice_function fn, const asp_rule_view *v, uint32_t position, const asp_export_desc *ex, uint32_t idx,
                         void **args, uint64_t *vals, void *ret, uint64_t call, uint64_t caller, int64_t *result, int *err) {
    aspects_invocation inv;
    asp_invocation_init(&inv, position, v, ex, idx, args, vals, ret, call, caller, *err);
    if (position == ASPECTS_POSITION_INSTEAD) inv.proceed = asp_proceed_original;
    asp_thread *t = &asp_tls;
    const asp_frame engine = asp_frame_push(t, ASP_IN_ADVICE);
    fn(&inv);
    asp_frame_pop(t, engine);
    if (ret) *result = asp_read_return(ex->ret, ret);
    *err = inv.err;
}

/* A firing `before` rule with a `short` or `call` action: cut the count first (the event shows
 * what the original is given), the event, the effects, the argument settings, then the code. */
__attribute__((noinline)) static void asp_fire_before_code(const asp_rule_view *v, uint64_t call, const asp_export_desc *ex, uint32_t idx,
                                                           void **args, uint64_t *vals, uint64_t caller, int caller_errno) {
    if (v->actions & ASPECTS_ACTION_SHORT) asp_data_short(v, ex, args, vals, call);
    aspects_advice_function fn = NULL;
    if (v->actions & ASPECTS_ACTION_CALL) fn = asp_call_fired(v, ex, idx, vals, call, caller, 0, caller_errno);
    else asp_event_append(ASPECTS_EVENT_FIRED, v, call, idx, vals, 0, caller_errno, caller);
    asp_run_effects(v);
    if (v->actions & ASPECTS_ACTION_ARGS) asp_apply_arg_sets(v, ex, args, vals);
    if (fn) {
        int64_t none = 0;
        int err = caller_errno; /* a before advice reads it; the original starts with the caller's */
        asp_call_run(fn, v, ASPECTS_POSITION_BEFORE, ex, idx, args, vals, NULL, call, caller, &none, &err);
    }
}

/* The result an `instead` advice starts from when its rule declares none: zero (a struct's
 * bytes too), so a function that neither proceeds nor sets one returns 0, never a stale value. */
static void asp_zero_result(const asp_export_desc *ex, uint32_t idx, void *ret) {
    if (ex->ret != ASPECTS_T_STRUCT) {
        asp_store_integer(ex->ret, ret, 0);
        return;
    }
    const ffi_type *t = idx >= ASP_EXPORT_COUNT ? asp_proto_struct_type(idx - ASP_EXPORT_COUNT, ASP_MAX_ARGS) : NULL;
    if (t) __builtin_memset(ret, 0, t->size);
}

/* A firing `instead` rule with a `call` action: its effects, its own result if it declares one
 * (`return`, `fail`: what the advice starts from), then the code, which may proceed to the
 * original once. Returns 0 when the code could not run and the rule has no result of its own:
 * the original then runs as if the rule had not fired. */
__attribute__((noinline)) static int asp_fire_instead_code(const asp_rule_view *v, uint64_t call, const asp_export_desc *ex, uint32_t idx,
                                                           void **args, uint64_t *vals, void *ret, uint64_t caller, int64_t *result,
                                                           int *result_errno) {
    asp_run_effects(v);
    const int declared = (v->actions & (ASPECTS_ACTION_RETURN | ASPECTS_ACTION_ERRNO | ASPECTS_ACTION_HERRNO)) != 0;
    if (declared) asp_apply_result(v, call, idx, vals, ret, result, result_errno);
    else asp_zero_result(ex, idx, ret);
    aspects_advice_function fn = asp_call_fired(v, ex, idx, vals, call, caller, *result, *result_errno);
    if (!fn) return declared;
    asp_call_run(fn, v, ASPECTS_POSITION_INSTEAD, ex, idx, args, vals, ret, call, caller, result, result_errno);
    return 1;
}

/* A firing `after` rule with a `corrupt` or `call` action: effects, its result, the bytes the
 * original returned corrupted, then the code, which sees all of that. */
__attribute__((noinline)) static void asp_fire_after_code(const asp_rule_view *v, uint64_t call, const asp_export_desc *ex, uint32_t idx,
                                                          void **args, uint64_t *vals, void *ret, uint64_t caller, int64_t original_result,
                                                          int64_t *result, int *result_errno) {
    asp_run_effects(v);
    asp_apply_result(v, call, idx, vals, ret, result, result_errno);
    if (v->actions & ASPECTS_ACTION_CORRUPT) asp_data_corrupt(v, ex, vals, original_result, call);
    if (!(v->actions & ASPECTS_ACTION_CALL)) {
        asp_event_append(ASPECTS_EVENT_FIRED, v, call, idx, vals, *result, *result_errno, caller);
        return;
    }
    aspects_advice_function fn = asp_call_fired(v, ex, idx, vals, call, caller, *result, *result_errno);
    if (fn) asp_call_run(fn, v, ASPECTS_POSITION_AFTER, ex, idx, args, vals, ret, call, caller, result, result_errno);
}

/* The `after` rules, in table order, on a call that returned `ret` (or was replaced by an
 * `instead` rule) with *result_errno: of `rules`, or when NULL of the group's current rules.
 * A rule numbered on entry decides with the number it took then (`entry`); a rule numbered at
 * return, or one added while the original ran, is matched and numbered now. */
static inline __attribute__((always_inline)) void asp_run_after_rules(const asp_export_desc *ex, uint32_t idx, void *ret, void **args, uint64_t *vals,
                                uint64_t caller, const asp_rules *rules, const asp_entry_numbers *entry, int64_t *result,
                                int *result_errno, asp_pending *pre) {
    uint16_t list[ASPECTS_GROUP_RULES];
    asp_rules now = {.list = list, .group = ex->group};
    if (!rules) {
        now.views = asp_group_rules(ex->group, list, &now.count);
        rules = &now;
    }
    asp_rule_view scratch;
    uint64_t call;
    *result = asp_read_return(ex->ret, ret);
    /* conditions on the result are on what the original did, not on an earlier rule's change */
    const int64_t original_result = *result;
    const int original_errno = *result_errno;
    for (uint32_t i = 0; i < rules->count; i++) {
        const asp_rule_view *v = asp_rule_at(rules, i, &scratch);
        if (!v || v->position != ASPECTS_POSITION_AFTER) continue;
        const int e = asp_entry_index(entry, v, i);
        const int early = e >= 0 && entry->decided[e] == ASP_DECIDED_FIRES;
        if (e >= 0) {
            call = entry->call[e];
            if (!call) continue;
            if (entry->decided[e] ? !early : !asp_decide_number(ex->group, v, call, 1)) continue;
        } else {
            if (!asp_rule_applies(v, ex, vals, caller)) continue;
            if (!asp_result_holds(v, ex, NULL, vals, original_result, original_errno)) continue;
            if ((v->actions & ASPECTS_ACTION_CORRUPT) && !asp_data_corruptible(v, ex, vals, original_result)) continue;
            if (!asp_decide(v, ex->group, 1, &call, pre)) continue;
        }
        if (ASP_UNLIKELY(v->actions & (ASPECTS_ACTION_CALL | ASPECTS_ACTION_CORRUPT))) {
            asp_fire_after_code(v, call, ex, idx, args, vals, ret, caller, original_result, result, result_errno);
            continue;
        }
        asp_run_effects(v);
        if (early) asp_apply_code(v, entry->code[e], idx, ret, result, result_errno);
        else asp_apply_result(v, call, idx, vals, ret, result, result_errno);
        asp_event_append(ASPECTS_EVENT_FIRED, v, call, idx, vals, *result, *result_errno, caller);
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
__attribute__((noinline)) static void asp_fire_stream(const asp_rule_view *v, uint64_t call, const asp_export_desc *ex, uint32_t idx,
                                                      void *ret, void **args, uint64_t *vals, uint64_t caller, int caller_errno,
                                                      int64_t *result, int *result_errno) {
    asp_stream_hold hold;
    const int is_fflush = ASP_EXPORT_FFLUSH < ASP_EXPORT_COUNT && ex->group == asp_exports[ASP_EXPORT_FFLUSH].group; /* fflush_unlocked too */
    const int mode = asp_stream_begin(ex, vals, is_fflush, &hold);
    if (mode == ASP_STREAM_NO_FD) {
        asp_stream_set_error(&hold);
        asp_apply_result(v, call, idx, vals, ret, result, result_errno);
        asp_event_append(ASPECTS_EVENT_FIRED, v, call, idx, vals, *result, *result_errno, caller);
        return;
    }
    asp_thread *t = &asp_tls;
    const asp_frame engine = asp_frame_push_original(t, ex->group, idx);
    errno = mode == ASP_STREAM_FD ? 0 : caller_errno;
    asp_invoke_original(idx, ret, args, vals);
    const int call_errno = errno;
    asp_frame_pop(t, engine);
    const int took = asp_stream_end(&hold, call_errno);
    *result = asp_read_return(ex->ret, ret);
    if (took) {
        *result_errno = asp_rule_error(v, call, idx, vals);
        asp_event_append(ASPECTS_EVENT_FIRED, v, call, idx, vals, *result, *result_errno, caller);
        return;
    }
    *result_errno = mode == ASP_STREAM_FD && call_errno == 0 ? caller_errno : call_errno;
    asp_stat_unfired(v);
    asp_event_append(ASPECTS_EVENT_UNTAKEN, v, call, idx, vals, *result, *result_errno, caller);
}

/* fclose's stream fault (`after`: fclose releases the stream whatever happens), decided before
 * the original: output pending in the buffer is flushed by glibc's fflush with the descriptor
 * -1, so it is lost as a failing write(2) loses it; then fclose closes and frees as it does,
 * and the after rule reports the failure (with nothing pending, the close(2) error). */
__attribute__((noinline)) static void asp_stream_before_close(const asp_export_desc *ex, uint64_t *vals) {
    asp_stream_hold hold;
    if (asp_stream_begin(ex, vals, 1, &hold) != ASP_STREAM_FD) {
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

/* A call of a group whose original is running on this thread (the top frame is that
 * original's): is it part of that same call? Not when it is the very name that is running, called again: that only
 * happens when the code calls it anew — recursion through the PLT (rec calling rec@plt, or
 * through rec_step), whose caller a prototype stub cannot even tell. Yes when another name of
 * the group is reached from the original's own object — an alias chain (open64 reaching
 * open), advised once per call, as Aspects advises a method once per class hierarchy. No when
 * that comes from elsewhere: a signal handler that interrupted the original makes a call of
 * its own, counted and advised like any other. When it cannot be told (an original called
 * through ffi_call, maps being read), the same call. */
static int asp_part_of_running_call(const asp_thread *t, uint32_t idx, uint64_t caller) {
    const uint32_t running = t->top.export;
    if (running == idx + 1u) return 0;
    /* the running original's object (its own name's direct original; a plain load) */
    const uint32_t of = running && running - 1u < ASP_ALL_EXPORTS ? running - 1u : idx;
    void *fn = __atomic_load_n(&asp_direct[of].fn, __ATOMIC_RELAXED);
    return !fn || !caller || asp_same_object(caller, (uint64_t)(uintptr_t)fn) != 0;
}

/* The full path: every kind of rule, and the re-entry cases. */
void asp_dispatch_full(const asp_export_desc *ex, uint32_t idx, void *ret, void **args, uint64_t caller, asp_pending *pre) {
    asp_thread *t = &asp_tls;
    uint64_t vals[ASP_MAX_ARGS] = {0};
    for (uint32_t a = 0; a < ex->nargs; a++) vals[a] = asp_widen(ex->args[a], args[a]);

    const uint32_t kind = t->top.kind;
    if (kind >= ASP_IN_ENGINE || !asp_tab.attached ||
        (kind == ASP_IN_ORIGINAL && t->top.group == ex->group + 1u && asp_part_of_running_call(t, idx, caller))) {
        asp_invoke_original(idx, ret, args, vals);
        return;
    }
    const int caller_errno = errno;
    const asp_frame program = asp_frame_push(t, ASP_IN_ENGINE);
    /* `call` rules added since the last look: their objects are loaded here if it is safe */
    asp_advice_table_changed(ex);

    uint16_t list[ASPECTS_GROUP_RULES];
    asp_rules rs = {.list = list, .group = ex->group};
    rs.views = asp_group_rules(ex->group, list, &rs.count);
    asp_rule_view scratch;
    const asp_rule_view *chosen = NULL;
    asp_rule_view chosen_copy;
    uint64_t chosen_call = 0, call;
    int have_after = 0;

    /* Every rule numbers the call first (asp_entry_numbers), then each decides. */
    asp_entry_numbers entry;
    entry.count = rs.count;
    for (uint32_t i = 0; i < rs.count; i++) {
        const asp_rule_view *v = asp_rule_at(&rs, i, &scratch);
        entry.serial[i] = entry.call[i] = 0;
        entry.decided[i] = 0;
        if (!v) continue;
        have_after |= v->position == ASPECTS_POSITION_AFTER;
        if (asp_numbered_at_return(v)) continue;
        entry.serial[i] = v->serial;
        if (!asp_rule_applies(v, ex, vals, caller)) continue;
        if ((v->actions & ASPECTS_ACTION_SHORT) && !asp_data_shortable(v, ex, vals)) continue;
        entry.call[i] = asp_take_number(v, pre);
    }

    for (uint32_t i = 0; i < rs.count; i++) {
        const asp_rule_view *v = asp_rule_at(&rs, i, &scratch);
        if (!v || !asp_entry_number_of(&entry, v, i, &call) || !call) continue;
        if (v->position == ASPECTS_POSITION_AFTER) {
            if (ASP_UNLIKELY(v->flags & ASPECTS_RULE_STREAM_FAULT) && asp_has_stream(ex)) {
                const int fires = asp_decide_number(ex->group, v, call, 1);
                entry.decided[i] = fires ? ASP_DECIDED_FIRES : ASP_DECIDED_NOT;
                if (fires) {
                    entry.code[i] = asp_rule_error(v, call, idx, vals);
                    asp_stream_before_close(ex, vals);
                }
            }
            continue;
        }
        if (v->position == ASPECTS_POSITION_INSTEAD) {
            if (!chosen) {
                if (asp_decide_number(ex->group, v, call, 1)) {
                    /* scratch is reused by the next rule: keep our own copy of the chosen one */
                    if (v == &scratch) { chosen_copy = scratch; v = &chosen_copy; }
                    chosen = v;
                    chosen_call = call;
                }
            } else {
                /* Matched, but an earlier `instead` already fired: counted, not fired. */
                (void)asp_decide_number(ex->group, v, call, 0);
                asp_event_append(ASPECTS_EVENT_SHADOWED, v, call, idx, vals, 0, 0, caller);
            }
            continue;
        }
        if (!asp_decide_number(ex->group, v, call, 1)) continue;
        if (ASP_UNLIKELY(v->actions & (ASPECTS_ACTION_CALL | ASPECTS_ACTION_SHORT))) {
            asp_fire_before_code(v, call, ex, idx, args, vals, caller, caller_errno);
            continue;
        }
        asp_event_append(ASPECTS_EVENT_FIRED, v, call, idx, vals, 0, caller_errno, caller);
        asp_run_effects(v);
        if (v->actions & ASPECTS_ACTION_ARGS) asp_apply_arg_sets(v, ex, args, vals);
    }

    int64_t result = 0;
    int result_errno = caller_errno;
    const uint64_t generation = asp_group_generation(ex->group);
    int replaced = 0;
    if (chosen && ASP_UNLIKELY(chosen->actions & ASPECTS_ACTION_CALL)) {
        replaced = asp_fire_instead_code(chosen, chosen_call, ex, idx, args, vals, ret, caller, &result, &result_errno);
    } else if (chosen) {
        asp_run_effects(chosen);
        if (ASP_UNLIKELY(chosen->flags & ASPECTS_RULE_STREAM_FAULT) && asp_has_stream(ex)) {
            asp_fire_stream(chosen, chosen_call, ex, idx, ret, args, vals, caller, caller_errno, &result, &result_errno);
        } else {
            asp_apply_result(chosen, chosen_call, idx, vals, ret, &result, &result_errno);
            asp_event_append(ASPECTS_EVENT_FIRED, chosen, chosen_call, idx, vals, result, result_errno, caller);
        }
        replaced = 1;
    }
    if (!replaced) {
        const asp_frame engine = asp_frame_push_original(t, ex->group, idx);
        errno = caller_errno;
        asp_invoke_original(idx, ret, args, vals);
        result_errno = errno;
        asp_frame_pop(t, engine);
        result = asp_read_return(ex->ret, ret);
        /* A library loaded just now may import functions advised from a prototype. */
        asp_after_load(ex->group);
    }

    /* If the group's copy was remade while the original ran, its buffer may have been reused:
     * the after advice then comes from the group's rules as they are now. */
    const int remade = rs.views && asp_group_generation(ex->group) != generation;
    if (have_after || remade)
        asp_run_after_rules(ex, idx, ret, args, vals, caller, remade ? NULL : &rs, &entry, &result, &result_errno, pre);

    asp_frame_pop(t, program);
    errno = result_errno;
}

/* The after advice of a call whose single `after` rule's copy was remade while its original
 * ran (dispatch.c): the group's current rules decide; the rule of serial `numbered_serial`
 * (0: none), if it is still among them, with the number `call` it took on entry. */
void asp_dispatch_after_now(const asp_export_desc *ex, uint32_t idx, void *ret, void **args, uint64_t caller, asp_pending *pre,
                            uint64_t numbered_serial, uint64_t call) {
    asp_thread *t = &asp_tls;
    uint64_t vals[ASP_MAX_ARGS] = {0};
    for (uint32_t a = 0; a < ex->nargs; a++) vals[a] = asp_widen(ex->args[a], args[a]);
    int result_errno = errno;
    int64_t result = 0;
    asp_entry_numbers entry;
    entry.count = 0;
    if (numbered_serial) {
        entry.serial[0] = numbered_serial;
        entry.decided[0] = 0;
        entry.call[0] = call;
        entry.count = 1;
    }
    const asp_frame program = asp_frame_push(t, ASP_IN_ENGINE);
    asp_run_after_rules(ex, idx, ret, args, vals, caller, NULL, &entry, &result, &result_errno, pre);
    asp_frame_pop(t, program);
    errno = result_errno;
}

/* A firing `instead` rule on the several-rules path: the result, the event, the caller's errno. */
static inline void asp_fire_instead(const asp_rule_view *v, uint64_t call, uint32_t idx, void *ret, const uint64_t *vals,
                                    uint64_t caller) {
    int64_t result = 0;
    int result_errno = errno;
    asp_apply_result(v, call, idx, vals, ret, &result, &result_errno);
    asp_event_append(ASPECTS_EVENT_FIRED, v, call, idx, vals, result, result_errno, caller);
    errno = result_errno;
}

/* The several-rules path: a group of several simple rules (rulecache.c, asp_views_path) and
 * a function whose original is called directly. It keeps the full path's semantics for those
 * rules, with less bookkeeping: it calls nothing that could re-enter the engine (the event
 * writer's clock is libc's own clock_gettime, found past our wrapper: events.c) and runs no effect, so it pushes no
 * frame, numbers and decides each rule in turn (no rule of it runs a handler), and leaves
 * errno alone unless a rule sets it. */
void asp_dispatch_several(const asp_direct_call *h, uint32_t idx, void *ret, void **args,
                          const asp_rule_view *views, uint32_t n, uint64_t caller, asp_pending *pre) {
    const asp_export_desc *ex = h->desc;
    void *fn = __atomic_load_n(&h->fn, __ATOMIC_RELAXED);
    /* The register slots as they are (events record them so); widened for matchers only. */
    uint64_t vals[ASP_MAX_ARGS] = {0};
    asp_read_slots(args, h->nargs, vals);
    int widened = 0;
    const asp_rule_view *chosen = NULL;
    uint64_t chosen_call = 0;
    for (uint32_t i = 0; i < n; i++) {
        const asp_rule_view *v = &views[i];
        if (v->matcher_count) {
            if (!widened) {
                for (uint32_t a = 0; a < h->nargs; a++) vals[a] = asp_widen(ex->args[a], args[a]);
                widened = 1;
            }
            if (!asp_conditions_hold(v, ex, vals, 0, 0)) continue;
        }
        const uint64_t k = asp_take_number(v, pre);
        if (v->position == ASPECTS_POSITION_INSTEAD) {
            if (chosen) {
                /* Matched, but an earlier `instead` already fired: counted, not fired. */
                (void)asp_decide_number(ex->group, v, k, 0);
                const int saved = errno;
                asp_event_append(ASPECTS_EVENT_SHADOWED, v, k, idx, vals, 0, 0, caller);
                errno = saved;
            } else if (asp_decide_number(ex->group, v, k, 1)) {
                chosen = v;
                chosen_call = k;
            }
            continue;
        }
        if (!asp_decide_number(ex->group, v, k, 1)) continue;
        const int saved = errno;
        asp_event_append(ASPECTS_EVENT_FIRED, v, k, idx, vals, 0, saved, caller);
        errno = saved;
    }
    if (chosen) {
        asp_fire_instead(chosen, chosen_call, idx, ret, vals, caller);
        return;
    }
    asp_call_direct(h, fn, vals, ret);
}

