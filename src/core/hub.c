/* The notification hub: the client's pub/sub subscriptions, shared by its
 * waiters (docs/design.md#waiting).
 *
 * One entry per channel holds the local waiters of that channel. The first
 * waiter subscribes; when the subscription is confirmed every waiter is told
 * to try again (a release may have happened before the subscription
 * existed). A wake-all message wakes everyone. A message that names an
 * owner (a release's hand-off to the one waiter it chose) wakes only that
 * owner's waiter. "<owner>|<ms>" tells that owner's waiter, and "|<ms>"
 * every waiter, to sleep at most ms (a new holder's lease ends sooner than
 * they would wake). An entry whose last waiter left lingers for LINGER_MS,
 * so a waiter that comes straight back (the usual case under contention)
 * finds the subscription ready.
 *
 * After the subscriber connection is re-established, every channel that
 * still has waiters is subscribed again, and its waiters try again once that
 * is confirmed: nothing published during the outage is relied upon.
 *
 * Where a channel is subscribed is the router's business (router.h): the
 * hub asks it for the subscriber connection of the channel's slot (the
 * one server's, or on a cluster that of the master that owns the slot),
 * and whether channels are sharded (SSUBSCRIBE; the release scripts then
 * SPUBLISH, which reaches only that shard). When the slot moves
 * (failover, migration: the node says so with an unasked "sunsubscribe",
 * or its connection drops, or a subscribe is redirected) the entry is
 * marked unsubscribed and the router is asked to refresh; when it reports
 * topology_changed the client tells its active entries, the hub's among
 * them (rehome()), which subscribes the entry on the new owner.
 *
 * The first waiter makes the hub; it registers with the client as an
 * active entry of the last stage, so the shutdown frees it once the
 * router and every waiter are gone. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "client.h"
#include "conn.h"
#include "hub.h"
#include "queue.h"
#include "reply.h"
#include "map.h"
#include "router.h"

#define LINGER_MS 2000

enum entry_state { UNSUBSCRIBED, SUBSCRIBING, SUBSCRIBED, UNSUBSCRIBING };

typedef struct rdl__hub_entry {
    rdl__map_node mnode;
    rdl__hub *hub;
    char *channel;
    size_t len;
    rdl__queue waiters;
    unsigned nwaiters;
    int state;
    uint64_t seq; /* the hub's event count at the channel's last event
                     that did not reach a sleeping waiter */
    uint64_t any; /* the same, for events that concern every waiter
                     (not a message naming an owner) */
    /* The last few messages that named an owner not (yet) in the entry:
     * a waiter that joins after its try checks whether one named it. */
    struct {
        uint64_t seq;
        size_t len;
        int64_t recap; /* "sleep at most" ms; -1: a wake-up */
        char owner[64];
    } named[4];
    unsigned nnamed;
    rdl__queue idle; /* in hub->idle while nwaiters == 0 */
    uint64_t idle_since;
    rdl__conn *sub; /* where it is (being) subscribed; NULL before */
    unsigned slot;  /* of the channel (the router's; 0 if unsharded) */
} entry;

struct rdl__hub {
    rdl_client_t *c;
    rdl__active active; /* the client's: rehome() and the shutdown */
    rdl__map map;
    rdl__queue idle; /* entries without waiters, oldest first */
    uv_timer_t sweep;
    uint64_t events; /* events counted so far, over every channel */
    int freed;
};

/* Records an event of e that a waiter who is not asleep in e, or not yet
 * in it, may have to act on (see rdl__hub_sleep). */
static void note_event(entry *e)
{
    e->seq = e->any = ++e->hub->events;
}

/* A message named an owner that is not (yet) one of this entry's waiters:
 * an event only for the waiter of that owner. */
static void note_named(entry *e, const char *owner, size_t len, int64_t recap)
{
    unsigned i = e->nnamed++ % 4;
    e->seq = ++e->hub->events;
    e->named[i].seq = e->seq;
    e->named[i].recap = recap;
    e->named[i].len = len <= sizeof(e->named[i].owner) ? len : SIZE_MAX;
    if (e->named[i].len != SIZE_MAX)
        memcpy(e->named[i].owner, owner, len);
}

/* 1 if an event since `since` may concern waiter w: one that concerns
 * every waiter, or a message that woke w's owner (or that can no longer
 * be told apart: the record of it was overwritten or too long). A message
 * that only told w's owner to sleep less is applied to w->recap_ms. */
