/* The watchdog: one timer per client, batched renewals, lost holds.
 *
 * Every hold has a local deadline (monotonic): the send time of the last
 * request that set its lease, plus the lease, minus a drift allowance. It
 * is renewed when a period (a third of its lease: the client's watchdog
 * lease for holds, shorter for queue entries) has passed since then; renewals
 * of holds that fall due within half a period of each other leave together, so
 * holds taken at different times still share script calls. A renewal that fails
 * is retried soon, until the deadline passes. A hold is lost when Redis says it
 * is no longer its owner's, or when its deadline passes first: a renewal still
 * in flight then does not save it, because the lease may already have run out
 * on the server.
 *
 * Releases never race renewals: the lock kind pauses the entry before it
 * sends a release that may end the hold, so no renewal is sent after the
 * release; one already sent was sent on the same connection before it,
 * and the renewal script only extends a key that exists and is still the
 * owner's, so it never revives a released lock. */
#include "watchdog.h"

#include <stdio.h>

typedef struct rdl__watchdog {
    rdl_client_t *c;
    uv_timer_t timer;
    rdl__active active; /* closed with the client */
    rdl__queue holds;   /* rdl__wd_hold */
    uint64_t timer_at;  /* when the timer fires; UINT64_MAX: stopped */
    int closed;
} rdl__watchdog;

/* One script call's worth of holds with one script and lease, all routed
 * to one connection and, on a cluster, in one slot. */
typedef struct wd_batch {
    rdl__watchdog *wd;
    rdl__conn *conn;
    unsigned slot; /* on a cluster, one script call touches one slot */
    int script;
    int64_t lease_ms;
    uint64_t sent_at;
    int n;
    rdl__wd_hold *h[RDL__WD_BATCH];
    unsigned char renewed[RDL__WD_BATCH]; /* durable: the script's answers,
                                             kept while WAIT confirms */
} wd_batch;

uint64_t rdl__wd_deadline(uint64_t sent_at, int64_t lease_ms)
{
    uint64_t lease = (uint64_t)lease_ms;
    return sent_at + lease - (lease / 100 + 2);
}

/* The time between renewals of h: a third of its lease. */
static uint64_t period(const rdl__wd_hold *h)
{
    return (uint64_t)h->lease_ms / 3;
}

static uint64_t retry_delay(const rdl__wd_hold *h)
{
    uint64_t d = period(h) / 3;
    return d < 100 ? (d > 0 ? d : 1) : 100;
}

static void on_timer(uv_timer_t *t);

/* Makes the timer fire at `at` at the latest. */
static void arm(rdl__watchdog *wd, uint64_t at)
{
    uint64_t now = rdl__now_ms();
    if (wd->closed || at >= wd->timer_at)
        return;
    wd->timer_at = at;
    uv_timer_start(&wd->timer, on_timer, at > now ? at - now : 0, 0);
}

/* Takes h out of the list; `done` runs once no batch holds it. */
static void unlist(rdl__wd_hold *h)
{
    if (!h->listed)
        return;
    h->listed = 0;
    rdl__queue_remove(&h->node);
    if (h->refs == 0)
        h->done(h);
}

static void lose(rdl__watchdog *wd, rdl__wd_hold *h, int reason)
{
    int refs = h->refs;
    RDL__STAT_INC(&wd->c->net, holds_lost);
    h->listed = 0;
    rdl__queue_remove(&h->node);
    h->lost(h, reason);
    if (refs == 0)
        h->done(h);
}

static void on_renewed(void *data, int status, const redisReply *r,
                       uint64_t written_ms);

static void send_batch(wd_batch *b)
{
    rdl_client_t *c = b->wd->c;
    const char *keys[2 * RDL__WD_BATCH], *args[RDL__WD_BATCH + 1];
    char lease[24];
    int i, nkeys = 0, rc;

    snprintf(lease, sizeof(lease), "%lld", (long long)b->lease_ms);
    args[0] = lease;
    for (i = 0; i < b->n; i++) {
        keys[nkeys++] = b->h[i]->key;
        if (b->h[i]->key2 != NULL)
            keys[nkeys++] = b->h[i]->key2;
        args[1 + i] = b->h[i]->member;
        b->h[i]->refs++;
    }
    b->sent_at = rdl__now_ms();
    RDL__STAT_INC(&c->net, renewal_calls);
    /* With durability the renewals go on the durable line, where a WAIT
     * then confirms them (on_renewed). */
    rc = rdl__script_run_line(c, rdl__client_acquire_line(c), b->script, nkeys,
                              keys, b->n + 1, args, on_renewed, b);
    if (rc != 0)
        on_renewed(b, rc, NULL, 0);
}

static void renewed(wd_batch *b, int status);

/* Durability: the renewals count toward the holds' deadlines once the
 * replicas have them; a renewal they did not confirm is retried like a
 * failed one, and the deadline stays where the confirmed ones put it. */
