/* Figure "uncontended": one thread, blocking rdl_lock_acquire and
 * rdl_lock_release on a name nobody else uses, against the raw client doing
 * the same two script calls, both with hiredis's sleeping read and busy-
 * polling (see fig_floor.c). The three alternate in short rounds, so a
 * noisy neighbour slows them alike and the ratios stay honest. rdl's
 * blocking calls spin briefly before they sleep, so the ratio against the
 * sleeping client flatters rdl; the one against the busy-polling client
 * does not. Target (docs/benchmarks.md): rdl's p50 cycle <= 1.3 x two raw round
 * trips.
 *
 * Each round is bracketed by INFO readings on the raw connection, so every
 * row also says what the server paid per cycle: CPU (used_cpu_sys +
 * used_cpu_user) and commands (total_commands_processed, which counts the
 * commands the scripts run as well). */
#include <stdio.h>
#include <sys/resource.h>

#include "bench.h"

/* CPU time of the whole process (every thread), in ns. */
static int64_t cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

/* What one side of the comparison took over its rounds. */
typedef struct side {
    bench_samples s; /* cycle times */
    int64_t busy_ns; /* wall time of its rounds */
    int64_t cpu_ns;  /* client CPU of its rounds */
    bench_srv srv;   /* the server's share of its rounds */
} side;

/* Reads the server before a round; if its side cannot be seen, *ok is
 * cleared and no more readings are taken. */
static void srv_begin(bench_raw *info, int *ok, bench_srv *at)
{
    if (*ok && bench_srv_read(info, at) != 0)
        *ok = 0;
}

static void srv_end(bench_raw *info, int *ok, const bench_srv *at, side *d)
{
    bench_srv now, diff;
    if (!*ok)
        return;
    if (bench_srv_read(info, &now) != 0) {
        *ok = 0;
        return;
    }
    diff = bench_srv_diff(at, &now);
    d->srv.cpu_us += diff.cpu_us;
    d->srv.commands += diff.commands;
}

static int raw_round(bench_raw *r, int n, side *d)
{
    int i;
    int64_t t0 = bench_now_ns(), c0 = cpu_ns();
    for (i = 0; i < n; i++) {
        int64_t t = bench_now_ns();
        if (bench_raw_acquire(r, "raw:unc") != 1 ||
            bench_raw_release(r, "raw:unc") != 1)
            return -1;
        if (bench_samples_add(&d->s, bench_now_ns() - t) != 0)
            return -1;
    }
    d->busy_ns += bench_now_ns() - t0;
    d->cpu_ns += cpu_ns() - c0;
    return 0;
}

static int rdl_round(rdl_lock_t *lock, int n, side *d)
{
    int64_t t0 = bench_now_ns(), c0 = cpu_ns();
    if (bench_rdl_cycles(lock, n, &d->s) != 0)
        return -1;
    d->busy_ns += bench_now_ns() - t0;
    d->cpu_ns += cpu_ns() - c0;
    return 0;
}

/* One round of each, each between two readings of the server. */
static int rounds(bench_raw *r, bench_raw *spin, rdl_lock_t *lock, int n,
                  side *raw, side *busy, side *lib, int *srv_ok)
{
    bench_srv at;
    srv_begin(r, srv_ok, &at);
    if (raw_round(r, n, raw) != 0)
        return -1;
    srv_end(r, srv_ok, &at, raw);
    srv_begin(r, srv_ok, &at);
    if (raw_round(spin, n, busy) != 0)
        return -1;
    srv_end(r, srv_ok, &at, busy);
    srv_begin(r, srv_ok, &at);
    if (rdl_round(lock, n, lib) != 0)
        return -1;
    srv_end(r, srv_ok, &at, lib);
    return 0;
}

static void reset(side *d)
{
    bench_samples_free(&d->s);
    d->busy_ns = d->cpu_ns = 0;
    d->srv = (bench_srv){0};
}

