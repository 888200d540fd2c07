/* The nodes of a Redis Cluster and its slot table
 * (docs/design.md#redis-cluster).
 *
 * The table comes from CLUSTER SLOTS, asked of one node at a time: the
 * seeds first, later any node the client knows, nodes that answer
 * preferred. A round that finds no node able to answer is retried after a
 * pause. Refreshes are throttled (REFRESH_MIN_MS apart) and never overlap:
 * a request during one sets a flag that starts another when it ends, so a
 * burst of MOVED replies during a failover costs a few CLUSTER SLOTS, not
 * one per command.
 *
 * Each refresh is reported as the router's topology_changed event (the
 * hub then moves subscriptions whose slot changed node), and the first
 * one, or a first round that reached nobody, as settled.
 * Whether the servers have sharded pub/sub (Redis 7.0+) is learnt once,
 * from COMMAND INFO SPUBLISH, before the client reports itself connected:
 * the release scripts and the hub must agree on it from the first call. */
#include <stdio.h>
#include <string.h>

#include "cluster_int.h"
#include "cluster.h"

#define REFRESH_MIN_MS 100
#define REFRESH_RETRY_MS 250

/* ---- nodes ------------------------------------------------------------ */

static unsigned owned_slots(const rdl__cluster *cl, const rdl__node *n)
{
    unsigned i, k = 0;
    for (i = 0; i < RDL__SLOTS; i++)
        k += cl->slots[i] == n;
    return k;
}

static void probe_next(rdl__cluster *cl, int status);

static void on_node_ready(rdl__conn *cn, void *data)
{
    rdl__node *n = data;
    (void)cn;
    n->down = 0;
}

static void on_node_down(rdl__conn *cn, int status, void *data)
{
    rdl__node *n = data;
    rdl__cluster *cl = n->cl;
    (void)cn;
    n->down = 1;
    if (cl->refreshing && cl->probe == n)
        probe_next(cl, status); /* do not wait for its timeout */
    else if (owned_slots(cl, n) > 0)
        rdl__cluster_refresh(cl); /* a master is gone: maybe failed over */
}

static const rdl__conn_events node_events = {on_node_ready, on_node_down, NULL,
                                             NULL};

rdl__node *rdl__node_get(rdl__cluster *cl, const char *host, int port)
{
    rdl__queue *q;
    rdl__node *n;
    for (q = cl->nodes.next; q != &cl->nodes; q = q->next) {
        n = RDL_CONTAINER_OF(q, rdl__node, qnode);
        if (n->port == port && strcmp(n->host, host) == 0)
            return n;
    }
    n = rdl__calloc(1, sizeof(*n));
    if (n == NULL)
        return NULL;
    n->host = rdl__strdup(host);
    if (n->host == NULL) {
        rdl__free(n);
        return NULL;
    }
    n->cl = cl;
    n->port = port;
    rdl__queue_insert_tail(&cl->nodes, &n->qnode);
    return n;
}

rdl__conn *rdl__node_cmd(rdl__node *n)
{
    if (n->cmd == NULL) {
        n->cmd = rdl__conn_new(n->cl->net, RDL__CONN_CMD, n->host, n->port,
                               &node_events, n);
        if (n->cmd != NULL)
            rdl__conn_start(n->cmd);
    }
    return n->cmd;
}

rdl__conn *rdl__node_line(rdl__node *n, rdl__line line)
{
    if (line == RDL__LINE_MAIN)
        return rdl__node_cmd(n);
    if (n->dur == NULL) {
        /* Its drop says the node is gone as well as the main line's: a
         * client that only made durable grants there may have no other. */
        n->dur = rdl__conn_new(n->cl->net, RDL__CONN_CMD, n->host, n->port,
                               &node_events, n);
        if (n->dur != NULL) {
            rdl__durable_note_replicas(n->dur, n->replicas);
            rdl__conn_start(n->dur);
        }
    }
    return n->dur;
}

rdl__node *rdl__cluster_owner(rdl__cluster *cl, unsigned slot)
{
    rdl__queue *q;
    rdl__node *n = cl->slots[slot & (RDL__SLOTS - 1)];
    if (n != NULL)
        return n;
    /* No master known for the slot: any node that is up answers with
     * MOVED (or CLUSTERDOWN), which the router follows. */
    for (q = cl->nodes.next; q != &cl->nodes; q = q->next) {
        n = RDL_CONTAINER_OF(q, rdl__node, qnode);
        if (!n->down)
            return n;
    }
    return RDL_CONTAINER_OF(cl->nodes.next, rdl__node, qnode);
}

