/** @file
 * rdl: MultiLock and RedLock, locks made of other locks. Both are
 * rdl_lock_t objects used with the blocking rdl_lock_* calls
 * (rdl_lock_acquire, _release, _as forms, force release, info, fencing
 * token, valid_ms, lost callback); their async calls return RDL_ENOTSUP,
 * since their parts may live on several clients, hence several loops.
 *
 * Which one?
 * - MultiLock: you need several resources at once (an order and its
 *   payment), each guarded by its own lock. All or nothing.
 * - RedLock: you want one lock to survive the loss of a Redis deployment,
 *   and run n >= 3 independent ones. Its safety is disputed: Martin
 *   Kleppmann ("How to do distributed locking", 2016) showed that process
 *   pauses and clock jumps break it, and Salvatore Sanfilippo's reply
 *   ("Is Redlock safe?") argues the assumptions hold in practice. Neither
 *   side disputes that a lease cannot protect against a paused holder:
 *   fencing tokens, checked by the resource, are the stronger tool, and a
 *   single Redis (or a cluster) with fencing tokens is what we recommend.
 *   Redis servers that restart without persistence also break it: keep the
 *   restarted node out for longer than the longest lease. */
#ifndef RDL_MULTILOCK_H
#define RDL_MULTILOCK_H

#include "lock.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Creates a MultiLock over `locks` (any kinds, on one or several clients):
 * acquiring it acquires every part within the wait budget or leaves none
 * held; releasing it releases all. Parts are taken in one canonical order
 * (by kind, key and server), the same in every process, so two multilocks
 * over overlapping sets never deadlock. With RDL_LEASE_AUTO every part's
 * client renews it; the hold is lost (the lost callback runs once, the
 * release returns RDL_ELOST) as soon as any part is lost; the first release
 * after that gives back every level of the parts that survived. A fixed
 * lease is given to each part when taken, so the first part's runs out
 * first: rdl_lock_valid_ms() reports the shortest. The acquisition succeeds
 * only when every part is held with at least half the fixed lease left: it
 * never waits for a later part longer than that allows, and when that (not
 * the budget) ends a wait it gives every part back and starts over. A
 * budget spent while taking parts is RDL_ETIMEDOUT. rdl_lock_fencing_token()
 * returns the largest part token; rdl_multilock_part_token() each one.
 * When all parts are plain locks (rdl_lock_new) of one client that share a
 * hash tag ("{order:42}:stock", "{order:42}:payment"), one script call
 * takes them all, atomically. A multilock is reentrant per owner, like its
 * parts.
 *
 * The parts stay the caller's: they must outlive the multilock, and the
 * multilock replaces their lost callbacks (restored to none when it is
 * freed). rdl_lock_name() is "a+b+...".
 *
 * @param locks  1..64 distinct locks, none itself a multilock or redlock.
 *               Two parts that are one lock (the same kind and key on the
 *               same server: "x" and "{x}", two objects or two clients
 *               for one name, the two views of one read-write lock) are
 *               RDL_EINVAL.
 * @param n      the number of locks.
 * @param out    receives the multilock; NULL on failure.
 * @return 0; RDL_EINVAL (bad parts; rdl_client_errmsg() of the first
 *         part's client says why); RDL_ENOMEM. A failed acquisition names
 *         the part that could not be had in the same place.
 *
 * Thread safety: safe from any thread; the multilock is used like a lock.
 */
RDL_API RDL_NODISCARD int rdl_multilock_new(rdl_lock_t *const *locks, size_t n,
                                            rdl_lock_t **out);

/**
 * Creates a RedLock over n locks of one name on n independent deployments
 * (n distinct clients; n >= 3 and odd is sensible). An acquisition tries
 * every part once per round: it succeeds when a majority (n/2+1) granted
 * it and the time spent leaves part of the lease (less 1% + 2 ms for clock
 * drift); otherwise the grants are released at once and, while the wait
 * budget lasts, a new round follows after a random pause of 20..100 ms.
 * Failure: RDL_EBUSY / RDL_ETIMEDOUT when enough servers answered but the
 * lock is held elsewhere, RDL_ENOQUORUM when too few answered; either way
 * rdl_client_errmsg() of the first part's client (as given) lists each
 * server's answer in the last round.
 * Release releases every part held. The hold is lost once fewer than a
 * majority of parts remain.
 *
 * @return as rdl_multilock_new(); RDL_EINVAL also for two parts on one
 *         client.
 *
 * Thread safety: as rdl_multilock_new().
 */
RDL_API RDL_NODISCARD int rdl_redlock_new(rdl_lock_t *const *locks, size_t n,
                                          rdl_lock_t **out);

/**
 * The fencing token of part i (in the order given to the constructor for a
 * redlock, in the canonical order for a multilock) of the owner's hold, 0
 * if none. Each part's token fences the resource that part guards.
 * Thread safety: safe from any thread.
 */
RDL_API uint64_t rdl_multilock_part_token(const rdl_lock_t *lock,
                                          rdl_owner_t owner, size_t i);

#ifdef __cplusplus
}
#endif

#endif