static int event_for(const entry *e, rdl__waiter *w, uint64_t since)
{
    unsigned i, n = e->nnamed < 4 ? e->nnamed : 4;
    size_t len;
    if (e->seq <= since)
        return 0;
    if (e->any > since || w->target == NULL)
        return 1;
    if (e->nnamed > 4 && e->named[e->nnamed % 4].seq > since)
        return 1; /* the oldest kept is newer than since: some were lost */
    len = strlen(w->target);
    for (i = 0; i < n; i++) {
        if (e->named[i].seq <= since)
            continue;
        if (e->named[i].len == SIZE_MAX)
            return 1;
        if (e->named[i].len != len ||
            memcmp(e->named[i].owner, w->target, len) != 0)
            continue;
        if (e->named[i].recap < 0)
            return 1;
        if (w->recap_ms < 0 || e->named[i].recap < w->recap_ms)
            w->recap_ms = e->named[i].recap;
    }
    return 0;
}

static void subscribe(entry *e);

static void free_entry(entry *e)
{
    rdl__map_remove(&e->hub->map, &e->mnode);
    if (rdl__queue_linked(&e->idle))
        rdl__queue_remove(&e->idle);
    rdl__free(e->channel);
    rdl__free(e);
}

/* Calls every waiter's fn with `event`; waiters may leave or go back to
 * sleep from inside fn. */
static void wake_all(entry *e, int event)
{
    rdl__queue q;
    rdl__waiter *w;
    note_event(e);
    rdl__queue_init(&q);
    rdl__queue_move(&e->waiters, &q);
    while (!rdl__queue_empty(&q)) {
        w = RDL_CONTAINER_OF(rdl__queue_head(&q), rdl__waiter, node);
        rdl__queue_remove(&w->node);
        rdl__queue_insert_tail(&e->waiters, &w->node);
        w->sleeping = 0;
        w->fn(w, event);
    }
}

/* The waiter of e whose target is `owner`, or NULL. */
static rdl__waiter *find_target(entry *e, const char *owner, size_t len)
{
    rdl__queue *n;
    for (n = e->waiters.next; n != &e->waiters; n = n->next) {
        rdl__waiter *w = RDL_CONTAINER_OF(n, rdl__waiter, node);
        if (w->target != NULL && strlen(w->target) == len &&
            memcmp(w->target, owner, len) == 0)
            return w;
    }
    return NULL;
}

/* A message that names an owner: wakes that owner's waiter, if it is one
 * of ours; one that is busy trying tries again instead of sleeping. */
static void wake_target(entry *e, const char *owner, size_t len)
{
    rdl__waiter *w = find_target(e, owner, len);
    if (w != NULL) {
        if (!w->sleeping) {
            w->pending = 1;
            return;
        }
        w->sleeping = 0;
        RDL__STAT_INC(&e->hub->c->net, wakeups);
        w->fn(w, RDL__WAKE_MESSAGE);
        return;
    }
    /* Not one of ours yet: its owner may be between a try and its join. */
    note_named(e, owner, len, -1);
}

/* "<owner>|<ms>": the waiter of that owner sleeps at most ms from now. If
 * it is not here yet (between its try and its join), the answer of that
 * try may predate what the message says: noted, and applied when it
 * joins. */
static void recap(rdl__waiter *w, int64_t ms)
{
    if (w->recap_ms < 0 || ms < w->recap_ms)
        w->recap_ms = ms;
    if (w->sleeping)
        w->fn(w, RDL__WAKE_RECAP);
}

static void recap_target(entry *e, const char *owner, size_t len, int64_t ms)
{
    rdl__waiter *w = find_target(e, owner, len);
    if (w != NULL) {
        recap(w, ms);
        return;
    }
    note_named(e, owner, len, ms);
}

/* "|<ms>" (no owner): every waiter of e sleeps at most ms from now (a
 * read-write lock's new hold, whose lease ends before some waiter's sleep
 * would). A waiter between its try and its join may hold an answer that
 * predates the message: the event makes it try again when it joins. */
static void recap_all(entry *e, int64_t ms)
{
    rdl__queue *n, *next;
    note_event(e);
    for (n = e->waiters.next; n != &e->waiters; n = next) {
        rdl__waiter *w = RDL_CONTAINER_OF(n, rdl__waiter, node);
        next = n->next; /* fn may make w leave */
        recap(w, ms);
    }
}

/* ---- subscriber connection ------------------------------------------------ */

