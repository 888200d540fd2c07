/* Fuzz target `reply_latch`: the latch's reply parsers (src/latch/call.c):
 * rdl__latch_parse_flag_count() for latch_set.lua and
 * latch_count_down.lua ({flag, count}) and rdl__latch_parse_count() for
 * latch_count.lua ({count, pttl}), the count a decimal string up to
 * 2^64 - 1, on any RESP reply decoded from the input.
 *
 * Invariants: a count taken is the decimal number the whole string
 * spells (no sign, no space, no NUL, no bytes after it), and the flag and
 * pttl are the reply's integers. */
#include "fuzz.h"

#include "latch/latch_int.h"

/* The value of the decimal string s[0..n), if it is one that fits. */
static int decimal(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    size_t i;
    if (n == 0)
        return 0;
    for (i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

static void check_count(const redisReply *e, uint64_t count)
{
    uint64_t want;
    FUZZ_CHECK(e->type == REDIS_REPLY_STRING);
    FUZZ_CHECK(decimal(e->str, e->len, &want) && want == count);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    redisReply *r = fuzz_reply(data, size);
    long long flag;
    uint64_t count;
    int64_t pttl;
    int rc;

    if (r == NULL)
        return 0;
    rc = rdl__latch_parse_flag_count(r, &flag, &count);
    if (rc == 0) {
        FUZZ_CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 2);
        FUZZ_CHECK(r->element[0]->type == REDIS_REPLY_INTEGER &&
                   r->element[0]->integer == flag);
        check_count(r->element[1], count);
    } else {
        FUZZ_CHECK(rc == RDL_EPROTO);
    }
    rc = rdl__latch_parse_count(r, &count, &pttl);
    if (rc == 0) {
        FUZZ_CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 2);
        FUZZ_CHECK(r->element[1]->type == REDIS_REPLY_INTEGER &&
                   r->element[1]->integer == pttl);
        check_count(r->element[0], count);
    } else {
        FUZZ_CHECK(rc == RDL_EPROTO);
    }
    freeReplyObject(r);
    return 0;
}
