/* Figure "throughput": many acquirers on distinct names (no contention),
 * acquire+release cycles per second, as a share of the server's limit (raw
 * pipelined cycles, measured again just before each case). Target
 * (docs/benchmarks.md): >= 70% over one client.
 *
 * - blocking: N threads, each cycling its own lock with the blocking calls;
 *   over one client, whose loop pipelines what the threads post in one
 *   iteration, or over a client (a connection) each.
 * - async: M chains on the caller's loop (rdl_client_set_loop), each
 *   starting its next acquire from the callback of its release; over one
 *   client, or over one client each, every client on that one loop.
 * The 50-connection cases are the peers' T50 (bench/peers/): what the
 * server pays when nothing can be batched.
 *
 * Every case also says what the server paid per cycle, from INFO read on a
 * raw connection before and after the measured run: CPU (used_cpu_sys +
 * used_cpu_user), the time of the script calls (FCALL or EVALSHA usec, the
 * commands they ran included), and commands (total_commands_processed,
 * which counts the commands the scripts run as well). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "bench.h"

#define LIMIT_NS (BENCH_SIZE(ctx, 200, 1000) * 1000000LL)
#define CONNS 50 /* the peers' T50 */

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
 * server's CPU, script time and commands per cycle (nothing if it could
 * not be read). */
