/* One Redis server (redis://): the router (router.h) of a deployment that is
 * not sharded. One command connection, opened at start; one subscriber
 * connection, opened by the hub's first subscription. Every key has slot 0 and
 * goes to the one server; there are no redirects to follow and no topology to
 * refresh, so a command's failure reaches its caller as the connection reports
 * it (the connection reconnects with backoff by itself,
 * docs/design.md#connections). The first connect settles when the command
 * connection is first ready or an attempt fails. */
#include "core/alloc.h"
#include "core/errmsg.h"
#include "standalone.h"

typedef struct standalone {
    rdl__router base; /* first: the router is the standalone */
    rdl__net *net;
    rdl__conn *cmd;
    rdl__conn *dur; /* the durable line, opened on first use */
    rdl__conn *sub; /* opened on first use, by the hub */
    int closing;
} standalone;

static void on_cmd_ready(rdl__conn *cn, void *data)
{
    standalone *st = data;
    (void)cn;
    st->base.ev->settled(st->base.ev_data, 0);
}

static void on_cmd_down(rdl__conn *cn, int status, void *data)
{
    standalone *st = data;
    (void)cn;
    st->base.ev->settled(st->base.ev_data, status);
}

static const rdl__conn_events cmd_events = {on_cmd_ready, on_cmd_down, NULL,
                                            NULL};
/* The durable line reports nothing: the main line settles the connect. */
static const rdl__conn_events dur_events = {NULL, NULL, NULL, NULL};

static void st_start(rdl__router *r)
{
    rdl__conn_start(((standalone *)r)->cmd);
}

static void st_close(rdl__router *r)
{
    standalone *st = (standalone *)r;
    st->closing = 1;
    /* Failed commands' callbacks may still ask for the connection (it
     * refuses them now); it is forgotten only once they have run. */
    rdl__conn_close(st->cmd);
    rdl__conn_close(st->dur);
    rdl__conn_close(st->sub);
    /* The connections free themselves and report no event after close:
     * nothing refers to st any more. */
    rdl__free(st);
}

static rdl__conn *st_conn(rdl__router *r, unsigned slot, rdl__line line)
{
    standalone *st = (standalone *)r;
    (void)slot;
    if (line == RDL__LINE_MAIN)
        return st->cmd;
    if (st->dur == NULL && !st->closing)
        st->dur = rdl__conn_new(st->net, RDL__CONN_CMD, st->net->url.host,
                                st->net->url.port, &dur_events, st);
    return st->dur;
}

static int st_send(rdl__router *r, unsigned slot, rdl__line line,
                   const char *cmd, size_t len, rdl__reply_fn fn, void *data)
{
    rdl__conn *cn = st_conn(r, slot, line);
    return cn != NULL ? rdl__conn_send(cn, cmd, len, fn, data)
                      : (((standalone *)r)->closing ? RDL_ECLOSED : RDL_ENOMEM);
}

static unsigned st_slot(const rdl__router *r, const char *key, size_t len)
{
    (void)r;
    (void)key;
    (void)len;
    return 0;
}

static rdl__conn *st_sub(rdl__router *r, unsigned slot,
                         const rdl__conn_events *ev, void *data)
{
    standalone *st = (standalone *)r;
    rdl__net *net = st->net;
    (void)slot;
    if (st->closing)
        return NULL; /* what is sent on it now would fail anyway */
    if (st->sub == NULL) {
        st->sub = rdl__conn_new(net, RDL__CONN_SUB, net->url.host,
                                net->url.port, ev, data);
        if (st->sub != NULL)
            rdl__conn_start(st->sub);
    }
    return st->sub;
}

static void st_refresh(rdl__router *r)
{
    (void)r; /* one server: nothing can move */
}

static int st_sharded(const rdl__router *r)
{
    (void)r;
    return 0;
}

/* One server holds every key. */
static int st_masters(rdl__router *r, unsigned *slots, size_t cap, size_t *n)
{
    (void)r;
    if (cap > 0)
        slots[0] = 0;
    *n = 1;
    return 0;
}

static const rdl__router_ops ops = {
    .start = st_start,
    .close = st_close,
    .send = st_send,
    .conn = st_conn,
    .slot = st_slot,
    .sub = st_sub,
    .refresh = st_refresh,
    .sharded = st_sharded,
    .masters = st_masters,
};

static int st_accepts(const rdl__url *u)
{
    (void)u;
    return 1; /* whatever no other implementation took */
}

static rdl__router *st_open(rdl__net *net, const rdl__router_events *ev,
                            void *data)
{
    standalone *st = rdl__calloc(1, sizeof(*st));
    if (st == NULL)
        return NULL;
    st->base.ops = &ops;
    st->base.ev = ev;
    st->base.ev_data = data;
    st->net = net;
    st->cmd = rdl__conn_new(net, RDL__CONN_CMD, net->url.host, net->url.port,
                            &cmd_events, st);
    if (st->cmd == NULL) {
        rdl__free(st);
        return NULL;
    }
    return &st->base;
}

const rdl__router_impl rdl__standalone_router = {
    .name = "standalone",
    .accepts = st_accepts,
    .open = st_open,
};
