/* The operations table shared by the kinds that run scripts (plain, fair,
 * read-write): the blocking forms of the async operations, force release
 * and info as single script calls. The kinds supply scripts and parsers
 * (rdl__lock_kind); waiting and retries live in acquire.c and release.c,
 * what this client knows of its holds in hold.c. */
#include <stdio.h>
#include <string.h>

#include "lock_int.h"

typedef struct lock_call {
    rdl__sync sync;
    rdl_req_t req;
    rdl_lock_t *lock;
    rdl_owner_t owner;
    int64_t wait_ms;
    int64_t lease_ms;
    rdl_lock_info_t *info;
    char reqid[64];      /* force release: its request id */
    uint64_t first_sent; /* force release: when it was first sent */
    int unknown;
} lock_call;

static void on_req_done(rdl_req_t *req, int status)
{
    lock_call *k = req->data;
    rdl__sync_done(&k->sync, status);
}

static void start_acquire(rdl__sync *s)
{
    lock_call *k = RDL_CONTAINER_OF(s, lock_call, sync);
    int rc = rdl__acquire_start(&k->req, k->lock, k->owner, k->wait_ms,
                                k->lease_ms, on_req_done);
    if (rc != 0)
        rdl__sync_done(s, rc);
}

static void start_release(rdl__sync *s)
{
    lock_call *k = RDL_CONTAINER_OF(s, lock_call, sync);
    int rc = rdl__release_start(&k->req, k->lock, k->owner, on_req_done);
    if (rc != 0)
        rdl__sync_done(s, rc);
}

static int call(rdl_lock_t *lock, lock_call *k, void (*start)(rdl__sync *))
{
    k->lock = lock;
    k->req.data = k;
    k->sync.start = start;
    return rdl__sync_call(lock->c, &k->sync);
}

/* Force release and info are single script calls; an unknown outcome is
 * retried (both are safe to repeat). */

static void on_force(void *data, int status, const redisReply *r,
                     uint64_t written_ms);
static void on_info(void *data, int status, const redisReply *r,
                    uint64_t written_ms);

const char *rdl__lock_key(const rdl_lock_t *lock, int role)
{
    switch (role) {
    case RDL__KEY_HOLD:
        return lock->key_hold;
    case RDL__KEY_FENCE:
        return lock->key_fence;
    default:
        return lock->key_aux[role - RDL__KEY_AUX0];
    }
}

int rdl__kind_keys(const rdl_lock_t *lock, const rdl__kind_call *call,
                   const char **keys)
{
    int i;
    for (i = 0; i < call->nkeys; i++)
        keys[i] = rdl__lock_key(lock, call->keys[i]);
    return call->nkeys;
}

int rdl__kind_args(const rdl_lock_t *lock, const rdl__kind_call *call,
                   const char **args, char buf[RDL__KIND_ARGS_MAX][24])
{
    int i;
    for (i = 0; i < call->nargs; i++) {
        switch (call->args[i]) {
        case RDL__ARG_SIDE:
            args[i] = lock->kind->side;
            break;
        case RDL__ARG_PERMITS:
            snprintf(buf[i], sizeof(buf[i]), "%u", (unsigned)lock->permits);
            args[i] = buf[i];
            break;
        default: /* RDL__ARG_WRITERS_FIRST */
            args[i] = (lock->flags & RDL_RW_READERS_FIRST) ? "0" : "1";
            break;
        }
    }
    return call->nargs;
}

/* The acquire contract (lock_int.h): owner, lease, request id, "" or how
 * long a waiter's place lives, publish command, channel, retention, then
 * the kind's own arguments. */
int rdl__kind_send_try(rdl__acquire *op, rdl__reply_fn fn)
{
    rdl_lock_t *lock = op->lock;
    const rdl__kind_call *call = &lock->kind->acquire;
    const char *keys[4], *args[7 + RDL__KIND_ARGS_MAX];
    char reqid[64], lease[24], wait[24], keep[24];
    char extra[RDL__KIND_ARGS_MAX][24];
    int nkeys = rdl__kind_keys(lock, call, keys);
    int nargs = 7 + rdl__kind_args(lock, call, args + 7, extra);
    rdl__acquire_reqid(op, reqid);
    snprintf(lease, sizeof(lease), "%lld", (long long)op->lease_ms);
    snprintf(wait, sizeof(wait), "%lld", (long long)rdl__wait_life_ms(lock));
    snprintf(keep, sizeof(keep), "%d", RDL__FENCE_RETENTION_MS);
    args[0] = op->owner_str;
    args[1] = lease;
    args[2] = reqid;
    args[3] = op->one_try ? "" : wait;
    args[4] = rdl__client_publish_cmd(lock->c);
    args[5] = lock->channel;
    args[6] = keep;
    return rdl__script_run_line(lock->c, rdl__client_acquire_line(lock->c),
                                call->script, nkeys, keys, nargs, args, fn, op);
}

/* Runs the kind's force-release script. ARGV, the same for every kind:
 * publish command, channel, request id, applied-set window. */
static int send_force(rdl_lock_t *lock, const char *reqid, void *data)
{
    const char *keys[4];
    char window[24];
    const char *args[4] = {rdl__client_publish_cmd(lock->c), lock->channel,
                           reqid, window};
    int nkeys = rdl__kind_keys(lock, &lock->kind->force, keys);
    snprintf(window, sizeof(window), "%lld",
             (long long)rdl__done_window_ms(lock->c));
    return rdl__script_run(lock->c, lock->kind->force.script, nkeys, keys, 4,
                           args, on_force, data);
}

