/* Commands to a master found through Sentinel (docs/design.md#sentinel), and
 * the router's ops. Every key is in slot 0 and goes to the master's command
 * connection. A command keeps its encoded bytes, so that it can be sent again:
 *
 *   no master confirmed yet (first connect, or a switch in progress)
 *                the command waits in `parked` until ROLE on the new
 *                address says "master", or fails with RDL_ECONNREFUSED
 *                (never written) when the command timeout passes;
 *   READONLY     the server it reached is a replica now (a failover the
 *                client has not followed yet): it did not run, so it is
 *                parked and a discovery round starts;
 *   anything else reaches the caller as the connection reports it (a lost
 *                connection's outcome is unknown: the lock layer retries
 *                with the same request id). */
#include <string.h>

#include "sentinel.h"
#include "sentinel_int.h"

typedef struct scmd {
    rdl__queue qnode; /* in s->parked while waiting */
    rdl__sentinel *s;
    rdl__line line;
    uint64_t deadline; /* monotonic ms */
    rdl__reply_fn fn;
    void *data;
    size_t len;
    char buf[];
} scmd;

static void on_reply(void *data, int status, const redisReply *r,
                     uint64_t written_ms);

/* written_ms: when the answered command was written (0: it never left). */
static void complete(scmd *k, int status, const redisReply *r,
                     uint64_t written_ms)
{
    k->fn(k->data, status, r, written_ms);
    rdl__free(k);
}

static void arm_park(rdl__sentinel *s)
{
    uint64_t now = rdl__now_ms(), due;
    if (rdl__queue_empty(&s->parked)) {
        uv_timer_stop(&s->park_timer);
        return;
    }
    /* Parked in order, with the same timeout: the head is due first. */
    due = RDL_CONTAINER_OF(rdl__queue_head(&s->parked), scmd, qnode)->deadline;
    uv_timer_start(&s->park_timer, rdl__sentinel_park_timer,
                   due > now ? due - now : 0, 0);
}

static void park(scmd *k)
{
    rdl__sentinel *s = k->s;
    rdl__queue *q;
    /* Kept in deadline order (a READONLY one may be older than others). */
    for (q = s->parked.prev; q != &s->parked; q = q->prev)
        if (RDL_CONTAINER_OF(q, scmd, qnode)->deadline <= k->deadline)
            break;
    rdl__queue_insert_tail(q->next, &k->qnode);
    arm_park(s);
}

rdl__conn *rdl__sentinel_line(rdl__sentinel *s, rdl__line line)
{
    if (line == RDL__LINE_MAIN)
        return s->cmd;
    if (s->dur == NULL && !s->closing) {
        s->dur = rdl__conn_new(
            s->net, RDL__CONN_CMD, s->host != NULL ? s->host : s->net->url.host,
            s->host != NULL ? s->port : 0, &rdl__sentinel_master_events, s);
        /* The sentinels' count of the current master's replicas, noted
         * once: later answers are noted as they come (discover.c). Noting
         * it at every use would keep a count from before a switch alive. */
        if (s->dur != NULL && s->replicas_up >= 0)
            rdl__durable_note_replicas(s->dur, s->replicas_up);
    }
    return s->dur;
}

static int submit(scmd *k)
{
    rdl__conn *cn = rdl__sentinel_line(k->s, k->line);
    if (cn == NULL)
        return RDL_ENOMEM;
    return rdl__conn_send(cn, k->buf, k->len, on_reply, k);
}

static void on_reply(void *data, int status, const redisReply *r,
                     uint64_t written_ms)
{
    scmd *k = data;
    rdl__sentinel *s = k->s;
    (void)written_ms;
    if (status == RDL_EREADONLY && !s->closing && rdl__now_ms() < k->deadline) {
        s->confirmed = 0;
        park(k);
        rdl__sentinel_discover(s);
        return;
    }
    complete(k, status, r, written_ms);
}

void rdl__sentinel_park_timer(uv_timer_t *t)
{
    rdl__sentinel *s = t->data;
    uint64_t now = rdl__now_ms();
    while (!rdl__queue_empty(&s->parked)) {
        scmd *k = RDL_CONTAINER_OF(rdl__queue_head(&s->parked), scmd, qnode);
        if (k->deadline > now)
            break;
        rdl__queue_remove(&k->qnode);
        rdl__errmsg_set(s->net->owner,
                        "no master \"%s\" confirmed within the command "
                        "timeout (%lld ms)",
                        s->master, (long long)s->net->command_ms);
        complete(k, RDL_ECONNREFUSED, NULL, 0);
    }
    arm_park(s);
}

void rdl__sentinel_flush(rdl__sentinel *s)
{
    uv_timer_stop(&s->park_timer);
    while (!rdl__queue_empty(&s->parked) && s->confirmed) {
        scmd *k = RDL_CONTAINER_OF(rdl__queue_head(&s->parked), scmd, qnode);
        int status;
        rdl__queue_remove(&k->qnode);
        if ((status = submit(k)) != 0)
            complete(k, status, NULL, 0);
    }
    arm_park(s);
}

void rdl__sentinel_fail_parked(rdl__sentinel *s, int status)
{
    uv_timer_stop(&s->park_timer);
    while (!rdl__queue_empty(&s->parked)) {
        scmd *k = RDL_CONTAINER_OF(rdl__queue_head(&s->parked), scmd, qnode);
        rdl__queue_remove(&k->qnode);
        complete(k, status, NULL, 0);
    }
}

