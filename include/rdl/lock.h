/** @file
 * rdl: locks. Every lock kind is an rdl_lock_t and is used through the calls
 * below. This version provides the reentrant lock (rdl_lock_new) and the
 * fair lock (rdl_fairlock_new).
 *
 * Guarantees and their limits, in plain words:
 * - While a hold's lease runs, no other owner can acquire the lock, provided
 *   the Redis server keeps its data (no failover to a replica that missed the
 *   write, no restart without persistence).
 * - A lease is not mutual exclusion against pauses: a holder stopped (GC,
 *   SIGSTOP, swapping) past its lease keeps running afterwards while someone
 *   else holds the lock. Fencing tokens are the answer: every acquisition
 *   returns a 64-bit token strictly greater than every token issued before
 *   for that name while the name's fence key lives (24 hours past its last
 *   use, and not lost with the server's data); after that the token is the
 *   server's time in microseconds, still greater unless the server clock
 *   went back. Have the protected resource reject writes carrying a token
 *   smaller than the largest it has seen.
 * - RDL_LEASE_AUTO holds are renewed by the client's watchdog while they
 *   are held; when it cannot keep one (Redis unreachable until the lease
 *   ran out, the process paused past it, someone force-released it), it
 *   says so: the lost callback runs and the release returns RDL_ELOST. It
 *   cannot say so before the fact: check rdl_lock_valid_ms() right before
 *   a critical write, and use fencing tokens where it matters.
 * - Waiting uses pub/sub wake-ups, and every sleep is capped by the holder's
 *   remaining lease and the caller's wait budget, so a lost message or a
 *   crashed holder costs at most one lease, never a hang. */
#ifndef RDL_LOCK_H
#define RDL_LOCK_H

#include "client.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A lock of any kind (opaque): made by its kind's constructor
 * (rdl_lock_new(), rdl_fairlock_new(), ...), used through the calls below.
 */
typedef struct rdl_lock_s rdl_lock_t;

/**
 * Creates a reentrant exclusive lock named `name` (Redisson's RLock): one
 * owner at a time; the owner may acquire it again, and must release it as
 * many times as it acquired it. Creating the object talks to no server.
 * Waiters register in Redis; a release wakes one of them, across all
 * clients (the one that registered first), and a running thread may still
 * take the lock first (not FIFO: see rdl_fairlock_new() for that).
 *
 * @param c     a client (connected or not); must outlive the lock.
 * @param name  1..1024 bytes, NUL-terminated; copied. Names that hold a
 *              Redis Cluster hash tag ("{order:42}:stock") keep it, so
 *              locks can share a slot on purpose; others are wrapped whole
 *              ("{name}").
 * @param out   receives the lock; NULL on failure.
 * @return 0; RDL_EINVAL (NULL argument, empty or over-long name);
 *         RDL_ECLOSED (closed client); RDL_ENOMEM.
 *
 * Thread safety: safe from any thread.
 */
RDL_API RDL_NODISCARD int rdl_lock_new(rdl_client_t *c, const char *name,
                                       rdl_lock_t **out);

/**
 * Creates a fair lock named `name`: a reentrant lock (as rdl_lock_new())
 * granted strictly in the order in which waiters reached Redis, across all
 * clients. A waiter queues on its first try and keeps its place while it
 * waits; the release hands the lock to the head of the queue, and only
 * that waiter is woken. A newcomer takes a free lock only when nobody
 * waits; a one-shot try (wait_ms 0) never queues and gets RDL_EBUSY while
 * others wait. A waiter that dies drops out of the queue within a few
 * seconds (its entry lives for min(3 s, the watchdog lease) and the
 * client's watchdog renews it while the waiter waits); one that gives up
 * (wait budget spent, rdl_req_cancel()) leaves at once. When the client is
 * closed, its waiters' entries expire the same way.
 *
 * Fairness means order of arrival at Redis: two clients that ask at the
 * same moment are ordered by the network, not by their clocks.
 *
 * Key: one hash, "<prefix>:fair:{name}", holds the hold, the last fencing
 * token, the queue and the record of applied requests
 * (`docs/design.md#key-layout`); a fair lock and a plain lock of the same name
 * are different locks.
 * @return as rdl_lock_new().
 *
 * Thread safety: safe from any thread.
 */
