/* The fair lock: a reentrant lock granted in the order in which waiters
 * reached Redis (scripts/fair_*.lua). The hold and fence are the reentrant
 * lock's; the queue is a sorted set of owners by arrival, with a second
 * sorted set of server-time expiries that the watchdog keeps pushing back
 * while the waiter lives (src/lock/waitq.c). A release names the new head
 * of the queue in its message, so only that waiter wakes. */
#include <stdio.h>

#include "lock/lock_int.h"

static int send_try(rdl__acquire *op, rdl__reply_fn fn)
{
    rdl_lock_t *lock = op->lock;
    char reqid[64];
    char lease[24], keep[24], qlease[24];
    const char *keys[4] = {lock->key_hold, lock->key_fence, lock->key_aux[0],
                           lock->key_aux[1]};
    const char *args[8] = {op->owner_str,
                           lease,
                           reqid,
                           keep,
                           qlease,
                           op->one_try ? "try" : "wait",
                           rdl__client_publish_cmd(lock->c),
                           lock->channel};
    rdl__acquire_reqid(op, reqid);
    snprintf(lease, sizeof(lease), "%lld", (long long)op->lease_ms);
    snprintf(keep, sizeof(keep), "%d", RDL__FENCE_RETENTION_MS);
    snprintf(qlease, sizeof(qlease), "%lld",
             (long long)rdl__queue_lease_ms(lock->c));
    return rdl__script_run(lock->c, RDL__SCRIPT_FAIR_ACQUIRE, 4, keys, 8, args,
                           fn, op);
}

/* The fair reply ends with {waiters, position, held}. */
static int parse_info(const redisReply *r, rdl_lock_info_t *out)
{
    long long more[3];
    int rc = rdl__parse_info(r, 3, more, out);
    if (rc == 0) {
        out->waiters = (uint32_t)more[0];
        out->position = (uint32_t)more[1];
        out->holder_count = (uint32_t)more[2];
    }
    return rc;
}

/* Hand-offs name the new head of the queue; entries expire unless renewed. */
static const rdl__kind_queue fair_queue = {
    .renewed = 1,
    .renew_script = RDL__SCRIPT_FAIR_TOUCH,
    .exp_key = 1,
    .order_key = 0,
    .leave = {RDL__SCRIPT_FAIR_LEAVE,
              3,
              {RDL__KEY_HOLD, RDL__KEY_AUX0, RDL__KEY_AUX1}},
    .targeted = 1,
};

static const rdl__lock_kind fair_kind = {
    .name = "fair",
    .send_try = send_try,
    .parse_try = rdl__parse_try, /* position: place in the queue */
    .release = {RDL__SCRIPT_FAIR_RELEASE,
                4,
                {RDL__KEY_HOLD, RDL__KEY_FENCE, RDL__KEY_AUX0, RDL__KEY_AUX1}},
    .force = {RDL__SCRIPT_FAIR_FORCE_RELEASE,
              4,
              {RDL__KEY_HOLD, RDL__KEY_AUX0, RDL__KEY_AUX1, RDL__KEY_FENCE}},
    .info = {RDL__SCRIPT_FAIR_INFO,
             4,
             {RDL__KEY_HOLD, RDL__KEY_FENCE, RDL__KEY_AUX0, RDL__KEY_AUX1}},
    .parse_release = rdl__parse_release,
    .parse_force = rdl__parse_force,
    .parse_info = parse_info,
    .renew_script = RDL__SCRIPT_LOCK_RENEW,
    .aux_suffix = {"queue", "exp"},
    .queue = &fair_queue,
};

int rdl_fairlock_new(rdl_client_t *c, const char *name, rdl_lock_t **out)
{
    return rdl__lock_create(c, name, &fair_kind, out);
}
