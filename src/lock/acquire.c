/* Acquisition with waiting (docs/design.md#waiting), shared by the lock
 * kinds. The waiting itself (when the next try goes) is core/wait.c's;
 * this file decides what each answer means.
 *
 *   try ── acquired ──────────────────────────────> done (0)
 *    │ held by another
 *    ├─ one try ─────────────────────────────────> done (RDL_EBUSY)
 *    ├─ budget spent ────────────────────────────> done (RDL_ETIMEDOUT)
 *    └─ join the channel, sleep ≤ min(holder's lease, budget)
 *         └─ woken by a release message, by the subscription being
 *            confirmed, or by the timer ──> try
 *
 * No polling loop: between tries the waiter sleeps until something says the
 * lock may be free, and the cap on each sleep makes a lost message or a
 * crashed holder (Redis publishes nothing on expiry) cost at most one lease.
 * A wake-up that arrives while a try is in flight makes the next step a try
 * instead of a sleep, so no release is missed between a try and its sleep.
 *
 * A try whose outcome is unknown (connection lost, command timeout) is sent
 * again with the same request id; the script applies a request once, so the
 * retry tells the outcome instead of counting twice. A cancelled acquisition
 * whose try turned out to succeed releases that hold before reporting
 * RDL_ECANCELED: cancelling never leaves a lock held. */
#include <string.h>

#include "lock_int.h"

static void send_try(rdl__acquire *op);
static void send_next(rdl__wait *w);
static void trim(rdl__acquire *op, uint32_t extra);
static void granted(rdl__acquire *op);
static void confirm(rdl__acquire *op);
static void take(rdl__acquire *op);

/* The operation is freed once its timer is closed and no command of its
 * is in flight: each in-flight try or confirmation holds a reference, so
 * an answer handed out after the operation ended (see answered()) finds
 * it still there. */
static void unref(rdl__acquire *op)
{
    if (--op->refs == 0)
        rdl__free(op);
}

static void on_wait_closed(rdl__wait *w)
{
    /* op->lock may be freed by now */
    unref(RDL_CONTAINER_OF(w, rdl__acquire, wait));
}

/* An answer to an operation that has already ended: the client closed
 * from inside a callback while one reply was being handed out to several
 * operations (a batch's group reply, the WAIT that confirms several
 * grants), and the shutdown completed the rest with RDL_ECLOSED. They
 * were told once; the answer changes nothing now (a level it granted
 * expires by its lease: a closed client sends nothing). */
static int answered(const rdl__acquire *op)
{
    return op->done;
}

static void finish(rdl__acquire *op, int status);
static int send_give_back(rdl__acquire *op, void (*done)(void *, int),
                          void *data);

/* One follow-up of an ending acquisition was answered (or given up). */
static void on_followup(void *data, int status)
{
    rdl__acquire *op = data;
    (void)status; /* what was not given back ends with its lease */
    if (!answered(op) && --op->followups == 0)
        finish(op, op->end_status);
    unref(op);
}

/* The acquisition ends with status. Its follow-ups go first, on the line
 * of its tries and behind them: the give-back of a level it may have
 * taken (undo() asked for one) and, if it gave up, the leave of the
 * lock's queue. Its caller hears of the outcome once the server answered
 * them: a call that returned holds nothing it was not told of and waits
 * in no queue, so no release after it hands the lock to a waiter that is
 * gone, and no other client finds the lock held by a level given back.
 * (If the client closes meanwhile, the close completes it with
 * RDL_ECLOSED.) */
static void complete(rdl__acquire *op, int status)
{
    rdl__wait_end(&op->wait);
    rdl__waitq_stop(op);
    if (op->ending) { /* a close while the follow-ups are out */
        finish(op, status);
        return;
    }
    op->ending = 1;
    op->end_status = status;
    op->followups = 1; /* until every follow-up is sent */
    op->refs++;
    if (op->give_back) {
        op->refs++;
        if (send_give_back(op, on_followup, op) == 0)
            op->followups++;
        else
            op->refs--;
    }
    if (status != 0) {
        op->refs++;
        if (rdl__waitq_leave(op, on_followup, op))
            op->followups++;
        else
            op->refs--;
    }
    on_followup(op, 0);
}

