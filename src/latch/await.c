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
 * The waiting itself (when the next check goes) is core/wait.c's, as it
 * is the locks'; this file decides what each answer means.
 *
 * The blocking call's frame is the caller's; the operation (it owns a
 * timer, which closes after the call returned) is on the heap. Loop
 * thread, but for rdl__latch_await() (the caller's). */
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
    rdl__active active;
    rdl__wait wait; /* the deadline, timer, waiter, in-flight state */
} latch_wait;

static void send_check(rdl__wait *w);

static void on_wait_closed(rdl__wait *w)
{
    rdl__free(RDL_CONTAINER_OF(w, latch_wait, wait));
}

static void complete(latch_wait *op, int status)
{
    rdl__client_active_remove(&op->active);
    rdl__wait_end(&op->wait);
    rdl__wait_close(&op->wait, on_wait_closed);
    if (status == RDL_ETIMEDOUT)
        rdl__errmsg_set(op->wait.c,
                        "latch \"%.200s\" did not reach 0 within the wait "
                        "budget",
                        op->l->name);
    rdl__sync_done(op->sync, status);
}

static void on_check(void *data, int status, const redisReply *r,
                     uint64_t written_ms)
{
    latch_wait *op = data;
    uint64_t count = 0, now = rdl__now_ms(), most = SLEEP_CAP_MS;
    int64_t pttl = -1;
    (void)written_ms;

    op->wait.inflight = 0;
    if (status == 0 && (status = rdl__latch_parse_count(r, &count, &pttl)) != 0)
        rdl__latch_bad_reply(op->l, r);
    if (status != 0) {
        /* The check writes nothing: it is safe to send again. */
        if (rdl__wait_retry(&op->wait, status, now))
            send_check(&op->wait);
        else
            complete(op, status);
        return;
    }
    if (count == 0) {
        complete(op, 0);
        return;
    }
    /* pttl: the latch's remaining time to live (-1, -2: none known). An
     * expired latch reads 0, and its expiry publishes nothing. */
    if (pttl >= 0 && (uint64_t)pttl + 1 < most)
        most = (uint64_t)pttl + 1;
    status = rdl__wait_not_yet(&op->wait, op->l->channel, now, most);
    if (status != 0) /* RDL_ETIMEDOUT: one check, or the budget spent */
        complete(op, status);
}

static void send_check(rdl__wait *w)
{
    latch_wait *op = RDL_CONTAINER_OF(w, latch_wait, wait);
    int rc;
    rdl__wait_trying(w);
    rc = rdl__latch_send_count(op->l, on_check, op);
    if (rc != 0) {
        complete(op, rc);
        return;
    }
    w->inflight = 1;
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
    latch_wait *op = rdl__calloc(1, sizeof(*op));

    if (op == NULL) {
        rdl__sync_done(s, RDL_ENOMEM);
        return;
    }
    op->sync = s;
    op->l = k->l;
    rdl__active_init(&op->active, RDL__STAGE_OPERATION, on_abort, NULL);
    rdl__wait_init(&op->wait, c, k->wait_ms, rdl__now_ms(), send_check);
    rdl__client_active_add(c, &op->active);
    send_check(&op->wait);
}

int rdl__latch_await(rdl_latch_t *l, int64_t wait_ms)
{
    await_call k = {.sync = {.start = start}, .l = l, .wait_ms = wait_ms};
    return rdl__sync_call(l->c, &k.sync);
}
