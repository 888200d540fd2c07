/* What the composite locks share. A composite (composite.c) is a lock
 * kind of its own, built from other locks through their public calls and
 * the lock layer's extension interface (lock/lock_ext.h) only, so every
 * kind can be a part and parts may live on several clients. It owns its
 * parts and what it knows of each owner's hold; how it is taken is its
 * kind's: MultiLock (multilock.c, all parts or none) or RedLock
 * (redlock.c, a majority of independent deployments).
 *
 * Blocking calls only: a composite spans clients, hence loops, so its
 * async calls return RDL_ENOTSUP. All calls run on the caller's thread;
 * the owners' states are guarded by the composite's mutex, which the
 * parts' lost callbacks (their loop threads) take too. */
#ifndef RDL_MULTILOCK_INT_H
#define RDL_MULTILOCK_INT_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "lock/lock_ext.h"

/* At most this many parts (a part's membership is a bit of a mask). */
#define RDL__MULTI_MAX 64

typedef struct rdl__multi rdl__multi;

/* What tells the composites apart. */
typedef struct rdl__multi_kind {
    /* RedLock: the parts must be on distinct clients, and a majority of
     * them (n/2+1) makes the lock; else every part does. */
    int majority;
    /* Puts the parts in the order they are taken, once, before the
     * composite is in use (NULL: as given). */
    void (*arrange)(rdl__multi *m);
    /* Takes the composite for owner, recording the grant with
     * rdl__multi_grant(). deadline: monotonic ms, 0 for one try per part,
     * UINT64_MAX for none. 0, or the failure with its detail said and
     * nothing taken left held. */
    int (*take)(rdl_lock_t *ml, rdl_owner_t owner, uint64_t deadline,
                int64_t lease_ms);
} rdl__multi_kind;

struct rdl__multi {
    const rdl__multi_kind *kind;
    int one_call;     /* multilock.c: plain locks of one slot on one
                         client, taken in one script */
    size_t n, quorum; /* quorum: n, or n/2+1 for a majority */
    rdl_lock_t **parts;
    uv_mutex_t mu;                   /* guards the owners' states */
    struct rdl__multi_owner *owners; /* composite.c; guarded by mu */
    size_t nowners, cap;
};

/* Creates a composite of kind over the n parts (checked here), named
 * after them as given: "a+b+c". 0 or a failure, with its detail said. */
int rdl__multi_new(rdl_lock_t *const *locks, size_t n,
                   const rdl__multi_kind *kind, rdl_lock_t **out);

/* The composite's state. */
rdl__multi *rdl__multi_of(const rdl_lock_t *ml);

/* Records one more level of the owner's hold of the parts in mask, if
 * every one of them is still valid for at least keep_ms; returns 1 if
 * recorded. The check and the record are one step under the composite's
 * mutex: a part lost before it fails the check, and one lost after it
 * finds the record and is reported. */
int rdl__multi_grant(rdl_lock_t *ml, rdl_owner_t owner, uint64_t mask,
                     int64_t keep_ms);

/* Releases one level of each part in mask, last part first (a part that
 * cannot be released ends with its lease). */
void rdl__multi_release_parts(const rdl__multi *m, rdl_owner_t owner,
                              uint64_t mask);

/* The least validity (rdl_lock_valid_ms) of the parts in mask. */
int64_t rdl__multi_min_valid(const rdl__multi *m, rdl_owner_t owner,
                             uint64_t mask);

#endif
