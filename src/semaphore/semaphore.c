/* The semaphore: a lock kind whose holders each take permits of a total
 * stored in Redis (scripts/sem_*.lua, scripts/lib/sem.lua). One hash per
 * name holds the total, the permits in use, each holder's permits, token
 * and last request, the waiter registry and the applied set; a sorted set
 * beside it holds each holder's lease expiry, so holders whose lease
 * ended are found in O(log n). Waiting is the plain lock's: a try that
 * finds no permit registers the waiter, and each permit freed names the
 * first registered one in a message (scripts/lib/waiters.lua). */
#include <stdio.h>
#include <string.h>

#include "lock/lock_int.h"

/* {..., used, waiters, permits}: holders counts the permits in use;
 * permits is 0 if no total is stored (the object's is reported). */
static int parse_info(const redisReply *r, rdl_lock_info_t *out)
{
    long long more[3];
    int rc = rdl__parse_info(r, 3, more, out);
    if (rc == 0) {
        out->holders = (uint32_t)more[0];
        out->holder_count = 0;
        out->waiters = (uint32_t)more[1];
        out->permits = (uint32_t)more[2];
    }
    return rc;
}

static const rdl__kind_queue registry = {
    .leave = {RDL__SCRIPT_SEM_LEAVE, 1, {RDL__KEY_HOLD}},
    .targeted = 1,
    .own_channel = 1,
};

static const rdl__lock_kind sem_kind = {
    .name = RDL__KIND_SEM,
    .label = "semaphore",
    .acquire = {RDL__SCRIPT_SEM_ACQUIRE,
                2,
                {RDL__KEY_HOLD, RDL__KEY_AUX0},
                1,
                {RDL__ARG_PERMITS}},
    .parse_try = rdl__parse_try, /* position: 1 once registered */
    .release = {RDL__SCRIPT_SEM_RELEASE, 2, {RDL__KEY_HOLD, RDL__KEY_AUX0}},
    .force = {RDL__SCRIPT_SEM_FORCE_RELEASE, 2, {RDL__KEY_HOLD, RDL__KEY_AUX0}},
    .info = {RDL__SCRIPT_SEM_INFO, 2, {RDL__KEY_HOLD, RDL__KEY_AUX0}},
    .parse_release = rdl__parse_release,
    .parse_force = rdl__parse_force,
    .parse_info = parse_info,
    .renew_script = RDL__SCRIPT_SEM_RENEW,
    .renew_aux0 = 1,
    .aux_suffix = {"x", NULL},
    .queue = &registry,
};

static int check_permits(rdl_client_t *c, uint32_t permits)
{
    if (permits >= 1 && permits <= RDL_SEMAPHORE_MAX_PERMITS)
        return 0;
    if (c != NULL)
        rdl__errmsg_set(c, "a semaphore needs 1..%u permits, not %u",
                        RDL_SEMAPHORE_MAX_PERMITS, (unsigned)permits);
    return RDL_EINVAL;
}

int rdl_semaphore_new(rdl_client_t *c, const char *name, uint32_t permits,
                      rdl_lock_t **out)
{
    int rc;
    if (out == NULL)
        return RDL_EINVAL;
    *out = NULL;
    if ((rc = check_permits(c, permits)) != 0)
        return rc;
    if ((rc = rdl__lock_create(c, name, &sem_kind, out)) != 0)
        return rc;
    (*out)->permits = permits;
    return 0;
}

/* ---- rdl_semaphore_set_permits: one script call, blocking ------------ */

typedef struct set_call {
    rdl__sync sync;
    rdl_lock_t *lock;
    uint32_t permits;
    char reqid[64]; /* "" until the first send */
    uint64_t first_sent;
    int unknown;        /* unknown outcomes retried so far */
    int unknown_status; /* the last of them */
} set_call;

static void on_set(void *data, int status, const redisReply *r,
                   uint64_t written_ms);

/* ARGV: total, publish command, channel, retention, request id, applied-set
 * window (scripts/sem_set.lua). */
static void start_set(rdl__sync *s)
{
    set_call *k = RDL_CONTAINER_OF(s, set_call, sync);
    rdl_lock_t *lock = k->lock;
    char total[16], keep[24], window[24];
    const char *keys[2] = {lock->key_hold, lock->key_aux[0]};
    const char *pub = rdl__client_publish_cmd(lock->c);
    const char *args[6] = {total, pub, lock->channel, keep, k->reqid, window};
    int rc;
    if (k->reqid[0] == '\0') {
        rdl__client_reqid(lock->c, k->reqid);
        k->first_sent = rdl__now_ms();
    }
    snprintf(total, sizeof(total), "%u", (unsigned)k->permits);
    snprintf(keep, sizeof(keep), "%d", RDL__FENCE_RETENTION_MS);
    snprintf(window, sizeof(window), "%lld",
             (long long)rdl__done_window_ms(lock->c));
    rc = rdl__script_run(lock->c, RDL__SCRIPT_SEM_SET, 2, keys, 6, args, on_set,
                         k);
    if (rc != 0) /* a retry not sent leaves the first outcome unknown */
        rdl__sync_done(s, k->unknown > 0 ? k->unknown_status : rc);
}

static void on_set(void *data, int status, const redisReply *r,
                   uint64_t written_ms)
{
    set_call *k = data;
    (void)written_ms;
    if (rdl__outcome_unknown(status) && k->unknown < RDL__UNKNOWN_RETRIES &&
        rdl__retry_in_window(k->lock->c, k->first_sent)) {
        /* The same request id: a set that was applied is not applied
         * again, so a retry never undoes another client's later set. */
        k->unknown++;
        k->unknown_status = status;
        start_set(&k->sync);
        return;
    }
    /* Once an outcome was unknown, only an answer settles it: a retry
     * that was never written (or cut short by a close) tells nothing. */
    if (k->unknown > 0 && (status == RDL_ECONNREFUSED || status == RDL_ECLOSED))
        status = k->unknown_status;
    if (status == 0 && r->type != REDIS_REPLY_INTEGER)
        status = RDL_EPROTO;
    if (status == 0)
        k->lock->permits = k->permits;
    rdl__sync_done(&k->sync, status);
}

int rdl_semaphore_set_permits(rdl_lock_t *sem, uint32_t permits)
{
    set_call k;
    int rc;
    if (sem == NULL)
        return RDL_EINVAL;
    if (sem->kind != &sem_kind) {
        rdl__errmsg_set(sem->c, "lock \"%.200s\" is not a semaphore",
                        sem->name);
        return RDL_EINVAL;
    }
    if ((rc = check_permits(sem->c, permits)) != 0)
        return rc;
    memset(&k, 0, sizeof(k));
    k.lock = sem;
    k.permits = permits;
    k.sync.start = start_set;
    return rdl__sync_call(sem->c, &k.sync);
}
