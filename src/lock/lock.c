/* The public lock calls: construction, argument checks and the blocking
 * forms of the async operations (local holds are in hold.c). The kinds supply
 * scripts and parsers (rdl__lock_kind); waiting and retries live in acquire.c
 * and release.c. */
#include <string.h>

#include "lock_int.h"
#include "multilock/multi.h"

/* ---- construction ---------------------------------------------------------- */

static void free_strings(rdl_lock_t *lock)
{
    rdl__free(lock->name);
    rdl__free(lock->key_hold);
    rdl__free(lock->key_fence);
    rdl__free(lock->channel);
    rdl__free(lock->key_aux[0]);
    rdl__free(lock->key_aux[1]);
}

int rdl__lock_create(rdl_client_t *c, const char *name,
                     const rdl__lock_kind *kind, rdl_lock_t **out)
{
    rdl_lock_t *lock;
    int i, aux_failed = 0;
    if (out == NULL)
        return RDL_EINVAL;
    *out = NULL;
    if (c == NULL)
        return RDL_EINVAL;
    if (rdl__name_check(name) != 0) {
        if (name != NULL && name[0] == '}' &&
            strnlen(name, RDL__NAME_MAX + 1) <= RDL__NAME_MAX)
            rdl__errmsg_set(c, "a lock name that starts with '}' must hold a "
                               "hash tag, e.g. \"{x}}...\"");
        else
            rdl__errmsg_set(c, "a lock name is 1..%d bytes", RDL__NAME_MAX);
        return RDL_EINVAL;
    }
    if (c->state == RDL__CLIENT_CLOSING || c->state == RDL__CLIENT_CLOSED) {
        rdl__errmsg_set(c, "the client is closed");
        return RDL_ECLOSED;
    }
    lock = rdl__calloc(1, sizeof(*lock));
    if (lock == NULL)
        return RDL_ENOMEM;
    lock->kind = kind;
    lock->refs = 1;
    lock->c = c;
    lock->name = rdl__strdup(name);
    lock->key_hold = rdl__key(c->prefix, kind->name, name, NULL);
    lock->key_fence = rdl__key(c->prefix, kind->name, name, "fence");
    lock->channel = rdl__key(c->prefix, kind->name, name, "ch");
    for (i = 0; i < 2; i++)
        if (kind->aux_suffix[i] != NULL &&
            (lock->key_aux[i] = rdl__key(c->prefix, kind->name, name,
                                         kind->aux_suffix[i])) == NULL)
            aux_failed = 1;
    if (lock->name == NULL || lock->key_hold == NULL ||
        lock->key_fence == NULL || lock->channel == NULL || aux_failed ||
        rdl__lock_sync_init(lock) != 0) {
        free_strings(lock);
        rdl__free(lock);
        return RDL_ENOMEM;
    }
    *out = lock;
    return 0;
}

int rdl__lock_sync_init(rdl_lock_t *lock)
{
    if (uv_mutex_init(&lock->mu) != 0)
        return RDL_ENOMEM;
    if (uv_cond_init(&lock->lost_idle) != 0) {
        uv_mutex_destroy(&lock->mu);
        return RDL_ENOMEM;
    }
    return 0;
}

int rdl_lock_new(rdl_client_t *c, const char *name, rdl_lock_t **out)
{
    return rdl__lock_create(c, name, &rdl__reentrant_kind, out);
}

void rdl_lock_free(rdl_lock_t *lock)
{
    if (lock == NULL)
        return;
    if (lock->multi != NULL)
        rdl__multi_free(lock);
    __atomic_store_n(&lock->freed, 1, __ATOMIC_RELEASE);
    /* A lost callback already running finishes before the caller may free
     * what it uses; none starts after this (freed is set). */
    rdl__lock_lost_quiesce(lock);
    rdl__hold_abandon_all(lock);
    rdl__lock_unref(lock);
}

void rdl__lock_ref(rdl_lock_t *lock)
{
    __atomic_add_fetch(&lock->refs, 1, __ATOMIC_RELAXED);
}

