/* Small helpers for the figures that use rdl. */
#include <stdio.h>

#include <uv.h>

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

rdl_client_t *bench_loop_client(const bench_ctx *ctx, uv_loop_t *loop,
                                int64_t watchdog_ms)
{
    rdl_client_t *c = NULL;
    int rc = rdl_client_new(&c);
    if (rc != 0) {
        bench_fail(NULL, "rdl_client_new", rc);
        return NULL;
    }
    if ((rc = rdl_client_set_url(c, ctx->url)) != 0 ||
        (watchdog_ms > 0 &&
         (rc = rdl_client_set_watchdog_ms(c, watchdog_ms)) != 0) ||
        (rc = rdl_client_set_loop(c, loop)) != 0 ||
        (rc = rdl_client_connect(c)) != 0) {
        bench_fail(c, "connect", rc);
        bench_loop_client_free(c, loop);
        return NULL;
    }
    return c;
}

void bench_loop_client_free(rdl_client_t *c, uv_loop_t *loop)
{
    if (c == NULL)
        return;
    rdl_client_close(c);
    uv_run(loop, UV_RUN_DEFAULT); /* the client's handles close */
    rdl_client_free(c);
}

void bench_tally_done(rdl_req_t *req, int status)
{
    bench_tally *t = req->data;
    t->done++;
    if (status != 0 && status != RDL_ECANCELED) {
        t->failed++;
        t->last_error = status;
    }
}

void bench_loop_until(uv_loop_t *loop, const long *count, long want)
{
    while (*count < want)
        uv_run(loop, UV_RUN_ONCE);
}

static void on_stop(uv_timer_t *t)
{
    *(int *)t->data = 1;
}

static void on_closed(uv_handle_t *h)
{
    *(int *)h->data = 2;
}

void bench_loop_for(uv_loop_t *loop, int64_t ns)
{
    uv_timer_t t;
    int state = 0;
    uv_timer_init(loop, &t);
    t.data = &state;
    uv_timer_start(&t, on_stop, (uint64_t)((ns + 999999) / 1000000), 0);
    while (state == 0)
        uv_run(loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&t, on_closed);
    while (state != 2)
        uv_run(loop, UV_RUN_ONCE);
}
