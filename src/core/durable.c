/* Durability: see durable.h. */
#include <stdio.h>

#include "alloc.h"
#include "clock.h"
#include "durable.h"
#include "queue.h"
#include "reply.h"

/* What durability keeps of one connection. */
typedef struct durable {
    rdl__conn *cn;
    rdl__queue next;   /* confirmations waiting for the next WAIT */
    rdl__queue flight; /* those the WAIT in flight covers */
    long long wanted;  /* replicas the WAIT in flight asks for */
    int aof;           /* it is a WAITAOF (the FSYNCED levels) */
    int numlocal;      /* WAITAOF: 1 when the master's file is asked for */
    /* RDL_REPLICAS_ALL: the most replicas the server had lately, and when
     * that number was last seen (rdl__durable_note_replicas). */
    long long known_replicas;
    uint64_t known_at;
    unsigned telling; /* confirm_done() is telling requests: not freed */
    int closed;       /* the connection closed: freed when done telling */
} durable;

typedef struct confirm {
    rdl__queue node;
    rdl__confirm_fn fn;
    void *data;
    unsigned gen; /* the connection the writes to confirm went out on */
} confirm;

static void fail_all(rdl__queue *q, int status)
{
    rdl__confirmed cf = {0};
    cf.status = status;
    while (!rdl__queue_empty(q)) {
        confirm *k = RDL_CONTAINER_OF(rdl__queue_head(q), confirm, node);
        rdl__queue_remove(&k->node);
        k->fn(k->data, &cf);
        rdl__free(k);
    }
}

/* The connection closed, after its commands failed (the WAIT in flight
 * among them, which started the next one, refused): whatever still
 * waits fails. */
static void durable_free(void *data)
{
    durable *d = data;
    rdl__queue q;
    rdl__queue_init(&q);
    rdl__queue_move(&d->flight, &q);
    rdl__queue_move(&d->next, &q);
    /* A request told by confirm_done() may have closed the client, and
     * with it the connection: confirm_done() frees d once it is done. */
    d->closed = 1;
    if (d->telling == 0)
        rdl__free(d);
    fail_all(&q, RDL_ECLOSED);
}

/* cn's state, made on first use; NULL when out of memory or closed. */
static durable *durable_of(rdl__conn *cn)
{
    durable *d = rdl__conn_attached(cn);
    if (d != NULL)
        return d;
    d = rdl__calloc(1, sizeof(*d));
    if (d == NULL)
        return NULL;
    d->cn = cn;
    rdl__queue_init(&d->next);
    rdl__queue_init(&d->flight);
    if (rdl__conn_attach(cn, d, durable_free) != 0) {
        rdl__free(d);
        return NULL;
    }
    return d;
}

static void confirm_launch(durable *d);

/* The WAIT in flight answered (or failed): its requests are told, and the
 * next batch starts. WAIT covers the writes of the connection it is sent
 * on: for a request whose writes went out on an earlier connection (it
 * dropped in between) the answer says nothing, and their fate is
 * unknown. */
static void confirm_done(durable *d, const rdl__confirmed *answer)
{
    rdl__confirmed cf = *answer;
    rdl__queue done;
    cf.aof = d->aof;
    cf.wanted = d->wanted;
    cf.local_wanted = d->aof ? d->numlocal : 0;
    rdl__queue_init(&done);
    rdl__queue_move(&d->flight, &done);
    d->telling++;
    while (!rdl__queue_empty(&done)) {
        confirm *k = RDL_CONTAINER_OF(rdl__queue_head(&done), confirm, node);
        rdl__queue_remove(&k->node);
        cf.status = answer->status == 0 && k->gen != rdl__conn_gen(d->cn)
                        ? RDL_ECONNLOST
                        : answer->status;
        cf.met = cf.status == 0 && cf.acked >= cf.wanted &&
                 cf.local >= cf.local_wanted;
        k->fn(k->data, &cf);
        rdl__free(k);
    }
    if (--d->telling == 0 && d->closed) {
        rdl__free(d);
        return;
    }
    if (!d->closed && !rdl__queue_empty(&d->next))
        confirm_launch(d);
}

/* confirm_done() for a confirmation that ended without an answer. */
static void confirm_failed(durable *d, int status)
{
    rdl__confirmed cf = {0};
    cf.status = status;
    confirm_done(d, &cf);
}

/* WAIT answers with the replicas that acknowledged; WAITAOF with [the
 * master's own file (0 or 1), the replicas' files]. WAITAOF refuses
 * (an error reply) where it cannot be used: numlocal with the master's
 * appendonly off, or a server without the command, when the connect
 * could not check it (COMMAND or CONFIG refused). */
static void on_confirm_wait(void *data, int status, const redisReply *r,
                            uint64_t written_ms)
{
    durable *d = data;
    rdl__confirmed cf = {0};
    char why[200];
    (void)written_ms;
    if (status == 0 && !d->aof && r->type == REDIS_REPLY_INTEGER) {
        cf.acked = r->integer;
    } else if (status == 0 && d->aof && r->type == REDIS_REPLY_ARRAY &&
               r->elements == 2 && r->element[0]->type == REDIS_REPLY_INTEGER &&
               r->element[1]->type == REDIS_REPLY_INTEGER) {
        cf.local = r->element[0]->integer > 0;
        cf.acked = r->element[1]->integer;
    } else if (status == 0) {
        status = RDL_EPROTO;
    } else if (r != NULL && r->type == REDIS_REPLY_ERROR) {
        snprintf(why, sizeof(why), "%.150s", r->str);
        cf.why = why;
        if (d->aof && status == RDL_ESERVER)
            status = RDL_ENOTSUP;
    }
    cf.status = status;
    confirm_done(d, &cf);
}