static void on_subscribed(void *data, int status, const redisReply *r,
                          uint64_t written_ms)
{
    entry *e = data;
    rdl_client_t *c = e->hub->c;
    (void)written_ms;
    (void)r;
    if (e->hub->freed)
        return;
    if (status != 0) {
        /* Waiters keep their capped sleeps; the next reconnect (or the
         * next waiter) subscribes again. On a cluster the channel's slot
         * may have moved (MOVED, a dead master): the refresh that follows
         * rehomes it. */
        e->state = UNSUBSCRIBED;
        rdl__router_refresh(c->router);
        return;
    }
    e->state = SUBSCRIBED;
    wake_all(e, RDL__WAKE_SUBSCRIBED);
}

static void on_unsubscribed(void *data, int status, const redisReply *r,
                            uint64_t written_ms)
{
    entry *e = data;
    (void)written_ms;
    (void)status;
    (void)r;
    if (e->hub->freed)
        return;
    e->state = UNSUBSCRIBED;
    if (e->nwaiters > 0)
        subscribe(e); /* a waiter came back meanwhile */
    else
        free_entry(e);
}

static void send_channel_cmd(entry *e, const char *verb, rdl__reply_fn fn)
{
    const char *argv[2] = {verb, e->channel};
    size_t lens[2] = {strlen(verb), e->len};
    if (e->sub == NULL || rdl__conn_sendv(e->sub, 2, argv, lens, fn, e) != 0)
        fn(e, RDL_ENOMEM, NULL, 0);
}

/* 1 if channels are sharded (SSUBSCRIBE), matching the release scripts'
 * publish command. */
static int sharded(const rdl__hub *h)
{
    return rdl__router_sharded(h->c->router);
}

static const rdl__conn_events sub_events;

/* The subscriber connection for e: the one of its slot's node. */
static rdl__conn *sub_for(rdl__hub *h, const entry *e)
{
    return rdl__router_sub(h->c->router, e->slot, &sub_events, h);
}

static void subscribe(entry *e)
{
    e->state = SUBSCRIBING;
    e->sub = sub_for(e->hub, e);
    RDL__STAT_INC(&e->hub->c->net, subscribes);
    send_channel_cmd(e, sharded(e->hub) ? "SSUBSCRIBE" : "SUBSCRIBE",
                     on_subscribed);
}

static void on_sub_ready(rdl__conn *cn, void *data)
{
    rdl__hub *h = data;
    size_t i;
    rdl__map_node *n, *next;
    (void)cn;
    for (i = 0; i < h->map.nbuckets; i++) {
        for (n = h->map.buckets[i]; n != NULL; n = next) {
            entry *e = RDL_CONTAINER_OF(n, entry, mnode);
            next = n->next;
            if (e->state != UNSUBSCRIBED || (e->sub != NULL && e->sub != cn))
                continue;
            if (e->nwaiters > 0)
                subscribe(e);
            else
                free_entry(e);
        }
    }
}

static void on_sub_down(rdl__conn *cn, int status, void *data)
{
    rdl__hub *h = data;
    size_t i;
    rdl__map_node *n;
    unsigned lost = 0;
    (void)status;
    /* Subscriptions die with the connection; commands in flight already
     * reported their failure. */
    for (i = 0; i < h->map.nbuckets; i++)
        for (n = h->map.buckets[i]; n != NULL; n = n->next) {
            entry *e = RDL_CONTAINER_OF(n, entry, mnode);
            if (e->state == SUBSCRIBED && e->sub == cn) {
                e->state = UNSUBSCRIBED;
                lost++;
            }
        }
    /* A master that went away may have been replaced; a dead node's
     * reconnect attempts, which lose nothing, ask for nothing. */
    if (lost > 0)
        rdl__router_refresh(h->c->router);
}

/* A "sunsubscribe": the reply to ours while the entry unsubscribes on
 * this connection, else a push saying the channel's slot left the node. */
static int on_sub_unsubscribed(rdl__conn *cn, const redisReply *r, void *data)
{
    rdl__hub *h = data;
    const char *ch;
    size_t chl;
    rdl__map_node *n;
    entry *e;
    if (!rdl__reply_sunsubscribe(r, &ch, &chl))
        return 0;
    n = rdl__map_find(&h->map, ch, chl);
    e = n != NULL ? RDL_CONTAINER_OF(n, entry, mnode) : NULL;
    if (e != NULL && e->sub == cn && e->state == UNSUBSCRIBING)
        return 0;
    if (e != NULL && e->sub == cn && e->state == SUBSCRIBED) {
        e->state = UNSUBSCRIBED;
        rdl__router_refresh(h->c->router);
    }
    return 1;
}