static void finish(rdl__acquire *op, int status)
{
    rdl_req_t *req = op->req;
    rdl_lock_t *lock = op->lock;

    op->done = 1;
    rdl__client_active_remove(&op->active);
    rdl__wait_close(&op->wait, on_wait_closed);
    if (rdl__lock_events_on(lock) && (status == 0 || status == RDL_ETIMEDOUT))
        rdl__lock_event(lock,
                        status == 0 ? RDL_EVENT_ACQUIRED : RDL_EVENT_TIMEDOUT,
                        op->owner, (int64_t)(rdl__now_ms() - op->started), 0,
                        status == 0 ? req->fencing_token : 0);
    switch (status) {
    case RDL_EBUSY:
        rdl__errmsg_set(lock->c, "lock \"%.200s\" is held by another owner",
                        lock->name);
        break;
    case RDL_ETIMEDOUT:
        rdl__errmsg_set(lock->c,
                        "lock \"%.200s\" was not acquired within "
                        "the wait budget",
                        lock->name);
        break;
    case RDL_ECANCELED:
        rdl__errmsg_set(lock->c, "acquisition of \"%.200s\" was cancelled",
                        lock->name);
        break;
    default:
        break;
    }
    req->internal = NULL;
    op->cb(req, status);
}

void rdl__acquire_reqid(const rdl__acquire *op, char out[64])
{
    rdl__client_reqid_of(op->wait.c, op->reqseq, out);
}

static void on_given_back(void *data, int status)
{
    (void)data;
    (void)status; /* if it failed, the level ends with its lease */
}

/* Sends the give-back of the level this acquisition may have taken: after
 * a cancel that lost the race with a success, a failure to record the
 * hold, an outcome that stayed unknown, a grant too late or not confirmed.
 * The release applies only if the hold's last request is this acquisition
 * (see lock_release.lua), so an acquisition that did not happen releases
 * nothing. It holds its own reference to the lock (release.c). done
 * follows once; returns 0, or the failure (then done is not called). */
static int send_give_back(rdl__acquire *op, void (*done)(void *, int),
                          void *data)
{
    char reqid[64];
    int rc;
    /* Once stale levels were given back (trim()), the hold's last request
     * is one of those releases, not this acquisition: its level is known
     * to be the top one, and goes back unconditionally. */
    if (op->trimmed) {
        rc = rdl__release_stale(op->lock, op->owner, done, data);
    } else {
        rdl__acquire_reqid(op, reqid);
        rc = rdl__release_undo(op->lock, op->owner, reqid, done, data);
    }
    if (rc != 0)
        rdl__errmsg_set(op->lock->c, "could not release a cancelled hold");
    return rc;
}

/* The level this acquisition may have taken goes back before the caller
 * hears of the outcome (complete() sends it and waits). */
static void undo(rdl__acquire *op)
{
    op->give_back = 1;
}

/* The lock is held by someone else and budget may remain: sleep, for at
 * most the holder's remaining lease (pttl_ms, -1 if unknown). */
static void wait_for_release(rdl__acquire *op, uint64_t now, int64_t pttl_ms)
{
    uint64_t most = UINT64_MAX;
    int rc;

    if (pttl_ms >= 0)
        most = (uint64_t)pttl_ms;
    else if (op->wait.deadline == UINT64_MAX)
        most = (uint64_t)op->lease_ms; /* no lease known: still capped */
    /* A registration that lapsed is woken by no release: try (and so
     * register) again before it does. */
    if (op->queued && !op->lock->kind->queue->renewed &&
        most > (uint64_t)rdl__waiter_life_ms(op->wait.c))
        most = (uint64_t)rdl__waiter_life_ms(op->wait.c);
    rc = rdl__wait_not_yet(&op->wait, op->lock->wake_channel, now, most);
    if (rc != 0)
        complete(op, rc);
}

/* A grant heard of only after its lease, counted from the send that may
 * have been applied, could have run out: its answer was late (the process
 * paused, the reply held up), or lost and the retry waited, or the
 * replicas took that long to confirm it. The server may have granted it
 * afresh since, but the client cannot tell, and a hold it cannot vouch
 * for is worth nothing to the caller: a re-entry right after it would find
 * it over and start a new hold with a new token. Give it back; try again
 * as a new request if the budget allows, else report the outcome (the
 * unknown one, if replies were lost; else the budget spent). A re-entry
 * (count > 1) of a hold the client still believes valid is as good as that
 * hold: the server found the hold this owner's and never shortens it.
 * Returns 1 if the grant was given back. */
