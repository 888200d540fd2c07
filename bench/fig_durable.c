/* Figure "durable": what durable acquisitions cost
 * (rdl_client_set_durability, docs/deployments.md, "Durable acquisitions": each
 * grant is confirmed by WAIT on a connection of its own before it is reported),
 * against ONE replica of the throwaway server that this figure starts and
 * stops (bench_replica_start). With --url it runs only if the server
 * already has a replica (ROLE lists one), and then without its third case:
 * that replica is not ours to pause.
 *
 * - uncontended: blocking acquire+release on one thread, durability 1 and
 *   off, alternating in short rounds (as fig_uncontended.c), next to the
 *   replication round trip measured raw in the same rounds: the time of
 *   `WAIT 1 1000` sent after a `SET` on a raw connection (the WAIT alone).
 *   Target (the durability issue): the durable p50 <= 1.5 x the plain p50
 *   + one replication round trip.
 * - throughput: 50 async chains on distinct names over one client on the
 *   caller's loop (bench_chains, as fig_throughput.c's async case),
 *   durability 1 and off, alternating. Target: durable >= 0.5 x off.
 * - slow WAIT: one durable client (WAIT timeout 500 ms). While the replica
 *   is stopped (SIGSTOP), two threads keep durable acquisitions waiting
 *   for their WAIT, and the main thread times plain operations on the same
 *   client that need no WAIT: releases of locks it took before the pause,
 *   alternating with rdl_lock_info. Their p99 is compared with the same
 *   operations while the replica runs (and nothing waits). Acquisitions
 *   are not among them: by design every acquisition of a durable client
 *   waits for a WAIT (those sent while one is pending share the next), so
 *   with a slow replica they are all slow. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "bench.h"

#define TIMEOUT_MS 1000     /* WAIT timeout of the first two cases */
#define SLOW_TIMEOUT_MS 500 /* and of the third */
#define CHAINS 50
#define ACQUIRERS 2

/* 1 if the server is a master with a replica (ROLE), 0 if not, -1 if it
 * could not be asked (printed). */
static int has_replica(const bench_ctx *ctx)
{
    bench_raw r;
    redisReply *rep;
    int res = -1;
    if (bench_raw_open(&r, ctx) != 0)
        return -1;
    if ((rep = bench_raw_command(&r, "ROLE")) != NULL) {
        res = rep->type == REDIS_REPLY_ARRAY && rep->elements >= 3 &&
              rep->element[0]->type == REDIS_REPLY_STRING &&
              strcmp(rep->element[0]->str, "master") == 0 &&
              rep->element[2]->type == REDIS_REPLY_ARRAY &&
              rep->element[2]->elements > 0;
        freeReplyObject(rep);
    }
    bench_raw_close(&r);
    return res;
}

/* ---- uncontended ------------------------------------------------------------- */

/* The replication round trip: WAIT 1 after a SET, the WAIT timed alone. */
static int repl_round(bench_raw *r, int n, bench_samples *s)
{
    redisReply *rep;
    int i, ok;
    for (i = 0; i < n; i++) {
        int64_t t;
        if ((rep = bench_raw_command(r, "SET bench:dur:raw %d PX 60000", i)) ==
            NULL)
            return -1;
        freeReplyObject(rep);
        t = bench_now_ns();
        if ((rep = bench_raw_command(r, "WAIT 1 1000")) == NULL)
            return -1;
        ok = rep->type == REDIS_REPLY_INTEGER && rep->integer >= 1;
        freeReplyObject(rep);
        if (!ok) {
            fprintf(stderr, "rdl-bench: WAIT 1 1000: no replica confirmed\n");
            return -1;
        }
        if (bench_samples_add(s, bench_now_ns() - t) != 0)
            return -1;
    }
    return 0;
}

/* s[0]: durability off, s[1]: durability 1, s[2]: raw WAIT. */
static int rounds(rdl_lock_t *off, rdl_lock_t *on, bench_raw *r, int n,
                  bench_samples *s)
{
    if (bench_rdl_cycles(off, n, &s[0]) != 0 ||
        bench_rdl_cycles(on, n, &s[1]) != 0 || repl_round(r, n, &s[2]) != 0)
        return -1;
    return 0;
}

