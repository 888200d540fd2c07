/* Fuzz target `reply_try_set`: rdl__parse_try_set() and
 * rdl__try_set_hold() (src/lock/replies.c), the reply of
 * lock_acquire_multi.lua, the MultiLock's one-call try of n locks
 * ({1, token1, count1, ..., tokenN, countN} / {0, pttl, i}). The first
 * input byte is n (1..RDL__LOCK_SET_MAX); the rest is the RESP reply.
 *
 * Invariants: busy names a lock 1..n; a grant is flagged 1 and has
 * 1 + 2n elements, and
 * every hold read from it has the token and count the reply holds, both
 * > 0 (a hold of count 0 or a token 0 is no grant). */
#include "fuzz.h"

#include "lock/lock_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    redisReply *r;
    size_t n, busy = 0, i;
    long long tok, cnt;
    int rc;

    if (size < 1)
        return 0;
    n = 1 + data[0] % RDL__LOCK_SET_MAX;
    r = fuzz_reply(data + 1, size - 1);
    if (r == NULL)
        return 0;
    rc = rdl__parse_try_set(r, n, &busy);
    if (rc == RDL_EBUSY) {
        FUZZ_CHECK(busy >= 1 && busy <= n);
    } else if (rc == 0) {
        FUZZ_CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 1 + 2 * n);
        FUZZ_CHECK(r->element[0]->type == REDIS_REPLY_INTEGER &&
                   r->element[0]->integer == 1);
        for (i = 0; i < n; i++) {
            uint64_t token;
            uint32_t count;
            rdl__try_set_hold(r, i, &token, &count);
            FUZZ_CHECK(rdl__int_at(r, 1 + 2 * i, &tok) == 0);
            FUZZ_CHECK(rdl__int_at(r, 2 + 2 * i, &cnt) == 0);
            FUZZ_CHECK(tok > 0 && (long long)token == tok);
            FUZZ_CHECK(cnt > 0 && (long long)count == cnt);
        }
    } else {
        FUZZ_CHECK(rc == RDL_EPROTO);
    }
    freeReplyObject(r);
    return 0;
}
