/** @file
 * rdl: the semaphore, a lock kind (an rdl_lock_t used with every rdl_lock_*
 * call: blocking, _as, async, info, fencing token, valid_ms, lost
 * callback, inside a MultiLock, from C++ and the rdl tool).
 *
 * Each acquisition by an owner takes one of the name's permits; one owner
 * may hold several (each acquisition takes one more, if one is free, and
 * each release returns one). Unlike Redisson's RSemaphore, every permit is
 * leased to its owner: a fixed lease, or RDL_LEASE_AUTO renewed by the
 * watchdog, so a crashed holder's permits come back when its lease ends,
 * whatever the other holders do. Every acquisition gets its own fencing
 * token, strictly increasing per name (rdl_lock_fencing_token() reports
 * the owner's latest).
 *
 * The total. The number of permits is stored in Redis with the semaphore:
 * the first acquisition (or rdl_semaphore_set_permits()) on a name Redis
 * does not know stores the total the lock object was created with; after
 * that the stored total is in force for every client, whatever total
 * their objects were created with (rdl_lock_info() reports it in
 * `permits`). rdl_semaphore_set_permits() changes it. Lowering it never
 * revokes permits already held: it only stops new grants until enough
 * are released. There are never more holders than the total in force at
 * the time of each grant. The stored total lives as long as the fence
 * (24 h after the last use).
 *
 * Waiting: a try that finds every permit taken registers the waiter; a
 * release wakes the first registered waiter, across all clients, one per
 * permit it freed (so do grants that find expired holders). Sleeps are
 * capped by the earliest holder's lease, so a crashed holder's permit is
 * taken soon after its lease ends. As for the plain lock, a running
 * thread may take a free permit before a woken waiter (not FIFO).
 *
 * Keys: "<prefix>:sem:{name}" (total, holders, tokens, waiters) and
 * "<prefix>:sem.x:{name}" (the holders' lease expiries, a sorted set); see
 * `docs/design.md#key-layout`. */
#ifndef RDL_SEMAPHORE_H
#define RDL_SEMAPHORE_H

#include "lock.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The largest total of permits. */
#define RDL_SEMAPHORE_MAX_PERMITS 1000000u

/**
 * Creates a semaphore named `name` with `permits` permits (see above for
 * which total is in force). Talks to no server.
 * @param c        a client (connected or not); must outlive the semaphore.
 * @param name     as for rdl_lock_new().
 * @param permits  1..RDL_SEMAPHORE_MAX_PERMITS.
 * @param out      receives the semaphore; NULL on failure.
 * @return as rdl_lock_new(); RDL_EINVAL for permits out of range.
 *
 * Thread safety: safe from any thread.
 */
RDL_API RDL_NODISCARD int rdl_semaphore_new(rdl_client_t *c, const char *name,
                                            uint32_t permits, rdl_lock_t **out);

/**
 * Stores `permits` as the semaphore's total in Redis, for every client
 * (one round trip). Raising it wakes as many waiters as permits it adds;
 * lowering it revokes nothing (see above). A call whose reply was lost is
 * sent again with the same request id and applied once: a retry never
 * stores its total over one another client stored after it.
 * @return 0; RDL_EINVAL (not a semaphore, permits out of range);
 *         RDL_EDEADLK (on the loop thread); RDL_ENOTCONN; RDL_ECLOSED;
 *         infrastructure codes.
 *
 * Thread safety: safe from any thread but the client's loop thread.
 */
RDL_API int rdl_semaphore_set_permits(rdl_lock_t *sem, uint32_t permits);

#ifdef __cplusplus
}
#endif

#endif