static void on_sub_message(rdl__conn *cn, const redisReply *r, void *data)
{
    rdl__hub *h = data;
    const char *ch, *msg;
    size_t chl, msgl;
    rdl__map_node *n;
    entry *e;
    const char *bar;
    (void)cn;
    if (!rdl__reply_message(r, &ch, &chl, &msg, &msgl))
        return;
    RDL__STAT_INC(&h->c->net, messages);
    n = rdl__map_find(&h->map, ch, chl);
    if (n == NULL)
        return;
    e = RDL_CONTAINER_OF(n, entry, mnode);
    if (msgl == 1 && msg[0] == RDL__MSG_WAKE_ALL[0]) {
        RDL__STAT_ADD(&h->c->net, wakeups, e->nwaiters);
        wake_all(e, RDL__WAKE_MESSAGE);
    } else if ((bar = memchr(msg, '|', msgl)) != NULL) {
        char num[24];
        size_t nl = msgl - (size_t)(bar - msg) - 1;
        if (nl == 0 || nl >= sizeof(num))
            return;
        memcpy(num, bar + 1, nl);
        num[nl] = '\0';
        if (bar == msg)
            recap_all(e, strtoll(num, NULL, 10));
        else
            recap_target(e, msg, (size_t)(bar - msg), strtoll(num, NULL, 10));
    } else {
        wake_target(e, msg, msgl);
    }
}

static const rdl__conn_events sub_events = {
    on_sub_ready, on_sub_down, on_sub_message, on_sub_unsubscribed};

/* ---- lingering entries ---------------------------------------------------- */

static void on_sweep(uv_timer_t *t)
{
    rdl__hub *h = t->data;
    uint64_t now = rdl__now_ms();
    entry *e;
    while (!rdl__queue_empty(&h->idle)) {
        e = RDL_CONTAINER_OF(rdl__queue_head(&h->idle), entry, idle);
        if (e->idle_since + LINGER_MS > now)
            break;
        rdl__queue_remove(&e->idle);
        if (e->state == SUBSCRIBED) {
            e->state = UNSUBSCRIBING;
            send_channel_cmd(e, sharded(h) ? "SUNSUBSCRIBE" : "UNSUBSCRIBE",
                             on_unsubscribed);
        } else if (e->state == UNSUBSCRIBED) {
            free_entry(e);
        } else {
            /* A reply is on its way; look again later. */
            e->idle_since = now;
            rdl__queue_insert_tail(&h->idle, &e->idle);
        }
    }
    if (!rdl__queue_empty(&h->idle))
        uv_timer_start(&h->sweep, on_sweep, LINGER_MS / 2, 0);
}

/* ---- waiters -------------------------------------------------------------- */

static rdl__hub *hub_of(rdl_client_t *c);

int rdl__hub_join(rdl_client_t *c, const char *channel, rdl__waiter *w,
                  rdl__wake_fn fn)
{
    rdl__hub *h = hub_of(c);
    size_t len = strlen(channel);
    rdl__map_node *n;
    entry *e;

    if (h == NULL)
        return c->state == RDL__CLIENT_RUNNING ? RDL_ENOMEM : RDL_ECLOSED;
    n = rdl__map_find(&h->map, channel, len);
    if (n != NULL) {
        e = RDL_CONTAINER_OF(n, entry, mnode);
    } else {
        e = rdl__calloc(1, sizeof(*e));
        if (e == NULL)
            return RDL_ENOMEM;
        e->channel = rdl__strndup(channel, len);
        if (e->channel == NULL ||
            rdl__map_insert(&h->map, &e->mnode, e->channel, len) != 0) {
            rdl__free(e->channel);
            rdl__free(e);
            return RDL_ENOMEM;
        }
        e->hub = h;
        e->len = len;
        e->slot = rdl__router_slot(c->router, channel, len);
        e->state = UNSUBSCRIBED;
        rdl__queue_init(&e->waiters);
        rdl__queue_init(&e->idle);
    }
    if (rdl__queue_linked(&e->idle))
        rdl__queue_remove(&e->idle);
    rdl__queue_init(&w->node);
    rdl__queue_insert_tail(&e->waiters, &w->node);
    w->entry = e;
    w->fn = fn;
    w->sleeping = 0;
    w->pending = 0;
    w->fresh = 1;
    w->recap_ms = -1;
    e->nwaiters++;
    if (e->state == SUBSCRIBED)
        return 1;
    if (e->state == UNSUBSCRIBED)
        subscribe(e);
    return 0; /* SUBSCRIBING, or UNSUBSCRIBING: resubscribes on reply */
}

