/* Figure "watchdog": N holds taken with RDL_LEASE_AUTO on one client, for
 * N = 1,000, 10,000 and 100,000 (1,000 and 10,000 with --quick), with a
 * short watchdog lease so periods pass quickly; then, after one period for
 * the renewals to fall in step, two renewal periods measured in the steady
 * state: renewal round trips per period (the target is <= 100 for 10,000
 * holds; one script call renews up to 200 holds, so the figure should
 * grow as N / 200), holds renewed per period, the client's CPU time per
 * period, and the server's (INFO used_cpu_sys + used_cpu_user, read on a
 * raw connection; it includes the server's own housekeeping, about 2 ms a
 * second when idle, which weighs on the smallest case only).
 *
 * The client runs on the benchmark's own loop (rdl_client_set_loop), as in
 * fig_memory.c: 100,000 blocking acquisitions would take far longer than
 * the figure itself, and 100,000 async ones are pipelined in a few seconds.
 * While the figure waits, the loop runs the watchdog and nothing else, so
 * getrusage of this process is the watchdog's CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <uv.h>

#include "bench.h"

static int64_t cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

static int holds(bench_ctx *ctx, long n, int64_t lease_ms)
{
    const int64_t period_ns = lease_ms / 3 * 1000000LL;
    uv_loop_t loop;
    rdl_client_t *c = NULL;
    rdl_lock_t **locks = calloc((size_t)n, sizeof(*locks));
    rdl_req_t *reqs = calloc((size_t)n, sizeof(*reqs));
    rdl_client_stats_t s0, s1;
    bench_tally t = {0};
    bench_raw raw = {0};
    bench_srv srv0, srv1, srv;
    int64_t cpu0, cpu1;
    int rc = -1, srv_ok;
    long i, made = 0, held = 0;
    char name[64];

    if (locks == NULL || reqs == NULL || uv_loop_init(&loop) != 0) {
        free(locks);
        free(reqs);
        return -1;
    }
    if ((c = bench_loop_client(ctx, &loop, lease_ms)) == NULL)
        goto out;
    for (i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "bench:wd:%ld", i);
        if ((rc = rdl_lock_new(c, name, &locks[i])) != 0) {
            rc = bench_fail(c, "watchdog lock", rc);
            goto out;
        }
        made++;
        reqs[i].data = &t;
    }
    /* Every acquisition at once: the client pipelines them. */
    for (i = 0; i < n; i++)
        if ((rc = rdl_lock_acquire_async(&reqs[i], locks[i], 1, 0,
                                         RDL_LEASE_AUTO, bench_tally_done)) !=
            0)
            break;
    bench_loop_until(&loop, &t.done, i);
    held = i;
    if (rc != 0) {
        rc = bench_fail(c, "watchdog acquire", rc);
        goto out;
    }
    if (t.failed) {
        rc = bench_fail(c, "watchdog holds", t.last_error);
        goto out;
    }
    /* One period for the first renewals to bring the holds in step. */
    bench_loop_for(&loop, period_ns);
    srv_ok = bench_raw_open(&raw, ctx) == 0 && bench_srv_read(&raw, &srv0) == 0;
    rdl_client_stats(c, &s0);
    cpu0 = cpu_ns();
    bench_loop_for(&loop, 2 * period_ns);
    cpu1 = cpu_ns();
    rdl_client_stats(c, &s1);
    srv_ok = srv_ok && bench_srv_read(&raw, &srv1) == 0;
    bench_row_begin(ctx, "watchdog", "%ld RDL_LEASE_AUTO holds, lease %lld ms",
                    n, (long long)lease_ms);
    bench_row_target("round_trips_per_period",
                     (double)(s1.renewal_calls - s0.renewal_calls) / 2, NULL, 1,
                     n == 10000 ? "<= 100" : NULL);
    bench_row_num("holds_renewed_per_period",
                  (double)(s1.renewals - s0.renewals) / 2, NULL, 0);
    bench_row_num("client_cpu_per_period", (double)(cpu1 - cpu0) / 2 / 1000.0,
                  "us", 0);
    if (srv_ok) {
        srv = bench_srv_diff(&srv0, &srv1);
        bench_row_num("server_cpu_per_period", srv.cpu_us / 2, "us", 0);
    }
    bench_row_num("holds_lost", (double)(s1.holds_lost - s0.holds_lost), NULL,
                  0);
    bench_row_end();
    rc = 0;
out:
    bench_raw_close(&raw);
    /* Release every hold (with --url the server is the user's). */
    if (held > 0) {
        int r = 0;
        t.done = t.failed = 0;
        for (i = 0; i < held; i++)
            if ((r = rdl_lock_release_async(&reqs[i], locks[i], 1,
                                            bench_tally_done)))
                break;
        if (r != 0) {
            t.failed++;
            t.last_error = r;
        }
        bench_loop_until(&loop, &t.done, i);
        if (t.failed && rc == 0)
            rc = bench_fail(c, "watchdog release", t.last_error);
    }
    for (i = 0; i < made; i++)
        rdl_lock_free(locks[i]);
    bench_loop_client_free(c, &loop);
    uv_loop_close(&loop);
    free(locks);
    free(reqs);
    return rc;
}

int bench_fig_watchdog(bench_ctx *ctx)
{
    static const long sizes[] = {1000, 10000, 100000};
    const int64_t lease_ms = BENCH_SIZE(ctx, 1500, 3000);
    int i, n = BENCH_SIZE(ctx, 2, 3), rc = 0;
    for (i = 0; i < n; i++)
        rc |= holds(ctx, sizes[i], lease_ms);
    return rc ? -1 : 0;
}
