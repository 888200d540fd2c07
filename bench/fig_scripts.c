/* Figure "scripts": what each script on the hot path costs the server, one
 * operation at a time on a quiet server. Each case runs one operation N
 * times through rdl's public API (blocking calls of one client from this
 * thread), and INFO commandstats is read before and after that operation
 * alone (cmdstats.c): set-up steps between the measured ones (taking the
 * lock another owner holds, releasing what a case acquired) run outside
 * the readings. Per row: script calls (FCALL or EVALSHA) per operation
 * (1, unless the operation retried or ran more than one script), the
 * server's time per script call (usec / calls: the script and the commands
 * it ran), the commands the script ran per call (Redis counts each
 * redis.call under its own name too), and which they were: to hold
 * against each script's header comment, which says what it should run.
 *
 * - every kind: acquire of a free name (N names, each taken and released
 *   once before, so the scripts are loaded and the hashes exist, as in
 *   steady use) and the release that frees it; the plain lock also
 *   re-entry, the release of an inner level, and a one-shot try (wait 0)
 *   that finds the lock held by another owner.
 * - the waiter registry (plain lock) and the queue (fair lock), with a
 *   holder and a waiter on two clients: fig_scripts_wait.c.
 * - renew: N holds with RDL_LEASE_AUTO on a client whose watchdog lease is
 *   300 ms, over several renewal periods; per script call and per hold
 *   renewed (one call renews up to 200). The holds renewed per call are
 *   the client's counts (rdl_client_stats), read around the same window.
 * - latch: count_down (the count stays above 0: no message) and count. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench.h"

#define FIG "scripts"
#define WATCHDOG_MS 300

enum { K_LOCK, K_FAIR, K_READ, K_WRITE, K_SEM };
static const char *const kind_names[] = {"lock", "fair", "rwlock read",
                                         "rwlock write", "semaphore"};
static const char *const kind_keys[] = {"lock", "fair", "rwr", "rww", "sem"};

/* One lock object of a kind; rw is set for the read-write lock's views. */
typedef struct obj {
    rdl_rwlock_t *rw;
    rdl_lock_t *lock;
} obj;

static int obj_new(rdl_client_t *c, int kind, const char *name, obj *o)
{
    o->rw = NULL;
    o->lock = NULL;
    switch (kind) {
    case K_LOCK:
        return rdl_lock_new(c, name, &o->lock);
    case K_FAIR:
        return rdl_fairlock_new(c, name, &o->lock);
    case K_SEM:
        return rdl_semaphore_new(c, name, 4, &o->lock);
    default: {
        int rc = rdl_rwlock_new(c, name, &o->rw);
        if (rc == 0)
            o->lock = kind == K_READ ? rdl_rwlock_read(o->rw)
                                     : rdl_rwlock_write(o->rw);
        return rc;
    }
    }
}

static void objs_free(obj *v, int n)
{
    int i;
    for (i = 0; v != NULL && i < n; i++) {
        if (v[i].rw != NULL)
            rdl_rwlock_free(v[i].rw);
        else
            rdl_lock_free(v[i].lock);
    }
    free(v);
}

/* n objects of a kind, "bench:scr:<kind>:<tag>:<i>"; NULL (printed why). */
static obj *objs_new(rdl_client_t *c, int kind, const char *tag, int n)
{
    obj *v = calloc((size_t)n, sizeof(*v));
    char name[96];
    int i, rc;
    if (v == NULL) {
        fprintf(stderr, "rdl-bench: out of memory\n");
        return NULL;
    }
    for (i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "bench:scr:%s:%s:%d", kind_keys[kind], tag,
                 i);
        if ((rc = obj_new(c, kind, name, &v[i])) != 0) {
            bench_fail(c, "scripts: new lock", rc);
            objs_free(v, i);
            return NULL;
        }
    }
    return v;
}

enum { ACQ, REL };

/* op (one try with this lease, or a release) for `owner` on every object,
 * each expected to return `expect`; 0 or -1 (printed). */
static int pass(rdl_client_t *c, obj *v, int n, int op, rdl_owner_t owner,
                int64_t lease_ms, int expect)
{
    int i, rc;
    for (i = 0; i < n; i++) {
        rc = op == ACQ ? rdl_lock_acquire_as(v[i].lock, owner, 0, lease_ms)
                       : rdl_lock_release_as(v[i].lock, owner);
        if (rc != expect)
            return bench_fail(c, op == ACQ ? "scripts: acquire" : "release",
                              rc);
    }
    return 0;
}

/* As pass(), inside one bracket of the meter. */
static int measured(bench_meter *m, rdl_client_t *c, obj *v, int n, int op,
                    rdl_owner_t owner, int expect)
{
    bench_meter_begin(m);
    if (pass(c, v, n, op, owner, 30000, expect) != 0)
        return -1;
    bench_meter_end(m, n);
    return 0;
}

static void row(bench_ctx *ctx, bench_meter *m, const char *kind,
                const char *what)
{
    char title[96];
    snprintf(title, sizeof(title), "%s: %s", kind, what);
    bench_meter_row(ctx, m, FIG, title, NULL);
}

/* Acquire and release of free names; for the plain lock, re-entry, the
 * inner release, and a try that finds the lock held. */