static void srv_end(probe *p, long cycles)
{
    bench_srv now, d;
    int ok = p->ok && bench_srv_read(&p->raw, &now) == 0;
    bench_raw_close(&p->raw);
    if (!ok || cycles <= 0)
        return;
    d = bench_srv_diff(&p->at, &now);
    bench_row_num("server_cpu_per_cycle", d.cpu_us / (double)cycles, "us", 1);
    bench_row_num("script_time_per_cycle", (double)d.script_us / (double)cycles,
                  "us", 1);
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

/* The clients' commands and acquisitions, summed. */
static void stats_sum(rdl_client_t **c, int n, rdl_client_stats_t *out)
{
    rdl_client_stats_t s;
    int i;
    memset(out, 0, sizeof(*out));
    for (i = 0; i < n; i++) {
        rdl_client_stats(c[i], &s);
        out->commands += s.commands;
        out->acquires += s.acquires;
    }
}

static void clients_free(rdl_client_t **c, int n)
{
    int i;
    for (i = 0; c != NULL && i < n; i++)
        rdl_client_free(c[i]);
    free(c);
}

/* n clients on their own loop threads, or NULL (printed). */
static rdl_client_t **clients_new(const bench_ctx *ctx, int n)
{
    rdl_client_t **c = calloc((size_t)n, sizeof(*c));
    int i;
    for (i = 0; c != NULL && i < n; i++)
        if ((c[i] = bench_client(ctx)) == NULL) {
            clients_free(c, i);
            return NULL;
        }
    return c;
}

/* n threads over `conns` clients (1, or n: one each). */
static int blocking(bench_ctx *ctx, int n, int conns)
{
    double limit = bench_raw_limit(ctx, LIMIT_NS);
    rdl_client_t **c = limit > 0 ? clients_new(ctx, conns) : NULL;
    worker *w = calloc((size_t)n, sizeof(*w));
    int64_t t0;
    long cycles = 0;
    int i, rc = 0;
    double per_s;
    rdl_client_stats_t s0, s1;
    probe info;

    if (c == NULL || w == NULL || srv_begin(ctx, &info) != 0) {
        clients_free(c, c != NULL ? conns : 0);
        free(w);
        return -1;
    }
    stats_sum(c, conns, &s0);
    t0 = bench_now_ns();
    for (i = 0; i < n; i++) {
        w[i].c = c[i % conns];
        w[i].index = i;
        w[i].end = t0 + BENCH_SIZE(ctx, 400, 2000) * 1000000LL;
        if (pthread_create(&w[i].tid, NULL, blocking_main, &w[i]) != 0)
            w[i].rc = -1, w[i].tid = 0;
    }
    for (i = 0; i < n; i++) {
        if (w[i].tid != 0)
            pthread_join(w[i].tid, NULL);
        if (w[i].rc != 0 && rc == 0)
            rc = bench_fail(w[i].c, "blocking throughput", w[i].rc);
        cycles += w[i].cycles;
    }
    per_s = cycles / ((double)(bench_now_ns() - t0) / 1e9);
    stats_sum(c, conns, &s1);
    clients_free(c, conns);
    free(w);
    if (rc != 0) {
        bench_raw_close(&info.raw);
        return rc;
    }
    if (conns == 1)
        bench_row_begin(ctx, "throughput", "rdl: %d blocking thread%s", n,
                        n == 1 ? "" : "s");
    else
        bench_row_begin(ctx, "throughput", "rdl: %d threads, a client each", n);
    bench_row_num("cycles", per_s, "per_s", 0);
    bench_row_num("server_limit", limit, "per_s", 0);
    bench_row_target("of_server_limit", per_s / limit, "x", 2,
                     n >= 4 && conns == 1 ? ">= 0.70" : NULL);
    bench_row_num("requests_per_cycle", bench_requests_per_acquire(&s0, &s1),
                  NULL, 2);
    srv_end(&info, cycles);
    bench_row_end();
    return 0;
}

/* ---- async ----------------------------------------------------------------- */

/* Runs every set of chains until the cycle that ends after `end`: the
 * cycles, or an rdl error code (< 0). */
static long chains_run(bench_chains **k, int n, int64_t end)
{
    long cycles = 0, r;
    int i, rc = 0;
    for (i = 0; i < n; i++)
        bench_chains_start(k[i], end);
    for (i = 0; i < n; i++) {
        if ((r = bench_chains_finish(k[i])) < 0)
            rc = (int)r;
        else
            cycles += r;
    }
    return rc != 0 ? rc : cycles;
}

/* m chains over `conns` clients (1, or m: one each), all on one loop. */
static int async(bench_ctx *ctx, int m, int conns)
{
    double limit = bench_raw_limit(ctx, LIMIT_NS);
    uv_loop_t loop;
    rdl_client_t **c = calloc((size_t)conns, sizeof(*c));
    bench_chains **k = calloc((size_t)conns, sizeof(*k));
    int rc = -1, i;
    long cycles;
    int64_t t0;
    double per_s;
    rdl_client_stats_t s0, s1;
    probe info = {0};
    char prefix[32];

    if (c == NULL || k == NULL || limit <= 0 || uv_loop_init(&loop) != 0) {
        free(c);
        free(k);
        return -1;
    }
    for (i = 0; i < conns; i++) {
        snprintf(prefix, sizeof(prefix), "bench:athr:%d", i);
        if ((c[i] = bench_loop_client(ctx, &loop, 0)) == NULL ||
            (k[i] = bench_chains_new(c[i], &loop, m / conns, prefix)) == NULL)
            goto out;
    }
    /* Warm-up (connects), then the measured run. */
    if ((cycles = chains_run(k, conns, bench_now_ns() + 100000000LL)) < 0) {
        rc = bench_fail(c[0], "async throughput", (int)cycles);
        goto out;
    }
    if ((rc = srv_begin(ctx, &info)) != 0)
        goto out;
    stats_sum(c, conns, &s0);
    t0 = bench_now_ns();
    cycles = chains_run(k, conns, t0 + BENCH_SIZE(ctx, 400, 2000) * 1000000LL);
    per_s = cycles / ((double)(bench_now_ns() - t0) / 1e9);
    stats_sum(c, conns, &s1);
    if (cycles < 0) {
        rc = bench_fail(c[0], "async throughput", (int)cycles);
        goto out;
    }
    if (conns == 1)
        bench_row_begin(ctx, "throughput", "rdl: %d async chains", m);
    else
        bench_row_begin(ctx, "throughput", "rdl: %d async, a client each", m);
    bench_row_num("cycles", per_s, "per_s", 0);
    bench_row_num("server_limit", limit, "per_s", 0);
    bench_row_target("of_server_limit", per_s / limit, "x", 2,
                     conns == 1 ? ">= 0.70" : NULL);
    bench_row_num("requests_per_cycle", bench_requests_per_acquire(&s0, &s1),
                  NULL, 2);
    srv_end(&info, cycles);
    bench_row_end();
out:
    bench_raw_close(&info.raw);
    for (i = 0; i < conns; i++)
        bench_chains_free(k[i]);
    bench_loop_clients_free(c, conns, &loop);
    free(k);
    free(c);
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
            rc |= blocking(ctx, quick_threads[i], 1);
        rc |= async(ctx, quick_chains[0], 1);
    } else {
        for (i = 0; i < 5; i++)
            rc |= blocking(ctx, full_threads[i], 1);
        for (i = 0; i < 3; i++)
            rc |= async(ctx, full_chains[i], 1);
    }
    /* T50: 50 acquirers, 50 connections. */
    rc |= blocking(ctx, CONNS, CONNS);
    rc |= async(ctx, CONNS, CONNS);
    return rc ? -1 : 0;
}