static int given_back_late(rdl__acquire *op, uint32_t count)
{
    rdl_lock_t *lock = op->lock;
    if (rdl__now_ms() < op->sent_at + (uint64_t)op->lease_ms)
        return 0;
    if (count > 1 && rdl__hold_valid_ms(lock, op->owner) > 0)
        return 0;
    if (!op->canceled && !op->one_try &&
        rdl__wait_budget(&op->wait, rdl__now_ms())) {
        /* The retry follows the give-back on the same line. */
        (void)send_give_back(op, on_given_back, NULL);
        op->reqseq = rdl__client_reqseq(lock->c);
        op->wait.unknown = 0;
        op->unknown_status = 0;
        send_try(op);
        return 1;
    }
    rdl__errmsg_set(lock->c,
                    "lock \"%.200s\": the grant arrived after its lease "
                    "could have ended; it was given back",
                    lock->name);
    undo(op);
    complete(op, op->canceled              ? RDL_ECANCELED
                 : op->unknown_status != 0 ? op->unknown_status
                                           : RDL_ETIMEDOUT);
    return 1;
}

/* A reply no script returns (a proxy, a wrong server on the port): the
 * acquisition fails with RDL_EPROTO. Whatever answered may have run the
 * try all the same (a proxy that mangled a grant), so the level it may
 * have taken is given back like an unknown outcome's. */
static void bad_reply(rdl__acquire *op, const redisReply *r)
{
    char shape[96];
    if (r != NULL)
        rdl__errmsg_set(op->lock->c,
                        "lock \"%.200s\": the server answered a try with "
                        "%s, which no script returns",
                        op->lock->name,
                        rdl__reply_shape(r, shape, sizeof(shape)));
    undo(op);
    complete(op, op->canceled ? RDL_ECANCELED : RDL_EPROTO);
}

static void try_answered(rdl__acquire *op, int status, const redisReply *r,
                         uint64_t written)
{
    rdl_lock_t *lock = op->lock;
    uint64_t now;
    rdl__try res;

    memset(&res, 0, sizeof(res));
    op->wait.inflight = 0;
    /* The lease runs from when the try left, not from when it was made: a
     * try that waited for a connection (a reconnect, a failover) could not
     * run before. After an unknown outcome, the first send written counts
     * (it may be the one applied), so later sends leave sent_at alone. */
    if (op->wait.unknown == 0 && written > op->sent_at)
        op->sent_at = written;
    if (status == 0)
        status = lock->kind->parse_try(r, &res);
    if (status == 0 && res.acquired && res.count > op->known + 1 &&
        res.count - op->known - 1 > RDL__STALE_MAX)
        status = RDL_EPROTO; /* no failover leaves that many behind */
    if (status == RDL_EPROTO) {
        bad_reply(op, r);
        return;
    }
    if (status == 0 && res.acquired) {
        if (op->canceled) {
            undo(op);
            complete(op, RDL_ECANCELED);
            return;
        }
        /* A new hold (count 1) while this client holds one for the owner
         * that it still believes valid: the earlier hold ended unnoticed
         * (the server lost it, or its lease ran out) and the caller, who
         * asked to re-enter, would go on believing it holds its outer
         * level. Give this level back and report the loss. What counts is
         * what the client believed when the call began: a re-entry sent
         * in time but run after the lease (the server paused, a failover,
         * a durable line held up) is answered after the client's deadline
         * too, and is no fresh acquisition for all that. */
        if (res.count == 1 &&
            (rdl__hold_lost_unnoticed(lock, op->owner) || op->known > 0)) {
            undo(op);
            rdl__errmsg_set(lock->c,
                            "the hold of lock \"%.200s\" was lost before "
                            "this re-entry; nothing is held now",
                            lock->name);
            complete(op, RDL_ELOST);
            return;
        }
        op->req->fencing_token = res.token;
        op->granted_count = res.count;
        if (res.count > op->known + 1) {
            trim(op, res.count - op->known - 1);
            return;
        }
        granted(op);
        return;
    }
    now = rdl__now_ms();
    if (status != 0) {
        if (rdl__outcome_unknown(status))
            op->unknown_status = status;
        /* An unknown outcome goes again with the same request id (applied
         * at most once); a try never written waits for the connection. */
        if (rdl__wait_retry(&op->wait, status, now)) {
            send_try(op);
            return;
        }
        /* Once a try's outcome was unknown, only an answer from the script
         * settles it: any later failure (the retry never written, the
         * client closing, a cancel) leaves it unknown, and a hold taken
         * then expires by its lease. Otherwise a cancelled request reports
         * RDL_ECANCELED. */
        if (op->unknown_status != 0) {
            status = op->unknown_status;
            undo(op); /* best effort: else the hold expires by its lease */
        } else if (op->canceled) {
            status = RDL_ECANCELED;
        }
        complete(op, status);
        return;
    }
    if (res.position > 0 && lock->kind->queue != NULL)
        rdl__waitq_queued(op);
    if (op->canceled)
        complete(op, RDL_ECANCELED);
    else if (op->one_try)
        complete(op, RDL_EBUSY);
    else
        wait_for_release(op, now, res.pttl_ms); /* or RDL_ETIMEDOUT */
}

