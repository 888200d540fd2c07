/* The reentrant lock (Redisson's RLock): scripts/lock_*.lua and their
 * replies. One hash per lock holds the owner, its hold count, its fencing
 * token and the last request applied; a fence hash keeps the last token
 * issued beyond the hold's life. */
#include <stdio.h>

#include "lock_int.h"

static int send_try(rdl__acquire *op, rdl__reply_fn fn)
{
    rdl_lock_t *lock = op->lock;
    char lease[24], keep[24];
    const char *keys[2] = {lock->key_hold, lock->key_fence};
    const char *args[4] = {op->owner_str, lease, op->reqid, keep};
    snprintf(lease, sizeof(lease), "%lld", (long long)op->lease_ms);
    snprintf(keep, sizeof(keep), "%d", RDL__FENCE_RETENTION_MS);
    return rdl__script_run(lock->c, RDL__SCRIPT_LOCK_ACQUIRE, 2, keys, 4, args,
                           fn, op);
}

static int parse_info(const redisReply *r, rdl_lock_info_t *out)
{
    long long held;
    int rc = rdl__parse_info(r, 1, &held, out);
    if (rc == 0)
        out->holder_count = (uint32_t)held;
    return rc;
}

const rdl__lock_kind rdl__reentrant_kind = {
    .name = "lock",
    .send_try = send_try,
    .parse_try = rdl__parse_try,
    .release = {RDL__SCRIPT_LOCK_RELEASE, 2, {RDL__KEY_HOLD, RDL__KEY_FENCE}},
    .force = {RDL__SCRIPT_LOCK_FORCE_RELEASE,
              2,
              {RDL__KEY_HOLD, RDL__KEY_FENCE}},
    .info = {RDL__SCRIPT_LOCK_INFO, 2, {RDL__KEY_HOLD, RDL__KEY_FENCE}},
    .parse_release = rdl__parse_release,
    .parse_force = rdl__parse_force,
    .parse_info = parse_info,
    .renew_script = RDL__SCRIPT_LOCK_RENEW,
};
