/* The semaphore: a lock kind whose holders each take permits of a total
 * stored in Redis (scripts/semaphore_*.lua, scripts/lib/semaphore.lua). One
 * hash per name holds the total, the permits in use, each holder's permits,
 * token and last request, the waiter registry and the applied set; a sorted set
 * beside it holds each holder's lease expiry, so holders whose lease
 * ended are found in O(log n). Waiting is the plain lock's: a try that
 * finds no permit registers the waiter, and each permit freed names the
 * first registered one in a message (scripts/lib/waiters.lua). */
#include <stdio.h>
#include <string.h>

#include "lock/lock_int.h"

/* Each try sends the object's total, stored if the name has none. */
static const rdl__lock_kind sem_kind = {
    .name = RDL__KIND_SEMAPHORE,
    .label = "semaphore",
    .scripts = RDL__KIND_SCRIPTS(SEMAPHORE),
    .keys = {RDL__KEY_AUX0},
    .args = {RDL__ARG_PERMITS},
    .parse_try = rdl__parse_try, /* position: 1 once registered */
    .renew_aux0 = 1,
    .aux_suffix = {"x", NULL},
    .queue = &rdl__registry,
};

static int check_permits(rdl_client_t *c, uint32_t permits)
{
    if (permits >= 1 && permits <= RDL_SEMAPHORE_MAX_PERMITS)
        return 0;
    if (c != NULL)
        rdl__errmsg_set(c, "a semaphore needs 1..%u permits, not %u",
                        RDL_SEMAPHORE_MAX_PERMITS, (unsigned)permits);
    return RDL_EINVAL;
}

int rdl_semaphore_new(rdl_client_t *c, const char *name, uint32_t permits,
                      rdl_lock_t **out)
{
    int rc;
    if (out == NULL)
        return RDL_EINVAL;
    *out = NULL;
    if ((rc = check_permits(c, permits)) != 0)
        return rc;
    if ((rc = rdl__lock_create(c, name, &sem_kind, out)) != 0)
        return rc;
    (*out)->permits = permits;
    return 0;
}

/* ---- rdl_semaphore_set_permits: one script call, blocking ------------ */

/* The total is stored: the object offers it from now on. */
static int set_done(rdl_lock_t *lock, const redisReply *r, void *data)
{
    char shape[96];
    if (r->type != REDIS_REPLY_INTEGER) {
        rdl__errmsg_set(lock->c,
                        "semaphore \"%.200s\": the server answered a new "
                        "total with %s, which no script returns",
                        lock->name, rdl__reply_shape(r, shape, sizeof(shape)));
        return RDL_EPROTO;
    }
    lock->permits = *(const uint32_t *)data;
    return 0;
}

/* ARGV: the change contract (src/lock/lock_int.h), then the total and the
 * retention (scripts/semaphore_set.lua). */
int rdl_semaphore_set_permits(rdl_lock_t *sem, uint32_t permits)
{
    char total[16], keep[24];
    const char *extra[2] = {total, keep};
    int rc;
    if (sem == NULL)
        return RDL_EINVAL;
    if (sem->kind != &sem_kind) {
        rdl__errmsg_set(sem->c, "lock \"%.200s\" is not a semaphore",
                        sem->name);
        return RDL_EINVAL;
    }
    if ((rc = check_permits(sem->c, permits)) != 0)
        return rc;
    snprintf(total, sizeof(total), "%u", (unsigned)permits);
    snprintf(keep, sizeof(keep), "%d", RDL__FENCE_RETENTION_MS);
    return rdl__lock_change(sem, RDL__SCRIPT_SEMAPHORE_SET, 2, extra, set_done,
                            &permits);
}
