/* Figure "throughput": many acquirers on distinct names (no contention)
 * over one client, acquire+release cycles per second, as a share of the
 * server's limit (raw pipelined cycles, measured again just before each
 * case). Target (docs/benchmarks.md): >= 70%.
 *
 * - blocking: N threads, each cycling its own lock with the blocking calls;
 *   the client's loop pipelines what the threads post in one iteration.
 * - async: M chains on the caller's loop (rdl_client_set_loop), each
 *   starting its next acquire from the callback of its release.
 *
 * Every case also says what the server paid per cycle, from INFO read on a
 * raw connection before and after the measured run: CPU (used_cpu_sys +
 * used_cpu_user) and commands (total_commands_processed, which counts the
 * commands the scripts run as well). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <uv.h>

#include "bench.h"

#define LIMIT_NS (BENCH_SIZE(ctx, 200, 1000) * 1000000LL)

/* The server's side of a run, read on a raw connection of its own. */
typedef struct probe {
    bench_raw raw;
    bench_srv at;
    int ok; /* `at` was read */
} probe;

/* Opens the connection and reads the server before the run; 0, or -1 if
 * the connection failed (printed). */
static int srv_begin(const bench_ctx *ctx, probe *p)
{
    if (bench_raw_open(&p->raw, ctx) != 0)
        return -1;
    p->ok = bench_srv_read(&p->raw, &p->at) == 0;
    return 0;
}

/* Reads the server after the run, closes the connection, and reports the
 * server's CPU and commands per cycle (nothing if it could not be read). */
static void srv_end(probe *p, long cycles)
{
    bench_srv now, d;
    int ok = p->ok && bench_srv_read(&p->raw, &now) == 0;
    bench_raw_close(&p->raw);
    if (!ok || cycles <= 0)
        return;
    d = bench_srv_diff(&p->at, &now);
    bench_row_num("server_cpu_per_cycle", d.cpu_us / (double)cycles, "us", 1);
    bench_row_num("server_cmds_per_cycle", (double)d.commands / (double)cycles,
                  NULL, 2);
}

typedef struct worker {
    pthread_t tid;
    rdl_client_t *c;
    int index;
    int64_t end;
    long cycles;
    int rc;
} worker;

static void *blocking_main(void *arg)
{
    worker *w = arg;
    rdl_lock_t *lock = NULL;
    char name[32];
    snprintf(name, sizeof(name), "bench:thr:%d", w->index);
    w->rc = rdl_lock_new(w->c, name, &lock);
    while (w->rc == 0 && bench_now_ns() < w->end) {
        if ((w->rc = rdl_lock_acquire(lock, 0, 30000)) != 0 ||
            (w->rc = rdl_lock_release(lock)) != 0)
            break;
        w->cycles++;
    }
    rdl_lock_free(lock);
    return NULL;
}

static int blocking(bench_ctx *ctx, int n)
{
    double limit = bench_raw_limit(ctx, LIMIT_NS);
    rdl_client_t *c = bench_client(ctx);
    worker *w = calloc((size_t)n, sizeof(*w));
    int64_t t0;
    long cycles = 0;
    int i, rc = 0;
    double per_s;
    rdl_client_stats_t s0, s1;
    probe info;

    if (c == NULL || w == NULL || limit <= 0 || srv_begin(ctx, &info) != 0) {
        rdl_client_free(c);
        free(w);
        return -1;
    }
    rdl_client_stats(c, &s0);
    t0 = bench_now_ns();
    for (i = 0; i < n; i++) {
        w[i].c = c;
        w[i].index = i;
        w[i].end = t0 + BENCH_SIZE(ctx, 400, 2000) * 1000000LL;
        if (pthread_create(&w[i].tid, NULL, blocking_main, &w[i]) != 0)
            w[i].rc = -1, w[i].tid = 0;
    }
    for (i = 0; i < n; i++) {
        if (w[i].tid != 0)
            pthread_join(w[i].tid, NULL);
        if (w[i].rc != 0 && rc == 0)
            rc = bench_fail(c, "blocking throughput", w[i].rc);
        cycles += w[i].cycles;
    }
    per_s = cycles / ((double)(bench_now_ns() - t0) / 1e9);
    rdl_client_stats(c, &s1);
    rdl_client_free(c);
    free(w);
    if (rc != 0) {
        bench_raw_close(&info.raw);
        return rc;
    }
    bench_row_begin(ctx, "throughput", "rdl: %d blocking thread%s", n,
                    n == 1 ? "" : "s");
    bench_row_num("cycles", per_s, "per_s", 0);
    bench_row_num("server_limit", limit, "per_s", 0);
    bench_row_target("of_server_limit", per_s / limit, "x", 2,
                     n >= 4 ? ">= 0.70" : NULL);
    bench_row_num("requests_per_cycle", bench_requests_per_acquire(&s0, &s1),
                  NULL, 2);
    srv_end(&info, cycles);
    bench_row_end();
    return 0;
}

