/* wait.c: the waiting state machine of wait.h, one for every kind of lock
 * and the latch:
 *
 *   try ── answered "not yet" ─┬─ no budget left ──────> RDL_ETIMEDOUT
 *                              └─ join the channel, sleep <= min(most,
 *                                 budget, a shorter lease told)
 *                                   └─ woken by a message, by the
 *                                      subscription being confirmed, or
 *                                      by the timer ──> try
 *
 * No polling: between tries the waiter sleeps until something says the
 * state may have changed, and the cap on each sleep makes a lost message
 * (or an expiry, on which Redis publishes nothing) cost at most one cap.
 * A wake-up that arrives while a try is in flight makes the next step a
 * try instead of a sleep, so nothing published between a try and its
 * sleep is missed. The operation decides what an answer means; this file
 * decides when the next try goes. Loop thread only. */
#include "wait.h"

#include "retry.h"

static void on_timer(uv_timer_t *t)
{
    rdl__wait *w = t->data;
    if (!w->inflight && !w->halted)
        w->send(w);
}

static void on_wake(rdl__waiter *waiter, int event)
{
    rdl__wait *w = RDL_CONTAINER_OF(waiter, rdl__wait, waiter);
    if (w->halted)
        return;
    if (event == RDL__WAKE_RECAP) {
        /* Still asleep, on a shorter leash: a new holder's lease ends
         * sooner than the one this waiter's timer was set for. */
        if (!w->inflight && uv_is_active((uv_handle_t *)&w->timer) &&
            (uint64_t)waiter->recap_ms < uv_timer_get_due_in(&w->timer)) {
            uv_timer_stop(&w->timer);
            uv_timer_start(
                &w->timer, on_timer,
                waiter->recap_ms > 0 ? (uint64_t)waiter->recap_ms : 1, 0);
        }
        if (!w->inflight)
            waiter->recap_ms = -1;
        return;
    }
    if (w->inflight) {
        w->again = 1; /* the try in flight may predate the message */
        return;
    }
    uv_timer_stop(&w->timer);
    w->send(w);
}

void rdl__wait_init(rdl__wait *w, rdl_client_t *c, int64_t wait_ms,
                    uint64_t now, void (*send)(rdl__wait *w))
{
    w->c = c;
    w->send = send;
    w->deadline = rdl__deadline_of(wait_ms, now);
    uv_timer_init(c->net.loop, &w->timer);
    w->timer.data = w;
    rdl__net_handle_opened(&c->net);
}

void rdl__wait_trying(rdl__wait *w)
{
    uint64_t mark = rdl__hub_mark(w->c);
    if (w->joined)
        rdl__hub_busy(&w->waiter, mark);
    else
        w->waiter.since = mark;
    w->again = 0;
}

int rdl__wait_retry(rdl__wait *w, int status, uint64_t now)
{
    int budget = rdl__wait_budget(w, now);
    if (rdl__outcome_unknown(status) &&
        (budget || w->unknown < RDL__UNKNOWN_RETRIES)) {
        w->unknown++;
        return 1;
    }
    return status == RDL_ECONNREFUSED && budget && !w->halted;
}

int rdl__wait_not_yet(rdl__wait *w, const char *channel, uint64_t now,
                      uint64_t most_ms)
{
    int64_t left = rdl__left_of(w->deadline, now);
    uint64_t sleep_ms = most_ms;
    int rc;

    w->unknown = 0; /* the try's outcome is known */
    if (!rdl__wait_budget(w, now))
        return RDL_ETIMEDOUT;
    if (!w->joined) {
        rc = rdl__hub_join(w->c, channel, &w->waiter, on_wake);
        if (rc < 0)
            return rc;
        w->joined = 1;
        /* rc 0: the subscription is on its way; its confirmation wakes
         * this waiter for the try that closes the gap before it. The
         * timer below still caps the wait. */
    }
    if (w->again || rdl__hub_sleep(&w->waiter)) {
        w->again = 0;
        w->send(w);
        return 0;
    }
    if (left != RDL_WAIT_FOREVER && (uint64_t)left < sleep_ms)
        sleep_ms = (uint64_t)left;
    /* A new holder's lease, told while this waiter was trying. */
    if (w->waiter.recap_ms >= 0) {
        if ((uint64_t)w->waiter.recap_ms < sleep_ms)
            sleep_ms = (uint64_t)w->waiter.recap_ms;
        w->waiter.recap_ms = -1;
    }
    uv_timer_start(&w->timer, on_timer, sleep_ms > 0 ? sleep_ms : 1, 0);
    return 0;
}

void rdl__wait_end(rdl__wait *w)
{
    if (w->joined) {
        rdl__hub_leave(&w->waiter);
        w->joined = 0;
    }
    uv_timer_stop(&w->timer);
}

int rdl__wait_halt(rdl__wait *w)
{
    w->halted = 1;
    if (w->inflight)
        return 1;
    rdl__wait_end(w);
    return 0;
}

static void on_closed(uv_handle_t *h)
{
    rdl__wait *w = h->data;
    rdl_client_t *c = w->c; /* w may be freed by closed() */
    w->closed(w);
    rdl__net_handle_closed(&c->net);
}

void rdl__wait_close(rdl__wait *w, void (*closed)(rdl__wait *w))
{
    w->closed = closed;
    uv_close((uv_handle_t *)&w->timer, on_closed);
}