/* The grant (op->granted_count levels, its token in op->req) is in hand:
 * give it back if it came too late, else confirm it with the replicas or
 * take it. */
static void granted(rdl__acquire *op)
{
    if (given_back_late(op, op->granted_count))
        return;
    if (op->lock->c->net.durable_replicas != 0) {
        confirm(op);
        return;
    }
    take(op);
}

static void on_trimmed(void *data, int status)
{
    rdl__acquire *op = data;
    (void)status; /* a level not given back ends with its lease */
    if (!answered(op) && --op->trimming == 0) {
        op->wait.inflight = 0;
        if (op->canceled) {
            undo(op);
            complete(op, RDL_ECANCELED);
        } else {
            granted(op);
        }
    }
    unref(op);
}

/* The grant counts more levels than the client believed the owner held
 * when the call began, plus this one (op->known + 1): the server has
 * `extra` levels nobody knows of, brought back by a release lost in a
 * failover (durable grants are confirmed, releases are not) or left by a
 * call whose outcome stayed unknown. The caller asked for one level more than
 * it holds; with the extra ones kept, its releases would leave them behind
 * (renewed for ever with an auto lease). They go back first, on the tries'
 * line, and the caller hears of the grant once they did. The owner makes one
 * request at a time on a lock, so no level of a call in flight is among
 * them. The token is the hold's, which no other owner can have been
 * granted since. */
static void trim(rdl__acquire *op, uint32_t extra)
{
    uint32_t i;
    op->granted_count -= extra;
    op->trimmed = 1;
    op->wait.inflight = 1;
    op->trimming = 1; /* until every release is sent */
    op->refs++;
    for (i = 0; i < extra; i++) {
        op->refs++;
        if (rdl__release_stale(op->lock, op->owner, on_trimmed, op) == 0)
            op->trimming++;
        else
            op->refs--;
    }
    on_trimmed(op, 0);
}

static void on_try(void *data, int status, const redisReply *r,
                   uint64_t written_ms)
{
    rdl__acquire *op = data;
    if (!answered(op))
        try_answered(op, status, r, written_ms);
    unref(op);
}

/* The grant (its token in op->req) is final: recorded, and an auto hold
 * registered with the watchdog, before the caller hears of it. */
static void take(rdl__acquire *op)
{
    rdl_lock_t *lock = op->lock;
    int status = rdl__hold_granted(lock, op->owner, op->req->fencing_token,
                                   op->granted_count, op->sent_at, op->lease_ms,
                                   op->auto_lease);
    if (status != 0) {
        undo(op);
        complete(op, status);
        return;
    }
    RDL__STAT_INC(&lock->c->net, acquires);
    complete(op, 0);
}

/* Durability (docs/design.md#durability): the grant counts once the replicas
 * have it. The WAIT goes on the durable line's connection to the master, where
 * the grant was written (rdl__durable_confirm). */
static void confirmed(rdl__acquire *op, const rdl__confirmed *cf)
{
    rdl_lock_t *lock = op->lock;
    char what[160];
    op->wait.inflight = 0;
    if (cf->met && !op->canceled) {
        if (!given_back_late(op, op->granted_count))
            take(op);
        return;
    }
    undo(op); /* nothing may stay held that the caller was not given */
    if (op->canceled) {
        complete(op, RDL_ECANCELED);
    } else if (cf->status == 0) {
        rdl__durable_describe(cf, what, sizeof(what));
        rdl__errmsg_set(lock->c,
                        "lock \"%.200s\": %s the grant within %lld ms; it "
                        "was given back",
                        lock->name, what,
                        (long long)lock->c->net.durable_timeout_ms);
        complete(op, RDL_ENOREPLICAS);
    } else {
        rdl__errmsg_set(lock->c,
                        "lock \"%.200s\": the grant could not be confirmed "
                        "by the replicas (%s%s%s); it was given back",
                        lock->name, rdl_err_name(cf->status),
                        cf->why != NULL ? ": " : "",
                        cf->why != NULL ? cf->why : "");
        complete(op, cf->status);
    }
}

static void on_confirmed(void *data, const rdl__confirmed *cf)
{
    rdl__acquire *op = data;
    if (!answered(op))
        confirmed(op, cf);
    unref(op);
}

