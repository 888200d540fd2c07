/* Figure "memory": client memory per lock object, per held lock and per
 * waiter. Target (docs/benchmarks.md): <= 512 bytes per held lock or waiter.
 *
 * Method: the client runs on the benchmark's own loop (rdl_client_set_loop)
 * on the main thread, so every allocation of the library lands in glibc's
 * main arena, and mallinfo2().uordblks (bytes in allocated chunks, chunk
 * headers and rounding included: what the process really pays) is read
 * before and after creating N of something, with the loop idle in between.
 * The benchmark's own arrays (requests, lock pointers) are allocated before
 * the first reading, so the difference is rdl's alone. Redis-side memory is
 * not counted. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#include <uv.h>

#include "bench.h"

static size_t heap(void)
{
    return mallinfo2().uordblks;
}

/* Runs the loop until `cond` holds, then until it has been quiet for
 * 50 ms (timers closing, replies of a last try). */
static void settle(uv_loop_t *loop, const long *count, long want)
{
    int64_t quiet;
    while (*count < want)
        uv_run(loop, UV_RUN_ONCE);
    quiet = bench_now_ns() + 50000000LL;
    while (bench_now_ns() < quiet)
        uv_run(loop, UV_RUN_NOWAIT);
}

/* Waiters have no completion to count while they wait: run until the
 * client has sent `attempts` tries and gone quiet. */
static void settle_tries(uv_loop_t *loop, rdl_client_t *c, uint64_t attempts)
{
    rdl_client_stats_t s;
    uint64_t last = 0;
    int64_t quiet = bench_now_ns() + 200000000LL;
    for (;;) {
        uv_run(loop, UV_RUN_NOWAIT);
        rdl_client_stats(c, &s);
        if (s.scripts != last) {
            last = s.scripts;
            quiet = bench_now_ns() + 200000000LL;
        }
        if (s.attempts >= attempts && bench_now_ns() >= quiet)
            return;
        bench_sleep_ns(1000000);
    }
}

int bench_fig_memory(bench_ctx *ctx)
{
    long n = BENCH_SIZE(ctx, 10000, 100000), i;
    uv_loop_t loop;
    rdl_client_t *c = NULL;
    rdl_lock_t **locks = calloc((size_t)n, sizeof(*locks)), *one = NULL;
    rdl_req_t *reqs = calloc((size_t)n + 1, sizeof(*reqs));
    bench_tally t = {0};
    size_t h0, h1, h2, h3;
    rdl_client_stats_t s;
    int rc = -1;
    char name[32];

    if (locks == NULL || reqs == NULL || uv_loop_init(&loop) != 0) {
        free(locks);
        free(reqs);
        return -1;
    }
    for (i = 0; i <= n; i++)
        reqs[i].data = &t;
    if ((rc = rdl_client_new(&c)) != 0 ||
        (rc = rdl_client_set_url(c, ctx->url)) != 0 ||
        (rc = rdl_client_set_loop(c, &loop)) != 0 ||
        (rc = rdl_client_connect(c)) != 0 ||
        (rc = rdl_lock_new(c, "bench:mem:one", &one)) != 0) {
        rc = bench_fail(c, "memory client", rc);
        goto out;
    }
    /* Connect, load the scripts, subscribe once, so that none of it is
     * counted below. */
    if ((rc = rdl_lock_acquire_async(&reqs[n], one, 1, 0, 60000,
                                     bench_tally_done)))
        goto fail;
    settle(&loop, &t.done, 1);

    /* Lock objects. */
    h0 = heap();
    for (i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "bench:mem:%ld", i);
        if ((rc = rdl_lock_new(c, name, &locks[i])) != 0)
            goto fail;
    }
    h1 = heap();
    /* Held locks: every object acquired by one owner. */
    t.done = 1;
    for (i = 0; i < n; i++)
        if ((rc = rdl_lock_acquire_async(&reqs[i], locks[i], 1, 0, 60000,
                                         bench_tally_done)) != 0)
            goto fail;
    settle(&loop, &t.done, n + 1);
    h2 = heap();
    if (t.failed) {
        rc = t.last_error;
        goto fail;
    }
    /* Waiters: n owners wait for `one`, which owner 1 holds. Each tries,
     * sleeps, and tries again when the subscription is confirmed. */
    rdl_client_stats(c, &s);
    for (i = 0; i < n; i++)
        if ((rc = rdl_lock_acquire_async(&reqs[i], one, (rdl_owner_t)i + 2,
                                         RDL_WAIT_FOREVER, 60000,
                                         bench_tally_done)))
            goto fail;
    settle_tries(&loop, c, s.attempts + (uint64_t)n);
    /* The tries may still be answered: a try on a held lock (EBUSY, no
     * state) queued behind them completes after the last of them, as the
     * connection answers in order. */
    t.done = 0;
    if ((rc = rdl_lock_acquire_async(&reqs[n], locks[0], 2, 0, 60000,
                                     bench_tally_done)) != 0)
        goto fail;
    settle(&loop, &t.done, 1);
    t.failed = 0; /* the marker's RDL_EBUSY */
    h3 = heap();

    bench_row_begin(ctx, "memory", "rdl, %ld of each, mallinfo2", n);
    if (h1 == h0) {
        /* mallinfo2 does not see another allocator (a sanitizer's). */
        bench_row_text("status", "n/a: malloc is not glibc's");
    } else {
        bench_row_num("lock_object", (double)(h1 - h0) / (double)n, "bytes", 0);
        bench_row_target("held_lock", (double)(h2 - h1) / (double)n, "bytes", 0,
                         "<= 512");
        bench_row_target("waiter", (double)(h3 - h2) / (double)n, "bytes", 0,
                         "<= 512");
    }
    bench_row_end();

    /* Cancel the waiters, then release every hold (with --url the
     * server is the user's). */
    t.done = 0;
    for (i = 0; i < n; i++)
        (void)rdl_req_cancel(&reqs[i]);
    settle(&loop, &t.done, n);
    t.done = 0;
    for (i = 0; i < n; i++)
        if ((rc = rdl_lock_release_async(&reqs[i], locks[i], 1,
                                         bench_tally_done)))
            goto fail;
    if ((rc = rdl_lock_release_async(&reqs[n], one, 1, bench_tally_done)) != 0)
        goto fail;
    settle(&loop, &t.done, n + 1);
    if (t.failed) {
        rc = t.last_error;
        goto fail;
    }
    rc = 0;
    goto out;
fail:
    rc = bench_fail(c, "memory", rc);
out:
    for (i = 0; i < n; i++)
        rdl_lock_free(locks[i]);
    rdl_lock_free(one);
    if (c != NULL) {
        rdl_client_close(c);
        uv_run(&loop, UV_RUN_DEFAULT);
        rdl_client_free(c);
    }
    uv_loop_close(&loop);
    free(locks);
    free(reqs);
    return rc;
}
