/* Fuzz target `reply_try`: rdl__parse_try() (src/lock/replies.c), the
 * reply of every kind's acquire script (lock, fair, rwlock, semaphore:
 * {1, token, count} / {0, pttl[, position]} / {-1}), on any RESP reply
 * decoded from the input by hiredis.
 *
 * Invariants: a grant has a token and a count > 0, busy has flag 0,
 * RDL_EDEADLK comes from {-1} only, and every number taken is the one the
 * reply holds: none is cut down to fit its field. */
#include "fuzz.h"

#include "lock/lock_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    redisReply *r = fuzz_reply(data, size);
    long long flag, a, b;
    rdl__try t;
    int rc;

    if (r == NULL)
        return 0;
    memset(&t, 0x5a, sizeof(t));
    rc = rdl__parse_try(r, &t);
    if (rc == 0) {
        FUZZ_CHECK(rdl__int_at(r, 0, &flag) == 0);
        FUZZ_CHECK(rdl__int_at(r, 1, &a) == 0);
        if (t.acquired) {
            FUZZ_CHECK(t.acquired == 1 && flag == 1);
            FUZZ_CHECK(rdl__int_at(r, 2, &b) == 0);
            FUZZ_CHECK(a > 0 && (long long)t.token == a);
            FUZZ_CHECK(b > 0 && (long long)t.count == b);
        } else {
            FUZZ_CHECK(flag == 0 && t.pttl_ms == a);
            if (r->elements > 2) {
                FUZZ_CHECK(rdl__int_at(r, 2, &b) == 0);
                FUZZ_CHECK((long long)t.position == (b > 0 ? b : 0));
            } else {
                FUZZ_CHECK(t.position == 0);
            }
        }
    } else if (rc == RDL_EDEADLK) {
        FUZZ_CHECK(rdl__int_at(r, 0, &flag) == 0 && flag == -1);
    } else {
        FUZZ_CHECK(rc == RDL_EPROTO);
    }
    freeReplyObject(r);
    return 0;
}
