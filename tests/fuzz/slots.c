/* Fuzz target `slots`: rdl__cluster_apply() (src/cluster/topology.c), the
 * reading of a CLUSTER SLOTS reply into the client's slot table and node
 * list, on any RESP reply decoded from the input, applied to a cluster
 * object that already has a table (slot s served by the seed node while
 * s is even): what a node answers when it is asked for the topology.
 *
 * Invariants: a reply refused (RDL_EPROTO) leaves the table as it was; a
 * reply taken maps exactly the slots of its ranges, each to a node of
 * the range's master address (the node asked for "" and "?"), with a
 * port in 1..65535, and no other slot. */
#include "fuzz.h"

#include "cluster/cluster_int.h"

static rdl__cluster *cluster_new(void)
{
    rdl__cluster *cl = calloc(1, sizeof(*cl));
    FUZZ_CHECK(cl != NULL);
    rdl__queue_init(&cl->nodes);
    return cl;
}

static void cluster_free(rdl__cluster *cl)
{
    while (!rdl__queue_empty(&cl->nodes)) {
        rdl__node *n =
            RDL_CONTAINER_OF(rdl__queue_head(&cl->nodes), rdl__node, qnode);
        rdl__queue_remove(&n->qnode);
        rdl__free(n->host);
        rdl__free(n);
    }
    free(cl);
}

/* The master address of entry e, as the table should have it. */
static int entry_host(const redisReply *e, const rdl__node *asked,
                      const char **host)
{
    const redisReply *m = e->element[2];
    *host = m->element[0]->str;
    if ((*host)[0] == '\0' || strcmp(*host, "?") == 0)
        *host = asked->host;
    return (int)m->element[1]->integer;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static rdl__node *before[RDL__SLOTS];
    redisReply *r = fuzz_reply(data, size);
    rdl__cluster *cl;
    rdl__node *seed;
    unsigned char *covered;
    size_t i;
    long long s;
    int rc;

    if (r == NULL)
        return 0;
    cl = cluster_new();
    seed = rdl__node_get(cl, "10.0.0.1", 7000);
    FUZZ_CHECK(seed != NULL);
    for (s = 0; s < RDL__SLOTS; s++)
        cl->slots[s] = s % 2 == 0 ? seed : NULL;
    memcpy(before, cl->slots, sizeof(before));
    rc = rdl__cluster_apply(cl, seed, r);
    if (rc == RDL_EPROTO) {
        FUZZ_CHECK(memcmp(before, cl->slots, sizeof(before)) == 0);
    } else if (rc == 0) {
        covered = calloc(RDL__SLOTS, 1);
        FUZZ_CHECK(covered != NULL && r->type == REDIS_REPLY_ARRAY);
        for (i = 0; i < r->elements; i++) {
            const redisReply *e = r->element[i];
            FUZZ_CHECK(e->element[0]->integer >= 0 &&
                       e->element[1]->integer < RDL__SLOTS);
            for (s = e->element[0]->integer; s <= e->element[1]->integer; s++)
                covered[s] = 1;
        }
        for (s = 0; s < RDL__SLOTS; s++) {
            const rdl__node *n = cl->slots[s];
            FUZZ_CHECK((n != NULL) == covered[s]);
            if (n != NULL)
                FUZZ_CHECK(n->port >= 1 && n->port <= 65535 && n->host != NULL);
        }
        /* Each range's slots went to its master (later ranges win). */
        for (i = r->elements; i-- > 0;) {
            const redisReply *e = r->element[i];
            const char *host;
            int port = entry_host(e, seed, &host);
            for (s = e->element[0]->integer; s <= e->element[1]->integer; s++) {
                if (covered[s] != 1)
                    continue;
                covered[s] = 2;
                FUZZ_CHECK(cl->slots[s]->port == port &&
                           strcmp(cl->slots[s]->host, host) == 0);
            }
        }
        free(covered);
    } else {
        FUZZ_CHECK(rc == RDL_ENOMEM);
    }
    cluster_free(cl);
    freeReplyObject(r);
    return 0;
}
