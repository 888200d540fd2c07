/* Waiting in Redis: the registry of the plain lock and the semaphore
 * (rdl__registry: a registration lapses by itself unless its waiter tries
 * again), and renewed queues (the fair lock, waiting writers): while an
 * acquisition waits in a lock's queue, its entry there expires unless
 * renewed, so a waiter that dies drops out of the queue within one queue
 * lease, wherever it stands. The watchdog renews the entries of every
 * waiter of the client in batches, as it renews holds. A waiter that
 * gives up takes itself out at once (the kind's leave script). */
#include <string.h>

#include "lock_int.h"

const rdl__kind_queue rdl__registry = {
    .targeted = 1,
    .own_channel = 1,
};

struct rdl__qentry {
    rdl__wd_hold wd;
    rdl_lock_t *lock;
    rdl__acquire *op; /* NULL once the acquisition has ended */
    char member[64];
};

static void on_entry_lost(rdl__wd_hold *wh, int reason)
{
    struct rdl__qentry *q = RDL_CONTAINER_OF(wh, struct rdl__qentry, wd);
    (void)reason;
    /* The entry is gone from the queue (purged after renewals failed for a
     * whole queue lease): the next try queues the waiter again, at the
     * back, and registers a new entry. The two forget each other: the
     * acquisition may end (and be freed) before the watchdog lets go of
     * this entry (on_entry_done), which must then not reach it. */
    if (q->op != NULL) {
        q->op->qentry = NULL;
        q->op = NULL;
    }
}

static void on_entry_done(rdl__wd_hold *wh)
{
    struct rdl__qentry *q = RDL_CONTAINER_OF(wh, struct rdl__qentry, wd);
    rdl_lock_t *lock = q->lock;
    /* The watchdog may let go first (the client is closing and aborts it
     * before the acquisitions): the waiter must not touch q afterwards. */
    if (q->op != NULL)
        q->op->qentry = NULL;
    rdl__free(q);
    rdl__lock_unref(lock);
}

void rdl__waitq_queued(rdl__acquire *op)
{
    rdl_lock_t *lock = op->lock;
    struct rdl__qentry *q;

    op->queued = 1;
    if (op->qentry != NULL || !lock->kind->queue->renewed)
        return;
    q = rdl__calloc(1, sizeof(*q));
    if (q == NULL)
        return; /* unrenewed, the entry drops out; the next try re-queues */
    q->lock = lock;
    q->op = op;
    memcpy(q->member, op->owner_str, sizeof(q->member));
    q->wd.script = lock->kind->queue->renew_script;
    q->wd.lease_ms = rdl__queue_lease_ms(op->wait.c);
    q->wd.key = rdl__lock_key(lock, lock->kind->queue->entry_key);
    q->wd.member = q->member;
    q->wd.lost = on_entry_lost;
    q->wd.done = on_entry_done;
    rdl__lock_ref(lock);
    if (rdl__wd_add(op->wait.c, &q->wd, op->sent_at) != 0) {
        on_entry_done(&q->wd);
        return;
    }
    op->qentry = q;
}

/* A leave in flight: sent again while its outcome is unknown (leaving is
 * idempotent: a retry finds nothing of the owner left), then `done`. */
typedef struct leave_call {
    rdl_lock_t *lock; /* a reference */
    char owner[RDL__OWNER_STR_SIZE];
    void (*done)(void *data, int status);
    void *data;
    int unknown;
} leave_call;

static int send_leave(leave_call *k);

static void left(leave_call *k, int status)
{
    k->done(k->data, status);
    rdl__lock_unref(k->lock);
    rdl__free(k);
}

static void on_left(void *data, int status, const redisReply *r,
                    uint64_t written_ms)
{
    leave_call *k = data;
    (void)written_ms;
    (void)r;
    if (rdl__outcome_unknown(status) && k->unknown < RDL__UNKNOWN_RETRIES) {
        k->unknown++;
        if (send_leave(k) == 0)
            return;
    }
    /* Answered, or given up: an entry left expires by its queue lease. */
    left(k, status);
}

/* Runs the kind's leave script: ARGV = owner, publish command, channel.
 * On the tries' line, behind the last try: a leave that a later try of
 * the same owner overtook would take that try's entry out. */
static int send_leave(leave_call *k)
{
    rdl_lock_t *lock = k->lock;
    const char *keys[RDL__KIND_KEYS_MAX];
    const char *args[3] = {k->owner, rdl__client_publish_cmd(lock->c),
                           lock->channel};
    int nkeys = rdl__kind_keys(lock, keys);
    return rdl__script_run_line(lock->c, rdl__client_acquire_line(lock->c),
                                lock->kind->scripts.leave, nkeys, keys, 3, args,
                                on_left, k);
}

void rdl__waitq_stop(rdl__acquire *op)
{
    if (op->qentry != NULL) {
        op->qentry->op = NULL;
        rdl__wd_remove(&op->qentry->wd);
        op->qentry = NULL;
    }
}

int rdl__waitq_leave(rdl__acquire *op, void (*done)(void *data, int status),
                     void *data)
{
    rdl_lock_t *lock = op->lock;
    leave_call *k;
    if (!op->queued || lock->kind->queue == NULL)
        return 0;
    op->queued = 0;
    k = rdl__calloc(1, sizeof(*k));
    if (k == NULL)
        return 0; /* the entry expires by its queue lease */
    k->lock = lock;
    memcpy(k->owner, op->owner_str, sizeof(k->owner));
    k->done = done;
    k->data = data;
    rdl__lock_ref(lock);
    if (send_leave(k) != 0) {
        rdl__lock_unref(lock);
        rdl__free(k);
        return 0;
    }
    return 1;
}
