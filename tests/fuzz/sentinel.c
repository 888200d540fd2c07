/* Fuzz target `sentinel`: the readers of Sentinel's replies in
 * src/core/reply.c, as src/sentinel/discover.c runs them:
 * rdl__reply_master_addr() (SENTINEL get-master-addr-by-name),
 * rdl__reply_sentinel_epoch() (SENTINEL MASTER),
 * rdl__reply_sentinel_replicas_up() and rdl__reply_sentinel_lists()
 * (SENTINEL REPLICAS), and rdl__reply_sentinel_event() on the channel and
 * payload of a pub/sub push (+switch-master, +promoted-slave). The input
 * is the master's name (up to the first NUL), then the RESP reply; every
 * reader gets the same reply.
 *
 * Invariants: an address taken has a non-empty host without NUL that
 * fits the buffer and a port in 1..65535, and is the reply's; an epoch
 * or a count is -1 or >= 0; an event is taken only for the master's own
 * name, on one of the two channels. */
#define _GNU_SOURCE /* memmem */
#include "fuzz.h"

#include "reply.h"

static void check_host(const char *host, size_t cap, int port)
{
    size_t n = strnlen(host, cap);
    FUZZ_CHECK(n >= 1 && n < cap);
    FUZZ_CHECK(port >= 1 && port <= 65535);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *name = fuzz_take(&data, &size), host[256];
    const char *ch, *msg;
    size_t chl, msgl;
    redisReply *r;
    long long n;
    int port, got;

    if (name == NULL)
        return 0;
    r = fuzz_reply(data, size);
    if (r == NULL) {
        free(name);
        return 0;
    }
    port = 0;
    got = rdl__reply_master_addr(r, host, sizeof(host), &port);
    FUZZ_CHECK(got == -1 || got == 0 || got == 1);
    if (got == 0)
        FUZZ_CHECK(r->type == REDIS_REPLY_NIL);
    if (got == 1) {
        check_host(host, sizeof(host), port);
        FUZZ_CHECK(r->element[0]->len == strlen(host) &&
                   memcmp(r->element[0]->str, host, r->element[0]->len) == 0);
        FUZZ_CHECK(atoi(r->element[1]->str) == port);
        /* The address just read, looked for among the replicas. */
        got = rdl__reply_sentinel_lists(r, host, port);
        FUZZ_CHECK(got == 0 || got == 1);
    }
    n = rdl__reply_sentinel_epoch(r);
    FUZZ_CHECK(n >= -1);
    n = rdl__reply_sentinel_replicas_up(r);
    FUZZ_CHECK(n >= -1);
    if (n >= 0)
        FUZZ_CHECK(r->type == REDIS_REPLY_ARRAY &&
                   (unsigned long long)n <= r->elements);
    got = rdl__reply_sentinel_lists(r, "127.0.0.1", 6379);
    FUZZ_CHECK(got == 0 || got == 1);
    if (rdl__reply_message(r, &ch, &chl, &msg, &msgl)) {
        port = 0;
        got = rdl__reply_sentinel_event(ch, chl, msg, msgl, name, host,
                                        sizeof(host), &port);
        FUZZ_CHECK(got == 0 || got == 1);
        if (got) {
            check_host(host, sizeof(host), port);
            FUZZ_CHECK((chl == 14 && memcmp(ch, "+switch-master", 14) == 0) ||
                       (chl == 15 && memcmp(ch, "+promoted-slave", 15) == 0));
            FUZZ_CHECK(memmem(msg, msgl, name, strlen(name)) != NULL);
        }
    }
    freeReplyObject(r);
    free(name);
    return 0;
}
