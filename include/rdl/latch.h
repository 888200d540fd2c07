/** @file
 * rdl: the count-down latch (Redisson's RCountDownLatch). One process sets
 * a count; others count it down; anyone may wait until it reaches 0. All
 * waiters, on every client, wake together when it does (pub/sub, with
 * capped sleeps so a lost message costs little). The latch key expires
 * after the TTL given to rdl_latch_set(), so an abandoned latch does not
 * stay in Redis; an expired latch reads as 0.
 *
 * Key: "<prefix>:latch:{name}", one per latch (one slot on Redis Cluster;
 * `docs/design.md#key-layout`).
 * Every call is blocking, safe from any thread but the client's loop
 * thread (RDL_EDEADLK there). */
#ifndef RDL_LATCH_H
#define RDL_LATCH_H

#include "client.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A count-down latch object (opaque): made by rdl_latch_new(), freed by
 * rdl_latch_free(). */
typedef struct rdl_latch_s rdl_latch_t;

/**
 * Creates a latch object for `name` (same rules as lock names). Talks to
 * no server.
 * @return 0; RDL_EINVAL (NULL argument, bad name); RDL_ECLOSED; RDL_ENOMEM.
 */
RDL_API RDL_NODISCARD int rdl_latch_new(rdl_client_t *c, const char *name,
                                        rdl_latch_t **out);

/**
 * Sets the count, only if the latch is 0 or absent; the key lives `ttl_ms`.
 * @param l       the latch.
 * @param count   >= 1.
 * @param ttl_ms  1..RDL_LEASE_MAX_MS.
 * @return 0; RDL_EBUSY (the count is above 0: nothing changed);
 *         RDL_EINVAL; infrastructure codes.
 */
RDL_API int rdl_latch_set(rdl_latch_t *l, uint64_t count, int64_t ttl_ms);

/**
 * Counts down by one (never below 0). When the count reaches 0, every
 * waiter wakes. A retry after a lost reply is not counted twice.
 * @return 0 (also when the count was already 0); infrastructure codes.
 */
RDL_API int rdl_latch_count_down(rdl_latch_t *l);

/**
 * Waits until the count is 0 (at once if it is 0 or the latch is absent).
 * @param l        the latch.
 * @param wait_ms  0: check once; > 0: at most that long; RDL_WAIT_FOREVER.
 * @return 0; RDL_ETIMEDOUT; RDL_EINVAL; infrastructure codes.
 */
RDL_API int rdl_latch_await(rdl_latch_t *l, int64_t wait_ms);

/**
 * Reads the count (0 if absent or expired).
 * @return 0; RDL_EINVAL; infrastructure codes.
 */
RDL_API int rdl_latch_count(rdl_latch_t *l, uint64_t *out);

/** Frees the object (no server call). NULL is a no-op. Not while another
 * thread is inside a call on it. */
RDL_API void rdl_latch_free(rdl_latch_t *l);

#ifdef __cplusplus
}
#endif

#endif