static int send_wait(durable *d, long long wanted)
{
    char l[4], n[24], t[24];
    const char *argv[4] = {"WAITAOF", l, n, t};
    d->wanted = wanted;
    snprintf(l, sizeof(l), "%d", d->numlocal);
    snprintf(n, sizeof(n), "%lld", wanted);
    snprintf(t, sizeof(t), "%lld",
             (long long)rdl__conn_net(d->cn)->durable_timeout_ms);
    if (!d->aof) {
        argv[0] = "WAIT";
        argv[1] = n;
        argv[2] = t;
    }
    return rdl__conn_sendv(d->cn, d->aof ? 4 : 3, argv, NULL, on_confirm_wait,
                           d);
}

static void note(durable *d, long long n)
{
    uint64_t now = rdl__now_ms();
    if (n >= d->known_replicas || now - d->known_at > RDL__REPLICA_FORGET_MS) {
        d->known_replicas = n;
        d->known_at = now;
    } else if (n == d->known_replicas) {
        d->known_at = now;
    }
}

/* RDL_REPLICAS_ALL: every replica the master has lately had, not only
 * those ROLE lists now. ROLE lists the replicas that are online; one that
 * is reconnecting or resyncing is missing from it, and counting only the
 * listed ones would confirm a grant that replica never receives and may
 * bring back if it is promoted. So the count only falls once a number
 * has not been seen for RDL__REPLICA_FORGET_MS; until then a missing
 * replica makes WAIT time out and the grant is refused. The router adds
 * what it knows of this master (cluster: the replicas in the slot table;
 * Sentinel: the replicas the sentinels see up, asked again after a switch
 * and from time to time, never a count from before the switch). */
static void on_confirm_role(void *data, int status, const redisReply *r,
                            uint64_t written_ms)
{
    durable *d = data;
    (void)written_ms;
    long long n = status == 0 ? rdl__reply_role_replicas(r) : 0;
    if (status == 0 && n < 0)
        status = RDL_EREADONLY; /* not a master any more */
    if (status == 0) {
        note(d, n);
        n = d->known_replicas;
    }
    if (status == 0 && n == 0 && d->numlocal == 0) {
        d->wanted = 0;
        confirm_failed(d, 0); /* no replica: nothing to lose to */
        return;
    }
    if (status == 0)
        status = send_wait(d, n); /* n 0: WAITAOF for the master's file */
    if (status != 0)
        confirm_failed(d, status);
}

/* Sends what the requests in flight need; calls nothing. */
static int confirm_send(durable *d)
{
    static const char *role[1] = {"ROLE"};
    const rdl__net *net = rdl__conn_net(d->cn);
    d->aof = net->durable_level != RDL_DURABLE_RECEIVED;
    d->numlocal = net->durable_level == RDL_DURABLE_FSYNCED_MASTER;
    d->wanted = 0;
    if (net->durable_replicas >= 0)
        return send_wait(d, net->durable_replicas);
    return rdl__conn_sendv(d->cn, 1, role, NULL, on_confirm_role, d);
}

static void confirm_launch(durable *d)
{
    int rc;
    rdl__queue_move(&d->next, &d->flight);
    if ((rc = confirm_send(d)) != 0)
        confirm_failed(d, rc);
}

int rdl__durable_confirm(rdl__conn *cn, rdl__confirm_fn fn, void *data)
{
    durable *d = durable_of(cn);
    confirm *k;
    int rc;
    if (d == NULL)
        return rdl__conn_is_closed(cn) ? RDL_ECLOSED : RDL_ENOMEM;
    k = rdl__calloc(1, sizeof(*k));
    if (k == NULL)
        return RDL_ENOMEM;
    k->fn = fn;
    k->data = data;
    k->gen = rdl__conn_gen(cn);
    if (!rdl__queue_empty(&d->flight)) {
        rdl__queue_insert_tail(&d->next, &k->node);
        return 0;
    }
    rdl__queue_insert_tail(&d->flight, &k->node);
    if ((rc = confirm_send(d)) != 0) {
        rdl__queue_remove(&k->node);
        rdl__free(k);
    }
    return rc;
}

void rdl__durable_note_replicas(rdl__conn *cn, long long n)
{
    durable *d = durable_of(cn);
    if (d != NULL)
        note(d, n);
}

void rdl__durable_moved(rdl__conn *cn)
{
    durable *d = durable_of(cn);
    if (d == NULL)
        return;
    if (d->known_replicas > 0)
        d->known_replicas--;
    d->known_at = rdl__now_ms();
}

void rdl__durable_describe(const rdl__confirmed *cf, char *buf, size_t len)
{
    if (!cf->aof)
        snprintf(buf, len, "%lld of %lld replicas confirmed", cf->acked,
                 cf->wanted);
    else
        snprintf(buf, len,
                 "%lld of %lld replicas' append-only files%s confirmed",
                 cf->acked, cf->wanted,
                 !cf->local_wanted ? ""
                 : cf->local       ? " and the master's own"
                                   : ", and not the master's own,");
}