void rdl__lock_unref(rdl_lock_t *lock)
{
    if (__atomic_sub_fetch(&lock->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    uv_cond_destroy(&lock->lost_idle);
    uv_mutex_destroy(&lock->mu);
    rdl__free(lock->holds);
    free_strings(lock);
    rdl__free(lock);
}

const char *rdl_lock_name(const rdl_lock_t *lock)
{
    return lock != NULL ? lock->name : NULL;
}

/* ---- argument checks ------------------------------------------------------- */

static int check_durations(rdl_lock_t *lock, int64_t wait_ms, int64_t lease_ms)
{
    if (wait_ms < 0 && wait_ms != RDL_WAIT_FOREVER) {
        rdl__errmsg_set(lock->c, "wait_ms %lld: use >= 0 or RDL_WAIT_FOREVER",
                        (long long)wait_ms);
        return RDL_EINVAL;
    }
    if ((lease_ms <= 0 && lease_ms != RDL_LEASE_AUTO) ||
        lease_ms > RDL_LEASE_MAX_MS) {
        rdl__errmsg_set(lock->c,
                        "lease_ms %lld: use 1..RDL_LEASE_MAX_MS (100 years) "
                        "or RDL_LEASE_AUTO",
                        (long long)lease_ms);
        return RDL_EINVAL;
    }
    return 0;
}

/* A composite spans clients, hence loops: its calls are blocking only. */
static int composite_async(rdl_lock_t *lock)
{
    rdl__errmsg_set(lock->c, "multilocks and redlocks have blocking calls "
                             "only");
    return RDL_ENOTSUP;
}

/* ---- async ----------------------------------------------------------------- */

int rdl_lock_acquire_async(rdl_req_t *req, rdl_lock_t *lock, rdl_owner_t owner,
                           int64_t wait_ms, int64_t lease_ms, rdl_req_cb cb)
{
    int rc;
    if (req == NULL || lock == NULL || cb == NULL || req->internal != NULL)
        return RDL_EINVAL;
    if (lock->multi != NULL)
        return composite_async(lock);
    if ((rc = rdl__client_check_async(lock->c)) != 0 ||
        (rc = check_durations(lock, wait_ms, lease_ms)) != 0)
        return rc;
    return rdl__acquire_start(req, lock, owner, wait_ms, lease_ms, cb);
}

int rdl_lock_release_async(rdl_req_t *req, rdl_lock_t *lock, rdl_owner_t owner,
                           rdl_req_cb cb)
{
    int rc;
    if (req == NULL || lock == NULL || cb == NULL || req->internal != NULL)
        return RDL_EINVAL;
    if (lock->multi != NULL)
        return composite_async(lock);
    if ((rc = rdl__client_check_async(lock->c)) != 0)
        return rc;
    return rdl__release_start(req, lock, owner, cb);
}

int rdl_req_cancel(rdl_req_t *req)
{
    rdl__op *op;
    if (req == NULL || req->internal == NULL)
        return RDL_EINVAL;
    op = req->internal;
    return op->cancel(op);
}

/* ---- blocking -------------------------------------------------------------- */

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

int rdl_lock_acquire_as(rdl_lock_t *lock, rdl_owner_t owner, int64_t wait_ms,
                        int64_t lease_ms)
{
    lock_call k;
    int rc;
    if (lock == NULL)
        return RDL_EINVAL;
    if ((rc = check_durations(lock, wait_ms, lease_ms)) != 0)
        return rc;
    if (lock->multi != NULL)
        return rdl__multi_acquire(lock, owner, wait_ms, lease_ms);
    memset(&k, 0, sizeof(k));
    k.owner = owner;
    k.wait_ms = wait_ms;
    k.lease_ms = lease_ms;
    return call(lock, &k, start_acquire);
}

int rdl_lock_acquire(rdl_lock_t *lock, int64_t wait_ms, int64_t lease_ms)
{
    return rdl_lock_acquire_as(lock, rdl_owner_self(), wait_ms, lease_ms);
}

int rdl_lock_release_as(rdl_lock_t *lock, rdl_owner_t owner)
{
    lock_call k;
    if (lock == NULL)
        return RDL_EINVAL;
    if (lock->multi != NULL)
        return rdl__multi_release(lock, owner);
    memset(&k, 0, sizeof(k));
    k.owner = owner;
    return call(lock, &k, start_release);
}

int rdl_lock_release(rdl_lock_t *lock)
{
    return rdl_lock_release_as(lock, rdl_owner_self());
}

/* Force release and info are single script calls; an unknown outcome is
 * retried (both are safe to repeat). */

static void on_force(void *data, int status, const redisReply *r);
static void on_info(void *data, int status, const redisReply *r);

static void start_force(rdl__sync *s)
{
    lock_call *k = RDL_CONTAINER_OF(s, lock_call, sync);
    int rc;
    if (k->reqid[0] == '\0') {
        rdl__client_reqid(k->lock->c, k->reqid);
        k->first_sent = rdl__now_ms();
    }
    rc = k->lock->kind->send_force(k->lock, k->reqid, on_force, k);
    if (rc != 0) /* a retry not sent leaves the first outcome unknown */
        rdl__sync_done(s, k->unknown > 0 ? RDL_ECONNLOST : rc);
}

static void on_force(void *data, int status, const redisReply *r)
{
    lock_call *k = data;
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

int rdl_lock_force_release(rdl_lock_t *lock)
{
    lock_call k;
    if (lock == NULL)
        return RDL_EINVAL;
    if (lock->multi != NULL)
        return rdl__multi_force_release(lock);
    memset(&k, 0, sizeof(k));
    return call(lock, &k, start_force);
}

static void start_info(rdl__sync *s)
{
    lock_call *k = RDL_CONTAINER_OF(s, lock_call, sync);
    char owner[64];
    int rc;
    rdl__client_owner(k->lock->c, k->owner, owner);
    rc = k->lock->kind->send_info(k->lock, owner, on_info, k);
    if (rc != 0)
        rdl__sync_done(s, rc);
}

static void on_info(void *data, int status, const redisReply *r)
{
    lock_call *k = data;
    if (rdl__outcome_unknown(status) && k->unknown++ < RDL__UNKNOWN_RETRIES) {
        start_info(&k->sync);
        return;
    }
    if (status == 0)
        status = k->lock->kind->parse_info(r, k->info);
    rdl__sync_done(&k->sync, status);
}

int rdl_lock_info(rdl_lock_t *lock, rdl_owner_t owner, rdl_lock_info_t *out)
{
    lock_call k;
    if (lock == NULL || out == NULL)
        return RDL_EINVAL;
    if (lock->multi != NULL)
        return rdl__multi_info(lock, owner, out);
    memset(&k, 0, sizeof(k));
    memset(out, 0, sizeof(*out));
    k.owner = owner;
    k.info = out;
    return call(lock, &k, start_info);
}