static void on_confirmed(void *data, const rdl__confirmed *cf)
{
    wd_batch *b = data;
    int status = cf->status;
    char what[160];
    if (status == 0 && !cf->met) {
        status = RDL_ENOREPLICAS;
        rdl__durable_describe(cf, what, sizeof(what));
        rdl__errmsg_set(b->wd->c, "watchdog: %s a renewal", what);
    }
    renewed(b, status);
}

int rdl__wd_parse_renewed(const redisReply *r, int n, unsigned char *renewed)
{
    int i;
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != (size_t)n)
        return RDL_EPROTO;
    for (i = 0; i < n; i++)
        renewed[i] = r->element[i]->type == REDIS_REPLY_INTEGER &&
                     r->element[i]->integer == 1;
    return 0;
}

static void on_renewed(void *data, int status, const redisReply *r,
                       uint64_t written_ms)
{
    wd_batch *b = data;
    rdl_client_t *c = b->wd->c;
    rdl__conn *cn;
    (void)written_ms;

    if (status == 0)
        status = rdl__wd_parse_renewed(r, b->n, b->renewed);
    if (status != 0 || c->net.durable_replicas == 0) {
        renewed(b, status);
        return;
    }
    cn = rdl__client_route_line(c, b->h[0]->key, rdl__client_acquire_line(c));
    status =
        cn != NULL ? rdl__durable_confirm(cn, on_confirmed, b) : RDL_ENOMEM;
    if (status != 0)
        renewed(b, status);
}

/* The renewals of b are settled: status 0 with b->renewed[] (1: renewed,
 * 0: the hold is gone or someone else's), or the call failed. */
static void renewed(wd_batch *b, int status)
{
    rdl__watchdog *wd = b->wd;
    uint64_t now = rdl__now_ms(), next = UINT64_MAX;
    int i;

    if (status != 0 && status != RDL_ECLOSED) {
        RDL__STAT_INC(&wd->c->net, renewal_failures);
        rdl__errmsg_set(wd->c, "watchdog: renewal of %d holds failed: %s", b->n,
                        rdl_strerror(status));
    }
    for (i = 0; i < b->n; i++) {
        rdl__wd_hold *h = b->h[i];
        h->refs--;
        if (!h->listed) {
            if (h->refs == 0)
                h->done(h);
            continue;
        }
        if (status == 0 && b->renewed[i]) {
            uint64_t d = rdl__wd_deadline(b->sent_at, h->lease_ms);
            if (d > h->deadline)
                __atomic_store_n(&h->deadline, d, __ATOMIC_RELAXED);
            h->due = b->sent_at + period(h);
            h->last_error = 0;
            RDL__STAT_INC(&wd->c->net, renewals);
        } else if (status == 0) {
            if (!h->paused) /* else the release in flight reports it */
                lose(wd, h, RDL_ELOST);
            continue;
        } else {
            h->last_error = status;
            h->due = now + retry_delay(h);
        }
        if (h->due < next)
            next = h->due;
    }
    rdl__free(b);
    if (!wd->closed && next != UINT64_MAX)
        arm(wd, next);
}

/* Finds or opens the batch for h's connection and script. */
static wd_batch *batch_for(rdl__watchdog *wd, wd_batch ***open, size_t *nopen,
                           size_t *cap, rdl__wd_hold *h)
{
    rdl__conn *conn = rdl__client_route(wd->c, h->key);
    unsigned slot = rdl__client_slot(wd->c, h->key);
    wd_batch *b;
    size_t i;

    for (i = 0; i < *nopen; i++)
        if ((*open)[i]->conn == conn && (*open)[i]->slot == slot &&
            (*open)[i]->script == h->script &&
            (*open)[i]->lease_ms == h->lease_ms)
            return (*open)[i];
    if (*nopen == *cap) {
        size_t ncap = *cap ? *cap * 2 : 4;
        wd_batch **grown = rdl__realloc(*open, ncap * sizeof(*grown));
        if (grown == NULL)
            return NULL;
        *open = grown;
        *cap = ncap;
    }
    b = rdl__calloc(1, sizeof(*b));
    if (b == NULL)
        return NULL;
    b->wd = wd;
    b->conn = conn;
    b->slot = slot;
    b->script = h->script;
    b->lease_ms = h->lease_ms;
    (*open)[(*nopen)++] = b;
    return b;
}

