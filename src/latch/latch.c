/* The public latch calls: construction, argument checks (bad input writes
 * nothing, in Redis or in *out), and dispatch to call.c and await.c. */
#include <string.h>

#include "latch_int.h"

int rdl_latch_new(rdl_client_t *c, const char *name, rdl_latch_t **out)
{
    rdl_latch_t *l;
    int rc;
    if ((rc = rdl__client_check_new(c, name, "latch", out)) != 0)
        return rc;
    l = rdl__calloc(1, sizeof(*l));
    if (l == NULL)
        return RDL_ENOMEM;
    l->c = c;
    l->name = rdl__strdup(name);
    l->key = rdl__key(c->prefix, RDL__KIND_LATCH, name, NULL);
    l->channel = rdl__key(c->prefix, RDL__KIND_LATCH, name, "ch");
    if (l->name == NULL || l->key == NULL || l->channel == NULL) {
        rdl_latch_free(l);
        return RDL_ENOMEM;
    }
    *out = l;
    return 0;
}

void rdl_latch_free(rdl_latch_t *l)
{
    if (l == NULL)
        return;
    rdl__free(l->name);
    rdl__free(l->key);
    rdl__free(l->channel);
    rdl__free(l);
}

int rdl_latch_set(rdl_latch_t *l, uint64_t count, int64_t ttl_ms)
{
    if (l == NULL)
        return RDL_EINVAL;
    if (count == 0) {
        rdl__errmsg_set(l->c, "latch \"%.200s\": the count must be >= 1",
                        l->name);
        return RDL_EINVAL;
    }
    if (ttl_ms <= 0 || ttl_ms > RDL_LEASE_MAX_MS) {
        rdl__errmsg_set(l->c,
                        "latch \"%.200s\": ttl_ms %lld: use "
                        "1..RDL_LEASE_MAX_MS (100 years)",
                        l->name, (long long)ttl_ms);
        return RDL_EINVAL;
    }
    return rdl__latch_set(l, count, ttl_ms);
}

int rdl_latch_count_down(rdl_latch_t *l)
{
    if (l == NULL)
        return RDL_EINVAL;
    return rdl__latch_count_down(l);
}

int rdl_latch_await(rdl_latch_t *l, int64_t wait_ms)
{
    if (l == NULL)
        return RDL_EINVAL;
    if (wait_ms < 0 && wait_ms != RDL_WAIT_FOREVER) {
        rdl__errmsg_set(l->c, "wait_ms %lld: use >= 0 or RDL_WAIT_FOREVER",
                        (long long)wait_ms);
        return RDL_EINVAL;
    }
    return rdl__latch_await(l, wait_ms);
}

int rdl_latch_count(rdl_latch_t *l, uint64_t *out)
{
    if (l == NULL || out == NULL)
        return RDL_EINVAL;
    return rdl__latch_count(l, out);
}