int rdl__sentinel_send(rdl__sentinel *s, rdl__line line, const char *cmd,
                       size_t len, rdl__reply_fn fn, void *data)
{
    scmd *k;
    int status = 0;
    if (s->closing)
        return RDL_ECLOSED;
    k = rdl__malloc(sizeof(*k) + len);
    if (k == NULL)
        return RDL_ENOMEM;
    memset(k, 0, sizeof(*k));
    rdl__queue_init(&k->qnode);
    k->s = s;
    k->line = line;
    k->deadline = rdl__now_ms() + (uint64_t)s->net->command_ms;
    k->fn = fn;
    k->data = data;
    k->len = len;
    memcpy(k->buf, cmd, len);
    if (s->confirmed) {
        status = submit(k);
        if (status != 0)
            rdl__free(k);
    } else {
        park(k);
        rdl__sentinel_discover(s);
    }
    return status;
}

/* ---- router ops --------------------------------------------------------- */

static void sn_start(rdl__router *r)
{
    rdl__sentinel_discover((rdl__sentinel *)r);
}

static void on_timer_closed(uv_handle_t *h)
{
    rdl__sentinel *s = h->data;
    rdl__net *net = s->net;
    if (--s->handles == 0) {
        rdl__free(s->host);
        rdl__free(s->sconn);
        rdl__free(s->watch);
        rdl__free(s);
    }
    rdl__net_handle_closed(net);
}

static void sn_close(rdl__router *r)
{
    rdl__sentinel *s = (rdl__sentinel *)r;
    if (s->closing)
        return;
    s->closing = 1;
    rdl__sentinel_fail_parked(s, RDL_ECLOSED);
    /* Closing fails the connections' commands, whose callbacks see
     * s->closing and end there. */
    rdl__conn_close(s->cmd);
    rdl__conn_close(s->dur);
    rdl__conn_close(s->sub);
    rdl__sentinel_close_watchers(s);
    uv_close((uv_handle_t *)&s->check_timer, on_timer_closed);
    uv_close((uv_handle_t *)&s->park_timer, on_timer_closed);
}

static int sn_send(rdl__router *r, unsigned slot, rdl__line line,
                   const char *cmd, size_t len, rdl__reply_fn fn, void *data)
{
    (void)slot;
    return rdl__sentinel_send((rdl__sentinel *)r, line, cmd, len, fn, data);
}

static rdl__conn *sn_conn(rdl__router *r, unsigned slot, rdl__line line)
{
    (void)slot;
    return rdl__sentinel_line((rdl__sentinel *)r, line);
}

static unsigned sn_slot(const rdl__router *r, const char *key, size_t len)
{
    (void)r;
    (void)key;
    (void)len;
    return 0;
}

static rdl__conn *sn_sub(rdl__router *r, unsigned slot,
                         const rdl__conn_events *ev, void *data)
{
    rdl__sentinel *s = (rdl__sentinel *)r;
    (void)slot;
    if (s->closing)
        return NULL;
    if (s->sub == NULL) {
        /* The hub subscribes after a try answered by the master, so its
         * address is known; a switch later moves this connection too. */
        s->sub = rdl__conn_new(s->net, RDL__CONN_SUB,
                               s->host != NULL ? s->host : s->net->url.host,
                               s->host != NULL ? s->port : 0, ev, data);
        if (s->sub != NULL)
            rdl__conn_start(s->sub);
    }
    return s->sub;
}

static void sn_refresh(rdl__router *r)
{
    rdl__sentinel_discover((rdl__sentinel *)r);
}

static int sn_sharded(const rdl__router *r)
{
    (void)r;
    return 0;
}

/* The master once a sentinel named it. It may not be confirmed (a switch
 * in progress): commands sent to it wait for that, as every command does,
 * rather than fail at once. */
static int sn_masters(rdl__router *r, unsigned *slots, size_t cap, size_t *n)
{
    rdl__sentinel *s = (rdl__sentinel *)r;
    if (s->host == NULL) {
        rdl__errmsg_set(s->net->owner,
                        "no sentinel has named master \"%s\" yet", s->master);
        return RDL_ECONNREFUSED;
    }
    if (cap > 0)
        slots[0] = 0;
    *n = 1;
    return 0;
}

static const rdl__router_ops ops = {
    .start = sn_start,
    .close = sn_close,
    .send = sn_send,
    .conn = sn_conn,
    .slot = sn_slot,
    .sub = sn_sub,
    .refresh = sn_refresh,
    .sharded = sn_sharded,
    .masters = sn_masters,
};

static int sn_accepts(const rdl__url *u)
{
    return u->sentinel;
}

static rdl__router *sn_open(rdl__net *net, const rdl__router_events *ev,
                            void *data)
{
    rdl__sentinel *s = rdl__calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->base.ops = &ops;
    s->base.ev = ev;
    s->base.ev_data = data;
    s->net = net;
    s->master = net->url.master;
    s->nsentinels = net->url.nseeds;
    s->replicas_up = -1;
    rdl__queue_init(&s->parked);
    s->sconn = rdl__calloc(s->nsentinels, sizeof(*s->sconn));
    s->watch = rdl__calloc(s->nsentinels, sizeof(*s->watch));
    /* The address is set when a sentinel names the master; until then
     * nothing is sent on it (commands are parked). */
    s->cmd = rdl__conn_new(net, RDL__CONN_CMD, net->url.host, 0,
                           &rdl__sentinel_master_events, s);
    uv_timer_init(net->loop, &s->check_timer);
    s->check_timer.data = s;
    uv_timer_init(net->loop, &s->park_timer);
    s->park_timer.data = s;
    s->handles = 2;
    rdl__net_handle_opened(net);
    rdl__net_handle_opened(net);
    if (s->sconn == NULL || s->watch == NULL || s->cmd == NULL) {
        sn_close(&s->base);
        return NULL;
    }
    return &s->base;
}

const rdl__router_impl rdl__sentinel_router = {
    .name = "sentinel",
    .accepts = sn_accepts,
    .open = sn_open,
};