static int uncontended(bench_ctx *ctx, bench_meter *m, rdl_client_t *c,
                       int kind)
{
    const int n = BENCH_SIZE(ctx, 200, 2000);
    const char *k = kind_names[kind];
    obj *v = objs_new(c, kind, "u", n);
    int rc = -1;

    if (v == NULL)
        return -1;
    /* Warm-up: the scripts loaded, every name's hash made. */
    if (pass(c, v, n, ACQ, 1, 30000, 0) != 0 ||
        pass(c, v, n, REL, 1, 30000, 0) != 0)
        goto out;
    if (measured(m, c, v, n, ACQ, 1, 0) != 0)
        goto out;
    row(ctx, m, k, "acquire (free)");
    if (kind == K_LOCK) {
        if (measured(m, c, v, n, ACQ, 1, 0) != 0)
            goto out;
        row(ctx, m, k, "re-enter");
        if (measured(m, c, v, n, REL, 1, 0) != 0)
            goto out;
        row(ctx, m, k, "release an inner level");
    }
    if (measured(m, c, v, n, REL, 1, 0) != 0)
        goto out;
    row(ctx, m, k, kind == K_SEM ? "release (1 of 4)" : "release that frees");
    if (kind == K_LOCK) {
        if (pass(c, v, n, ACQ, 2, 30000, 0) != 0 ||
            measured(m, c, v, n, ACQ, 1, RDL_EBUSY) != 0 ||
            pass(c, v, n, REL, 2, 30000, 0) != 0)
            goto out;
        row(ctx, m, k, "try, held (wait 0)");
    }
    rc = 0;
out:
    objs_free(v, n);
    return rc;
}

/* The watchdog's renewals of n auto holds, over `periods` periods. */
static int renew(bench_ctx *ctx, bench_meter *m, int kind)
{
    const int n = BENCH_SIZE(ctx, 400, 2000);
    const int periods = BENCH_SIZE(ctx, 4, 10);
    const int64_t period_ns = WATCHDOG_MS / 3 * 1000000LL;
    rdl_client_t *c = bench_watchdog_client(ctx, WATCHDOG_MS);
    obj *v = c != NULL ? objs_new(c, kind, "w", n) : NULL;
    rdl_client_stats_t s0, s1;
    double calls, holds;
    char title[96];
    int rc = -1;

    if (v == NULL)
        goto out;
    if (pass(c, v, n, ACQ, 1, RDL_LEASE_AUTO, 0) != 0)
        goto out;
    bench_sleep_ns(2 * period_ns); /* the renewals fall in step */
    rdl_client_stats(c, &s0);
    bench_meter_begin(m);
    bench_sleep_ns(periods * period_ns);
    bench_meter_end(m, 0);
    rdl_client_stats(c, &s1);
    if (pass(c, v, n, REL, 1, 0, 0) != 0)
        goto out;
    calls = (double)(s1.renewal_calls - s0.renewal_calls);
    holds = (double)(s1.renewals - s0.renewals);
    m->ops = (long)calls; /* an operation: one renewal call */
    snprintf(title, sizeof(title), "%s: renew, %d holds", kind_names[kind], n);
    bench_row_begin(ctx, FIG, "%s", title);
    bench_meter_report(m, "hold", calls > 0 ? holds / calls : 0);
    bench_row_num("holds_per_call", calls > 0 ? holds / calls : 0, NULL, 1);
    if (s1.renewal_failures != s0.renewal_failures ||
        s1.holds_lost != s0.holds_lost)
        bench_row_text("note", "renewals failed: not a steady state");
    bench_row_end();
    bench_meter_reset(m);
    rc = 0;
out:
    objs_free(v, n);
    rdl_client_free(c);
    return rc;
}

static int latch(bench_ctx *ctx, bench_meter *m, rdl_client_t *c)
{
    const int n = BENCH_SIZE(ctx, 200, 2000);
    rdl_latch_t *l = NULL;
    uint64_t count;
    char name[64];
    int i, rc;

    /* A name of this run: a latch left above 0 by another would refuse
     * the set. */
    snprintf(name, sizeof(name), "bench:scr:latch:%ld:%d", (long)getpid(),
             rand());
    if ((rc = rdl_latch_new(c, name, &l)) != 0 ||
        (rc = rdl_latch_set(l, (uint64_t)n * 2 + 10, 600000)) != 0 ||
        (rc = rdl_latch_count_down(l)) != 0 ||
        (rc = rdl_latch_count(l, &count)) != 0)
        goto fail;
    bench_meter_begin(m);
    for (i = 0; i < n; i++)
        if ((rc = rdl_latch_count_down(l)) != 0)
            goto fail;
    bench_meter_end(m, n);
    row(ctx, m, "latch", "count_down (stays above 0)");
    bench_meter_begin(m);
    for (i = 0; i < n; i++)
        if ((rc = rdl_latch_count(l, &count)) != 0)
            goto fail;
    bench_meter_end(m, n);
    row(ctx, m, "latch", "count (read)");
    rdl_latch_free(l);
    return 0;
fail:
    rdl_latch_free(l);
    return bench_fail(c, "scripts: latch", rc);
}

int bench_fig_scripts(bench_ctx *ctx)
{
    bench_meter m;
    rdl_client_t *c;
    int rc = 0, kind;

    if (bench_meter_open(&m, ctx) != 0)
        return -1;
    if (!m.ok) {
        bench_row_begin(ctx, FIG, "per script call");
        bench_row_text("status", "n/a: INFO commandstats unreadable");
        bench_row_end();
        bench_meter_close(&m);
        return 0;
    }
    if ((c = bench_client(ctx)) == NULL) {
        bench_meter_close(&m);
        return -1;
    }
    for (kind = K_LOCK; kind <= K_SEM && rc == 0; kind++) {
        rc |= uncontended(ctx, &m, c, kind);
        if (kind == K_LOCK || kind == K_FAIR)
            rc |= bench_scripts_waiting(ctx, kind == K_FAIR);
        if (kind != K_READ) /* the write side renews as the read side */
            rc |= renew(ctx, &m, kind);
    }
    if (rc == 0)
        rc |= latch(ctx, &m, c);
    rdl_client_free(c);
    bench_meter_close(&m);
    return rc ? -1 : 0;
}
