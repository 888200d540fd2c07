/* Commands routed by slot (docs/design.md#redis-cluster). A command goes to the
 * master the slot table names for its slot and keeps its encoded bytes, so it
 * can be sent again:
 *
 *   MOVED        the table is fixed for that slot, a refresh is scheduled,
 *                and the command goes to the new owner;
 *   ASK          ASKING + the command on the node named, once; the table
 *                stays (the slot is only migrating);
 *   TRYAGAIN, CLUSTERDOWN, LOADING, a node that cannot be reached (the
 *                command was never written)
 *                retried with exponential backoff while the command
 *                timeout lasts, with a refresh where the table may be
 *                stale; the last failure is reported after that;
 *   connection lost or command timeout after the write
 *                reported at once (the outcome is unknown: the lock layer
 *                retries with the same request id) and a refresh follows.
 *
 * MOVED and ASK together are bounded by RDL__REDIRECT_BUDGET per command
 * (RDL_EREDIRECT), so two nodes that disagree cannot bounce a command
 * forever. Commands to a node whose connection is known to be down wait
 * in the delayed list instead of its queue, so a failover that moves the
 * slot elsewhere is picked up by their next try. */
#include <stdio.h>
#include <string.h>

#include "cluster_int.h"

#define RETRY_BASE_MS 10
#define RETRY_MAX_SHIFT 5 /* 10 ms doubling up to 320 ms */

struct rdl__rcmd {
    rdl__queue qnode; /* in cl->delayed while waiting */
    rdl__cluster *cl;
    unsigned slot;
    rdl__line line;
    rdl__node *ask;     /* ASK target for the next send */
    rdl__node *sent_to; /* node of the send in flight */
    int redirects;
    int retries;
    uint64_t deadline; /* retries end here (monotonic ms) */
    uint64_t due;      /* while delayed */
    rdl__reply_fn fn;
    void *data;
    size_t len;
    char buf[];
};

static void on_reply(void *data, int status, const redisReply *r,
                     uint64_t written_ms);

/* written_ms: when the answered command was written (0: it never left, or
 * a later send's answer says it did not run). */
static void complete(rdl__rcmd *rc, int status, const redisReply *r,
                     uint64_t written_ms)
{
    rc->fn(rc->data, status, r, written_ms);
    rdl__free(rc);
}

static void arm(rdl__cluster *cl)
{
    uint64_t due = UINT64_MAX, now = rdl__now_ms();
    rdl__queue *q;
    for (q = cl->delayed.next; q != &cl->delayed; q = q->next) {
        rdl__rcmd *rc = RDL_CONTAINER_OF(q, rdl__rcmd, qnode);
        due = rc->due < due ? rc->due : due;
    }
    if (due != UINT64_MAX)
        uv_timer_start(&cl->retry_timer, rdl__cluster_retry_timer,
                       due > now ? due - now : 0, 0);
}

/* The final code of a retried failure: internal codes never leave. */
static int final_status(rdl__rcmd *rc, int status)
{
    rdl__net *net = rc->cl->net;
    switch (status) {
    case RDL__ETRYAGAIN:
        rdl__errmsg_set(net->owner,
                        "slot %u is being migrated (TRYAGAIN) for longer "
                        "than the command timeout",
                        rc->slot);
        return RDL_EREDIRECT;
    case RDL__ELOADING:
        rdl__errmsg_set(net->owner,
                        "the master of slot %u is loading its dataset",
                        rc->slot);
        return RDL_ECONNREFUSED;
    case RDL_ECLUSTERDOWN:
        rdl__errmsg_set(net->owner, "the cluster is down (slot %u)", rc->slot);
        return status;
    case RDL_ECONNREFUSED:
        if (rc->sent_to != NULL)
            rdl__errmsg_set(net->owner,
                            "the master of slot %u (%s:%d) could not be "
                            "reached within the command timeout",
                            rc->slot, rc->sent_to->host, rc->sent_to->port);
        return status;
    default:
        return status;
    }
}

/* Waits with backoff before the next try, or gives up when the command
 * timeout would pass first. */
static void delay(rdl__rcmd *rc, int status)
{
    rdl__cluster *cl = rc->cl;
    uint64_t now = rdl__now_ms();
    int shift = rc->retries < RETRY_MAX_SHIFT ? rc->retries : RETRY_MAX_SHIFT;
    uint64_t wait = (uint64_t)RETRY_BASE_MS << shift;
    if (now + wait > rc->deadline) {
        complete(rc, final_status(rc, status), NULL, 0);
        return;
    }
    rc->retries++;
    rc->due = now + wait;
    rdl__queue_insert_tail(&cl->delayed, &rc->qnode);
    arm(cl);
}

/* Sends rc to its node. Returns 0, or RDL_ENOMEM / RDL_ECLOSED without
 * having called anything. */
static int submit(rdl__rcmd *rc)
{
    static const char *asking[1] = {"ASKING"};
    rdl__cluster *cl = rc->cl;
    rdl__node *n = rc->ask != NULL ? rc->ask : rdl__cluster_owner(cl, rc->slot);
    rdl__conn *cn;

    rc->sent_to = n;
    if (n->down && rc->ask == NULL &&
        rdl__now_ms() + RETRY_BASE_MS <= rc->deadline) {
        /* Queueing on a dead master would pin the command to it; wait
         * for the connection or a new owner instead. */
        rdl__cluster_refresh(cl);
        delay(rc, RDL_ECONNREFUSED);
        return 0;
    }
    cn = rdl__node_line(n, rc->line);
    if (cn == NULL)
        return RDL_ENOMEM;
    /* ASKING holds for the next command on the connection only; both
     * leave in one write, so nothing can come between them. */
    if (rc->ask != NULL &&
        rdl__conn_sendv(cn, 1, asking, NULL, NULL, NULL) != 0)
        return RDL_ENOMEM;
    return rdl__conn_send(cn, rc->buf, rc->len, on_reply, rc);
}

