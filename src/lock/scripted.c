/* The operations table shared by the kinds that run scripts (plain, fair,
 * read-write, semaphore) and the calls built from their tables: the
 * blocking forms of the async operations, a try (rdl__kind_send_try), and
 * force release, info and other changes applied once (rdl__lock_change)
 * as single script calls. The kinds supply data only (rdl__lock_kind);
 * waiting and retries live in acquire.c and release.c, what this client
 * knows of its holds in hold.c. */
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
    /* A change (rdl__lock_change): its script, its own arguments, what
     * reads its answer; its request id ("" until the first send), when
     * it was first sent, the unknown outcomes retried so far and the last
     * of them. */
    int script;
    int nextra;
    const char *const *extra;
    int (*done)(rdl_lock_t *lock, const redisReply *r, void *data);
    void *data;
    char reqid[64];
    uint64_t first_sent;
    int unknown;
    int unknown_status;
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

/* A change and info are single script calls; an unknown outcome is
 * retried (both are safe to repeat). */

static void on_change(void *data, int status, const redisReply *r,
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

int rdl__kind_keys(const rdl_lock_t *lock, const char **keys)
{
    const unsigned char *more = lock->kind->keys;
    int n = 0;
    keys[n++] = lock->key_hold;
    for (; n < RDL__KIND_KEYS_MAX && more[n - 1] != RDL__KEY_HOLD; n++)
        keys[n] = rdl__lock_key(lock, more[n - 1]);
    return n;
}

/* The kind's own arguments of a try (rdl__lock_kind.args) into args;
 * numbers are written into buf. Returns how many. */
static int kind_args(const rdl_lock_t *lock, const char **args,
                     char buf[RDL__KIND_ARGS_MAX][24])
{
    int n;
    for (n = 0; n < RDL__KIND_ARGS_MAX; n++) {
        switch (lock->kind->args[n]) {
        case RDL__ARG_NONE:
            return n;
        case RDL__ARG_SIDE:
            args[n] = lock->kind->side;
            break;
        case RDL__ARG_PERMITS:
            snprintf(buf[n], sizeof(buf[n]), "%u", (unsigned)lock->permits);
            args[n] = buf[n];
            break;
        default: /* RDL__ARG_WRITERS_FIRST */
            args[n] = (lock->flags & RDL_RW_READERS_FIRST) ? "0" : "1";
            break;
        }
    }
    return n;
}

/* The acquire contract (lock_int.h): owner, lease, request id, "" or how
 * long a waiter's place lives, publish command, channel, retention, then
 * the kind's own arguments. */
int rdl__kind_send_try(rdl__acquire *op, rdl__reply_fn fn)
{
    rdl_lock_t *lock = op->lock;
    const char *keys[RDL__KIND_KEYS_MAX], *args[7 + RDL__KIND_ARGS_MAX];
    char reqid[64], lease[24], wait[24], keep[24];
    char extra[RDL__KIND_ARGS_MAX][24];
    int nkeys = rdl__kind_keys(lock, keys);
    int nargs = 7 + kind_args(lock, args + 7, extra);
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
                                lock->kind->scripts.acquire, nkeys, keys, nargs,
                                args, fn, op);
}

/* Runs the kind's info script: ARGV = owner, then the side if any. */
static int send_info(rdl_lock_t *lock, const char *owner, void *data)
{
    const char *keys[RDL__KIND_KEYS_MAX], *args[2] = {owner, lock->kind->side};
    int nkeys = rdl__kind_keys(lock, keys);
    return rdl__script_run(lock->c, lock->kind->scripts.info, nkeys, keys,
                           lock->kind->side != NULL ? 2 : 1, args, on_info,
                           data);
}

/* ARGV: publish command, channel, request id, applied-set window (the
 * force release's, lock_int.h), then the change's own. */
