/* Fuzz target `reply_info`: rdl__parse_info() (src/lock/replies.c), the
 * reply of every kind's info script ({locked, count, pttl, token,
 * holders, waiters, position, held, permits}), on any RESP reply decoded
 * from the input.
 *
 * Invariants: every field reported is the number the reply holds (none
 * negative where the field cannot be, none cut down to 32 bits), and
 * held_by_owner agrees with the count. */
#include "fuzz.h"

#include "lock/lock_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    redisReply *r = fuzz_reply(data, size);
    rdl_lock_info_t info;
    long long v[9];
    size_t i;
    int rc;

    if (r == NULL)
        return 0;
    memset(&info, 0x5a, sizeof(info));
    rc = rdl__parse_info(r, &info);
    if (rc == 0) {
        for (i = 0; i < 9; i++)
            FUZZ_CHECK(rdl__int_at(r, i, &v[i]) == 0);
        FUZZ_CHECK(info.locked == (v[0] != 0));
        FUZZ_CHECK((long long)info.hold_count == v[1]);
        FUZZ_CHECK(info.held_by_owner == (v[1] > 0));
        FUZZ_CHECK(info.ttl_ms == v[2]);
        FUZZ_CHECK(v[3] >= 0 && (long long)info.fencing_token == v[3]);
        FUZZ_CHECK((long long)info.holders == v[4]);
        FUZZ_CHECK((long long)info.waiters == v[5]);
        FUZZ_CHECK((long long)info.position == v[6]);
        FUZZ_CHECK((long long)info.holder_count == v[7]);
        FUZZ_CHECK((long long)info.permits == v[8]);
    } else {
        FUZZ_CHECK(rc == RDL_EPROTO);
    }
    freeReplyObject(r);
    return 0;
}