/* ---- the router (core/router.h) ----------------------------------------- */

static rdl__conn *cl_conn(rdl__router *r, unsigned slot, rdl__line line)
{
    rdl__cluster *cl = (rdl__cluster *)r;
    return rdl__node_line(rdl__cluster_owner(cl, slot), line);
}

static rdl__conn *cl_sub(rdl__router *r, unsigned slot,
                         const rdl__conn_events *ev, void *data)
{
    rdl__cluster *cl = (rdl__cluster *)r;
    rdl__node *n;
    if (cl->closing)
        return NULL; /* nodes are being freed; nothing opens now */
    n = rdl__cluster_owner(cl, slot);
    if (n->sub == NULL) {
        n->sub =
            rdl__conn_new(cl->net, RDL__CONN_SUB, n->host, n->port, ev, data);
        if (n->sub != NULL)
            rdl__conn_start(n->sub);
    }
    return n->sub;
}

static int cl_sharded(const rdl__router *r)
{
    return ((const rdl__cluster *)r)->sharded;
}

static unsigned cl_slot(const rdl__router *r, const char *key, size_t len)
{
    (void)r;
    return rdl__slot(key, len);
}

static int cl_send(rdl__router *r, unsigned slot, rdl__line line,
                   const char *cmd, size_t len, rdl__reply_fn fn, void *data)
{
    return rdl__cluster_send((rdl__cluster *)r, slot, line, cmd, len, fn, data);
}

static void cl_refresh(rdl__router *r)
{
    rdl__cluster_refresh((rdl__cluster *)r);
}

/* One slot per master of the table: each node's first slot. A slot with
 * no master (no table yet, or a range the last CLUSTER SLOTS left out: a
 * failover under way) fails the whole answer, since a listing that used
 * the others would miss that slot's keys without a word. */
static int cl_masters(rdl__router *r, unsigned *slots, size_t cap, size_t *n)
{
    rdl__cluster *cl = (rdl__cluster *)r;
    rdl__queue *q;
    unsigned i;
    for (i = 0; i < RDL__SLOTS; i++) {
        if (cl->slots[i] != NULL)
            continue;
        rdl__errmsg_set(cl->net->owner,
                        cl->started ? "no master known for slot %u"
                                    : "no slot table yet (slot %u)",
                        i);
        rdl__cluster_refresh(cl);
        *n = 0;
        return RDL_ECLUSTERDOWN;
    }
    for (q = cl->nodes.next; q != &cl->nodes; q = q->next) {
        const rdl__node *node = RDL_CONTAINER_OF(q, rdl__node, qnode);
        for (i = 0; i < RDL__SLOTS && cl->slots[i] != node; i++)
            ;
        if (i == RDL__SLOTS)
            continue; /* serves no slot now */
        if (*n < cap)
            slots[*n] = i;
        (*n)++;
    }
    return 0;
}

/* ---- the slot table ------------------------------------------------------- */

/* One CLUSTER SLOTS entry: [start, end, [host, port, id, ...], replicas...].
 * Returns 1 if it has that shape. */
static int entry_ok(const redisReply *e)
{
    const redisReply *m;
    if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
        e->element[0]->type != REDIS_REPLY_INTEGER ||
        e->element[1]->type != REDIS_REPLY_INTEGER)
        return 0;
    if (e->element[0]->integer < 0 ||
        e->element[0]->integer > e->element[1]->integer ||
        e->element[1]->integer >= RDL__SLOTS)
        return 0;
    m = e->element[2];
    return m->type == REDIS_REPLY_ARRAY && m->elements >= 2 &&
           m->element[0]->type == REDIS_REPLY_STRING &&
           m->element[1]->type == REDIS_REPLY_INTEGER &&
           m->element[1]->integer > 0 && m->element[1]->integer <= 65535;
}

int rdl__cluster_apply(rdl__cluster *cl, rdl__node *asked, const redisReply *r)
{
    size_t i;
    long long s;
    if (r->type != REDIS_REPLY_ARRAY)
        return RDL_EPROTO;
    for (i = 0; i < r->elements; i++)
        if (!entry_ok(r->element[i]))
            return RDL_EPROTO;
    memset(cl->slots, 0, sizeof(cl->slots));
    for (i = 0; i < r->elements; i++) {
        const redisReply *e = r->element[i], *m = e->element[2];
        const char *host = m->element[0]->str;
        rdl__node *n;
        if (host[0] == '\0' || strcmp(host, "?") == 0)
            host = asked->host;
        n = rdl__node_get(cl, host, (int)m->element[1]->integer);
        if (n == NULL)
            return RDL_ENOMEM;
        /* Its replicas that are not marked failed: RDL_REPLICAS_ALL waits
         * for them also while they resync, when ROLE leaves them out. */
        n->replicas = (long long)e->elements - 3;
        if (n->dur != NULL)
            rdl__durable_note_replicas(n->dur, n->replicas);
        for (s = e->element[0]->integer; s <= e->element[1]->integer; s++)
            cl->slots[s] = n;
    }
    return 0;
}

