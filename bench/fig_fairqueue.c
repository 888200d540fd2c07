/* Figure "fairqueue": the cost of a fair lock's hand-off as its queue
 * grows. One owner holds a fair lock and N others wait on it, queued in
 * Redis (N = 10 and 10,000; 10 and 1,000 with --quick); then the holder
 * releases, the head of the queue takes the lock, and the old holder queues
 * again at the tail, so the queue stays N long, again and again. Per
 * hand-off:
 *   - wall time from the release call to the new holder's callback (two
 *     round trips: the release, whose message names the head, and the
 *     head's try);
 *   - the server's time in scripts (INFO commandstats: the script calls'
 *     usec, FCALL or EVALSHA);
 *   - the server's commands (total_commands_processed, which counts the
 *     commands the scripts run as well) and script calls.
 * The scripts read only the front of the queue (the hash's entries are
 * numbered by arrival), so neither should grow with N: the point of the figure
 * is that 10,000 waiters cost a hand-off no more than 10 do.
 *
 * Method: one client on the benchmark's loop (as in fig_memory.c), each
 * owner with its own request. The server is read with INFO on a raw
 * connection just before the release and once the hand-off has settled:
 * the new holder's callback has run and the client has sent nothing for
 * 2 ms, so the tries of waiters the scripts name in messages (a new second
 * in line) are counted too. The watchdog touches the queue entries every
 * second (fair_touch, up to 200 a call); a hand-off during which it sent
 * any is measured again, so it does not count them. */
#include <stdio.h>
#include <stdlib.h>

#include <uv.h>

#include "bench.h"

/* The lock's name has the queue length in it, so a case never meets what
 * an earlier one left; the lock's one key is built as in src/core/keys.c,
 * <prefix>:<kind>:{name}. */
#define NAME "bench:fq:%ld"
#define QUEUE_KEY "rdl:fair:{" NAME "}"
#define LEASE_MS 60000
#define QUIET_NS 2000000LL

typedef struct fq fq;

/* One owner: owner number index + 1. */
typedef struct slot {
    rdl_req_t req;
    fq *f;
    int index;
} slot;

struct fq {
    slot *s;
    long n;           /* waiters */
    char queue[80];   /* the lock's key, which holds the queue */
    long pending;     /* acquisitions not completed */
    long acquired;    /* successful acquisitions */
    long released;    /* completed releases */
    int holder;       /* slot of the last acquisition */
    int64_t got_at;   /* when it completed */
    int failed;       /* an rdl error code, else 0 */
    rdl_lock_t *lock; /* the fair lock */
};

static void on_acquired(rdl_req_t *req, int status)
{
    slot *s = req->data;
    fq *f = s->f;
    f->pending--;
    if (status == 0) {
        f->acquired++;
        f->holder = s->index;
        f->got_at = bench_now_ns();
    } else if (status != RDL_ECANCELED && f->failed == 0) {
        f->failed = status;
    }
}

static void on_released(rdl_req_t *req, int status)
{
    fq *f = ((slot *)req->data)->f;
    f->released++;
    if (status != 0 && f->failed == 0)
        f->failed = status;
}

static int acquire(fq *f, int i, int64_t wait_ms)
{
    int rc = rdl_lock_acquire_async(&f->s[i].req, f->lock, (rdl_owner_t)i + 1,
                                    wait_ms, LEASE_MS, on_acquired);
    if (rc == 0)
        f->pending++;
    return rc;
}

/* The queue's length (its entry count qn, scripts/lib/fairq.lua), read on
 * the raw connection; -1 on an error. */
static long queued(bench_raw *raw, const fq *f)
{
    redisReply *r = bench_raw_command(raw, "HGET %s qn", f->queue);
    long n = r == NULL                       ? -1
             : r->type == REDIS_REPLY_NIL    ? 0
             : r->type == REDIS_REPLY_STRING ? strtol(r->str, NULL, 10)
                                             : -1;
    if (r != NULL)
        freeReplyObject(r);
    return n;
}

/* Runs the loop until the queue is n long (a poll: the loop runs without
 * waiting between readings), for at most 10 s. */