RDL_API RDL_NODISCARD int rdl_fairlock_new(rdl_client_t *c, const char *name,
                                           rdl_lock_t **out);

/**
 * Frees a lock object. Holds are not released: fixed leases run out, and
 * the watchdog stops renewing RDL_LEASE_AUTO holds, which then expire
 * within one watchdog lease (no lost callback runs after this call, and
 * one that was running has returned). No request on the lock may be
 * pending. NULL is fine.
 * Thread safety: not concurrently with other calls on the same lock.
 */
RDL_API void rdl_lock_free(rdl_lock_t *lock);

/**
 * The lock's name as given to its constructor; NULL for a NULL lock. Valid
 * until rdl_lock_free().
 * Thread safety: safe from any thread.
 */
RDL_API const char *rdl_lock_name(const rdl_lock_t *lock);

/**
 * Acquires the lock as rdl_owner_self(), blocking.
 *
 * @param lock      the lock.
 * @param wait_ms   0: one try; > 0: wait at most this long;
 *                  RDL_WAIT_FOREVER: no limit.
 * @param lease_ms  > 0: the hold expires after this long unless released;
 *                  RDL_LEASE_AUTO: the watchdog lease, renewed until the
 *                  hold is released (see rdl_client_set_watchdog_ms()).
 *                  Re-entering refreshes the lease to the larger of what
 *                  is left and lease_ms; a hold that was auto stays auto.
 * @return 0 (held; see rdl_lock_fencing_token());
 *         RDL_EBUSY (wait_ms 0 and another owner holds it);
 *         RDL_ETIMEDOUT (wait budget spent; or the grant was read only
 *         after its lease could have ended, counted from when the try was
 *         written, and was given back with no budget left to try again);
 *         RDL_EINVAL (NULL lock, wait_ms or lease_ms negative other than
 *         the sentinels, lease_ms 0 or above RDL_LEASE_MAX_MS);
 *         RDL_EDEADLK (called on the client's loop thread); RDL_ENOTCONN
 *         (the client was never connected); RDL_ECLOSED;
 *         RDL_ECONNLOST or RDL_ECMDTIMEOUT (the outcome stayed unknown
 *         after retries; a hold taken would expire by its lease);
 *         RDL_ELOST (a re-entry found that this owner's hold had ended
 *         unnoticed: the server lost it, or its lease ran out before its
 *         local deadline said so; nothing is held, and releasing the outer
 *         levels reports RDL_ELOST too); any infrastructure code. Nothing
 *         is written to Redis for invalid input.
 *
 * Thread safety: safe from any thread but the client's loop thread.
 */
RDL_API RDL_NODISCARD int rdl_lock_acquire(rdl_lock_t *lock, int64_t wait_ms,
                                           int64_t lease_ms);

/**
 * Releases one level of the calling thread's hold (rdl_owner_self()).
 *
 * @return 0; RDL_ENOTHELD (this owner holds nothing here; nothing changed);
 *         RDL_ELOST (this owner held it, but the hold ended first: its lease
 *         expired, or it was force-released); RDL_EINVAL; RDL_EDEADLK;
 *         RDL_ENOTCONN; RDL_ECLOSED; infrastructure codes.
 *
 * Thread safety: safe from any thread but the client's loop thread.
 */
RDL_API RDL_NODISCARD int rdl_lock_release(rdl_lock_t *lock);

/**
 * Frees the lock whoever holds it, whatever its hold count, and wakes
 * waiters. For operators and recovery, not for normal use.
 *
 * A retry after a lost reply is answered as the first call was: it never
 * frees a hold taken after the first call freed the lock.
 *
 * @return 0 (it was held and is now free); RDL_ENOTHELD (it was free);
 *         RDL_EINVAL; RDL_EDEADLK; RDL_ENOTCONN; RDL_ECLOSED; RDL_ECONNLOST or
 *         RDL_ECMDTIMEOUT (the outcome stayed unknown); infrastructure
 *         codes.
 *
 * Thread safety: safe from any thread but the client's loop thread.
 */