/* Runs the kind's info script: ARGV = owner, then the kind's own. */
static int send_info(rdl_lock_t *lock, const char *owner, void *data)
{
    const rdl__kind_call *call = &lock->kind->info;
    const char *keys[4], *args[1 + RDL__KIND_ARGS_MAX] = {owner};
    char extra[RDL__KIND_ARGS_MAX][24];
    int nkeys = rdl__kind_keys(lock, call, keys);
    int nargs = 1 + rdl__kind_args(lock, call, args + 1, extra);
    return rdl__script_run(lock->c, call->script, nkeys, keys, nargs, args,
                           on_info, data);
}

static void start_force(rdl__sync *s)
{
    lock_call *k = RDL_CONTAINER_OF(s, lock_call, sync);
    int rc;
    if (k->reqid[0] == '\0') {
        rdl__client_reqid(k->lock->c, k->reqid);
        k->first_sent = rdl__now_ms();
    }
    rc = send_force(k->lock, k->reqid, k);
    if (rc != 0) /* a retry not sent leaves the first outcome unknown */
        rdl__sync_done(s, k->unknown > 0 ? RDL_ECONNLOST : rc);
}

static void on_force(void *data, int status, const redisReply *r,
                     uint64_t written_ms)
{
    lock_call *k = data;
    (void)written_ms;
    /* The same request id: the script answers a retry of an applied force
     * release as it answered the first, and frees nothing more. */
    if (rdl__outcome_unknown(status) && k->unknown < RDL__UNKNOWN_RETRIES &&
        rdl__retry_in_window(k->lock->c, k->first_sent)) {
        k->unknown++;
        start_force(&k->sync);
        return;
    }
    if (status == 0)
        status = k->lock->kind->parse_force(r);
    if (status == 0)
        rdl__hold_clear(k->lock);
    else if (status == RDL_ENOTHELD)
        rdl__errmsg_set(k->lock->c, "lock \"%.200s\" was not held",
                        k->lock->name);
    rdl__sync_done(&k->sync, status);
}

static void start_info(rdl__sync *s)
{
    lock_call *k = RDL_CONTAINER_OF(s, lock_call, sync);
    char owner[64];
    int rc;
    rdl__client_owner(k->lock->c, k->owner, owner);
    rc = send_info(k->lock, owner, k);
    if (rc != 0)
        rdl__sync_done(s, rc);
}

static void on_info(void *data, int status, const redisReply *r,
                    uint64_t written_ms)
{
    lock_call *k = data;
    (void)written_ms;
    if (rdl__outcome_unknown(status) && k->unknown++ < RDL__UNKNOWN_RETRIES) {
        start_info(&k->sync);
        return;
    }
    if (status == 0)
        status = k->lock->kind->parse_info(r, k->info);
    if (status == 0 && k->info->permits == 0) /* none stored: the object's */
        k->info->permits = k->lock->permits;
    rdl__sync_done(&k->sync, status);
}

/* ---- the operations ------------------------------------------------------ */

static int op_acquire(rdl_lock_t *lock, rdl_owner_t owner, int64_t wait_ms,
                      int64_t lease_ms)
{
    lock_call k;
    memset(&k, 0, sizeof(k));
    k.owner = owner;
    k.wait_ms = wait_ms;
    k.lease_ms = lease_ms;
    return call(lock, &k, start_acquire);
}

static int op_release(rdl_lock_t *lock, rdl_owner_t owner)
{
    lock_call k;
    memset(&k, 0, sizeof(k));
    k.owner = owner;
    return call(lock, &k, start_release);
}

static int op_force_release(rdl_lock_t *lock)
{
    lock_call k;
    memset(&k, 0, sizeof(k));
    return call(lock, &k, start_force);
}

static int op_info(rdl_lock_t *lock, rdl_owner_t owner, rdl_lock_info_t *out)
{
    lock_call k;
    memset(&k, 0, sizeof(k));
    memset(out, 0, sizeof(*out));
    k.owner = owner;
    k.info = out;
    return call(lock, &k, start_info);
}

static int op_acquire_async(rdl_req_t *req, rdl_lock_t *lock, rdl_owner_t owner,
                            int64_t wait_ms, int64_t lease_ms, rdl_req_cb cb)
{
    int rc = rdl__client_check_async(lock->c);
    if (rc != 0)
        return rc;
    return rdl__acquire_start(req, lock, owner, wait_ms, lease_ms, cb);
}

static int op_release_async(rdl_req_t *req, rdl_lock_t *lock, rdl_owner_t owner,
                            rdl_req_cb cb)
{
    int rc = rdl__client_check_async(lock->c);
    if (rc != 0)
        return rc;
    return rdl__release_start(req, lock, owner, cb);
}

const rdl__lock_ops rdl__scripted_ops = {
    .acquire = op_acquire,
    .release = op_release,
    .force_release = op_force_release,
    .info = op_info,
    .token = rdl__hold_token,
    .valid_ms = rdl__hold_valid_ms,
    .acquire_async = op_acquire_async,
    .release_async = op_release_async,
    .free = rdl__hold_abandon_all,
};
