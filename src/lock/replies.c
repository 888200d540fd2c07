/* Reply shapes that several lock kinds share: an integer in an array, the
 * release reply {1, count} / {0}, and the force-release reply 1 / 0. */
#include "lock_int.h"

int rdl__int_at(const redisReply *r, size_t i, long long *out)
{
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || i >= r->elements ||
        r->element[i]->type != REDIS_REPLY_INTEGER)
        return RDL_EPROTO;
    *out = r->element[i]->integer;
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