RDL_API int rdl_lock_force_release(rdl_lock_t *lock);

/**
 * As rdl_lock_acquire(), for an explicit owner: any thread or callback that
 * passes the same owner value acts as the same owner (re-enters, releases).
 * @return as rdl_lock_acquire().
 *
 * Thread safety: safe from any thread but the client's loop thread.
 */
RDL_API RDL_NODISCARD int rdl_lock_acquire_as(rdl_lock_t *lock,
                                              rdl_owner_t owner,
                                              int64_t wait_ms,
                                              int64_t lease_ms);

/**
 * As rdl_lock_release(), for an explicit owner.
 * @return as rdl_lock_release().
 *
 * Thread safety: safe from any thread but the client's loop thread.
 */
RDL_API RDL_NODISCARD int rdl_lock_release_as(rdl_lock_t *lock,
                                              rdl_owner_t owner);

/**
 * The fencing token of the owner's current hold as this client knows it;
 * 0 if the owner holds none (or lock is NULL). Reads local state only (no
 * round trip), so it cannot tell that a lease has ended meanwhile; a
 * resource that checks tokens can. Re-entering a hold keeps its token.
 * Thread safety: safe from any thread.
 */
RDL_API uint64_t rdl_lock_fencing_token(const rdl_lock_t *lock,
                                        rdl_owner_t owner);

/**
 * How long the owner's hold is known to stay valid, in milliseconds from
 * now, by this client's monotonic clock: for RDL_LEASE_AUTO holds until the
 * lease granted by the last successful renewal ends, for fixed leases until
 * the lease ends, both measured from when the request was sent and less a
 * drift allowance. 0 if the owner holds nothing, or the hold was lost or
 * has run out. Reads local state only. Check it right before a write the
 * lock protects: a value well above the write's duration means the lease
 * cannot end during it unless the process is paused (fencing tokens cover
 * that case).
 * Thread safety: safe from any thread.
 */
RDL_API int64_t rdl_lock_valid_ms(const rdl_lock_t *lock, rdl_owner_t owner);

/**
 * Called once per hold that the watchdog could not keep, on the client's
 * loop thread. `reason`: RDL_ELOST (Redis says the hold is gone or held by
 * someone else: it expired, or was force-released), RDL_ETIMEDOUT (the
 * hold's local deadline passed before a renewal succeeded, e.g. the process
 * was paused), or the error that made every renewal fail until the deadline
 * (RDL_ECONNLOST, RDL_ECMDTIMEOUT, RDL_ECONNREFUSED, ...). The owner's
 * later release returns RDL_ELOST. The callback must not block (no blocking
 * rdl calls: they return RDL_EDEADLK there); it may start async calls, set
 * a flag, signal a worker.
 */
typedef void (*rdl_lost_cb)(rdl_lock_t *lock, rdl_owner_t owner, int reason,
                            void *data);

/**
 * Sets (or with cb NULL clears) the callback for lost holds of this lock,
 * for every owner. Fixed-lease holds are not watched: they end when their
 * lease does, and rdl_lock_valid_ms() says when.
 * @return 0; RDL_EINVAL for a NULL lock.
 *
 * Thread safety: safe from any thread. When it returns, no call of the
 * previous callback is running any more (it waits for one in progress on
 * the loop thread, unless called from inside that callback), so the
 * previous `data` may be freed then.
 */
RDL_API int rdl_lock_set_lost_cb(rdl_lock_t *lock, rdl_lost_cb cb, void *data);

