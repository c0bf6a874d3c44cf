/* advice_call.h — advice as code: the `call` action's loader and the invocation behind the C
 * API of include/aspects_advice.h (advice_call.c): a view of the dispatcher's call record
 * (call.h) for one firing, which the full path (dispatch_full.c) calls the user's function
 * with. */
#ifndef ASP_ADVICE_CALL_H
#define ASP_ADVICE_CALL_H

/* The API's declarations keep default visibility under base.h's hidden pragma (the header
 * pushes its own); the version script (generated/exports.map) exports them. */
#define ASPECTS_ADVICE_ENGINE 1
#include "include/aspects_advice.h" /* by its path: every build of the preload finds it */
#include "call.h"
#include "identity.h"
#include "originals.h"
#include "resolve.h"
#include "signatures.h"
#include "sys.h"
#include "table.h"
#include "thread.h"
#include "view.h"

/* Aspects' AspectInfo: one firing of a `call` rule, as the user's function sees it — a view of
 * the call's record: its arguments, result and errno are the record's, read and changed in
 * place. What belongs to the firing alone is here. On the dispatcher's stack, valid while the
 * function runs. */
struct aspects_invocation {
    asp_call *call;        /* the call: export, arguments, number, result, errno, caller */
    uint32_t version;      /* ASPECTS_ADVICE_VERSION: what this engine speaks */
    uint32_t position;     /* enum aspects_position */
    uint32_t proceeded;    /* instead: the original ran (at most once) */
    uint16_t site_known;   /* site_object/site_offset filled (on first asking) */
    uint16_t id_known;     /* rule_id copied from rule_src (on first asking) */
    void (*proceed)(asp_call *); /* dispatch_full.c: the original, once */
    const char *rule_src;  /* the slot's id, in shared memory */
    uint64_t site_offset;
    char site_object[ASPECTS_EVENT_CALLER_SIZE];
    char rule_id[ASPECTS_RULE_ID_SIZE];
};

/* The view of call c for a firing of rule v at `position`. */
void asp_invocation_init(aspects_invocation *inv, asp_call *c, const asp_rule_view *v, uint32_t position);

/* The function of firing `call` rule v, loaded now when it is not yet and this call is a place
 * where loading is safe; NULL otherwise, with *why (enum aspects_advice_unavailable). Never
 * blocks in a place that is not safe; async-signal-safe when the function is loaded. */
aspects_advice_function asp_advice_function(const asp_rule_view *v, const asp_export_desc *ex, uint32_t *why);

/* At attach (start-up): load the objects of every `call` rule the table holds for this program. */
void asp_advice_attach(void);
/* On a full-path call: when the table changed since the last look, load the objects of new
 * `call` rules now, if this call is a safe place (so that a first firing in a signal handler
 * finds its function loaded). One comparison when nothing changed. */
void asp_advice_table_changed(const asp_export_desc *ex);
/* Fork waits for a load under way (dlopen holds the loader's lock, which the child would find
 * taken for good); the child starts with the lock free. */
void asp_advice_atfork_prepare(void);
void asp_advice_atfork_parent(void);
void asp_advice_after_fork(void);

#endif
