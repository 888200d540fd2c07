/* A set of plain locks of one client and one hash tag (hence one cluster
 * slot) taken in one script call, atomically (scripts/
 * lock_acquire_multi.lua): the MultiLock's one-call path, offered through
 * the extension interface (lock_ext.h). It lives here because it runs the
 * reentrant kind's script and records holds, which only this layer may. */
#include <stdio.h>
#include <string.h>

#include "lock_int.h"

typedef struct set_try {
    rdl__sync sync;
    rdl_lock_t *const *locks;
    size_t n;
    rdl_owner_t owner;
    int64_t lease_ms;
    int auto_lease;
    char owner_str[RDL__OWNER_STR_SIZE];
    char reqid[64];
    uint64_t sent_at;
    int unknown;
    size_t busy; /* reply: 1-based index of the lock held elsewhere */
} set_try;

int rdl__lock_set_eligible(rdl_lock_t *const *locks, size_t n)
{
    const char *tag0 = NULL;
    size_t len0 = 0, i;
    if (n == 0 || n > RDL__LOCK_SET_MAX)
        return 0;
    /* With durability each part's grant is confirmed on its own (the
     * acquisition path does that); the one-call path does not. */
    if (locks[0]->c->net.durable_replicas != 0)
        return 0;
    for (i = 0; i < n; i++) {
        const rdl_lock_t *p = locks[i];
        size_t off, len;
        if (p->kind != &rdl__reentrant_kind || p->c != locks[0]->c ||
            !rdl__hash_tag(p->key_hold, strlen(p->key_hold), &off, &len))
            return 0;
        if (i == 0) {
            tag0 = p->key_hold + off;
            len0 = len;
        } else if (len != len0 || memcmp(p->key_hold + off, tag0, len) != 0) {
            return 0;
        }
    }
    return 1;
}

static void send_set_try(rdl__sync *s);

static void on_set_try(void *data, int status, const redisReply *r,
                       uint64_t written_ms)
{
    set_try *t = data;
    size_t i;
    (void)written_ms;

    if (rdl__outcome_unknown(status) && t->unknown++ < RDL__UNKNOWN_RETRIES) {
        send_set_try(&t->sync); /* same request id: applied once */
        return;
    }
    if (status == 0)
        status = rdl__parse_try_set(r, t->n, &t->busy);
    /* Granted: record every hold (and register auto ones with the
     * watchdog) before the caller hears of it. */
    for (i = 0; status == 0 && i < t->n; i++) {
        uint64_t token;
        uint32_t count;
        rdl__try_set_hold(r, i, &token, &count);
        status = rdl__hold_granted(t->locks[i], t->owner, token, count,
                                   t->sent_at, t->lease_ms, t->auto_lease);
    }
    rdl__sync_done(&t->sync, status);
}

static void send_set_try(rdl__sync *s)
{
    set_try *t = RDL_CONTAINER_OF(s, set_try, sync);
    rdl_client_t *c = t->locks[0]->c;
    const char *keys[RDL__LOCK_SET_MAX];
    const char *args[7 + RDL__LOCK_SET_MAX];
    char lease[24], keep[24];
    size_t i;
    int rc;

    for (i = 0; i < t->n; i++) {
        keys[i] = t->locks[i]->key_hold;
        args[7 + i] = t->locks[i]->channel;
    }
    snprintf(lease, sizeof(lease), "%lld", (long long)t->lease_ms);
    snprintf(keep, sizeof(keep), "%d", RDL__FENCE_RETENTION_MS);
    /* The acquire contract (lock_int.h), for every lock: a one-shot try,
     * the first lock's channel; then each lock's channel. */
    args[0] = t->owner_str;
    args[1] = lease;
    args[2] = t->reqid;
    args[3] = "";
    args[4] = rdl__client_publish_cmd(c);
    args[5] = t->locks[0]->channel;
    args[6] = keep;
    if (t->unknown == 0)
        t->sent_at = rdl__now_ms();
    rc = rdl__script_run(c, RDL__SCRIPT_LOCK_ACQUIRE_MULTI, (int)t->n, keys,
                         7 + (int)t->n, args, on_set_try, t);
    if (rc != 0) /* a retry not sent leaves the first outcome unknown */
        rdl__sync_done(s, t->unknown > 0 ? RDL_ECONNLOST : rc);
}

static void start_set_try(rdl__sync *s)
{
    set_try *t = RDL_CONTAINER_OF(s, set_try, sync);
    rdl_client_t *c = t->locks[0]->c;
    rdl__client_owner(c, t->owner, t->owner_str);
    rdl__client_reqid(c, t->reqid);
    send_set_try(s);
}

int rdl__lock_set_acquire(rdl_lock_t *const *locks, size_t n, rdl_owner_t owner,
                          int64_t lease_ms, size_t *busy)
{
    set_try t;
    int rc;
    if (!rdl__lock_set_eligible(locks, n))
        return RDL_EINVAL;
    memset(&t, 0, sizeof(t));
    t.locks = locks;
    t.n = n;
    t.owner = owner;
    t.auto_lease = lease_ms == RDL_LEASE_AUTO;
    t.lease_ms = t.auto_lease ? locks[0]->c->watchdog_ms : lease_ms;
    t.sync.start = start_set_try;
    rc = rdl__sync_call(locks[0]->c, &t.sync);
    if (rc == RDL_EBUSY)
        *busy = t.busy - 1;
    return rc;
}
