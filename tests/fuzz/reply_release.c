/* Fuzz target `reply_release`: rdl__parse_release() and
 * rdl__parse_force() (src/lock/replies.c), the replies of every kind's
 * release script ({1, count} / {0}) and force-release script (1 / 0), on
 * any RESP reply decoded from the input.
 *
 * Invariants: replies are read exactly (docs/robustness.md, "A server
 * that answers what no script returns"): a release is {1, count} and
 * nothing more, its remaining count the reply's, and within what
 * rdl__hold_released() takes (an int >= 0: its negative values mean "not
 * applied" and "ended under us"); RDL_ENOTHELD only from {0} or a force
 * release's 0; anything else is RDL_EPROTO. */
#include "fuzz.h"

#include <limits.h>

#include "lock/lock_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    redisReply *r = fuzz_reply(data, size);
    uint32_t remaining = 0xdeadbeef;
    long long flag, n;
    int rc;

    if (r == NULL)
        return 0;
    rc = rdl__parse_release(r, &remaining);
    if (rc == 0) {
        FUZZ_CHECK(rdl__int_at(r, 0, &flag) == 0 && flag == 1);
        FUZZ_CHECK(r->elements == 2 && rdl__int_at(r, 1, &n) == 0);
        FUZZ_CHECK((long long)remaining == n && n <= INT_MAX);
    } else if (rc == RDL_ENOTHELD) {
        FUZZ_CHECK(rdl__int_at(r, 0, &flag) == 0 && flag == 0);
        FUZZ_CHECK(r->elements == 1);
    } else {
        FUZZ_CHECK(rc == RDL_EPROTO);
    }
    rc = rdl__parse_force(r);
    if (rc == 0)
        FUZZ_CHECK(r->type == REDIS_REPLY_INTEGER && r->integer == 1);
    else if (rc == RDL_ENOTHELD)
        FUZZ_CHECK(r->type == REDIS_REPLY_INTEGER && r->integer == 0);
    else
        FUZZ_CHECK(rc == RDL_EPROTO && (r->type != REDIS_REPLY_INTEGER ||
                                        (r->integer != 0 && r->integer != 1)));
    freeReplyObject(r);
    return 0;
}