void rdl__hub_leave(rdl__waiter *w)
{
    entry *e = w->entry;
    rdl__hub *h;
    if (e == NULL)
        return;
    h = e->hub;
    rdl__queue_remove(&w->node);
    w->entry = NULL;
    if (--e->nwaiters > 0)
        return;
    if (h->freed)
        return;
    e->idle_since = rdl__now_ms();
    if (e->state != UNSUBSCRIBING)
        rdl__queue_insert_tail(&h->idle, &e->idle);
    if (!uv_is_active((uv_handle_t *)&h->sweep))
        uv_timer_start(&h->sweep, on_sweep, LINGER_MS, 0);
}

int rdl__hub_sleep(rdl__waiter *w)
{
    entry *e = w->entry;
    int fresh = w->fresh;
    w->fresh = 0;
    if (w->pending) {
        w->pending = 0;
        return 1;
    }
    /* The try that found the lock busy was sent before w joined: an event
     * of the channel since that send (a release published while its reply
     * was on the way) reached nobody on w's behalf. This does not depend
     * on which of the two connections delivered its bytes first. */
    if (fresh && event_for(e, w, w->since))
        return 1;
    w->sleeping = 1;
    return 0;
}

uint64_t rdl__hub_mark(rdl_client_t *c)
{
    return c->hub != NULL ? c->hub->events : 0;
}

void rdl__hub_busy(rdl__waiter *w, uint64_t mark)
{
    w->sleeping = 0;
    w->since = mark;
}

/* The router reported topology_changed: channels whose slot moved to
 * another node are subscribed there (their waiters try again once that is
 * confirmed). */
static void rehome(rdl__active *a)
{
    rdl__hub *h = RDL_CONTAINER_OF(a, rdl__hub, active);
    size_t i;
    rdl__map_node *n, *next;
    if (h->freed)
        return;
    for (i = 0; i < h->map.nbuckets; i++) {
        for (n = h->map.buckets[i]; n != NULL; n = next) {
            entry *e = RDL_CONTAINER_OF(n, entry, mnode);
            next = n->next;
            /* A subscription on a node that no longer owns the slot hears
             * nothing more; the old node dropped it or will. */
            if (e->state == SUBSCRIBED && e->sub != sub_for(h, e))
                e->state = UNSUBSCRIBED;
            if (e->state != UNSUBSCRIBED)
                continue;
            if (e->nwaiters > 0)
                subscribe(e);
            else
                free_entry(e);
        }
    }
}

/* ---- lifecycle ------------------------------------------------------------ */

static void on_sweep_closed(uv_handle_t *t)
{
    rdl__hub *h = t->data;
    rdl_client_t *c = h->c;
    rdl__free(h);
    rdl__net_handle_closed(&c->net);
}

/* Shutdown, once the router (which owns the subscriber connections) is
 * closed and the waiters are gone: frees the hub. */
static void hub_free(rdl__active *a)
{
    rdl__hub *h = RDL_CONTAINER_OF(a, rdl__hub, active);
    size_t i;
    rdl__map_node *n, *next;
    h->freed = 1;
    h->c->hub = NULL;
    for (i = 0; i < h->map.nbuckets; i++) {
        for (n = h->map.buckets[i]; n != NULL; n = next) {
            entry *e = RDL_CONTAINER_OF(n, entry, mnode);
            next = n->next;
            rdl__free(e->channel);
            rdl__free(e);
        }
    }
    rdl__map_clear(&h->map);
    uv_close((uv_handle_t *)&h->sweep, on_sweep_closed);
}

/* The client's hub, made on first use while the client runs; NULL when
 * out of memory or closing. */
static rdl__hub *hub_of(rdl_client_t *c)
{
    rdl__hub *h = c->hub;
    if (h != NULL || c->state != RDL__CLIENT_RUNNING)
        return h;
    h = rdl__calloc(1, sizeof(*h));
    if (h == NULL)
        return NULL;
    h->c = c;
    rdl__map_init(&h->map);
    rdl__queue_init(&h->idle);
    uv_timer_init(c->net.loop, &h->sweep);
    h->sweep.data = h;
    rdl__net_handle_opened(&c->net);
    rdl__active_init(&h->active, RDL__STAGE_HUB, hub_free, rehome);
    rdl__client_active_add(c, &h->active);
    c->hub = h;
    return h;
}
