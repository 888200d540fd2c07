/* Reply shapes that several lock kinds share: an integer in an array, the
 * try reply {1, token, count} / {0, pttl[, position]}, the release reply
 * {1, count} / {0}, the force-release reply 1 / 0, and the info reply
 * {locked, count, pttl, token, ...}. */
#include "lock_int.h"

int rdl__int_at(const redisReply *r, size_t i, long long *out)
{
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || i >= r->elements ||
        r->element[i]->type != REDIS_REPLY_INTEGER)
        return RDL_EPROTO;
    *out = r->element[i]->integer;
    return 0;
}

int rdl__parse_try(const redisReply *r, rdl__try *out)
{
    long long flag, a, b = 0;
    if (rdl__int_at(r, 0, &flag) != 0 || rdl__int_at(r, 1, &a) != 0)
        return RDL_EPROTO;
    if (flag == 1) {
        if (rdl__int_at(r, 2, &b) != 0 || a <= 0 || b <= 0)
            return RDL_EPROTO;
        out->acquired = 1;
        out->token = (uint64_t)a;
        out->count = (uint32_t)b;
        return 0;
    }
    if (flag != 0 || (r->elements > 2 && rdl__int_at(r, 2, &b) != 0))
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
    if (flag == 0)
        return RDL_ENOTHELD;
    if (rdl__int_at(r, 1, &n) != 0 || n < 0)
        return RDL_EPROTO;
    *remaining = (uint32_t)n;
    return 0;
}

int rdl__parse_force(const redisReply *r)
{
    if (r == NULL || r->type != REDIS_REPLY_INTEGER)
        return RDL_EPROTO;
    return r->integer == 1 ? 0 : RDL_ENOTHELD;
}

int rdl__parse_info(const redisReply *r, size_t extra, long long *more,
                    rdl_lock_info_t *out)
{
    long long locked, count, pttl, token;
    size_t i;
    if (rdl__int_at(r, 0, &locked) != 0 || rdl__int_at(r, 1, &count) != 0 ||
        rdl__int_at(r, 2, &pttl) != 0 || rdl__int_at(r, 3, &token) != 0)
        return RDL_EPROTO;
    for (i = 0; i < extra; i++)
        if (rdl__int_at(r, 4 + i, &more[i]) != 0)
            return RDL_EPROTO;
    out->locked = locked != 0;
    out->held_by_owner = count > 0;
    out->hold_count = (uint32_t)count;
    out->holders = locked != 0;
    out->waiters = 0;
    out->position = 0;
    out->holder_count = 0;
    out->ttl_ms = pttl;
    out->fencing_token = (uint64_t)token;
    out->permits = 1;
    return 0;
}