/* ---- refresh rounds --------------------------------------------------------- */

typedef struct probe {
    rdl__cluster *cl;
    rdl__node *node;
    unsigned gen;
} probe;

static void end_round(rdl__cluster *cl, int status)
{
    const rdl__router_events *ev = cl->base.ev;
    cl->refreshing = 0;
    cl->probe = NULL;
    if (status == 0) {
        cl->started = 1;
        ev->settled(cl->base.ev_data, 0);
        ev->topology_changed(cl->base.ev_data);
    } else {
        if (!cl->started)
            ev->settled(cl->base.ev_data, status);
        /* Nobody could answer: try again after a pause. */
        cl->want_refresh = 1;
        cl->next_refresh = rdl__now_ms() + REFRESH_RETRY_MS;
    }
    if (cl->want_refresh && !cl->closing) {
        cl->want_refresh = 0;
        rdl__cluster_refresh(cl);
    }
}

static void on_command_info(void *data, int status, const redisReply *r,
                            uint64_t written_ms)
{
    rdl__cluster *cl = data;
    (void)written_ms;
    /* [nil] when the command does not exist, [[...]] when it does. */
    if (status == 0 && r != NULL && r->type == REDIS_REPLY_ARRAY &&
        r->elements == 1 && r->element[0]->type == REDIS_REPLY_ARRAY)
        cl->sharded = 1;
}

static void on_slots(void *data, int status, const redisReply *r,
                     uint64_t written_ms)
{
    probe *p = data;
    rdl__cluster *cl = p->cl;
    rdl__node *n = p->node;
    unsigned gen = p->gen;
    (void)written_ms;
    rdl__free(p);
    if (cl->closing || gen != cl->probe_gen)
        return; /* a stale answer: the round moved on */
    if (status == 0)
        status = rdl__cluster_apply(cl, n, r);
    if (status == 0) {
        end_round(cl, 0);
        return;
    }
    if (r != NULL && r->type == REDIS_REPLY_ERROR)
        rdl__errmsg_set(cl->net->owner, "CLUSTER SLOTS on %s:%d: %.200s",
                        n->host, n->port, r->str);
    else if (status == RDL_EPROTO)
        rdl__errmsg_set(cl->net->owner,
                        "CLUSTER SLOTS on %s:%d: unexpected reply", n->host,
                        n->port);
    probe_next(cl, status);
}

/* The next node to ask in this round: one not asked yet whose connection
 * is not known to be down, else one not asked yet, else NULL. */
static rdl__node *pick(rdl__cluster *cl)
{
    rdl__queue *q;
    rdl__node *n, *fallback = NULL;
    for (q = cl->nodes.next; q != &cl->nodes; q = q->next) {
        n = RDL_CONTAINER_OF(q, rdl__node, qnode);
        if (n->probed)
            continue;
        if (!n->down)
            return n;
        if (fallback == NULL)
            fallback = n;
    }
    return fallback;
}

/* Asks the next node; `status` is why the previous one did not answer
 * (reported if none is left). */
static void probe_next(rdl__cluster *cl, int status)
{
    static const char *info[3] = {"COMMAND", "INFO", "SPUBLISH"};
    static const char *slots[2] = {"CLUSTER", "SLOTS"};
    rdl__node *n;
    rdl__conn *cn;
    probe *p;

    cl->probe_gen++;
    for (;;) {
        n = pick(cl);
        if (n == NULL) {
            end_round(cl, status != 0 ? status : RDL_ECONNREFUSED);
            return;
        }
        n->probed = 1;
        cn = rdl__node_cmd(n);
        p = rdl__malloc(sizeof(*p));
        if (cn == NULL || p == NULL) {
            rdl__free(p);
            status = RDL_ENOMEM;
            continue;
        }
        p->cl = cl;
        p->node = n;
        p->gen = cl->probe_gen;
        cl->probe = n;
        if (!cl->started &&
            rdl__conn_sendv(cn, 3, info, NULL, on_command_info, cl) != 0) {
            rdl__free(p);
            status = RDL_ENOMEM;
            continue;
        }
        if (rdl__conn_sendv(cn, 2, slots, NULL, on_slots, p) != 0) {
            rdl__free(p);
            status = RDL_ENOMEM;
            continue;
        }
        RDL__STAT_INC(cl->net, refreshes);
        return;
    }
}