static void resubmit(rdl__rcmd *rc)
{
    int status = submit(rc);
    if (status != 0)
        complete(rc, status, NULL, 0);
}

/* MOVED or ASK: follow it within the budget. */
static void redirect(rdl__rcmd *rc, int status, const redisReply *r)
{
    rdl__cluster *cl = rc->cl;
    char host[256];
    unsigned slot;
    int port;
    rdl__node *n;

    if (!rdl__reply_redirect(r, &slot, host, sizeof(host), &port)) {
        rdl__errmsg_set(cl->net->owner, "malformed redirect from %s:%d: %.200s",
                        rc->sent_to->host, rc->sent_to->port, r->str);
        complete(rc, RDL_EPROTO, NULL, 0);
        return;
    }
    RDL__STAT_INC(cl->net, redirects);
    if (++rc->redirects > RDL__REDIRECT_BUDGET) {
        rdl__errmsg_set(cl->net->owner,
                        "slot %u: %d redirects followed; the last: %.200s",
                        rc->slot, RDL__REDIRECT_BUDGET, r->str);
        complete(rc, RDL_EREDIRECT, NULL, 0);
        return;
    }
    n = rdl__node_get(cl, host[0] != '\0' ? host : rc->sent_to->host, port);
    if (n == NULL) {
        complete(rc, RDL_ENOMEM, NULL, 0);
        return;
    }
    if (status == RDL__EMOVED) {
        cl->slots[slot] = n;
        rdl__cluster_refresh(cl);
    } else {
        rc->ask = n;
    }
    resubmit(rc);
}

static void on_reply(void *data, int status, const redisReply *r,
                     uint64_t written_ms)
{
    rdl__rcmd *rc = data;
    rdl__cluster *cl = rc->cl;
    (void)written_ms;

    rc->ask = NULL;
    if (cl->closing) {
        /* No more tries: what would have been retried ends here. */
        if (status == RDL__EMOVED || status == RDL__EASK ||
            status == RDL__ETRYAGAIN || status == RDL__ELOADING)
            status = RDL_ECLOSED;
        complete(rc, status, r, written_ms);
        return;
    }
    switch (status) {
    case RDL__EASK:
        /* A durable write must be answered by the slot's master, whose
         * WAIT then covers it: wait for the migration to end instead. */
        if (rc->line == RDL__LINE_DURABLE) {
            delay(rc, RDL__ETRYAGAIN);
            return;
        }
        redirect(rc, status, r);
        return;
    case RDL__EMOVED:
        redirect(rc, status, r);
        return;
    case RDL_ECLUSTERDOWN:
    case RDL__ELOADING:
    case RDL_ECONNREFUSED:
        rdl__cluster_refresh(cl);
        delay(rc, status);
        return;
    case RDL__ETRYAGAIN:
        delay(rc, status);
        return;
    case RDL_ECONNLOST:
    case RDL_ECMDTIMEOUT:
        rdl__cluster_refresh(cl); /* the node may be gone for good */
        break;
    default:
        break;
    }
    complete(rc, status, r, written_ms);
}

void rdl__cluster_retry_timer(uv_timer_t *t)
{
    rdl__cluster *cl = t->data;
    uint64_t now = rdl__now_ms();
    rdl__queue due, *q, *next;

    rdl__queue_init(&due);
    for (q = cl->delayed.next; q != &cl->delayed; q = next) {
        next = q->next;
        if (RDL_CONTAINER_OF(q, rdl__rcmd, qnode)->due <= now) {
            rdl__queue_remove(q);
            rdl__queue_insert_tail(&due, q);
        }
    }
    while (!rdl__queue_empty(&due)) {
        rdl__rcmd *rc =
            RDL_CONTAINER_OF(rdl__queue_head(&due), rdl__rcmd, qnode);
        rdl__queue_remove(&rc->qnode);
        resubmit(rc);
    }
    arm(cl);
}

int rdl__cluster_send(rdl__cluster *cl, unsigned slot, rdl__line line,
                      const char *cmd, size_t len, rdl__reply_fn fn, void *data)
{
    rdl__rcmd *rc;
    int status;
    if (cl->closing)
        return RDL_ECLOSED;
    rc = rdl__malloc(sizeof(*rc) + len);
    if (rc == NULL)
        return RDL_ENOMEM;
    memset(rc, 0, sizeof(*rc));
    rdl__queue_init(&rc->qnode);
    rc->cl = cl;
    rc->slot = slot & (RDL__SLOTS - 1);
    rc->line = line;
    rc->deadline = rdl__now_ms() + (uint64_t)cl->net->command_ms;
    rc->fn = fn;
    rc->data = data;
    rc->len = len;
    memcpy(rc->buf, cmd, len);
    status = submit(rc);
    if (status != 0)
        rdl__free(rc);
    return status;
}

void rdl__cluster_fail_delayed(rdl__cluster *cl)
{
    uv_timer_stop(&cl->retry_timer);
    while (!rdl__queue_empty(&cl->delayed)) {
        rdl__rcmd *rc =
            RDL_CONTAINER_OF(rdl__queue_head(&cl->delayed), rdl__rcmd, qnode);
        rdl__queue_remove(&rc->qnode);
        complete(rc, RDL_ECLOSED, NULL, 0);
    }
}
