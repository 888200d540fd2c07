/* Release of one level of a hold, shared by the lock kinds. An unknown
 * outcome (connection lost, command timeout) is retried with the same
 * request id, which the script applies at most once, so a retry never
 * releases two levels. */
#include <stdio.h>

#include "lock_int.h"

static void send_release(rdl__release *op);
static void on_release(void *data, int status, const redisReply *r,
                       uint64_t written_ms);

/* Runs the kind's release script. ARGV, the same for every kind: owner,
 * request id, publish command, channel, fence retention, applied-set
 * window, the acquisition undone ("" for a release), then the kind's side
 * if it has one (lock_int.h). */
static int send_script(rdl__release *op)
{
    rdl_lock_t *lock = op->lock;
    const rdl__lock_kind *kind = lock->kind;
    const char *keys[RDL__KIND_KEYS_MAX], *args[8];
    char keep[24], window[24];
    int nkeys = rdl__kind_keys(lock, keys), nargs = 7;
    snprintf(keep, sizeof(keep), "%d", RDL__FENCE_RETENTION_MS);
    snprintf(window, sizeof(window), "%lld",
             (long long)rdl__done_window_ms(lock->c));
    args[0] = op->owner_str;
    args[1] = op->reqid;
    args[2] = rdl__client_publish_cmd(lock->c);
    args[3] = lock->channel;
    args[4] = keep;
    args[5] = window;
    args[6] = op->undo_of;
    if (kind->side != NULL)
        args[nargs++] = kind->side;
    /* A give-back follows the acquisition's tries on their line, so it
     * reaches the server after them and before the retry or the next
     * acquisition that follows it: it is conditional on being the hold's
     * last request, which a re-entry that overtook it would change. A
     * release goes on the main line: no WAIT there holds it up. */
    if (op->undo_of[0] != '\0' || op->stale)
        return rdl__script_run_line(lock->c, rdl__client_acquire_line(lock->c),
                                    kind->scripts.release, nkeys, keys, nargs,
                                    args, on_release, op);
    return rdl__script_run(lock->c, kind->scripts.release, nkeys, keys, nargs,
                           args, on_release, op);
}

static void complete(rdl__release *op, int status)
{
    rdl_lock_t *lock = op->lock;
    /* An undo's or a stale level's outcome answers nobody's call: it must
     * not become the message of the call it serves. */
    if (op->done == NULL && status == RDL_ENOTHELD)
        rdl__errmsg_set(lock->c, "lock \"%.200s\" is not held by this owner",
                        lock->name);
    else if (op->done == NULL && status == RDL_ELOST)
        rdl__errmsg_set(lock->c,
                        "the hold of lock \"%.200s\" was lost before "
                        "the release (its lease ended, or it was "
                        "force-released)",
                        lock->name);
    if (op->req != NULL)
        op->req->internal = NULL;
    if (op->done != NULL)
        op->done(op->done_data, status);
    else
        op->cb(op->req, status);
    if (op->req == NULL)
        rdl__lock_unref(lock); /* taken in rdl__release_start */
    rdl__free(op);
}

