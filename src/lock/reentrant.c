/* The reentrant lock (Redisson's RLock): scripts/lock_*.lua and their
 * replies. One hash per lock, its only key, holds the owner, its hold
 * count, its fencing token, the last request applied, the applied set and
 * the waiter registry; it outlives the hold (its TTL is the lease while
 * held, the retention while free). A try that finds the lock held
 * registers the waiter, and a release that frees the lock names the first
 * registered one in its message: one wake-up per hand-off, across all
 * clients (scripts/lib/waiters.lua). */
#include "lock_int.h"

/* {..., held, waiters} */
static int parse_info(const redisReply *r, rdl_lock_info_t *out)
{
    long long more[2];
    int rc = rdl__parse_info(r, 2, more, out);
    if (rc == 0) {
        out->holder_count = (uint32_t)more[0];
        out->waiters = (uint32_t)more[1];
    }
    return rc;
}

/* Waiters register by their tries and are not renewed: a registration
 * lapses one lifetime after the try that made it. */
static const rdl__kind_queue registry = {
    .leave = {RDL__SCRIPT_LOCK_LEAVE, 1, {RDL__KEY_HOLD}},
    .targeted = 1,
    .own_channel = 1,
};

const rdl__lock_kind rdl__reentrant_kind = {
    .name = RDL__KIND_LOCK,
    .label = "lock",
    .acquire = {RDL__SCRIPT_LOCK_ACQUIRE, 1, {RDL__KEY_HOLD}},
    .parse_try = rdl__parse_try, /* position: 1 once registered */
    .release = {RDL__SCRIPT_LOCK_RELEASE, 1, {RDL__KEY_HOLD}},
    .force = {RDL__SCRIPT_LOCK_FORCE_RELEASE, 1, {RDL__KEY_HOLD}},
    .info = {RDL__SCRIPT_LOCK_INFO, 1, {RDL__KEY_HOLD}},
    .parse_release = rdl__parse_release,
    .parse_force = rdl__parse_force,
    .parse_info = parse_info,
    .renew_script = RDL__SCRIPT_LOCK_RENEW,
    .queue = &registry,
};
