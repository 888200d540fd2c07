/* Waiting for a latch to reach 0, as the locks wait for a release
 * (src/core/hub.h, docs/design-notes.md "How a wake-up can never be
 * missed"):
 *
 *   check ── count 0 or latch absent ──────────────────> done (0)
 *     │ count above 0
 *     ├─ one check (wait_ms 0), budget spent ──────────> done (RDL_ETIMEDOUT)
 *     └─ join the channel, sleep <= min(1 s, the latch's time to live,
 *        budget)
 *          └─ woken by the count down that reached 0 (a wake-all
 *             message), by the subscription being confirmed, or by the
 *             timer ──> check
 *
 * The hub's event count is marked before each check is sent, so a message
 * that lands while the check's answer is on its way (or before the
 * subscription existed: its confirmation is an event too) sends the
 * waiter back to check instead of to sleep. That is the "subscribe, then
 * read" order without a subscription for a latch that is already 0. No
 * polling: between checks a waiter sleeps until a message, and the 1 s cap
 * only bounds what a lost message costs; a latch whose time to live ends
 * (Redis publishes nothing then) is checked right after it ended.
 *
 * The blocking call's frame is the caller's; the operation (it owns a
 * timer, which closes after the call returned) is on the heap. */
#include <string.h>

#include "latch_int.h"

#define SLEEP_CAP_MS 1000

typedef struct await_call {
    rdl__sync sync;
    rdl_latch_t *l;
    int64_t wait_ms;
} await_call;

typedef struct latch_wait {
    rdl__sync *sync; /* the caller's: not touched after rdl__sync_done() */
    rdl_latch_t *l;
    rdl_client_t *c; /* for the timer's close, after the call returned */
    rdl__active active;
    uv_timer_t timer;
    rdl__waiter waiter;
    uint64_t deadline; /* monotonic ms; UINT64_MAX: no limit */
    int one_try;       /* wait_ms was 0 */
    int unknown;       /* unknown-outcome failures in a row */
    unsigned inflight : 1, again : 1, joined : 1;
} latch_wait;

static void send_check(latch_wait *op);

static void on_timer_closed(uv_handle_t *h)
{
    latch_wait *op = h->data;
    rdl_client_t *c = op->c;
    rdl__free(op);
    rdl__net_handle_closed(&c->net);
}

static void complete(latch_wait *op, int status)
{
    rdl__client_active_remove(&op->active);
    if (op->joined) {
        rdl__hub_leave(&op->waiter);
        op->joined = 0;
    }
    uv_timer_stop(&op->timer);
    uv_close((uv_handle_t *)&op->timer, on_timer_closed);
    if (status == RDL_ETIMEDOUT)
        rdl__errmsg_set(op->c,
                        "latch \"%.200s\" did not reach 0 within the wait "
                        "budget",
                        op->l->name);
    rdl__sync_done(op->sync, status);
}

static void on_timer(uv_timer_t *t)
{
    latch_wait *op = t->data;
    if (!op->inflight)
        send_check(op);
}

static void on_wake(rdl__waiter *w, int event)
{
    latch_wait *op = RDL_CONTAINER_OF(w, latch_wait, waiter);
    if (event == RDL__WAKE_RECAP) { /* the latch sends none: ignored */
        w->recap_ms = -1;
        return;
    }
    if (op->inflight) {
        op->again = 1; /* the check in flight may predate the message */
        return;
    }
    uv_timer_stop(&op->timer);
    send_check(op);
}

/* The count is above 0 and budget remains: sleep. pttl_ms: the latch's
 * remaining time to live (-1, -2: none known). */