static int uncontended(bench_ctx *ctx)
{
    bench_samples s[3] = {{0}};
    rdl_client_t *c = NULL, *d = NULL;
    rdl_lock_t *off = NULL, *on = NULL;
    bench_raw r;
    int nrounds = BENCH_SIZE(ctx, 4, 20), n = BENCH_SIZE(ctx, 200, 500);
    int i, rc = -1;
    double off50, on50, repl50, target;
    rdl_client_stats_t s0, s1;

    if (bench_raw_open(&r, ctx) != 0)
        return -1;
    if ((c = bench_client(ctx)) == NULL ||
        (d = bench_durable_client(ctx, NULL, 1, TIMEOUT_MS)) == NULL)
        goto out;
    if ((rc = rdl_lock_new(c, "bench:dur:off", &off)) != 0 ||
        (rc = rdl_lock_new(d, "bench:dur:on", &on)) != 0) {
        rc = bench_fail(c, "rdl_lock_new", rc);
        goto out;
    }
    rc = -1;
    /* Warm-up: connections (the durable line opens on first use), script
     * caches, the CPU's frequency. */
    if (rounds(off, on, &r, n / 2, s) != 0)
        goto out;
    for (i = 0; i < 3; i++)
        bench_samples_free(&s[i]);
    rdl_client_stats(d, &s0);
    for (i = 0; i < nrounds; i++)
        if (rounds(off, on, &r, n, s) != 0)
            goto out;
    rdl_client_stats(d, &s1);
    off50 = bench_samples_pct_us(&s[0], 50);
    on50 = bench_samples_pct_us(&s[1], 50);
    repl50 = bench_samples_pct_us(&s[2], 50);
    target = 1.5 * off50 + repl50;
    bench_row_begin(ctx, "durable", "uncontended: blocking, 1 thread");
    bench_row_num("off_p50", off50, "us", 1);
    bench_row_num("durable_p50", on50, "us", 1);
    bench_row_num("repl_rtt_p50", repl50, "us", 1);
    bench_row_num("off_p99", bench_samples_pct_us(&s[0], 99), "us", 1);
    bench_row_num("durable_p99", bench_samples_pct_us(&s[1], 99), "us", 1);
    bench_row_num("repl_rtt_p99", bench_samples_pct_us(&s[2], 99), "us", 1);
    bench_row_num("requests_per_cycle", bench_requests_per_acquire(&s0, &s1),
                  NULL, 2);
    bench_row_num("durable_over_off", on50 / off50, "x", 2);
    bench_row_num("target_p50", target, "us", 1);
    bench_row_target("p50_over_target", on50 / target, "x", 2, "<= 1.00");
    bench_row_end();
    rc = 0;
out:
    rdl_lock_free(off);
    rdl_lock_free(on);
    rdl_client_free(c);
    rdl_client_free(d);
    bench_raw_close(&r);
    for (i = 0; i < 3; i++)
        bench_samples_free(&s[i]);
    return rc;
}

/* ---- throughput --------------------------------------------------------------- */

/* One round of a client's chains: adds its cycles and wall time; 0 or -1
 * (printed). */
static int chains_round(rdl_client_t *c, bench_chains *k, int64_t ns,
                        long *cycles, int64_t *busy)
{
    int64_t t = bench_now_ns();
    long n = bench_chains_run(k, t + ns);
    if (n < 0)
        return bench_fail(c, "async chains", (int)n);
    *cycles += n;
    *busy += bench_now_ns() - t;
    return 0;
}

static int throughput(bench_ctx *ctx)
{
    uv_loop_t loop;
    rdl_client_t *c = NULL, *d = NULL;
    bench_chains *koff = NULL, *kon = NULL;
    int nrounds = BENCH_SIZE(ctx, 2, 8), i, rc = -1;
    int64_t round_ns = BENCH_SIZE(ctx, 200, 250) * 1000000LL;
    int64_t off_ns = 0, on_ns = 0;
    long off_n = 0, on_n = 0;
    double off_s, on_s;
    rdl_client_stats_t s0, s1;

    if (uv_loop_init(&loop) != 0)
        return -1;
    if ((c = bench_loop_client(ctx, &loop, 0)) == NULL ||
        (d = bench_durable_client(ctx, &loop, 1, TIMEOUT_MS)) == NULL ||
        (koff = bench_chains_new(c, &loop, CHAINS, "bench:dthr:off")) == NULL ||
        (kon = bench_chains_new(d, &loop, CHAINS, "bench:dthr:on")) == NULL)
        goto out;
    /* Warm-up (connects), then alternating rounds. */
    if (chains_round(c, koff, 50000000LL, &off_n, &off_ns) != 0 ||
        chains_round(d, kon, 50000000LL, &on_n, &on_ns) != 0)
        goto out;
    off_n = on_n = 0;
    off_ns = on_ns = 0;
    rdl_client_stats(d, &s0);
    for (i = 0; i < nrounds; i++)
        if (chains_round(c, koff, round_ns, &off_n, &off_ns) != 0 ||
            chains_round(d, kon, round_ns, &on_n, &on_ns) != 0)
            goto out;
    rdl_client_stats(d, &s1);
    off_s = off_n / ((double)off_ns / 1e9);
    on_s = on_n / ((double)on_ns / 1e9);
    bench_row_begin(ctx, "durable", "throughput: %d async chains", CHAINS);
    bench_row_num("off_cycles", off_s, "per_s", 0);
    bench_row_num("durable_cycles", on_s, "per_s", 0);
    bench_row_num("requests_per_cycle", bench_requests_per_acquire(&s0, &s1),
                  NULL, 2);
    bench_row_target("durable_over_off", on_s / off_s, "x", 2, ">= 0.50");
    bench_row_end();
    rc = 0;
out:
    bench_chains_free(koff);
    bench_chains_free(kon);
    /* Both clients close before the loop runs their handles out. */
    if (c != NULL)
        rdl_client_close(c);
    bench_loop_client_free(d, &loop);
    rdl_client_free(c);
    uv_loop_close(&loop);
    return rc;
}

