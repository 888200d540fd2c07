/* Figure "uncontended": one thread, blocking rdl_lock_acquire and
 * rdl_lock_release on a name nobody else uses, against the raw client doing
 * the same two script calls. The two alternate in short rounds, so a noisy
 * neighbour slows both alike and the ratio stays honest. Target (DESIGN
 * §13): rdl's p50 cycle <= 1.3 x two raw round trips. */
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

static int raw_round(bench_raw *r, int n, bench_samples *s, int64_t *cpu)
{
    int i;
    int64_t c0 = cpu_ns();
    for (i = 0; i < n; i++) {
        int64_t t = bench_now_ns();
        if (bench_raw_acquire(r, "raw:unc") != 1 ||
            bench_raw_release(r, "raw:unc") != 1)
            return -1;
        if (bench_samples_add(s, bench_now_ns() - t) != 0)
            return -1;
    }
    *cpu += cpu_ns() - c0;
    return 0;
}

static int rdl_round(rdl_lock_t *lock, int n, bench_samples *s,
                     int64_t *busy_ns, int64_t *cpu)
{
    int i, rc;
    int64_t t0 = bench_now_ns(), c0 = cpu_ns();
    for (i = 0; i < n; i++) {
        int64_t t = bench_now_ns();
        if ((rc = rdl_lock_acquire(lock, 0, 30000)) != 0)
            return bench_fail(NULL, "acquire", rc);
        if ((rc = rdl_lock_release(lock)) != 0)
            return bench_fail(NULL, "release", rc);
        if (bench_samples_add(s, bench_now_ns() - t) != 0)
            return -1;
    }
    *busy_ns += bench_now_ns() - t0;
    *cpu += cpu_ns() - c0;
    return 0;
}

int bench_fig_uncontended(bench_ctx *ctx)
{
    bench_samples raw = {0}, lib = {0};
    rdl_client_t *c = NULL;
    rdl_lock_t *lock = NULL;
    bench_raw r;
    int rounds = BENCH_SIZE(ctx, 4, 20), n = BENCH_SIZE(ctx, 500, 1000);
    int i, rc = -1;
    int64_t busy = 0, raw_cpu = 0, lib_cpu = 0;
    double raw50, lib50;
    rdl_client_stats_t s0, s1;

    if (bench_raw_open(&r, ctx) != 0)
        return -1;
    if ((c = bench_client(ctx)) == NULL)
        goto out;
    if (rdl_lock_new(c, "bench:unc", &lock) != 0)
        goto out;
    /* Warm-up: connections, script caches, the CPU's frequency. */
    if (raw_round(&r, n / 2, &raw, &raw_cpu) != 0 ||
        rdl_round(lock, n / 2, &lib, &busy, &lib_cpu))
        goto out;
    bench_samples_free(&raw);
    bench_samples_free(&lib);
    busy = raw_cpu = lib_cpu = 0;
    rdl_client_stats(c, &s0);
    for (i = 0; i < rounds; i++)
        if (raw_round(&r, n, &raw, &raw_cpu) != 0 ||
            rdl_round(lock, n, &lib, &busy, &lib_cpu))
            goto out;
    rdl_client_stats(c, &s1);
    raw50 = bench_samples_pct_us(&raw, 50);
    lib50 = bench_samples_pct_us(&lib, 50);
    bench_row_begin(ctx, "uncontended", "raw: acquire+release, 2 RTT");
    bench_row_num("cycle_p50", raw50, "us", 1);
    bench_row_num("cycle_p99", bench_samples_pct_us(&raw, 99), "us", 1);
    bench_row_num("client_cpu_per_cycle", (double)raw_cpu / 1e3 / raw.n, "us",
                  1);
    bench_row_end();
    bench_row_begin(ctx, "uncontended", "rdl: blocking, 1 thread");
    bench_row_num("cycle_p50", lib50, "us", 1);
    bench_row_num("cycle_p99", bench_samples_pct_us(&lib, 99), "us", 1);
    bench_row_num("cycles", lib.n / ((double)busy / 1e9), "per_s", 0);
    bench_row_num("client_cpu_per_cycle", (double)lib_cpu / 1e3 / lib.n, "us",
                  1);
    bench_row_num("requests_per_cycle",
                  (double)(s1.commands - s0.commands) / (double)lib.n, NULL, 2);
    bench_row_target("ratio_p50", lib50 / raw50, "x", 2, "<= 1.3");
    bench_row_num("ratio_p99",
                  bench_samples_pct_us(&lib, 99) /
                      bench_samples_pct_us(&raw, 99),
                  "x", 2);
    bench_row_end();
    rc = 0;
out:
    rdl_lock_free(lock);
    rdl_client_free(c);
    bench_raw_close(&r);
    bench_samples_free(&raw);
    bench_samples_free(&lib);
    return rc;
}
