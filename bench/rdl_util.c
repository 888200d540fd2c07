/* Small helpers for the figures that use rdl. */
#include <stdio.h>

#include "bench.h"

int bench_fail(const rdl_client_t *c, const char *what, int rc)
{
    fprintf(stderr, "rdl-bench: %s: %s (%s)\n", what, rdl_err_name(rc),
            c != NULL ? rdl_client_errmsg(c) : rdl_strerror(rc));
    return -1;
}

rdl_client_t *bench_client(const bench_ctx *ctx)
{
    rdl_client_t *c = NULL;
    int rc = rdl_client_new(&c);
    if (rc != 0) {
        bench_fail(NULL, "rdl_client_new", rc);
        return NULL;
    }
    if ((rc = rdl_client_set_url(c, ctx->url)) != 0 ||
        (rc = rdl_client_connect(c)) != 0) {
        bench_fail(c, "connect", rc);
        rdl_client_free(c);
        return NULL;
    }
    return c;
}

double bench_requests_per_acquire(const rdl_client_stats_t *a,
                                  const rdl_client_stats_t *b)
{
    uint64_t acq = b->acquires - a->acquires;
    return acq ? (double)(b->commands - a->commands) / (double)acq : 0;
}