static void confirm(rdl__acquire *op)
{
    rdl_client_t *c = op->lock->c;
    rdl__conn *cn = rdl__client_route_line(c, op->lock->key_hold,
                                           rdl__client_acquire_line(c));
    int rc;
    op->refs++;
    rc = cn != NULL ? rdl__durable_confirm(cn, on_confirmed, op) : RDL_ENOMEM;
    if (rc != 0) {
        op->refs--;
        undo(op);
        complete(op, rc);
        return;
    }
    op->wait.inflight = 1;
}

static void send_try(rdl__acquire *op)
{
    int rc;
    rdl__wait_trying(&op->wait);
    /* After an unknown outcome the retry may only report what the earlier
     * send did: the lease then ran from the earlier send. */
    if (op->wait.unknown == 0)
        op->sent_at = rdl__now_ms();
    RDL__STAT_INC(&op->lock->c->net, attempts);
    op->refs++;
    rc = rdl__kind_send_try(op, on_try);
    if (rc != 0) {
        op->refs--;
        /* A retry that cannot be sent (the client is closing) leaves the
         * earlier outcome unknown: say so, and give back what it may have
         * taken if that can still be sent. */
        if (op->unknown_status != 0) {
            undo(op);
            rc = op->unknown_status;
        }
        complete(op, rc);
        return;
    }
    op->wait.inflight = 1;
}

/* The wait's next try (a wake-up, the timer). */
static void send_next(rdl__wait *w)
{
    send_try(RDL_CONTAINER_OF(w, rdl__acquire, wait));
}

static void on_abort(rdl__active *a)
{
    rdl__acquire *op = RDL_CONTAINER_OF(a, rdl__acquire, active);
    complete(op, RDL_ECLOSED);
}

static void on_cancel_task(rdl__task *t, int status)
{
    rdl__acquire *op = RDL_CONTAINER_OF(t, rdl__acquire, task);
    (void)status;
    if (!op->done && !op->ending)
        complete(op, RDL_ECANCELED);
}

static int cancel(rdl__op *base)
{
    rdl__acquire *op = RDL_CONTAINER_OF(base, rdl__acquire, op);
    if (op->canceled || op->done || op->ending)
        return 0; /* ending: the outcome is decided */
    op->canceled = 1;
    /* Out of the hub at once unless a try is out: a wake-one message that
     * arrives before the completion runs goes to another waiter instead of
     * to this one. */
    if (rdl__wait_halt(&op->wait))
        return 0; /* the reply decides, and undoes a success */
    /* The callback must not run inside rdl_req_cancel(). If the client is
     * closing, the shutdown completes the request instead. */
    op->task.run = on_cancel_task;
    (void)rdl__client_post(op->lock->c, &op->task);
    return 0;
}

int rdl__acquire_start(rdl_req_t *req, rdl_lock_t *lock, rdl_owner_t owner,
                       int64_t wait_ms, int64_t lease_ms, rdl_req_cb cb)
{
    rdl_client_t *c = lock->c;
    rdl__acquire *op = rdl__calloc(1, sizeof(*op));
    uint64_t now = rdl__now_ms();
    int rc;

    if (op == NULL)
        return RDL_ENOMEM;
    op->op.cancel = cancel;
    op->req = req;
    op->cb = cb;
    op->lock = lock;
    op->owner = owner;
    op->lease_ms = lease_ms == RDL_LEASE_AUTO ? c->watchdog_ms : lease_ms;
    op->auto_lease = lease_ms == RDL_LEASE_AUTO;
    op->sent_at = now;
    op->started = now;
    op->one_try = wait_ms == 0;
    rdl__client_owner(c, owner, op->owner_str);
    op->reqseq = rdl__client_reqseq(c);
    op->known = rdl__hold_believed(lock, owner);
    rdl__active_init(&op->active, RDL__STAGE_OPERATION, on_abort, NULL);
    rdl__wait_init(&op->wait, c, wait_ms, now, send_next);
    /* Hand-offs name the owner they are for. */
    if (lock->kind->queue != NULL && lock->kind->queue->targeted)
        op->wait.waiter.target = op->owner_str;

    RDL__STAT_INC(&c->net, attempts);
    rdl__wait_trying(&op->wait); /* as in send_try() */
    op->refs = 2;                /* the timer, the try */
    rc = rdl__kind_send_try(op, on_try);
    if (rc != 0) {
        op->refs = 1;
        rdl__wait_close(&op->wait, on_wait_closed);
        return rc;
    }
    op->wait.inflight = 1;
    rdl__client_active_add(c, &op->active);
    req->lock = lock;
    req->fencing_token = 0;
    req->internal = &op->op;
    return 0;
}
