/* The count-down latch (include/rdl/latch.h): the latch object and what
 * its files share. latch.c checks arguments and dispatches, call.c runs
 * the single script calls (set, count down, count), await.c waits.
 * Every call is blocking (the sync facade, core/sync.h); the work runs on
 * the loop thread. Built on core only: it needs no lock machinery, no
 * holds and no watchdog. */
#ifndef RDL_LATCH_INT_H
#define RDL_LATCH_INT_H

#include "core/internal.h"
#include "core/retry.h"

struct rdl_latch_s {
    rdl_client_t *c;
    char *name;
    char *key;     /* "<prefix>:latch:{name}": count, expiry, applied set */
    char *channel; /* "<prefix>:latch.ch:{name}": the count reached 0 */
};

/* call.c: the blocking script calls (arguments checked). set: 0 or
 * RDL_EBUSY; count down: 0; count: 0 with *out. Infrastructure codes
 * otherwise. */
int rdl__latch_set(rdl_latch_t *l, uint64_t count, int64_t ttl_ms);
int rdl__latch_count_down(rdl_latch_t *l);
int rdl__latch_count(rdl_latch_t *l, uint64_t *out);

/* call.c: the reply of latch_count.lua, {count, pttl}: 0 with the count
 * and pttl (-2 if absent), or RDL_EPROTO. */
int rdl__latch_parse_count(const redisReply *r, uint64_t *count, int64_t *pttl);
/* call.c: the reply of latch_set.lua and latch_count_down.lua, {flag,
 * count} (the count a decimal string): 0 with both, or RDL_EPROTO. */
int rdl__latch_parse_flag_count(const redisReply *r, long long *flag,
                                uint64_t *count);
/* call.c: says (rdl_client_errmsg()) that the server answered a script of
 * l's with r, which no script returns (the call fails with RDL_EPROTO). */
void rdl__latch_bad_reply(rdl_latch_t *l, const redisReply *r);
/* call.c: runs latch_count.lua for l (loop thread). */
int rdl__latch_send_count(rdl_latch_t *l, rdl__reply_fn fn, void *data);

/* await.c: waits until the count is 0 (wait_ms checked). */
int rdl__latch_await(rdl_latch_t *l, int64_t wait_ms);

#endif
