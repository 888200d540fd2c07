/* Small helpers for the figures that use rdl. */
#include <stdio.h>
#include <stdlib.h>

#include <uv.h>

#include "bench.h"

int bench_fail(const rdl_client_t *c, const char *what, int rc)
{
    fprintf(stderr, "rdl-bench: %s: %s (%s)\n", what, rdl_err_name(rc),
            c != NULL ? rdl_client_errmsg(c) : rdl_strerror(rc));
    return -1;
}

/* A client with these settings, connected, on `loop` (NULL: its own loop
 * thread); NULL (printed why). */
static rdl_client_t *client_with(const bench_ctx *ctx, uv_loop_t *loop,
                                 int64_t watchdog_ms, int replicas,
                                 int64_t timeout_ms)
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
        (replicas != 0 &&
         (rc = rdl_client_set_durability(c, replicas, timeout_ms)) != 0) ||
        (loop != NULL && (rc = rdl_client_set_loop(c, loop)) != 0) ||
        (rc = rdl_client_connect(c)) != 0) {
        bench_fail(c, "connect", rc);
        if (loop != NULL)
            bench_loop_client_free(c, loop);
        else
            rdl_client_free(c);
        return NULL;
    }
    return c;
}

rdl_client_t *bench_client(const bench_ctx *ctx)
{
    return client_with(ctx, NULL, 0, 0, 0);
}

rdl_client_t *bench_watchdog_client(const bench_ctx *ctx, int64_t watchdog_ms)
{
    return client_with(ctx, NULL, watchdog_ms, 0, 0);
}

rdl_client_t *bench_durable_client(const bench_ctx *ctx, uv_loop_t *loop,
                                   int replicas, int64_t timeout_ms)
{
    return client_with(ctx, loop, 0, replicas, timeout_ms);
}

int bench_rdl_cycles(rdl_lock_t *lock, int n, bench_samples *s)
{
    int i, rc;
    for (i = 0; i < n; i++) {
        int64_t t = bench_now_ns();
        if ((rc = rdl_lock_acquire(lock, 0, 30000)) != 0)
            return bench_fail(NULL, "acquire", rc);
        if ((rc = rdl_lock_release(lock)) != 0)
            return bench_fail(NULL, "release", rc);
        if (bench_samples_add(s, bench_now_ns() - t) != 0)
            return -1;
    }
    return 0;
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
    return client_with(ctx, loop, watchdog_ms, 0, 0);
}

void bench_loop_clients_free(rdl_client_t **c, int n, uv_loop_t *loop)
{
    int i;
    for (i = 0; i < n; i++)
        if (c[i] != NULL)
            rdl_client_close(c[i]);
    uv_run(loop, UV_RUN_DEFAULT); /* the clients' handles close */
    for (i = 0; i < n; i++)
        rdl_client_free(c[i]);
}

void bench_loop_client_free(rdl_client_t *c, uv_loop_t *loop)
{
    if (c != NULL)
        bench_loop_clients_free(&c, 1, loop);
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

/* ---- async chains ------------------------------------------------------------ */

typedef struct chain {
    rdl_req_t req;
    rdl_lock_t *lock;
    rdl_owner_t owner;
    int holding;
    struct bench_chains *k;
} chain;

struct bench_chains {
    uv_loop_t *loop;
    chain *v;
    int m;
    int64_t end;
    long cycles;
    int running; /* chains not stopped */
    int rc;
};

static void on_step(rdl_req_t *req, int status);

static void stopped(chain *h, int rc)
{
    if (rc != 0)
        h->k->rc = rc;
    h->k->running--;
}

static void next(chain *h)
{
    int rc = h->holding
                 ? rdl_lock_release_async(&h->req, h->lock, h->owner, on_step)
                 : rdl_lock_acquire_async(&h->req, h->lock, h->owner, 0, 30000,
                                          on_step);
    if (rc != 0)
        stopped(h, rc);
}

static void on_step(rdl_req_t *req, int status)
{
    chain *h = req->data;
    if (status != 0) {
        stopped(h, status);
        return;
    }
    h->holding = !h->holding;
    if (!h->holding) {
        h->k->cycles++;
        if (bench_now_ns() >= h->k->end) {
            stopped(h, 0);
            return;
        }
    }
    next(h);
}

bench_chains *bench_chains_new(rdl_client_t *c, uv_loop_t *loop, int m,
                               const char *prefix)
{
    bench_chains *k = calloc(1, sizeof(*k));
    char name[64];
    int i, rc;
    if (k == NULL || (k->v = calloc((size_t)m, sizeof(chain))) == NULL) {
        fprintf(stderr, "rdl-bench: out of memory\n");
        free(k);
        return NULL;
    }
    k->loop = loop;
    k->m = m;
    for (i = 0; i < m; i++) {
        snprintf(name, sizeof(name), "%s:%d", prefix, i);
        if ((rc = rdl_lock_new(c, name, &k->v[i].lock)) != 0) {
            bench_fail(c, "rdl_lock_new", rc);
            bench_chains_free(k);
            return NULL;
        }
        k->v[i].req.data = &k->v[i];
        k->v[i].owner = (rdl_owner_t)i + 1;
        k->v[i].k = k;
    }
    return k;
}

void bench_chains_start(bench_chains *k, int64_t end)
{
    int i;
    k->end = end;
    k->cycles = 0;
    k->rc = 0;
    k->running = k->m;
    for (i = 0; i < k->m; i++)
        next(&k->v[i]);
}

long bench_chains_finish(bench_chains *k)
{
    while (k->running > 0)
        uv_run(k->loop, UV_RUN_ONCE);
    return k->rc != 0 ? k->rc : k->cycles;
}

long bench_chains_run(bench_chains *k, int64_t end)
{
    bench_chains_start(k, end);
    return bench_chains_finish(k);
}

void bench_chains_free(bench_chains *k)
{
    int i;
    if (k == NULL)
        return;
    for (i = 0; i < k->m; i++)
        rdl_lock_free(k->v[i].lock);
    free(k->v);
    free(k);
}