static void on_timer(uv_timer_t *t)
{
    rdl__watchdog *wd = t->data;
    uint64_t now = rdl__now_ms(), next = UINT64_MAX;
    rdl__queue *q, *nq;
    wd_batch **open = NULL;
    size_t nopen = 0, cap = 0, i;

    wd->timer_at = UINT64_MAX;
    for (q = wd->holds.next; q != &wd->holds; q = nq) {
        rdl__wd_hold *h = RDL_CONTAINER_OF(q, rdl__wd_hold, node);
        nq = q->next;
        if (__atomic_load_n(&h->abandoned, __ATOMIC_ACQUIRE)) {
            unlist(h);
            continue;
        }
        if (h->paused)
            continue;
        if (h->deadline <= now) {
            lose(wd, h, h->last_error != 0 ? h->last_error : RDL_ETIMEDOUT);
            continue;
        }
        if (h->refs == 0 && h->due <= now + period(h) / 2) {
            wd_batch *b = batch_for(wd, &open, &nopen, &cap, h);
            if (b == NULL) {
                h->due = now + retry_delay(h); /* out of memory: later */
            } else {
                b->h[b->n++] = h;
                if (b->n == RDL__WD_BATCH) {
                    /* Full: send it and start a fresh one in its place. */
                    size_t k;
                    for (k = 0; k < nopen && open[k] != b; k++)
                        ;
                    open[k] = open[--nopen];
                    send_batch(b);
                }
            }
        } else if (h->refs == 0 && h->due < next) {
            next = h->due;
        }
        if (h->deadline < next)
            next = h->deadline;
    }
    for (i = 0; i < nopen; i++)
        send_batch(open[i]);
    rdl__free(open);
    if (next != UINT64_MAX)
        arm(wd, next);
}

static void on_timer_closed(uv_handle_t *h)
{
    rdl__watchdog *wd = h->data;
    rdl_client_t *c = wd->c;
    rdl__free(wd);
    rdl__net_handle_closed(&c->net);
}

/* The client is closing: holds stay in Redis and expire by their lease. */
static void on_abort(rdl__active *a)
{
    rdl__watchdog *wd = RDL_CONTAINER_OF(a, rdl__watchdog, active);
    wd->closed = 1;
    wd->c->wd = NULL;
    while (!rdl__queue_empty(&wd->holds))
        unlist(
            RDL_CONTAINER_OF(rdl__queue_head(&wd->holds), rdl__wd_hold, node));
    uv_timer_stop(&wd->timer);
    uv_close((uv_handle_t *)&wd->timer, on_timer_closed);
}

static rdl__watchdog *get(rdl_client_t *c)
{
    rdl__watchdog *wd = c->wd;
    if (wd != NULL)
        return wd;
    wd = rdl__calloc(1, sizeof(*wd));
    if (wd == NULL)
        return NULL;
    wd->c = c;
    wd->timer_at = UINT64_MAX;
    rdl__queue_init(&wd->holds);
    uv_timer_init(c->net.loop, &wd->timer);
    wd->timer.data = wd;
    rdl__net_handle_opened(&c->net);
    rdl__active_init(&wd->active, RDL__STAGE_SERVICE, on_abort, NULL);
    rdl__client_active_add(c, &wd->active);
    c->wd = wd;
    return wd;
}

int rdl__wd_add(rdl_client_t *c, rdl__wd_hold *h, uint64_t sent_at)
{
    rdl__watchdog *wd = get(c);
    if (wd == NULL)
        return RDL_ENOMEM;
    if (h->lease_ms <= 0)
        h->lease_ms = c->watchdog_ms;
    h->deadline = rdl__wd_deadline(sent_at, h->lease_ms);
    h->due = sent_at + period(h);
    h->last_error = 0;
    h->refs = 0;
    h->abandoned = 0;
    h->paused = 0;
    h->listed = 1;
    rdl__queue_insert_tail(&wd->holds, &h->node);
    arm(wd, h->due);
    return 0;
}

void rdl__wd_extend(rdl__wd_hold *h, uint64_t sent_at, int64_t lease_ms)
{
    uint64_t d = rdl__wd_deadline(sent_at, lease_ms);
    if (h->listed && d > h->deadline)
        __atomic_store_n(&h->deadline, d, __ATOMIC_RELAXED);
}

void rdl__wd_remove(rdl__wd_hold *h)
{
    unlist(h);
}

void rdl__wd_pause(rdl__wd_hold *h)
{
    h->paused = 1;
}

void rdl__wd_resume(rdl_client_t *c, rdl__wd_hold *h)
{
    if (!h->listed || !h->paused || c->wd == NULL)
        return;
    h->paused = 0;
    arm(c->wd, h->due < h->deadline ? h->due : h->deadline);
}

void rdl__wd_abandon(rdl__wd_hold *h)
{
    __atomic_store_n(&h->abandoned, 1, __ATOMIC_RELEASE);
}

int64_t rdl__wd_valid_ms(const rdl__wd_hold *h)
{
    uint64_t d = __atomic_load_n(&h->deadline, __ATOMIC_RELAXED);
    uint64_t now = rdl__now_ms();
    return d > now ? (int64_t)(d - now) : 0;
}