static void start_round(rdl__cluster *cl)
{
    rdl__queue *q;
    for (q = cl->nodes.next; q != &cl->nodes; q = q->next)
        RDL_CONTAINER_OF(q, rdl__node, qnode)->probed = 0;
    cl->refreshing = 1;
    cl->next_refresh = rdl__now_ms() + REFRESH_MIN_MS;
    probe_next(cl, 0);
}

static void on_refresh_timer(uv_timer_t *t)
{
    rdl__cluster *cl = t->data;
    if (!cl->closing && !cl->refreshing)
        start_round(cl);
}

void rdl__cluster_refresh(rdl__cluster *cl)
{
    uint64_t now = rdl__now_ms();
    if (cl->closing)
        return;
    if (cl->refreshing) {
        cl->want_refresh = 1;
        return;
    }
    if (uv_is_active((uv_handle_t *)&cl->refresh_timer))
        return;
    uv_timer_start(&cl->refresh_timer, on_refresh_timer,
                   cl->next_refresh > now ? cl->next_refresh - now : 0, 0);
}

/* ---- lifecycle ---------------------------------------------------------- */

static void on_timer_closed(uv_handle_t *h)
{
    rdl__cluster *cl = h->data;
    rdl__net *net = cl->net;
    if (--cl->handles == 0)
        rdl__free(cl);
    rdl__net_handle_closed(net);
}

static const rdl__router_ops cl_ops;

static rdl__router *cl_open(rdl__net *net, const rdl__router_events *ev,
                            void *data)
{
    rdl__cluster *cl = rdl__calloc(1, sizeof(*cl));
    size_t i;
    if (cl == NULL)
        return NULL;
    cl->base.ops = &cl_ops;
    cl->base.ev = ev;
    cl->base.ev_data = data;
    cl->net = net;
    rdl__queue_init(&cl->nodes);
    rdl__queue_init(&cl->delayed);
    for (i = 0; i < net->url.nseeds; i++)
        if (rdl__node_get(cl, net->url.seeds[i].host, net->url.seeds[i].port) ==
            NULL)
            break;
    uv_timer_init(net->loop, &cl->refresh_timer);
    cl->refresh_timer.data = cl;
    uv_timer_init(net->loop, &cl->retry_timer);
    cl->retry_timer.data = cl;
    cl->handles = 2;
    rdl__net_handle_opened(net);
    rdl__net_handle_opened(net);
    if (i < net->url.nseeds) {
        rdl__cluster_close(cl);
        return NULL;
    }
    return &cl->base;
}

static void cl_start(rdl__router *r)
{
    start_round((rdl__cluster *)r);
}

void rdl__cluster_close(rdl__cluster *cl)
{
    rdl__node *n;
    if (cl == NULL || cl->closing)
        return;
    cl->closing = 1;
    rdl__cluster_fail_delayed(cl);
    while (!rdl__queue_empty(&cl->nodes)) {
        n = RDL_CONTAINER_OF(cl->nodes.next, rdl__node, qnode);
        rdl__queue_remove(&n->qnode);
        /* Closing fails the connection's commands, whose callbacks see
         * cl->closing and end without a retry. */
        rdl__conn_close(n->cmd);
        rdl__conn_close(n->dur);
        rdl__conn_close(n->sub);
        rdl__free(n->host);
        rdl__free(n);
    }
    memset(cl->slots, 0, sizeof(cl->slots));
    uv_close((uv_handle_t *)&cl->refresh_timer, on_timer_closed);
    uv_close((uv_handle_t *)&cl->retry_timer, on_timer_closed);
}

static void cl_close(rdl__router *r)
{
    rdl__cluster_close((rdl__cluster *)r);
}

static const rdl__router_ops cl_ops = {
    .start = cl_start,
    .close = cl_close,
    .send = cl_send,
    .conn = cl_conn,
    .slot = cl_slot,
    .sub = cl_sub,
    .refresh = cl_refresh,
    .sharded = cl_sharded,
    .masters = cl_masters,
};

static int cl_accepts(const rdl__url *u)
{
    return u->cluster;
}

const rdl__router_impl rdl__cluster_router = {
    .name = "cluster",
    .accepts = cl_accepts,
    .open = cl_open,
};
