/* Fuzz target `reply_renew`: rdl__wd_parse_renewed() (src/watchdog), the
 * reply of the watchdog's batched renewal scripts (every kind's renew,
 * and the fair lock's and read-write lock's touch: one 1 or 0 per hold).
 * The first input byte is the number of holds n (1..RDL__WD_BATCH), the
 * rest the RESP reply.
 *
 * Invariants: a reply taken has exactly n elements, and a hold counts as
 * renewed only for the integer 1 in its place (anything else: gone). */
#include "fuzz.h"

#include "watchdog/watchdog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char renewed[RDL__WD_BATCH];
    redisReply *r;
    int n, i, rc;

    if (size < 1)
        return 0;
    n = 1 + data[0] % RDL__WD_BATCH;
    r = fuzz_reply(data + 1, size - 1);
    if (r == NULL)
        return 0;
    memset(renewed, 7, sizeof(renewed));
    rc = rdl__wd_parse_renewed(r, n, renewed);
    if (rc == 0) {
        FUZZ_CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == (size_t)n);
        for (i = 0; i < n; i++)
            FUZZ_CHECK(renewed[i] ==
                       (r->element[i]->type == REDIS_REPLY_INTEGER &&
                        r->element[i]->integer == 1));
        for (; i < RDL__WD_BATCH; i++)
            FUZZ_CHECK(renewed[i] == 7);
    } else {
        FUZZ_CHECK(rc == RDL_EPROTO);
    }
    freeReplyObject(r);
    return 0;
}
