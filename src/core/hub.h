/* hub.c: the client's pub/sub subscriptions, shared by its waiters
 * (docs/design.md#why-a-wake-up-cannot-be-missed).
 *
 * Loop thread only. The first waiter makes the client's hub, which ends in
 * the client's shutdown, after every waiter left (RDL__STAGE_HUB); a
 * waiter is owned by its acquisition and is only linked into the hub
 * between rdl__hub_join() and rdl__hub_leave(). */
#ifndef RDL_CORE_HUB_H
#define RDL_CORE_HUB_H

#include <stdint.h>

#include "queue.h"
#include "rdl.h"

typedef struct rdl__hub rdl__hub;

enum {
    RDL__WAKE_MESSAGE = 1,    /* a release message arrived */
    RDL__WAKE_SUBSCRIBED = 2, /* the channel is (re)subscribed: try again */
    RDL__WAKE_RECAP = 3,      /* sleep at most recap_ms from now (the
                                 waiter stays asleep) */
};

typedef struct rdl__waiter rdl__waiter;
typedef void (*rdl__wake_fn)(rdl__waiter *w, int event);

struct rdl__waiter {
    rdl__queue node;
    struct rdl__hub_entry *entry;
    rdl__wake_fn fn;
    const char *target; /* set before joining: only messages naming this
                           owner string wake the waiter (kinds whose
                           releases name the waiter they wake) */
    uint64_t since;     /* the hub's event count when its last try was sent */
    int64_t recap_ms;   /* a "sleep at most" message for it, not yet applied
                           (-1: none); see RDL__WAKE_RECAP */
    /* Flags, as bits: one waiter per waiting acquisition (the memory
     * figure's "waiter", <= 512 bytes). */
    unsigned sleeping : 1;
    unsigned pending : 1; /* a message named it while it was busy */
    unsigned fresh : 1;   /* joined after that try was sent: events of the
                             channel since then are checked once, at its
                             sleep */
};

/* Release message payloads. Any other payload is an owner string: it
 * wakes only the waiter whose target it is; "<owner>|<ms>" tells that
 * waiter to sleep at most ms (RDL__WAKE_RECAP, or at its next sleep if it
 * is trying). */
#define RDL__MSG_WAKE_ALL "1" /* wake every waiter */

/* Adds w to the channel's waiters, subscribing if needed. Returns 1 if the
 * subscription is already confirmed, 0 if RDL__WAKE_SUBSCRIBED will follow,
 * or RDL_ENOMEM. w starts busy (not sleeping); w->since must hold the
 * value rdl__hub_mark() gave when w's last try was sent, so that an event
 * of the channel between that send and the join is not missed (see
 * rdl__hub_sleep). RDL_ECLOSED once the client closes. */
int rdl__hub_join(rdl_client_t *c, const char *channel, rdl__waiter *w,
                  rdl__wake_fn fn);
/* Removes w; the subscription lingers briefly for the next waiter. */
void rdl__hub_leave(rdl__waiter *w);
/* Marks w asleep. Returns 1 (and stays busy) if the caller should try
 * again now instead: a message named w while it was busy, or w joined after
 * its try was sent and the channel had an event (a message, a confirmed
 * subscription) since that send. */
int rdl__hub_sleep(rdl__waiter *w);
/* The hub's event count, to be stored in a waiter's `since` right before
 * a try is sent (joined or not). Loop thread. */
uint64_t rdl__hub_mark(rdl_client_t *c);
/* Marks w busy (trying): call with the mark of the try being sent. */
void rdl__hub_busy(rdl__waiter *w, uint64_t mark);

#endif
