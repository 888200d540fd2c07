/* Fuzz target `role`: the readers of ROLE in src/core/reply.c:
 * rdl__reply_role_master() (the Sentinel client confirms a master with
 * it) and rdl__reply_role_replicas() (the durable line counts the
 * replicas a WAIT must reach), on any RESP reply decoded from the input.
 * (The library reads no INFO replication: ROLE is its only source.)
 *
 * Invariants: master is -1 for anything but a non-empty array, 1 only
 * for a first element "master"; a replica count is given only for a
 * master's reply, and is the length of its replica list. */
#include "fuzz.h"

#include "reply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    redisReply *r = fuzz_reply(data, size);
    long long n;
    int master;

    if (r == NULL)
        return 0;
    master = rdl__reply_role_master(r);
    FUZZ_CHECK(master == -1 || master == 0 || master == 1);
    if (master == -1)
        FUZZ_CHECK(r->type != REDIS_REPLY_ARRAY || r->elements == 0);
    if (master == 1)
        FUZZ_CHECK(r->element[0]->len == 6 &&
                   memcmp(r->element[0]->str, "master", 6) == 0);
    n = rdl__reply_role_replicas(r);
    FUZZ_CHECK(n >= -1);
    if (n >= 0) {
        FUZZ_CHECK(master == 1 && r->elements >= 3);
        FUZZ_CHECK(r->element[2]->type == REDIS_REPLY_ARRAY &&
                   (size_t)n == r->element[2]->elements);
    }
    freeReplyObject(r);
    return 0;
}