/* ---- slow WAIT ------------------------------------------------------------------ */

/* A thread that keeps a durable acquisition waiting for its WAIT. */
typedef struct acquirer {
    pthread_t tid;
    rdl_lock_t *lock;
    const int *stop;       /* atomic */
    bench_samples refused; /* times of the refused acquisitions */
    long confirmed;
    int rc;
} acquirer;

static void *acquirer_main(void *arg)
{
    acquirer *a = arg;
    while (!__atomic_load_n(a->stop, __ATOMIC_ACQUIRE)) {
        int64_t t = bench_now_ns();
        int rc = rdl_lock_acquire(a->lock, 0, 30000);
        if (rc == RDL_ENOREPLICAS) {
            bench_samples_add(&a->refused, bench_now_ns() - t);
        } else if (rc == 0) {
            a->confirmed++;
            if ((a->rc = rdl_lock_release(a->lock)) != 0)
                break;
        } else {
            a->rc = rc;
            break;
        }
    }
    return NULL;
}

/* What one side measured: the plain operations' times. */
typedef struct ops {
    bench_samples release;
    bench_samples info;
} ops;

/* Takes the held locks (durably: the replica runs); 0 or -1 (printed). */
static int take(rdl_lock_t **held, int n)
{
    int i, rc;
    for (i = 0; i < n; i++)
        if ((rc = rdl_lock_acquire(held[i], 0, 30000)) != 0)
            return bench_fail(NULL, "acquire before the pause", rc);
    return 0;
}

/* Times plain operations until `end`: the releases of the n held locks
 * alternating with rdl_lock_info on `probe`, then rdl_lock_info alone. */
static int plain_ops(rdl_lock_t **held, int n, rdl_lock_t *probe, int64_t end,
                     ops *o)
{
    rdl_lock_info_t li;
    int i = 0, turn = 0, rc;
    while (bench_now_ns() < end || i < n) {
        int64_t t = bench_now_ns();
        int release = i < n && (turn ^= 1);
        rc = release ? rdl_lock_release(held[i++])
                     : rdl_lock_info(probe, rdl_owner_self(), &li);
        if (rc != 0)
            return bench_fail(NULL, release ? "release" : "rdl_lock_info", rc);
        if (bench_samples_add(release ? &o->release : &o->info,
                              bench_now_ns() - t) != 0)
            return -1;
    }
    return 0;
}

/* The replica stopped, acquirers waiting, plain operations timed; the
 * replica is resumed on every way out. */