/** What rdl_lock_info() reports. */
typedef struct rdl_lock_info_s {
    int locked;             /**< held by anyone */
    int held_by_owner;      /**< held by the owner asked about */
    uint32_t hold_count;    /**< that owner's reentrant count */
    uint32_t holders;       /**< owners holding it (0 or 1 here) */
    uint32_t waiters;       /**< waiters: queued (fair lock, write side of
                                 a read-write lock) or registered for a
                                 wake-up (plain lock) */
    uint32_t position;      /**< the owner's place in the queue (fair lock;
                                 1: next), 0 if it is not queued */
    uint32_t holder_count;  /**< the holder's hold count, whoever holds it
                                 (the writer's for a read-write lock; 0 if
                                 free or held by readers only) */
    int64_t ttl_ms;         /**< remaining lease; -2 if not locked */
    uint64_t fencing_token; /**< latest token issued for this name, 0 if
                                 none is remembered */
    uint32_t permits;       /**< 1 for the exclusive kinds; a semaphore's
                                 total in force (holders then counts the
                                 permits in use, hold_count the owner's) */
} rdl_lock_info_t;

/**
 * Reads the lock's state from Redis in one round trip (from the master).
 *
 * @param lock   the lock.
 * @param owner  the owner asked about for held_by_owner and hold_count.
 * @param out    receives the state.
 * @return 0; RDL_EINVAL; RDL_EDEADLK; RDL_ENOTCONN; RDL_ECLOSED;
 *         infrastructure codes.
 *
 * Thread safety: safe from any thread but the client's loop thread.
 */
RDL_API int rdl_lock_info(rdl_lock_t *lock, rdl_owner_t owner,
                          rdl_lock_info_t *out);

/* ---- Async (libuv style) ----------------------------------------------- */

/** An async request: struct rdl_req_s. */
typedef struct rdl_req_s rdl_req_t;

/** Completion callback: status is 0 or a negative RDL_E* code. */
typedef void (*rdl_req_cb)(rdl_req_t *req, int status);

/**
 * A request, owned by the caller, who must keep it alive and unchanged
 * until its callback has run. Initialise it with zeros or reuse it after its
 * callback.
 */
struct rdl_req_s {
    void *data;             /**< user data, untouched by rdl */
    rdl_lock_t *lock;       /**< read-only: the lock the request is for */
    uint64_t fencing_token; /**< set on a successful acquire */
    void *internal;         /**< private: the library's, while pending */
};

/**
 * Starts an acquisition for `owner`; the result arrives in cb.
 *
 * Callback contract: if this call returns < 0 the callback is never called;
 * otherwise it is called exactly once, on the loop thread, never from
 * inside this call, with 0 (req->fencing_token is set), or the codes of
 * rdl_lock_acquire(), or RDL_ECANCELED after rdl_req_cancel(), or
 * RDL_ECLOSED when the client closes first (RDL_ECONNLOST if a try was in
 * flight then: its outcome is unknown).
 *
 * @return 0 (started); RDL_EINVAL (bad arguments as for
 *         rdl_lock_acquire(), or req already pending); RDL_ENOTCONN;
 *         RDL_ECLOSED;
 *         RDL_ENOMEM.
 *
 * Thread safety: only on the client's loop thread.
 */
RDL_API RDL_NODISCARD int
rdl_lock_acquire_async(rdl_req_t *req, rdl_lock_t *lock, rdl_owner_t owner,
                       int64_t wait_ms, int64_t lease_ms, rdl_req_cb cb);

/**
 * Starts a release of one level of `owner`'s hold; codes as
 * rdl_lock_release(). Callback contract as rdl_lock_acquire_async().
 * Thread safety: only on the client's loop thread.
 */
RDL_API RDL_NODISCARD int rdl_lock_release_async(rdl_req_t *req,
                                                 rdl_lock_t *lock,
                                                 rdl_owner_t owner,
                                                 rdl_req_cb cb);

/**
 * Cancels a pending request. A waiting acquisition stops waiting, leaves no
 * trace in Redis, and its callback gets RDL_ECANCELED; if the lock was
 * granted by a reply still in flight, the hold is released first, so a
 * cancelled acquisition never leaves a lock held. A request whose outcome is
 * already decided completes with that outcome.
 *
 * @return 0 (the callback will report RDL_ECANCELED or the decided
 *         outcome); RDL_EINVAL (NULL, or the request is not pending).
 *
 * Thread safety: only on the client's loop thread.
 */
RDL_API int rdl_req_cancel(rdl_req_t *req);

#ifdef __cplusplus
}
#endif

#endif
