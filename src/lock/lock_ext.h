/* The lock layer's extension interface: how a lock kind built from other
 * locks (src/multilock: MultiLock and RedLock) plugs into rdl_lock_t.
 *
 * Every rdl_lock_t has an operations table (rdl__lock_ops); the public
 * calls in lock.c check their arguments and dispatch through it, and know
 * no kind by name. The kinds that run scripts (plain, fair, read-write,
 * semaphore) share one table, rdl__scripted_ops in scripted.c; a
 * composite kind brings its own, built on the public calls of its parts
 * plus the few functions below. Nothing else of the lock layer is visible
 * to it: this header includes only <rdl.h>.
 *
 * Threads: the blocking operations run on the caller's thread (a composite
 * spans clients, hence loops); the getters may run on any thread. */
#ifndef RDL_LOCK_EXT_H
#define RDL_LOCK_EXT_H

#include <stddef.h>
#include <stdint.h>

#include "rdl.h"

/* What a lock kind does. Arguments are checked by the public calls before
 * they get here (lock not NULL, durations valid). */
typedef struct rdl__lock_ops {
    /* Blocking calls, as rdl_lock_acquire_as() etc. */
    int (*acquire)(rdl_lock_t *lock, rdl_owner_t owner, int64_t wait_ms,
                   int64_t lease_ms);
    int (*release)(rdl_lock_t *lock, rdl_owner_t owner);
    int (*force_release)(rdl_lock_t *lock);
    int (*info)(rdl_lock_t *lock, rdl_owner_t owner, rdl_lock_info_t *out);
    /* Getters, any thread, as rdl_lock_fencing_token()/rdl_lock_valid_ms(). */
    uint64_t (*token)(const rdl_lock_t *lock, rdl_owner_t owner);
    int64_t (*valid_ms)(const rdl_lock_t *lock, rdl_owner_t owner);
    /* Async calls on the loop thread; NULL: the kind has none (the public
     * calls return RDL_ENOTSUP). */
    int (*acquire_async)(rdl_req_t *req, rdl_lock_t *lock, rdl_owner_t owner,
                         int64_t wait_ms, int64_t lease_ms, rdl_req_cb cb);
    int (*release_async)(rdl_req_t *req, rdl_lock_t *lock, rdl_owner_t owner,
                         rdl_req_cb cb);
    /* rdl_lock_free(): the kind lets go of its state (NULL: nothing to do).
     * Runs first, before the object's lost callback is quiesced. */
    void (*free)(rdl_lock_t *lock);
} rdl__lock_ops;

/* Creates a lock object of a composite kind named `name` (copied), whose
 * errors are reported on client c, with the kind's state `impl`. 0 or
 * RDL_ENOMEM. rdl_lock_free() calls ops->free, then frees the object. */
int rdl__lock_new_ext(rdl_client_t *c, const char *name,
                      const rdl__lock_ops *ops, void *impl, rdl_lock_t **out);
/* The kind's state given to rdl__lock_new_ext(). */
void *rdl__lock_impl(const rdl_lock_t *lock);
/* 1 if lock was made by rdl__lock_new_ext() (a composite). */
int rdl__lock_is_ext(const rdl_lock_t *lock);
/* The client a lock was made on. */
rdl_client_t *rdl__lock_client(const rdl_lock_t *lock);

/* Calls the lock's lost callback (see rdl_lock_set_lost_cb()) in a way
 * that rdl_lock_set_lost_cb() and rdl_lock_free() wait for. */
void rdl__lock_report_lost(rdl_lock_t *lock, rdl_owner_t owner, int reason);

/* Sets the detail rdl_client_errmsg() gives the calling thread for the
 * lock's client (printf-style). */
void rdl__lock_say(const rdl_lock_t *lock, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Identity of scripted locks (not composites): the canonical order (by
 * kind, key, server; the same in every process) and whether two objects
 * are one lock (same kind and key on the same server: "x" and "{x}", two
 * objects or two clients for one name, both views of a read-write lock). */
int rdl__lock_order(const rdl_lock_t *a, const rdl_lock_t *b);
int rdl__lock_same(const rdl_lock_t *a, const rdl_lock_t *b);
/* "host:port" of the lock's (first) server, into buf. */
void rdl__lock_server(const rdl_lock_t *lock, char *buf, size_t len);

/* A set of plain locks (rdl_lock_new) of one client that share a hash tag
 * can be taken in one script call, atomically. */
int rdl__lock_set_eligible(rdl_lock_t *const *locks, size_t n);
/* Blocking: takes (or re-enters) every lock of such a set for owner in one
 * call. 0 (every hold recorded, auto ones with the watchdog), RDL_EBUSY
 * with *busy the index of a lock held elsewhere (nothing taken), or the
 * failure of the call. At most RDL__LOCK_SET_MAX locks. */
#define RDL__LOCK_SET_MAX 64
int rdl__lock_set_acquire(rdl_lock_t *const *locks, size_t n, rdl_owner_t owner,
                          int64_t lease_ms, size_t *busy);

#endif
