/* The reentrant lock (Redisson's RLock): scripts/lock_*.lua and their
 * replies. One hash per lock, its only key, holds the owner, its hold
 * count, its fencing token, the last request applied, the applied set and
 * the waiter registry; it outlives the hold (its TTL is the lease while
 * held, the retention while free). A try that finds the lock held
 * registers the waiter, and a release that frees the lock names the first
 * registered one in its message: one wake-up per hand-off, across all
 * clients (scripts/lib/waiters.lua). */
#include "lock_int.h"

const rdl__lock_kind rdl__reentrant_kind = {
    .name = RDL__KIND_LOCK,
    .label = "lock",
    .scripts = RDL__KIND_SCRIPTS(LOCK),
    .parse_try = rdl__parse_try, /* position: 1 once registered */
    .queue = &rdl__registry,
};