/* ---- async ----------------------------------------------------------------- */

static int async(bench_ctx *ctx, int m)
{
    double limit = bench_raw_limit(ctx, LIMIT_NS);
    uv_loop_t loop;
    rdl_client_t *c = NULL;
    bench_chains *k = NULL;
    int rc = -1;
    long cycles;
    int64_t t0;
    double per_s;
    rdl_client_stats_t s0, s1;
    probe info = {0};

    if (limit <= 0 || uv_loop_init(&loop) != 0)
        return -1;
    if ((c = bench_loop_client(ctx, &loop, 0)) == NULL ||
        (k = bench_chains_new(c, &loop, m, "bench:athr")) == NULL)
        goto out;
    /* Warm-up (connects), then the measured run. */
    if ((cycles = bench_chains_run(k, bench_now_ns() + 100000000LL)) < 0) {
        rc = bench_fail(c, "async throughput", (int)cycles);
        goto out;
    }
    if ((rc = srv_begin(ctx, &info)) != 0)
        goto out;
    rdl_client_stats(c, &s0);
    t0 = bench_now_ns();
    cycles = bench_chains_run(k, t0 + BENCH_SIZE(ctx, 400, 2000) * 1000000LL);
    per_s = cycles / ((double)(bench_now_ns() - t0) / 1e9);
    rdl_client_stats(c, &s1);
    if (cycles < 0) {
        rc = bench_fail(c, "async throughput", (int)cycles);
        goto out;
    }
    bench_row_begin(ctx, "throughput", "rdl: %d async chains", m);
    bench_row_num("cycles", per_s, "per_s", 0);
    bench_row_num("server_limit", limit, "per_s", 0);
    bench_row_target("of_server_limit", per_s / limit, "x", 2, ">= 0.70");
    bench_row_num("requests_per_cycle", bench_requests_per_acquire(&s0, &s1),
                  NULL, 2);
    srv_end(&info, cycles);
    bench_row_end();
out:
    bench_raw_close(&info.raw);
    bench_chains_free(k);
    bench_loop_client_free(c, &loop);
    uv_loop_close(&loop);
    return rc;
}

int bench_fig_throughput(bench_ctx *ctx)
{
    static const int quick_threads[] = {1, 4},
                     full_threads[] = {1, 2, 4, 8, 32};
    static const int quick_chains[] = {64}, full_chains[] = {16, 256, 1024};
    size_t i;
    int rc = 0;
    if (ctx->quick) {
        for (i = 0; i < 2; i++)
            rc |= blocking(ctx, quick_threads[i]);
        rc |= async(ctx, quick_chains[0]);
    } else {
        for (i = 0; i < 5; i++)
            rc |= blocking(ctx, full_threads[i]);
        for (i = 0; i < 3; i++)
            rc |= async(ctx, full_chains[i]);
    }
    return rc ? -1 : 0;
}