static int paused(rdl_lock_t **held, int n, rdl_lock_t *probe,
                  int64_t window_ns, acquirer *a, ops *o)
{
    int stop = 0, i, started = 0, rc = -1;
    if (bench_replica_pause(1) != 0) {
        fprintf(stderr, "rdl-bench: could not stop the replica\n");
        bench_replica_pause(0);
        return -1;
    }
    for (i = 0; i < ACQUIRERS; i++) {
        a[i].stop = &stop;
        if (pthread_create(&a[i].tid, NULL, acquirer_main, &a[i]) != 0)
            break;
        started++;
    }
    if (started == ACQUIRERS) {
        bench_sleep_ns(20000000LL); /* their WAITs are pending */
        rc = plain_ops(held, n, probe, bench_now_ns() + window_ns, o);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    if (bench_replica_pause(0) != 0) {
        fprintf(stderr, "rdl-bench: could not resume the replica\n");
        rc = -1;
    }
    for (i = 0; i < started; i++) {
        pthread_join(a[i].tid, NULL);
        if (a[i].rc != 0 && rc == 0)
            rc = bench_fail(NULL, "durable acquisition", a[i].rc);
    }
    return rc;
}

static void ops_row(bench_ctx *ctx, const char *what, ops *o)
{
    bench_row_begin(ctx, "durable", "slow WAIT: %s", what);
    bench_row_num("release_p50", bench_samples_pct_us(&o->release, 50), "us",
                  1);
    bench_row_num("release_p99", bench_samples_pct_us(&o->release, 99), "us",
                  1);
    bench_row_num("info_p50", bench_samples_pct_us(&o->info, 50), "us", 1);
    bench_row_num("info_p99", bench_samples_pct_us(&o->info, 99), "us", 1);
}

static int slow_wait(bench_ctx *ctx)
{
    ops run = {{0}, {0}}, stopped = {{0}, {0}};
    acquirer a[ACQUIRERS];
    rdl_client_t *d = NULL;
    rdl_lock_t **held = NULL, *probe = NULL;
    int n = BENCH_SIZE(ctx, 100, 300), nrounds = BENCH_SIZE(ctx, 1, 3);
    int64_t window_ns = BENCH_SIZE(ctx, 700, 1500) * 1000000LL;
    int i, rc = -1, made = 0;
    long refused = 0, confirmed = 0;
    bench_samples waits = {0};
    char name[48];

    memset(a, 0, sizeof(a));
    if ((d = bench_durable_client(ctx, NULL, 1, SLOW_TIMEOUT_MS)) == NULL)
        return -1;
    if ((held = calloc((size_t)n, sizeof(*held))) == NULL)
        goto out;
    for (made = 0; made < n + ACQUIRERS + 1; made++) {
        rdl_lock_t **l = made < n               ? &held[made]
                         : made < n + ACQUIRERS ? &a[made - n].lock
                                                : &probe;
        snprintf(name, sizeof(name), "bench:dur:slow:%d", made);
        if ((rc = rdl_lock_new(d, name, l)) != 0) {
            rc = bench_fail(d, "rdl_lock_new", rc);
            goto out;
        }
    }
    rc = -1;
    /* Warm-up: the durable line, script caches. */
    if (take(held, n) != 0 || plain_ops(held, n, probe, 0, &run) != 0)
        goto out;
    bench_samples_free(&run.release);
    bench_samples_free(&run.info);
    for (i = 0; i < nrounds; i++) {
        if (take(held, n) != 0 ||
            plain_ops(held, n, probe, bench_now_ns() + window_ns, &run) != 0)
            goto out;
        if (take(held, n) != 0 ||
            paused(held, n, probe, window_ns, a, &stopped) != 0)
            goto out;
    }
    for (i = 0; i < ACQUIRERS; i++) {
        size_t j;
        for (j = 0; j < a[i].refused.n; j++)
            bench_samples_add(&waits, a[i].refused.v[j]);
        refused += (long)a[i].refused.n;
        confirmed += a[i].confirmed;
    }
    ops_row(ctx, "replica running", &run);
    bench_row_end();
    ops_row(ctx, "replica stopped", &stopped);
    bench_row_num("release_p99_ratio",
                  bench_samples_pct_us(&stopped.release, 99) /
                      bench_samples_pct_us(&run.release, 99),
                  "x", 2);
    bench_row_num("info_p99_ratio",
                  bench_samples_pct_us(&stopped.info, 99) /
                      bench_samples_pct_us(&run.info, 99),
                  "x", 2);
    bench_row_num("acquires_refused", (double)refused, NULL, 0);
    bench_row_num("acquires_confirmed", (double)confirmed, NULL, 0);
    bench_row_num("refused_after_p50", bench_samples_pct_us(&waits, 50) / 1e3,
                  "ms", 0);
    bench_row_end();
    rc = 0;
out:
    if (held != NULL)
        for (i = 0; i < n; i++)
            rdl_lock_free(held[i]);
    for (i = 0; i < ACQUIRERS; i++) {
        rdl_lock_free(a[i].lock);
        bench_samples_free(&a[i].refused);
    }
    rdl_lock_free(probe);
    rdl_client_free(d);
    free(held);
    bench_samples_free(&run.release);
    bench_samples_free(&run.info);
    bench_samples_free(&stopped.release);
    bench_samples_free(&stopped.info);
    bench_samples_free(&waits);
    return rc;
}

int bench_fig_durable(bench_ctx *ctx)
{
    int own = bench_server_pid() != 0, rc = 0;

    if (!own) {
        int has = has_replica(ctx);
        if (has < 0)
            return -1;
        if (!has) {
            bench_row_begin(ctx, "durable", "replica of the server");
            bench_row_text("status", "skipped: ROLE lists no replica");
            bench_row_end();
            return 0;
        }
    } else if (bench_replica_start(ctx) != 0) {
        return -1;
    }
    rc |= uncontended(ctx);
    rc |= throughput(ctx);
    if (own) {
        rc |= slow_wait(ctx);
    } else {
        bench_row_begin(ctx, "durable", "slow WAIT");
        bench_row_text("status", "skipped: --url, the replica is not ours");
        bench_row_end();
    }
    bench_replica_stop();
    return rc ? -1 : 0;
}