static void sleep_until_woken(latch_wait *op, int64_t pttl_ms)
{
    uint64_t now = rdl__now_ms(), sleep_ms = SLEEP_CAP_MS;
    int rc;

    if (!op->joined) {
        rc = rdl__hub_join(op->c, op->l->channel, &op->waiter, on_wake);
        if (rc < 0) {
            complete(op, rc);
            return;
        }
        op->joined = 1;
        /* rc 0: the subscription is on its way; its confirmation wakes
         * this waiter for the check that closes the gap before it. */
    }
    if (op->again || rdl__hub_sleep(&op->waiter)) {
        send_check(op);
        return;
    }
    if (op->deadline != UINT64_MAX) {
        uint64_t left = op->deadline > now ? op->deadline - now : 0;
        if (left < sleep_ms)
            sleep_ms = left;
    }
    /* An expired latch reads 0, and its expiry publishes nothing. */
    if (pttl_ms >= 0 && (uint64_t)pttl_ms + 1 < sleep_ms)
        sleep_ms = (uint64_t)pttl_ms + 1;
    uv_timer_start(&op->timer, on_timer, sleep_ms > 0 ? sleep_ms : 1, 0);
}

static void on_check(void *data, int status, const redisReply *r,
                     uint64_t written_ms)
{
    latch_wait *op = data;
    uint64_t count = 0, now = rdl__now_ms();
    int64_t pttl = -1;
    int budget = now < op->deadline && !op->one_try;
    (void)written_ms;

    op->inflight = 0;
    if (status == 0)
        status = rdl__latch_parse_count(r, &count, &pttl);
    if (status != 0) {
        /* The check writes nothing: it is safe to send again. */
        if (rdl__outcome_unknown(status) &&
            (budget || op->unknown < RDL__UNKNOWN_RETRIES)) {
            op->unknown++;
            send_check(op);
            return;
        }
        if (status == RDL_ECONNREFUSED && budget) {
            send_check(op); /* never written: waits for the connection */
            return;
        }
        complete(op, status);
        return;
    }
    op->unknown = 0;
    if (count == 0)
        complete(op, 0);
    else if (!budget)
        complete(op, RDL_ETIMEDOUT);
    else
        sleep_until_woken(op, pttl);
}

static void send_check(latch_wait *op)
{
    /* Interest is registered before the check is sent: the hub's event
     * count tells, once the answer is in, whether the channel had an
     * event meanwhile (rdl__hub_sleep). */
    uint64_t mark = rdl__hub_mark(op->c);
    int rc;
    if (op->joined)
        rdl__hub_busy(&op->waiter, mark);
    else
        op->waiter.since = mark;
    op->again = 0;
    rc = rdl__latch_send_count(op->l, on_check, op);
    if (rc != 0) {
        complete(op, rc);
        return;
    }
    op->inflight = 1;
}

static void on_abort(rdl__active *a)
{
    latch_wait *op = RDL_CONTAINER_OF(a, latch_wait, active);
    complete(op, RDL_ECLOSED);
}

static void start(rdl__sync *s)
{
    await_call *k = RDL_CONTAINER_OF(s, await_call, sync);
    rdl_client_t *c = k->l->c;
    uint64_t now = rdl__now_ms();
    latch_wait *op = rdl__calloc(1, sizeof(*op));

    if (op == NULL) {
        rdl__sync_done(s, RDL_ENOMEM);
        return;
    }
    op->sync = s;
    op->l = k->l;
    op->c = c;
    op->one_try = k->wait_ms == 0;
    op->deadline = k->wait_ms == RDL_WAIT_FOREVER ||
                           (uint64_t)k->wait_ms > UINT64_MAX - now
                       ? UINT64_MAX
                       : now + (uint64_t)k->wait_ms;
    rdl__queue_init(&op->active.node);
    op->active.abort = on_abort;
    op->active.stage = RDL__STAGE_OPERATION;
    uv_timer_init(c->net.loop, &op->timer);
    op->timer.data = op;
    rdl__net_handle_opened(&c->net);
    rdl__client_active_add(c, &op->active);
    send_check(op);
}

int rdl__latch_await(rdl_latch_t *l, int64_t wait_ms)
{
    await_call k;
    memset(&k, 0, sizeof(k));
    k.l = l;
    k.wait_ms = wait_ms;
    k.sync.start = start;
    return rdl__sync_call(l->c, &k.sync);
}
