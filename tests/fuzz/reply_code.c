/* Fuzz target `reply_code`: the readers of any server reply in
 * src/core/reply.c that every connection runs: rdl__reply_code() (error
 * words, pub/sub pushes), rdl__reply_message(), rdl__reply_sunsubscribe()
 * and rdl__reply_time_us() (TIME, for the listing's ages), on any RESP
 * reply decoded from the input.
 *
 * Invariants: the code is 0, a push, or an error code, and an error code
 * only for an error reply; a message or sunsubscribe is reported exactly
 * when the code says so, with channel and payload pointing at the
 * reply's own strings; TIME gives -1 or seconds * 10^6 + microseconds of
 * two decimal strings. */
#include "fuzz.h"

#include "reply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    redisReply *r = fuzz_reply(data, size);
    const char *ch = NULL, *msg = NULL;
    size_t chl = 0, msgl = 0;
    int code, got;
    int64_t us;

    if (r == NULL)
        return 0;
    code = rdl__reply_code(r);
    if (r->type == REDIS_REPLY_ERROR)
        FUZZ_CHECK(code < 0);
    else if (r->type == REDIS_REPLY_ARRAY)
        FUZZ_CHECK(code == 0 || code == RDL__REPLY_MESSAGE ||
                   code == RDL__REPLY_SUNSUBSCRIBE);
    else
        FUZZ_CHECK(code == 0);
    got = rdl__reply_message(r, &ch, &chl, &msg, &msgl);
    FUZZ_CHECK(got == (code == RDL__REPLY_MESSAGE));
    if (got) {
        FUZZ_CHECK(ch == r->element[1]->str && chl == r->element[1]->len);
        FUZZ_CHECK(msg == r->element[2]->str && msgl == r->element[2]->len);
    }
    got = rdl__reply_sunsubscribe(r, &ch, &chl);
    FUZZ_CHECK(got == (code == RDL__REPLY_SUNSUBSCRIBE));
    if (got)
        FUZZ_CHECK(ch == r->element[1]->str && chl == r->element[1]->len);
    us = rdl__reply_time_us(r);
    if (us != -1) {
        long long sec, usec;
        FUZZ_CHECK(us >= 0 && r->type == REDIS_REPLY_ARRAY && r->elements == 2);
        sec = strtoll(r->element[0]->str, NULL, 10);
        usec = strtoll(r->element[1]->str, NULL, 10);
        FUZZ_CHECK(usec >= 0 && usec < 1000000);
        FUZZ_CHECK(us == (int64_t)sec * 1000000 + usec);
    }
    freeReplyObject(r);
    return 0;
}
