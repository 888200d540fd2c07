/** @file
 * rdl: observing locks. One callback per client hears of every
 * acquisition, release, timed-out wait and lost hold of the script lock
 * kinds (plain, fair, read, write, semaphore), with the lock's name and
 * kind, the owner, how long the call waited or the hold lasted, and the
 * fencing token: enough for wait-time histograms, contention metrics and
 * "who held it for how long" logs (examples/events.c). MultiLock and
 * RedLock report through their parts, each part a lock of its own. */
#ifndef RDL_EVENTS_H
#define RDL_EVENTS_H

#include "client.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What happened (rdl_event_t::kind). */
typedef enum rdl_event_kind_e {
    RDL_EVENT_ACQUIRED, /**< wait_ms: from the call to the grant (a
                             re-entry too: each acquisition is one) */
    RDL_EVENT_RELEASED, /**< held_ms: from the hold's grant (its first
                             level) to this release of one level */
    RDL_EVENT_TIMEDOUT, /**< wait_ms: the wait budget ran out (not for
                             a one-shot try, wait_ms 0, that found the
                             lock busy) */
    RDL_EVENT_LOST      /**< held_ms: from the grant to the report that
                             the hold is gone (the watchdog's, or a
                             re-entry that found it gone) */
} rdl_event_kind_t;

/** One event, passed to the client's rdl_event_cb. */
typedef struct rdl_event_s {
    rdl_event_kind_t kind; /**< what happened */
    const char *name;      /**< lock name; valid during the callback */
    const char *lock_kind; /**< "lock", "fair", "rwlock:read",
                                "rwlock:write" or "semaphore" */
    rdl_owner_t owner;     /**< the owner that acquired, released,
                                timed out or lost the hold */
    ///@{
    int64_t wait_ms, held_ms; /**< as the kind says; 0 otherwise */
    ///@}
    uint64_t fencing_token; /**< the hold's (acquired, released, lost);
                                 0 for timed out */
} rdl_event_t;

/** The event callback: `ev` is valid during the call only; `data` is the
 * pointer given to rdl_client_set_event_cb(). */
typedef void (*rdl_event_cb)(const rdl_event_t *ev, void *data);

/**
 * Sets (or with cb NULL clears) the client's event callback. It runs on
 * the client's loop thread, right after the operation completed and
 * before the caller of a blocking call returns; it must not block (no
 * blocking rdl calls: RDL_EDEADLK) and should be quick (count, add to a
 * histogram, hand off to a queue). With no callback set, events cost one
 * pointer test each.
 * @return 0; RDL_EINVAL (NULL client); RDL_ECLOSED (closed client).
 *
 * Thread safety: safe from any thread, before or after connect. When it
 * returns, no call of the previous callback is running any more (unless
 * it is called from inside one), so the previous `data` may be freed.
 */
RDL_API int rdl_client_set_event_cb(rdl_client_t *c, rdl_event_cb cb,
                                    void *data);

#ifdef __cplusplus
}
#endif

#endif
