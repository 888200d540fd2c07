/* The count-down latch (include/rdl/latch.h): the latch object and what
 * its files share. latch.c checks arguments and dispatches, call.c runs
 * the single script calls (set, count down, count), await.c waits.
 * Every call is blocking (the sync facade, core/sync.h); the work runs on
 * the loop thread. Built on core only: it needs no lock machinery, no
 * holds and no watchdog. */
#ifndef RDL_LATCH_INT_H
#define RDL_LATCH_INT_H

#include "core/internal.h"

struct rdl_latch_s {
    rdl_client_t *c;
    char *name;
    char *key;     /* "<prefix>:latch:{name}": count, expiry, applied set */
    char *channel; /* "<prefix>:latch.ch:{name}": the count reached 0 */
};

/* Unknown-outcome failures (connection lost, command timeout) retried
 * with the same request id, as the lock calls do. */
#define RDL__LATCH_RETRIES 3

/* How long a latch's applied set remembers a request, and the rule that a
 * retry is sent only while it reaches the server within that time of the
 * first send: the same window as the locks' (docs/design-notes.md,
 * "Request ids"), so a retry always finds its record if it was applied. */
static inline int64_t rdl__latch_window_ms(const rdl_client_t *c)
{
    return c->command_ms * (RDL__LATCH_RETRIES + 2) + 1000;
}
static inline int rdl__latch_retry_in_window(const rdl_client_t *c,
                                             uint64_t first_sent)
{
    return rdl__now_ms() - first_sent + (uint64_t)c->command_ms <
           (uint64_t)rdl__latch_window_ms(c);
}

/* 1 for failures after which the command may or may not have run. */
static inline int rdl__latch_unknown(int status)
{
    return status == RDL_ECONNLOST || status == RDL_ECMDTIMEOUT;
}

/* call.c: the blocking script calls (arguments checked). set: 0 or
 * RDL_EBUSY; count down: 0; count: 0 with *out. Infrastructure codes
 * otherwise. */
int rdl__latch_set(rdl_latch_t *l, uint64_t count, int64_t ttl_ms);
int rdl__latch_count_down(rdl_latch_t *l);
int rdl__latch_count(rdl_latch_t *l, uint64_t *out);

/* call.c: the reply of latch_count.lua, {count, pttl}: 0 with the count
 * and pttl (-2 if absent), or RDL_EPROTO. */
int rdl__latch_parse_count(const redisReply *r, uint64_t *count, int64_t *pttl);
/* call.c: runs latch_count.lua for l (loop thread). */
int rdl__latch_send_count(rdl_latch_t *l, rdl__reply_fn fn, void *data);

/* await.c: waits until the count is 0 (wait_ms checked). */
int rdl__latch_await(rdl_latch_t *l, int64_t wait_ms);

#endif