static void start_change(rdl__sync *s)
{
    lock_call *k = RDL_CONTAINER_OF(s, lock_call, sync);
    rdl_lock_t *lock = k->lock;
    const char *keys[RDL__KIND_KEYS_MAX], *args[4 + RDL__CHANGE_ARGS_MAX];
    char window[24];
    int nkeys = rdl__kind_keys(lock, keys), i, rc;
    if (k->reqid[0] == '\0') {
        rdl__client_reqid(lock->c, k->reqid);
        k->first_sent = rdl__now_ms();
    }
    snprintf(window, sizeof(window), "%lld",
             (long long)rdl__done_window_ms(lock->c));
    args[0] = rdl__client_publish_cmd(lock->c);
    args[1] = lock->channel;
    args[2] = k->reqid;
    args[3] = window;
    for (i = 0; i < k->nextra; i++)
        args[4 + i] = k->extra[i];
    rc = rdl__script_run(lock->c, k->script, nkeys, keys, 4 + k->nextra, args,
                         on_change, k);
    if (rc != 0) /* a retry not sent leaves the first outcome unknown */
        rdl__sync_done(s, k->unknown > 0 ? k->unknown_status : rc);
}

static void on_change(void *data, int status, const redisReply *r,
                      uint64_t written_ms)
{
    lock_call *k = data;
    (void)written_ms;
    /* The same request id: the script answers a retry of an applied
     * change as it answered the first, and changes nothing more (a force
     * release frees no later hold, a total set undoes no later set). */
    if (rdl__outcome_unknown(status) && k->unknown < RDL__UNKNOWN_RETRIES &&
        rdl__retry_in_window(k->lock->c, k->first_sent)) {
        k->unknown++;
        k->unknown_status = status;
        start_change(&k->sync);
        return;
    }
    /* Once an outcome was unknown, only an answer settles it: a retry
     * that was never written (or cut short by a close) tells nothing. */
    if (k->unknown > 0 && (status == RDL_ECONNREFUSED || status == RDL_ECLOSED))
        status = k->unknown_status;
    if (status == 0)
        status = k->done(k->lock, r, k->data);
    rdl__sync_done(&k->sync, status);
}

int rdl__lock_change(
    rdl_lock_t *lock, int script, int nextra, const char *const *extra,
    int (*done)(rdl_lock_t *lock, const redisReply *r, void *data), void *data)
{
    lock_call k;
    memset(&k, 0, sizeof(k));
    k.script = script;
    k.nextra = nextra;
    k.extra = extra;
    k.done = done;
    k.data = data;
    return call(lock, &k, start_change);
}

/* A force release's answer: the holds are gone, or there were none. */
static int forced(rdl_lock_t *lock, const redisReply *r, void *data)
{
    int status = rdl__parse_force(r);
    char shape[96];
    (void)data;
    if (status == RDL_EPROTO)
        rdl__errmsg_set(lock->c,
                        "lock \"%.200s\": the server answered a force "
                        "release with %s, which no script returns",
                        lock->name, rdl__reply_shape(r, shape, sizeof(shape)));
    if (status == 0)
        rdl__hold_clear(lock);
    else if (status == RDL_ENOTHELD)
        rdl__errmsg_set(lock->c, "lock \"%.200s\" was not held", lock->name);
    return status;
}

static void start_info(rdl__sync *s)
{
    lock_call *k = RDL_CONTAINER_OF(s, lock_call, sync);
    char owner[RDL__OWNER_STR_SIZE];
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
    char shape[96];
    (void)written_ms;
    if (rdl__outcome_unknown(status) && k->unknown++ < RDL__UNKNOWN_RETRIES) {
        start_info(&k->sync);
        return;
    }
    if (status == 0 && (status = rdl__parse_info(r, k->info)) != 0)
        rdl__errmsg_set(k->lock->c,
                        "lock \"%.200s\": the server answered an info "
                        "call with %s, which no script returns",
                        k->lock->name,
                        rdl__reply_shape(r, shape, sizeof(shape)));
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
    return rdl__lock_change(lock, lock->kind->scripts.force, 0, NULL, forced,
                            NULL);
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
