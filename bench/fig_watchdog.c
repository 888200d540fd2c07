/* Figure "watchdog": N holds taken with RDL_LEASE_AUTO on one client (a
 * short watchdog lease, so periods pass quickly), then two renewal periods
 * measured in the steady state: renewal round trips per period (the
 * target is <= 100 for 10,000 holds), holds renewed, and the client's CPU
 * time per period (getrusage of this process: the watchdog is all that
 * runs while the figure waits). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "bench.h"

static int64_t cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

int bench_fig_watchdog(bench_ctx *ctx)
{
    const int n = BENCH_SIZE(ctx, 2000, 10000);
    const int64_t lease_ms = BENCH_SIZE(ctx, 1500, 3000), period = lease_ms / 3;
    rdl_client_t *c = NULL;
    rdl_lock_t **locks = calloc((size_t)n, sizeof(*locks));
    rdl_client_stats_t s0, s1;
    int64_t cpu0, cpu1;
    char name[64];
    int i, rc = 0, made = 0;

    if (locks == NULL)
        return -1;
    if ((rc = rdl_client_new(&c)) != 0 ||
        (rc = rdl_client_set_url(c, ctx->url)) != 0 ||
        (rc = rdl_client_set_watchdog_ms(c, lease_ms)) != 0 ||
        (rc = rdl_client_connect(c)) != 0) {
        bench_fail(c, "watchdog client", rc);
        rdl_client_free(c);
        free(locks);
        return -1;
    }
    for (i = 0; i < n && rc == 0; i++) {
        snprintf(name, sizeof(name), "bench:wd:%d", i);
        if ((rc = rdl_lock_new(c, name, &locks[i])) == 0) {
            made++;
            rc = rdl_lock_acquire(locks[i], 0, RDL_LEASE_AUTO);
        }
    }
    if (rc == 0) {
        /* One period for the first renewals to bring the holds in step. */
        bench_sleep_ns(period * 1000000LL);
        rdl_client_stats(c, &s0);
        cpu0 = cpu_ns();
        bench_sleep_ns(2 * period * 1000000LL);
        cpu1 = cpu_ns();
        rdl_client_stats(c, &s1);
        bench_row_begin(ctx, "watchdog",
                        "%d RDL_LEASE_AUTO holds, lease %lld ms", n,
                        (long long)lease_ms);
        bench_row_target("round_trips_per_period",
                         (double)(s1.renewal_calls - s0.renewal_calls) / 2,
                         NULL, 1, n == 10000 ? "<= 100" : NULL);
        bench_row_num("holds_renewed_per_period",
                      (double)(s1.renewals - s0.renewals) / 2, NULL, 0);
        bench_row_num("client_cpu_per_period",
                      (double)(cpu1 - cpu0) / 2 / 1000.0, "us", 0);
        bench_row_num("holds_lost", (double)(s1.holds_lost - s0.holds_lost),
                      NULL, 0);
        bench_row_end();
    } else {
        bench_fail(c, "watchdog holds", rc);
    }
    for (i = 0; i < made; i++) {
        int r = rdl_lock_release(locks[i]);
        (void)r;
        rdl_lock_free(locks[i]);
    }
    free(locks);
    rdl_client_free(c);
    return rc == 0 ? 0 : -1;
}