static int until_queued(uv_loop_t *loop, bench_raw *raw, fq *f, long n)
{
    int64_t deadline = bench_now_ns() + 10000000000LL;
    long q;
    while ((q = queued(raw, f)) != n && f->failed == 0) {
        if (q < 0)
            return -1;
        if (bench_now_ns() > deadline) {
            fprintf(stderr, "rdl-bench: fair queue: %ld queued, not %ld\n", q,
                    n);
            return -1;
        }
        uv_run(loop, UV_RUN_NOWAIT);
    }
    return f->failed ? -1 : 0;
}

/* Runs the loop until the client has sent nothing for QUIET_NS. */
static void until_quiet(uv_loop_t *loop, rdl_client_t *c)
{
    rdl_client_stats_t st;
    uint64_t last;
    int64_t quiet;
    rdl_client_stats(c, &st);
    last = st.commands;
    quiet = bench_now_ns() + QUIET_NS;
    while (bench_now_ns() < quiet) {
        uv_run(loop, UV_RUN_NOWAIT);
        rdl_client_stats(c, &st);
        if (st.commands != last) {
            last = st.commands;
            quiet = bench_now_ns() + QUIET_NS;
        }
    }
}

/* One hand-off from the current holder to the head of the queue, which
 * then queues the old holder again. 0 measured, 1 to be measured again (the
 * watchdog sent touches meanwhile), -1 on an error. */
static int handoff(uv_loop_t *loop, rdl_client_t *c, bench_raw *raw, fq *f,
                   long n, int64_t *wall_ns, bench_srv *srv, int srv_ok)
{
    int old = f->holder, rc;
    long acquired = f->acquired, released = f->released;
    rdl_client_stats_t s0, s1;
    bench_srv a, b;
    int64_t t0;

    rdl_client_stats(c, &s0);
    if (srv_ok && bench_srv_read(raw, &a) != 0)
        return -1;
    t0 = bench_now_ns();
    if ((rc = rdl_lock_release_async(&f->s[old].req, f->lock,
                                     (rdl_owner_t)old + 1, on_released)) != 0)
        return bench_fail(c, "fair release", rc);
    while ((f->acquired == acquired || f->released == released) &&
           f->failed == 0)
        uv_run(loop, UV_RUN_ONCE);
    if (f->failed)
        return bench_fail(c, "fair hand-off", f->failed);
    *wall_ns = f->got_at - t0;
    until_quiet(loop, c);
    if (srv_ok && bench_srv_read(raw, &b) != 0)
        return -1;
    rdl_client_stats(c, &s1);
    if (srv_ok)
        *srv = bench_srv_diff(&a, &b);
    /* The old holder queues again at the tail. */
    if ((rc = acquire(f, old, RDL_WAIT_FOREVER)) != 0)
        return bench_fail(c, "fair requeue", rc);
    if (until_queued(loop, raw, f, n) != 0)
        return -1;
    return s1.renewal_calls != s0.renewal_calls ? 1 : 0;
}

