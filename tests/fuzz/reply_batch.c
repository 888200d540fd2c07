/* Fuzz target `reply_batch`: the group reply of the generated script
 * "batch" (src/core/batch.c), which carries one element per call of a
 * batch: rdl__batch_reply() takes its shape, then each element goes
 * where on_group_reply() sends it: an error element through
 * rdl__reply_code(), the others to the parser of the call's script (the
 * batched ones: lock_acquire.lua, rdl__parse_try, and lock_release.lua,
 * rdl__parse_release). The first input byte sets the number of calls
 * (1..64) and, bit by bit over the next 8 bytes, which call is a release;
 * the rest is the RESP reply.
 *
 * Invariants: a group reply taken answers no more calls than were sent,
 * each element once; an error element maps to an error code (never 0:
 * answer() turns that into RDL_ESERVER); every call gets a status. */
#include "fuzz.h"

#include "lock/lock_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    redisReply *r;
    unsigned ncalls, i;
    uint64_t releases = 0;
    size_t have = 0;
    int rc;

    if (size < 9)
        return 0;
    ncalls = 1 + data[0] % 64;
    for (i = 0; i < 8; i++)
        releases |= (uint64_t)data[1 + i] << (8 * i);
    r = fuzz_reply(data + 9, size - 9);
    if (r == NULL)
        return 0;
    rc = rdl__batch_reply(r, ncalls, &have);
    if (rc != 0) {
        FUZZ_CHECK(rc == RDL_EPROTO);
        freeReplyObject(r);
        return 0;
    }
    FUZZ_CHECK(have <= ncalls && have == r->elements);
    for (i = 0; i < have; i++) {
        const redisReply *e = r->element[i];
        int status;
        if (e->type == REDIS_REPLY_ERROR) {
            status = rdl__reply_code(e);
            FUZZ_CHECK(status < 0);
        } else if (releases >> i & 1) {
            uint32_t remaining;
            status = rdl__parse_release(e, &remaining);
            FUZZ_CHECK(status == 0 || status == RDL_ENOTHELD ||
                       status == RDL_EPROTO);
        } else {
            rdl__try t;
            status = rdl__parse_try(e, &t);
            FUZZ_CHECK(status == 0 || status == RDL_EDEADLK ||
                       status == RDL_EPROTO);
        }
    }
    freeReplyObject(r);
    return 0;
}
