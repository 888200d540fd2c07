/* The replies of every lock kind's scripts, one shape per operation
 * (lock_int.h): the try reply {1, token, count} / {0, pttl[, position]} /
 * {-1}, the release reply {1, count} / {0}, the force-release reply 1 / 0,
 * the info reply {locked, count, pttl, token, holders, waiters,
 * position, held, permits}, and the reply of the multi-lock try
 * (lock_acquire_multi.lua, set.c). */
#include <limits.h>

#include "lock_int.h"

/* Whether v fits a uint32_t field (counts, positions, permits): a number
 * outside is not what the scripts send, and cut down to 32 bits it would
 * be another number. */
static int u32(long long v)
{
    return v >= 0 && v <= (long long)UINT32_MAX;
}

int rdl__int_at(const redisReply *r, size_t i, long long *out)
{
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || i >= r->elements ||
        r->element[i]->type != REDIS_REPLY_INTEGER)
        return RDL_EPROTO;
    *out = r->element[i]->integer;
    return 0;
}

/* Replies are read exactly: an element too many, a count a uint32_t
 * cannot hold or a flag no script returns is a reply no script sent (a
 * proxy, a wrong server), never a grant or a release. */
int rdl__parse_try(const redisReply *r, rdl__try *out)
{
    long long flag, a, b = 0;
    if (rdl__int_at(r, 0, &flag) != 0)
        return RDL_EPROTO;
    if (flag == -1) /* an upgrade: it would wait on itself */
        return r->elements == 1 ? RDL_EDEADLK : RDL_EPROTO;
    if (rdl__int_at(r, 1, &a) != 0)
        return RDL_EPROTO;
    if (flag == 1) {
        if (r->elements != 3 || rdl__int_at(r, 2, &b) != 0 || a <= 0 ||
            b <= 0 || !u32(b))
            return RDL_EPROTO;
        out->acquired = 1;
        out->token = (uint64_t)a;
        out->count = (uint32_t)b;
        return 0;
    }
    if (flag != 0 || r->elements > 3 ||
        (r->elements == 3 && rdl__int_at(r, 2, &b) != 0) ||
        b > (long long)UINT32_MAX)
        return RDL_EPROTO;
    out->acquired = 0;
    out->pttl_ms = a;
    out->position = b > 0 ? (uint32_t)b : 0;
    return 0;
}

int rdl__parse_release(const redisReply *r, uint32_t *remaining)
{
    long long flag, n;
    if (rdl__int_at(r, 0, &flag) != 0)
        return RDL_EPROTO;
    if (flag == 0 && r->elements == 1)
        return RDL_ENOTHELD;
    /* rdl__hold_released() takes an int, whose negative values mean
     * something else. */
    if (flag != 1 || r->elements != 2 || rdl__int_at(r, 1, &n) != 0 || n < 0 ||
        n > INT_MAX)
        return RDL_EPROTO;
    *remaining = (uint32_t)n;
    return 0;
}

int rdl__parse_force(const redisReply *r)
{
    if (r == NULL || r->type != REDIS_REPLY_INTEGER ||
        (r->integer != 0 && r->integer != 1))
        return RDL_EPROTO;
    return r->integer == 1 ? 0 : RDL_ENOTHELD;
}

int rdl__parse_info(const redisReply *r, rdl_lock_info_t *out)
{
    long long v[9];
    size_t i;
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 9)
        return RDL_EPROTO;
    for (i = 0; i < 9; i++)
        if (rdl__int_at(r, i, &v[i]) != 0)
            return RDL_EPROTO;
    /* Every field but locked and pttl is a count, or the token (>= 0). */
    if (!u32(v[1]) || v[3] < 0 || !u32(v[4]) || !u32(v[5]) || !u32(v[6]) ||
        !u32(v[7]) || !u32(v[8]))
        return RDL_EPROTO;
    out->locked = v[0] != 0;
    out->held_by_owner = v[1] > 0;
    out->hold_count = (uint32_t)v[1];
    out->ttl_ms = v[2];
    out->fencing_token = (uint64_t)v[3];
    out->holders = (uint32_t)v[4];
    out->waiters = (uint32_t)v[5];
    out->position = (uint32_t)v[6];
    out->holder_count = (uint32_t)v[7];
    out->permits = (uint32_t)v[8];
    return 0;
}

int rdl__parse_try_set(const redisReply *r, size_t n, size_t *busy)
{
    long long flag, v;
    size_t i;
    if (rdl__int_at(r, 0, &flag) != 0)
        return RDL_EPROTO;
    if (flag == 0) {
        if (r->elements != 3 || rdl__int_at(r, 2, &v) != 0 || v < 1 ||
            (unsigned long long)v > n)
            return RDL_EPROTO;
        *busy = (size_t)v;
        return RDL_EBUSY;
    }
    /* A grant: {1, token, count} per lock, as rdl__parse_try() takes
     * them. */
    if (flag != 1 || r->elements != 1 + 2 * n)
        return RDL_EPROTO;
    for (i = 1; i < r->elements; i++)
        if (rdl__int_at(r, i, &v) != 0 || v <= 0 || (i % 2 == 0 && !u32(v)))
            return RDL_EPROTO;
    return 0;
}

void rdl__try_set_hold(const redisReply *r, size_t i, uint64_t *token,
                       uint32_t *count)
{
    *token = (uint64_t)r->element[1 + 2 * i]->integer;
    *count = (uint32_t)r->element[2 + 2 * i]->integer;
}
