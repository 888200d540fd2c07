/* wait.h: waiting until something may have changed, shared by the lock
 * kinds' acquisitions (lock/acquire.c) and the latch's await
 * (latch/await.c): try, and on a "not yet" answer sleep on a pub/sub
 * channel until a message, the subscription's confirmation or a timer
 * says to try again (docs/design-notes.md "How a wake-up can never be
 * missed"). One rdl__wait is embedded in each operation, which owns it
 * and gives it the one step that differs, sending a try (`send`).
 *
 * Loop thread only. The operation's memory must stay until the timer is
 * closed: rdl__wait_close() hands it back through `closed`. */
#ifndef RDL_CORE_WAIT_H
#define RDL_CORE_WAIT_H

#include <stdint.h>

#include <uv.h>

#include "client.h"
#include "hub.h"

typedef struct rdl__wait rdl__wait;

struct rdl__wait {
    rdl_client_t *c;
    /* The operation's try: calls rdl__wait_trying() right before it
     * sends, sets `inflight` once it did, and ends the operation itself
     * if it cannot. Called by the timer, by a wake-up, and by
     * rdl__wait_not_yet() when a wake-up came while the last try was in
     * flight. */
    void (*send)(rdl__wait *w);
    void (*closed)(rdl__wait *w); /* see rdl__wait_close() */
    uv_timer_t timer;
    rdl__waiter waiter;    /* its target, if any, is set before the first
                              rdl__wait_not_yet() */
    uint64_t deadline;     /* monotonic ms; UINT64_MAX: no limit */
    int unknown;           /* unknown-outcome failures in a row */
    unsigned inflight : 1, /* a command of the operation is out: its
                              answer decides the next step */
        again : 1,         /* a wake-up came while it was */
        joined : 1,        /* among the hub's waiters */
        halted : 1;        /* rdl__wait_halt(): wake-ups and the timer do
                              nothing more */
};

/* Sets up w for a wait of wait_ms (RDL_WAIT_FOREVER or >= 0) that starts
 * at `now`, and opens its timer (a handle of c). wait_ms 0 is one try:
 * its deadline is its start, so no budget ever remains after it. */
void rdl__wait_init(rdl__wait *w, rdl_client_t *c, int64_t wait_ms,
                    uint64_t now, void (*send)(rdl__wait *w));

/* 1 while budget remains at `now`. */
static inline int rdl__wait_budget(const rdl__wait *w, uint64_t now)
{
    return now < w->deadline;
}

/* A try is about to be sent. Interest is registered first: the hub's
 * event count, marked now, tells once the answer is in whether the
 * channel had an event meanwhile (rdl__hub_sleep). A wake-up that came
 * before this try is answered by it. */
void rdl__wait_trying(rdl__wait *w);

/* A try failed with `status` (after its answer cleared `inflight`):
 * returns 1 if it is to be sent again, 0 if the wait ends with the
 * failure. An unknown outcome (the same request id goes again, applied
 * at most once) is retried while budget remains, and then up to
 * RDL__UNKNOWN_RETRIES times in a row; a try never written for want of a
 * connection is retried while budget remains, unless halted. */
int rdl__wait_retry(rdl__wait *w, int status, uint64_t now);

/* The answer was "not yet" (held by another, a count above 0). Returns
 * RDL_ETIMEDOUT if no budget remains at `now`; a failure to join the
 * channel (the first time); else 0: the waiter joined the channel, and
 * either a wake-up that came while the try was out sends the next try at
 * once, or it sleeps until woken, for at most the least of most_ms, what
 * is left of the budget and a shorter lease told meanwhile
 * (RDL__WAKE_RECAP). */
int rdl__wait_not_yet(rdl__wait *w, const char *channel, uint64_t now,
                      uint64_t most_ms);

/* The operation is cancelled: wake-ups and the timer do nothing more, and
 * a try refused for want of a connection is not sent again. Returns 1 if
 * a command is in flight (its answer decides); else ends the wait at once
 * (rdl__wait_end): a wake-one message that arrives before the operation
 * completes goes to another waiter instead of to this one. */
int rdl__wait_halt(rdl__wait *w);

/* No wake-up and no timer acts any more: the waiter leaves the channel,
 * the timer stops. Any number of times. */
void rdl__wait_end(rdl__wait *w);

/* Closes the timer, once; closed(w) follows, and may free the
 * operation. */
void rdl__wait_close(rdl__wait *w, void (*closed)(rdl__wait *w));

#endif
