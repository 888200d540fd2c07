/* The fair lock: a reentrant lock granted in the order in which waiters
 * reached Redis (scripts/fair_*.lua). One hash per lock holds the hold
 * (its lease a field, so the queue outlives a holder whose lease runs
 * out), the last token, the applied set and the queue: entries numbered
 * by arrival, each with a server-time lapse that the watchdog keeps
 * pushing back while the waiter lives (src/lock/waitq.c). A release hands
 * the lock to the head in its script and names it in its message, so
 * only that waiter wakes, and its try only confirms the grant. */
#include "lock/lock_int.h"

/* Hand-offs name the new head of the queue; entries expire unless renewed. */
static const rdl__kind_queue fair_queue = {
    .renewed = 1,
    .renew_script = RDL__SCRIPT_FAIR_TOUCH,
    .entry_key = RDL__KEY_HOLD,
    .targeted = 1,
    .own_channel = 1,
};

static const rdl__lock_kind fair_kind = {
    .name = RDL__KIND_FAIR,
    .label = "fair",
    .scripts = RDL__KIND_SCRIPTS(FAIR),
    .parse_try = rdl__parse_try, /* position: place in the queue */
    .queue = &fair_queue,
};

int rdl_fairlock_new(rdl_client_t *c, const char *name, rdl_lock_t **out)
{
    return rdl__lock_create(c, name, &fair_kind, out);
}