static int queue_case(bench_ctx *ctx, long n, int rounds)
{
    uv_loop_t loop;
    rdl_client_t *c = NULL;
    fq f = {0};
    bench_raw raw = {0};
    bench_samples wall = {0}, usec = {0}, cmds = {0}, scripts = {0};
    int64_t t_setup = bench_now_ns();
    long i, done = 0, tries = 0;
    int rc = -1, srv_ok = 0;
    char name[64];

    f.n = n;
    snprintf(name, sizeof(name), NAME, n);
    snprintf(f.queue, sizeof(f.queue), QUEUE_KEY, n);
    f.s = calloc((size_t)n + 1, sizeof(*f.s));
    if (f.s == NULL || uv_loop_init(&loop) != 0) {
        free(f.s);
        return -1;
    }
    for (i = 0; i <= n; i++) {
        f.s[i].req.data = &f.s[i];
        f.s[i].f = &f;
        f.s[i].index = (int)i;
    }
    if (bench_raw_open(&raw, ctx) != 0)
        goto out;
    srv_ok = ctx->raw_tag[0] == '\0';
    if ((c = bench_loop_client(ctx, &loop, 0)) == NULL)
        goto out;
    if ((rc = rdl_fairlock_new(c, name, &f.lock)) != 0) {
        rc = bench_fail(c, "fair lock", rc);
        goto out;
    }
    /* Owner 1 holds it; owners 2..n+1 queue behind it, in order. */
    rc = acquire(&f, 0, 0);
    while (rc == 0 && f.pending > 0)
        uv_run(&loop, UV_RUN_ONCE);
    if (rc != 0 || f.failed || f.acquired != 1) {
        rc = bench_fail(c, "fair holder", rc ? rc : f.failed);
        goto out;
    }
    for (i = 1; i <= n && rc == 0; i++)
        rc = acquire(&f, (int)i, RDL_WAIT_FOREVER);
    if (rc != 0) {
        rc = bench_fail(c, "fair waiters", rc);
        goto out;
    }
    if ((rc = until_queued(&loop, &raw, &f, n)) != 0)
        goto out;
    t_setup = bench_now_ns() - t_setup;
    /* A few hand-offs to warm up, then the measured ones. */
    for (i = 0; i < 5 && rc == 0; i++) {
        int64_t w;
        bench_srv s;
        rc = handoff(&loop, c, &raw, &f, n, &w, &s, 0) < 0 ? -1 : 0;
    }
    while (rc == 0 && done < rounds && tries < 3 * rounds) {
        int64_t w = 0;
        bench_srv s = {0};
        int r = handoff(&loop, c, &raw, &f, n, &w, &s, srv_ok);
        tries++;
        if (r < 0)
            rc = -1;
        else if (r == 0 &&
                 (bench_samples_add(&wall, w) != 0 ||
                  bench_samples_add(&usec, (int64_t)s.script_us * 1000) != 0 ||
                  bench_samples_add(&cmds, (int64_t)s.commands * 1000) != 0 ||
                  bench_samples_add(&scripts, (int64_t)s.scripts * 1000) != 0))
            rc = -1;
        else if (r == 0)
            done++;
    }
    if (rc != 0)
        goto out;
    bench_row_begin(ctx, "fairqueue", "fair lock, %ld waiters queued", n);
    bench_row_num("handoffs", (double)done, NULL, 0);
    bench_row_num("wall_p50", bench_samples_pct_us(&wall, 50), "us", 1);
    bench_row_num("wall_p99", bench_samples_pct_us(&wall, 99), "us", 1);
    if (srv_ok && done > 0) {
        /* Samples in thousandths: pct_us divides by 1000. */
        bench_row_num("server_script_p50", bench_samples_pct_us(&usec, 50),
                      "us", 0);
        bench_row_num("server_script_p99", bench_samples_pct_us(&usec, 99),
                      "us", 0);
        bench_row_num("server_cmds_p50", bench_samples_pct_us(&cmds, 50), NULL,
                      0);
        bench_row_num("server_scripts_p50", bench_samples_pct_us(&scripts, 50),
                      NULL, 0);
    }
    bench_row_num("setup", (double)t_setup / 1e6, "ms", 0);
    bench_row_end();
    rc = 0;
out:
    if (f.lock != NULL) {
        /* Every waiter leaves, then the holder releases (with --url the
         * server is the user's). */
        for (i = 0; i <= n; i++)
            if (i != f.holder)
                (void)rdl_req_cancel(&f.s[i].req);
        while (f.pending > 0)
            uv_run(&loop, UV_RUN_ONCE);
        if (f.acquired > 0) {
            long released = f.released;
            int r =
                rdl_lock_release_async(&f.s[f.holder].req, f.lock,
                                       (rdl_owner_t)f.holder + 1, on_released);
            while (r == 0 && f.released == released)
                uv_run(&loop, UV_RUN_ONCE);
        }
        /* The waiters' leave scripts are answered before the client
         * closes, so no entry is left behind to expire. */
        f.failed = 0;
        if (raw.rc != NULL && until_queued(&loop, &raw, &f, 0) != 0)
            rc = -1;
        rdl_lock_free(f.lock);
    }
    bench_loop_client_free(c, &loop);
    uv_loop_close(&loop);
    bench_raw_close(&raw);
    bench_samples_free(&wall);
    bench_samples_free(&usec);
    bench_samples_free(&cmds);
    bench_samples_free(&scripts);
    free(f.s);
    return rc;
}

int bench_fig_fairqueue(bench_ctx *ctx)
{
    int rc = queue_case(ctx, 10, BENCH_SIZE(ctx, 20, 100));
    rc |=
        queue_case(ctx, BENCH_SIZE(ctx, 1000, 10000), BENCH_SIZE(ctx, 20, 100));
    return rc ? -1 : 0;
}