/* The metrics every row has. */
static void common(side *d, int srv_ok)
{
    bench_row_num("cycle_p50", bench_samples_pct_us(&d->s, 50), "us", 1);
    bench_row_num("cycle_p99", bench_samples_pct_us(&d->s, 99), "us", 1);
    bench_row_num("cycles", d->s.n / ((double)d->busy_ns / 1e9), "per_s", 0);
    bench_row_num("client_cpu_per_cycle", (double)d->cpu_ns / 1e3 / d->s.n,
                  "us", 1);
    if (srv_ok) {
        bench_row_num("server_cpu_per_cycle", d->srv.cpu_us / d->s.n, "us", 1);
        bench_row_num("server_cmds_per_cycle", (double)d->srv.commands / d->s.n,
                      NULL, 2);
    }
}

int bench_fig_uncontended(bench_ctx *ctx)
{
    side raw = {0}, busy = {0}, lib = {0};
    rdl_client_t *c = NULL;
    rdl_lock_t *lock = NULL;
    bench_raw r, spin;
    int nrounds = BENCH_SIZE(ctx, 4, 20), n = BENCH_SIZE(ctx, 500, 1000);
    int i, rc = -1, srv_ok = 1;
    double raw50, busy50, lib50;
    rdl_client_stats_t s0, s1;

    if (bench_raw_open(&r, ctx) != 0)
        return -1;
    if (bench_raw_open(&spin, ctx) != 0) /* on failure spin.rc is NULL */
        goto out;
    spin.spin = 1;
    if ((c = bench_client(ctx)) == NULL)
        goto out;
    if (rdl_lock_new(c, "bench:unc", &lock) != 0)
        goto out;
    /* Warm-up: connections, script caches, the CPU's frequency. */
    if (rounds(&r, &spin, lock, n / 2, &raw, &busy, &lib, &srv_ok) != 0)
        goto out;
    reset(&raw);
    reset(&busy);
    reset(&lib);
    rdl_client_stats(c, &s0);
    for (i = 0; i < nrounds; i++)
        if (rounds(&r, &spin, lock, n, &raw, &busy, &lib, &srv_ok) != 0)
            goto out;
    rdl_client_stats(c, &s1);
    raw50 = bench_samples_pct_us(&raw.s, 50);
    busy50 = bench_samples_pct_us(&busy.s, 50);
    lib50 = bench_samples_pct_us(&lib.s, 50);
    bench_row_begin(ctx, "uncontended", "raw: acquire+release, 2 RTT");
    common(&raw, srv_ok);
    bench_row_end();
    bench_row_begin(ctx, "uncontended", "raw busy-poll: the same");
    common(&busy, srv_ok);
    bench_row_end();
    bench_row_begin(ctx, "uncontended", "rdl: blocking, 1 thread");
    common(&lib, srv_ok);
    bench_row_num("requests_per_cycle",
                  (double)(s1.commands - s0.commands) / (double)lib.s.n, NULL,
                  2);
    bench_row_target("ratio_p50", lib50 / raw50, "x", 2, "<= 1.3");
    bench_row_num("ratio_p99",
                  bench_samples_pct_us(&lib.s, 99) /
                      bench_samples_pct_us(&raw.s, 99),
                  "x", 2);
    bench_row_target("ratio_p50_busy", lib50 / busy50, "x", 2, "<= 1.3");
    bench_row_num("ratio_p99_busy",
                  bench_samples_pct_us(&lib.s, 99) /
                      bench_samples_pct_us(&busy.s, 99),
                  "x", 2);
    bench_row_end();
    rc = 0;
out:
    rdl_lock_free(lock);
    rdl_client_free(c);
    bench_raw_close(&r);
    bench_raw_close(&spin);
    bench_samples_free(&raw.s);
    bench_samples_free(&busy.s);
    bench_samples_free(&lib.s);
    return rc;
}