static void on_release(void *data, int status, const redisReply *r,
                       uint64_t written_ms)
{
    rdl__release *op = data;
    rdl_lock_t *lock = op->lock;
    uint32_t remaining = 0;
    uint64_t since = 0, token = 0;
    char shape[96];
    (void)written_ms;

    if (status == 0) {
        status = rdl__parse_release(r, &remaining);
        if (status == RDL_EPROTO && op->done == NULL)
            rdl__errmsg_set(lock->c,
                            "lock \"%.200s\": the server answered a release "
                            "with %s, which no script returns",
                            lock->name,
                            rdl__reply_shape(r, shape, sizeof(shape)));
    }
    if (rdl__outcome_unknown(status)) {
        op->unknown_status = status;
        /* A retry inside the window finds the record of a final release
         * that was applied (the applied set), or the hold's own record of
         * a partial one: it never releases twice, and never reports a
         * release that happened as a loss. */
        if (op->unknown < RDL__UNKNOWN_RETRIES &&
            rdl__retry_in_window(lock->c, op->first_sent)) {
            op->unknown++;
            send_release(op);
            return;
        }
    }
    /* After an unknown outcome, only the script's answer settles it (see
     * acquire.c). */
    if (status != 0 && status != RDL_ENOTHELD && op->unknown_status != 0)
        status = op->unknown_status;
    if (op->undo_of[0] != '\0' || op->stale) {
        /* An undo or a stale level's release gives back a level its
         * caller was never told of: what the client believes it holds
         * does not change. */
    } else if (status == 0) {
        if (rdl__lock_events_on(lock)) {
            since = rdl__hold_since(lock, op->owner);
            token = rdl__hold_token(lock, op->owner);
        }
        if (rdl__hold_released(lock, op->owner, (int)remaining))
            status = RDL_ELOST; /* reported lost before this release */
        else if (since != 0)
            rdl__lock_event(lock, RDL_EVENT_RELEASED, op->owner, 0,
                            (int64_t)(rdl__now_ms() - since), token);
    } else if (status == RDL_ENOTHELD) {
        /* Known here, not held there: the hold ended under its owner. */
        if (rdl__hold_released(lock, op->owner, -1))
            status = RDL_ELOST;
    } else if (rdl__outcome_unknown(status) || status == RDL_EPROTO) {
        /* Maybe released (a reply no script returns may stand for a
         * release that ran): stop renewing, a hold left expires by lease,
         * and nothing is believed held that may not be. */
        (void)rdl__hold_released(lock, op->owner, -1);
    } else if (rdl__hold_released(lock, op->owner, -2)) {
        status = RDL_ELOST; /* not applied, but the hold was lost anyway */
    }
    complete(op, status);
}

static void send_release(rdl__release *op)
{
    int rc = send_script(op);
    if (rc != 0)
        on_release(op, rc, NULL, 0); /* settles the hold as any failure does */
}

static int cancel(rdl__op *op)
{
    (void)op; /* a release is decided by the server; it completes as is */
    return 0;
}

static int start(rdl_req_t *req, rdl_lock_t *lock, rdl_owner_t owner,
                 const char *undo_of, int stale, rdl_req_cb cb,
                 void (*done)(void *data, int status), void *done_data)
{
    rdl__release *op = rdl__calloc(1, sizeof(*op));
    int internal = undo_of != NULL || stale, rc;
    if (op == NULL)
        return RDL_ENOMEM;
    op->stale = stale;
    op->done = done;
    op->done_data = done_data;
    if (undo_of != NULL)
        snprintf(op->undo_of, sizeof(op->undo_of), "%s", undo_of);
    op->op.cancel = cancel;
    op->req = req;
    op->cb = cb;
    op->lock = lock;
    op->owner = owner;
    rdl__client_owner(lock->c, owner, op->owner_str);
    rdl__client_reqid(lock->c, op->reqid);
    op->first_sent = rdl__now_ms();
    /* No renewal may be sent after a release that can end the hold (an
     * undo gives back a level the caller was never told of: it leaves the
     * client's record alone). */
    if (!internal)
        rdl__hold_releasing(lock, owner);
    rc = send_script(op);
    if (rc != 0) {
        if (!internal)
            (void)rdl__hold_released(lock, owner, -2);
        rdl__free(op);
        return rc;
    }
    if (req == NULL)
        rdl__lock_ref(lock); /* internal: may outlive rdl_lock_free() */
    if (req != NULL) {
        req->lock = lock;
        req->internal = &op->op;
    }
    return 0;
}

int rdl__release_start(rdl_req_t *req, rdl_lock_t *lock, rdl_owner_t owner,
                       rdl_req_cb cb)
{
    return start(req, lock, owner, NULL, 0, cb, NULL, NULL);
}

int rdl__release_undo(rdl_lock_t *lock, rdl_owner_t owner, const char *reqid,
                      void (*done)(void *data, int status), void *data)
{
    return start(NULL, lock, owner, reqid, 0, NULL, done, data);
}

int rdl__release_stale(rdl_lock_t *lock, rdl_owner_t owner,
                       void (*done)(void *data, int status), void *data)
{
    return start(NULL, lock, owner, NULL, 1, NULL, done, data);
}
