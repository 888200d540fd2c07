/* Fuzz target `reply_redirect`: rdl__reply_redirect() (src/core/reply.c),
 * the reading of a cluster node's MOVED and ASK errors ("MOVED 3999
 * 127.0.0.1:6381", IPv6 hosts without brackets), which the router follows
 * to another node. The first input byte sets the host buffer's size
 * (1..256), the rest is the RESP reply.
 *
 * Invariants: a redirect is read only from a MOVED or ASK error, has a
 * slot < 16384 and a port in 1..65535, and its host is the bytes
 * before the last ':' of the error, NUL-terminated within the buffer. */
#include "fuzz.h"

#include "reply.h"
#include "slot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    redisReply *r;
    size_t hostlen;
    unsigned slot = 99999;
    char *host;
    int port = -1, got, code;

    if (size < 1)
        return 0;
    hostlen = 1 + data[0];
    r = fuzz_reply(data + 1, size - 1);
    if (r == NULL)
        return 0;
    /* Exactly hostlen bytes: a write past them is ASan's to report. */
    host = malloc(hostlen);
    FUZZ_CHECK(host != NULL);
    got = rdl__reply_redirect(r, &slot, host, hostlen, &port);
    code = rdl__reply_code(r);
    if (got) {
        const char *colon = r->str + r->len;
        size_t n = strlen(host);
        FUZZ_CHECK(got == 1);
        FUZZ_CHECK(code == RDL__EMOVED || code == RDL__EASK);
        FUZZ_CHECK(slot < RDL__SLOTS);
        FUZZ_CHECK(port >= 1 && port <= 65535);
        FUZZ_CHECK(n < hostlen);
        while (colon > r->str && colon[-1] != ':')
            colon--;
        FUZZ_CHECK(colon > r->str);
        colon--;
        FUZZ_CHECK((size_t)(colon - r->str) >= n &&
                   memcmp(colon - n, host, n) == 0);
    } else {
        FUZZ_CHECK(got == 0);
    }
    free(host);
    freeReplyObject(r);
    return 0;
}
