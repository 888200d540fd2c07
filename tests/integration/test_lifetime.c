/* Lifetimes: closing and freeing clients and locks in every state a client
 * or lock can be in (waiting, blocking or async; queued with the watchdog
 * running; holding auto and fixed leases; mid-renewal; mid-release; a try
 * in flight; a lost callback running). Each state has one defined outcome:
 * no crash and no leak (run under ASan by tools/test.sh), every callback
 * exactly once with its documented code, blocked calls that return
 * promptly, and no lock left in Redis once its lease has run out (fence
 * keys, which outlive leases on purpose, excepted). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdlt.h"

#define A ((rdl_owner_t)1)
#define B ((rdl_owner_t)2)

/* A blocked call must come back this soon after the close. */
#define PROMPT_MS 1000
/* Slack for timers, Redis's expiry and a loaded machine, on top of a
 * lease. */
#define SLACK_MS 400

/* ---- locks of every kind ------------------------------------------------- */

enum kind { PLAIN, FAIR, READ, WRITE };

static const char *const kind_names[] = {"plain", "fair", "read", "write"};

/* A lock of some kind; rw is set for the views of a read-write lock. */
typedef struct lk {
    rdl_lock_t *l;
    rdl_rwlock_t *rw;
} lk;

static void free_lock(void *l)
{
    rdl_lock_free(l);
}

static void free_rw(void *rw)
{
    rdl_rwlock_free(rw);
}

static lk lk_new(rdl_client_t *c, enum kind kind, const char *name)
{
    lk k = {NULL, NULL};
    switch (kind) {
    case PLAIN:
        rdlt_assert_ok(rdl_lock_new(c, name, &k.l));
        rdlt_defer(free_lock, k.l);
        break;
    case FAIR:
        rdlt_assert_ok(rdl_fairlock_new(c, name, &k.l));
        rdlt_defer(free_lock, k.l);
        break;
    case READ:
    case WRITE:
        rdlt_assert_ok(rdl_rwlock_new(c, name, &k.rw));
        rdlt_defer(free_rw, k.rw);
        k.l = kind == READ ? rdl_rwlock_read(k.rw) : rdl_rwlock_write(k.rw);
        break;
    }
    assert_non_null(k.l);
    return k;
}

/* Frees k now (its deferred call), on the calling thread. */
static void lk_free(lk *k)
{
    if (k->rw != NULL) {
        if (!rdlt_release(k->rw))
            rdl_rwlock_free(k->rw);
    } else if (k->l != NULL) {
        rdlt_lock_free(k->l);
    }
    k->l = NULL;
    k->rw = NULL;
}

/* Takes k off the cleanup stack, for a test that frees it elsewhere. */
static void lk_forget(lk *k)
{
    rdlt_forget(k->rw != NULL ? (void *)k->rw : (void *)k->l);
}

static void lk_free_raw(lk *k)
{
    if (k->rw != NULL)
        rdl_rwlock_free(k->rw);
    else
        rdl_lock_free(k->l);
    k->l = NULL;
    k->rw = NULL;
}

/* What a holder takes so that a waiter of `kind` must wait: the other side
 * of a read-write lock, the same kind otherwise. */
static enum kind blocker_of(enum kind kind)
{
    return kind == READ ? WRITE : kind == WRITE ? READ : kind;
}

/* ---- clients and Redis ---------------------------------------------------- */

static rdl_client_t *wd_client_url(const char *url, int64_t watchdog_ms)
{
    rdl_client_t *c = rdlt_client_new(url);
    int rc;
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 1000));
    rdlt_assert_ok(rdl_client_set_watchdog_ms(c, watchdog_ms));
    rc = rdl_client_connect(c);
    if (rc != 0)
        fail_msg("connect %s: %s: %s", url, rdl_err_name(rc),
                 rdl_client_errmsg(c));
    return c;
}

static rdl_client_t *wd_client(rdlt_server *s, int64_t watchdog_ms)
{
    return wd_client_url(rdlt_server_url(s), watchdog_ms);
}

/* Keys of locks, queues and holders: everything but the fences. */
static long long lock_keys(rdlt_server *s)
{
    return rdlt_count_held(s, "rdl:*");
}

/* Waits at most within_ms for every lock key to be gone; fails naming the
 * keys left and their PTTL. */
static void expect_no_locks_within(rdlt_server *s, int64_t within_ms)
{
    int64_t deadline = rdlt_now_ms() + within_ms;
    char left[1024] = "";
    size_t used = 0, i;
    redisReply *r;

    for (;;) {
        if (lock_keys(s) == 0)
            return;
        if (rdlt_now_ms() >= deadline)
            break;
        rdlt_sleep_ms(20);
    }
    r = rdlt_cmd(s, "KEYS rdl:*");
    for (i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        redisReply *t;
        if (rdlt_key_retained(s, r->element[i]->str))
            continue;
        t = rdlt_cmd(s, "PTTL %s", r->element[i]->str);
        used +=
            (size_t)snprintf(left + used, sizeof(left) - used, " %s(pttl %lld)",
                             r->element[i]->str, t->integer);
        freeReplyObject(t);
        if (used >= sizeof(left))
            break;
    }
    freeReplyObject(r);
    fail_msg("lock keys left %lld ms after the lease:%s", (long long)within_ms,
             left);
}

/* ---- lost callbacks ------------------------------------------------------ */

typedef struct lost_log {
    int count;
    int reason;
    int64_t sleep_ms; /* > 0: the callback sleeps this long */
    int entered;
    int exited;
} lost_log;

static void on_lost(rdl_lock_t *lock, rdl_owner_t owner, int reason, void *data)
{
    lost_log *log = data;
    (void)lock;
    (void)owner;
    __atomic_store_n(&log->reason, reason, __ATOMIC_RELAXED);
    __atomic_add_fetch(&log->count, 1, __ATOMIC_ACQ_REL);
    __atomic_store_n(&log->entered, 1, __ATOMIC_RELEASE);
    if (log->sleep_ms > 0)
        rdlt_sleep_ms(log->sleep_ms);
    __atomic_store_n(&log->exited, 1, __ATOMIC_RELEASE);
}

static int loaded(const int *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* ---- blocking waiters ------------------------------------------------------ */

typedef struct waiter {
    rdl_lock_t *lock;
    rdl_owner_t owner;
    int64_t wait_ms;
    int64_t lease_ms;
    int rc;
    int64_t done_at;
    int done;
} waiter;

static void *wait_thread(void *arg)
{
    waiter *w = arg;
    w->rc = rdl_lock_acquire_as(w->lock, w->owner, w->wait_ms, w->lease_ms);
    w->done_at = rdlt_now_ms();
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void *release_thread(void *arg)
{
    waiter *w = arg;
    w->rc = rdl_lock_release_as(w->lock, w->owner);
    w->done_at = rdlt_now_ms();
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Waits until the holder's lock reports n waiters (fair queue entries,
 * waiting writers); for kinds without a record, gives the waiter time to
 * go to sleep. */
static void await_waiting(rdl_lock_t *holder, enum kind kind, uint32_t n)
{
    int64_t deadline = rdlt_now_ms() + 5000;
    uint32_t got = 0;
    if (kind != FAIR && kind != WRITE) {
        rdlt_sleep_ms(300);
        return;
    }
    while ((got = rdlt_info(holder, A).waiters) != n &&
           rdlt_now_ms() < deadline)
        rdlt_sleep_ms(5);
    if (got != n)
        fail_msg("%u waiters, expected %u", got, n);
    rdlt_sleep_ms(50); /* and asleep */
}

/* A thread blocked in rdl_lock_acquire() on a lock of `kind` when its
 * client closes returns RDL_ECLOSED at once. With auto_hold, the client
 * also holds another lock with RDL_LEASE_AUTO, so its watchdog runs (and
 * renews the fair waiter's queue entry) when the close aborts it. */
static void close_blocking_waiter(enum kind kind, int auto_hold)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *h = rdlt_client(s), *c = wd_client(s, 500);
    lk hl = lk_new(h, blocker_of(kind), "bw"), wl = lk_new(c, kind, "bw");
    lk busy = {NULL, NULL};
    lost_log log;
    waiter w = {wl.l, B, RDL_WAIT_FOREVER, 2000, -999, 0, 0};
    rdlt_thread *t;
    int64_t t0;

    memset(&log, 0, sizeof(log));
    rdlt_assert_ok(rdl_lock_acquire_as(hl.l, A, 0, 2000));
    if (auto_hold) {
        busy = lk_new(c, PLAIN, "busy");
        rdlt_assert_ok(rdl_lock_set_lost_cb(busy.l, on_lost, &log));
        rdlt_assert_ok(rdl_lock_acquire_as(busy.l, A, 0, RDL_LEASE_AUTO));
    }
    t = rdlt_thread_start(wait_thread, &w);
    await_waiting(hl.l, kind, 1);
    if (auto_hold)
        rdlt_sleep_ms(400); /* the watchdog has renewed both by now */
    assert_int_equal(loaded(&w.done), 0);

    t0 = rdlt_now_ms();
    rdlt_assert_ok(rdl_client_close(c));
    rdlt_assert_between(rdlt_now_ms() - t0, 0, PROMPT_MS);
    rdlt_thread_join(t);
    rdlt_assert_rc(w.rc, RDL_ECLOSED);
    rdlt_assert_between(w.done_at - t0, 0, PROMPT_MS);

    /* Everything after the close says RDL_ECLOSED, and nothing runs. */
    rdlt_assert_rc(rdl_lock_acquire_as(wl.l, B, 0, 1000), RDL_ECLOSED);
    if (auto_hold)
        rdlt_assert_rc(rdl_lock_release_as(busy.l, A), RDL_ECLOSED);
    rdlt_assert_ok(rdl_client_close(c)); /* twice is harmless */
    lk_free(&wl);
    if (auto_hold)
        lk_free(&busy);
    rdlt_client_free(c);
    assert_int_equal(loaded(&log.count), 0);

    /* The holder hands the lock on as usual; the closed waiter's records
     * die within its queue lease (min(3 s, its watchdog lease)), and the
     * auto hold within its watchdog lease. */
    rdlt_assert_ok(rdl_lock_release_as(hl.l, A));
    expect_no_locks_within(s, 500 + SLACK_MS);
}

static void test_lifetime_close_blocking_waiter_plain(void **state)
{
    (void)state;
    close_blocking_waiter(PLAIN, 0);
}

static void test_lifetime_close_blocking_waiter_fair(void **state)
{
    (void)state;
    close_blocking_waiter(FAIR, 0);
}

static void test_lifetime_close_blocking_waiter_read(void **state)
{
    (void)state;
    close_blocking_waiter(READ, 0);
}

static void test_lifetime_close_blocking_waiter_write(void **state)
{
    (void)state;
    close_blocking_waiter(WRITE, 0);
}

/* The use-after-free fixed on main: the watchdog (running for the auto
 * hold) was aborted first and freed the fair waiter's queue entry, then
 * the waiter's completion wrote to it. */
static void test_lifetime_close_fair_waiter_watchdog_running(void **state)
{
    (void)state;
    close_blocking_waiter(FAIR, 1);
}

/* The waiting writer's record is renewed by the watchdog too. */
static void test_lifetime_close_write_waiter_watchdog_running(void **state)
{
    (void)state;
    close_blocking_waiter(WRITE, 1);
}

/* ---- async waiters on the caller's loop --------------------------------- */

typedef struct actx actx;

typedef struct areq {
    actx *x;
    lk k;
    rdl_req_t req;
    rdl_owner_t owner;
    int64_t wait_ms;
    int64_t lease_ms;
    int rc;
    int status;
    int calls;
    int in_close; /* callbacks that ran inside rdl_client_close() */
    int off_loop;
    int done;
} areq;

struct actx {
    rdlt_loop *lp;
    rdl_client_t *c;
    int closing;
    int rc;
    areq *reqs[2];
    size_t nreqs;
};

static void on_done(rdl_req_t *req, int status)
{
    areq *a = req->data;
    a->status = status;
    a->calls++;
    if (a->x->closing)
        a->in_close++;
    if (!rdlt_loop_on_thread(a->x->lp))
        a->off_loop++;
    __atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
}

static void do_connect(void *arg)
{
    actx *x = arg;
    x->rc = rdl_client_connect(x->c);
}

static void do_acquire(void *arg)
{
    areq *a = arg;
    memset(&a->req, 0, sizeof(a->req));
    a->req.data = a;
    __atomic_store_n(&a->done, 0, __ATOMIC_RELEASE);
    a->rc = rdl_lock_acquire_async(&a->req, a->k.l, a->owner, a->wait_ms,
                                   a->lease_ms, on_done);
}

/* Closes the client on its loop, then frees its locks and the client at
 * once, as rdl_client_set_loop() allows. */
static void do_close_and_free(void *arg)
{
    actx *x = arg;
    size_t i;
    x->closing = 1;
    x->rc = rdl_client_close(x->c);
    x->closing = 0;
    for (i = 0; i < x->nreqs; i++)
        lk_free_raw(&x->reqs[i]->k);
    rdl_client_free(x->c);
    x->c = NULL;
}

/* An async acquisition waiting on the caller's loop when the client closes
 * (on that loop) completes once, inside the close, with RDL_ECLOSED; the
 * lock and the client can be freed right after, and the loop is left with
 * no handle open. With auto_hold the client holds another lock with
 * RDL_LEASE_AUTO, so its watchdog runs. */
static void close_async_waiter(enum kind kind, int auto_hold)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *h = rdlt_client(s);
    lk hl = lk_new(h, blocker_of(kind), "aw");
    actx x;
    areq w, busy;

    memset(&x, 0, sizeof(x));
    memset(&w, 0, sizeof(w));
    memset(&busy, 0, sizeof(busy));
    rdlt_assert_ok(rdl_lock_acquire_as(hl.l, A, 0, 2000));

    x.lp = rdlt_loop_start();
    x.c = rdlt_client_new(rdlt_server_url(s));
    rdlt_assert_ok(rdl_client_set_timeouts_ms(x.c, 2000, 1000));
    rdlt_assert_ok(rdl_client_set_watchdog_ms(x.c, 500));
    rdlt_assert_ok(rdl_client_set_loop(x.c, rdlt_loop_uv(x.lp)));
    rdlt_loop_call(x.lp, do_connect, &x);
    rdlt_assert_ok(x.rc);

    if (auto_hold) {
        busy.x = &x;
        busy.k = lk_new(x.c, PLAIN, "busy");
        busy.owner = A;
        busy.lease_ms = RDL_LEASE_AUTO;
        rdlt_loop_call(x.lp, do_acquire, &busy);
        rdlt_assert_ok(busy.rc);
        if (!rdlt_wait_flag(&busy.done, 5000))
            fail_msg("no callback for the auto hold");
        rdlt_assert_ok(busy.status);
        x.reqs[x.nreqs++] = &busy;
    }
    w.x = &x;
    w.k = lk_new(x.c, kind, "aw");
    w.owner = B;
    w.wait_ms = RDL_WAIT_FOREVER;
    w.lease_ms = 2000;
    x.reqs[x.nreqs++] = &w;
    rdlt_loop_call(x.lp, do_acquire, &w);
    rdlt_assert_ok(w.rc);
    await_waiting(hl.l, kind, 1);
    if (auto_hold)
        rdlt_sleep_ms(400); /* renewed by now */
    assert_int_equal(loaded(&w.calls), 0);

    lk_forget(&w.k);
    if (auto_hold)
        lk_forget(&busy.k);
    rdlt_forget(x.c);
    rdlt_loop_call(x.lp, do_close_and_free, &x);
    rdlt_assert_ok(x.rc);
    assert_int_equal(w.calls, 1);
    rdlt_assert_rc(w.status, RDL_ECLOSED);
    assert_int_equal(w.in_close, 1);
    assert_int_equal(w.off_loop, 0);
    rdlt_sleep_ms(200); /* a second callback would show up by now */
    assert_int_equal(w.calls, 1);
    if (auto_hold) {
        assert_int_equal(busy.calls, 1); /* the acquisition's only */
        assert_int_equal(busy.off_loop, 0);
    }
    assert_int_equal(rdlt_loop_stop(x.lp), 0);

    rdlt_assert_ok(rdl_lock_release_as(hl.l, A));
    expect_no_locks_within(s, 500 + SLACK_MS);
}

static void test_lifetime_close_async_waiter_plain(void **state)
{
    (void)state;
    close_async_waiter(PLAIN, 0);
}

static void test_lifetime_close_async_waiter_fair(void **state)
{
    (void)state;
    close_async_waiter(FAIR, 0);
}

static void test_lifetime_close_async_waiter_read(void **state)
{
    (void)state;
    close_async_waiter(READ, 0);
}

static void test_lifetime_close_async_waiter_write(void **state)
{
    (void)state;
    close_async_waiter(WRITE, 0);
}

static void test_lifetime_close_async_fair_waiter_watchdog_running(void **state)
{
    (void)state;
    close_async_waiter(FAIR, 1);
}

/* ---- holding ----------------------------------------------------------------- */

/* One hold of each kind on client c, as owner A, with lease_ms; each lock
 * logs lost callbacks in log[i]. */
static void hold_every_kind(rdl_client_t *c, lk *k, lost_log *log,
                            int64_t lease_ms)
{
    static const char *const names[] = {"hp", "hf", "hr", "hw"};
    int i;
    for (i = 0; i < 4; i++) {
        memset(&log[i], 0, sizeof(log[i]));
        k[i] = lk_new(c, (enum kind)i, names[i]);
        rdlt_assert_ok(rdl_lock_set_lost_cb(k[i].l, on_lost, &log[i]));
        if (rdl_lock_acquire_as(k[i].l, A, 0, lease_ms) != 0)
            fail_msg("acquire %s failed", kind_names[i]);
    }
}

/* Closing a client that holds auto holds of every kind returns at once,
 * runs no lost callback, and the holds expire within one watchdog lease
 * (they are not released: rdl_client_close()). */
static void test_lifetime_close_holding_auto(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = wd_client(s, 300);
    lk k[4];
    lost_log log[4];
    int64_t t0;
    int i;
    (void)state;

    hold_every_kind(c, k, log, RDL_LEASE_AUTO);
    rdlt_sleep_ms(500); /* renewed past a lease */
    assert_int_equal(lock_keys(s), 4);
    t0 = rdlt_now_ms();
    rdlt_assert_ok(rdl_client_close(c));
    rdlt_assert_between(rdlt_now_ms() - t0, 0, PROMPT_MS);
    for (i = 0; i < 4; i++) {
        rdlt_assert_rc(rdl_lock_release_as(k[i].l, A), RDL_ECLOSED);
        lk_free(&k[i]);
    }
    rdlt_client_free(c);
    expect_no_locks_within(s, 300 + SLACK_MS);
    rdlt_sleep_ms(200);
    for (i = 0; i < 4; i++)
        assert_int_equal(loaded(&log[i].count), 0);
}

/* The same with fixed leases: they run out by themselves. */
static void test_lifetime_close_holding_fixed(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = wd_client(s, 300);
    lk k[4];
    lost_log log[4];
    int64_t t0;
    int i;
    (void)state;

    t0 = rdlt_now_ms();
    hold_every_kind(c, k, log, 800);
    assert_int_equal(lock_keys(s), 4);
    rdlt_assert_ok(rdl_client_close(c));
    rdlt_assert_between(rdlt_now_ms() - t0, 0, PROMPT_MS);
    for (i = 0; i < 4; i++) {
        rdlt_assert_rc(rdl_lock_release_as(k[i].l, A), RDL_ECLOSED);
        lk_free(&k[i]);
    }
    rdlt_client_free(c);
    expect_no_locks_within(s, 800 - (rdlt_now_ms() - t0) + SLACK_MS);
    for (i = 0; i < 4; i++)
        assert_int_equal(loaded(&log[i].count), 0);
}

/* Freeing the locks while they are held (auto), then the client without a
 * close of its own: renewals stop, the holds expire within one watchdog
 * lease, and no lost callback runs after the free. */
static void test_lifetime_free_locks_then_client_holding_auto(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = wd_client(s, 300);
    lk k[4];
    lost_log log[4];
    int i;
    (void)state;

    hold_every_kind(c, k, log, RDL_LEASE_AUTO);
    rdlt_sleep_ms(500);
    for (i = 0; i < 4; i++)
        lk_free(&k[i]);
    /* The client stays open: its watchdog must have let go by itself. */
    expect_no_locks_within(s, 300 + SLACK_MS);
    rdlt_sleep_ms(300);
    for (i = 0; i < 4; i++)
        assert_int_equal(loaded(&log[i].count), 0);
    rdlt_client_free(c);
}

/* Closing the client first, then freeing its locks (a multilock over two
 * clients among them, before its parts), then the clients: the other
 * order the API allows. Calls after the close say RDL_ECLOSED. */
static void test_lifetime_close_clients_then_free_locks(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = wd_client(s, 300), *c2 = wd_client(s, 300);
    lk k[4];
    lost_log log[4], mlog;
    rdl_lock_t *parts[2], *ml = NULL, *nl = NULL;
    int i;
    (void)state;

    memset(&mlog, 0, sizeof(mlog));
    hold_every_kind(c, k, log, RDL_LEASE_AUTO);
    parts[0] = rdlt_lock(c, "ma");
    parts[1] = rdlt_lock(c2, "mb");
    rdlt_assert_ok(rdl_multilock_new(parts, 2, &ml));
    rdlt_defer(free_lock, ml);
    rdlt_assert_ok(rdl_lock_set_lost_cb(ml, on_lost, &mlog));
    rdlt_assert_ok(rdl_lock_acquire_as(ml, A, 0, RDL_LEASE_AUTO));
    rdlt_sleep_ms(500);
    assert_int_equal(lock_keys(s), 6);

    rdlt_assert_ok(rdl_client_close(c2));
    rdlt_assert_ok(rdl_client_close(c));
    rdlt_assert_rc(rdl_lock_new(c, "late", &nl), RDL_ECLOSED);
    assert_null(nl);
    rdlt_assert_rc(rdl_lock_acquire_as(k[0].l, B, 0, 1000), RDL_ECLOSED);
    rdlt_assert_rc(rdl_lock_release_as(ml, A), RDL_ECLOSED);
    rdlt_assert_rc(rdl_lock_release_as(parts[1], A), RDL_ECLOSED);

    rdlt_lock_free(ml);
    rdlt_lock_free(parts[1]);
    rdlt_lock_free(parts[0]);
    for (i = 0; i < 4; i++)
        lk_free(&k[i]);
    rdlt_client_free(c);
    rdlt_client_free(c2);
    expect_no_locks_within(s, 300 + SLACK_MS);
    for (i = 0; i < 4; i++)
        assert_int_equal(loaded(&log[i].count), 0);
    assert_int_equal(loaded(&mlog.count), 0);
}

/* ---- in flight, through the fault proxy ------------------------------------- */

static rdl_client_t *proxied_client(rdlt_proxy *p, int64_t watchdog_ms)
{
    return wd_client_url(rdlt_proxy_url(p), watchdog_ms);
}

/* Runs each script the test delays once, so that the delayed EVALSHA is
 * the operation itself, not a NOSCRIPT answer followed by a load. */
static void warm_scripts(rdl_client_t *c)
{
    lk k = lk_new(c, PLAIN, "warm");
    rdlt_assert_ok(rdl_lock_acquire_as(k.l, B, 0, 1000));
    rdlt_assert_ok(rdl_lock_release_as(k.l, B));
    lk_free(&k);
}

static uint64_t renewals(rdl_client_t *c)
{
    rdl_client_stats_t st;
    rdlt_assert_ok(rdl_client_stats(c, &st));
    return st.renewals;
}

/* A renewal sent, its reply held back by the proxy, when the client
 * closes: the close does not wait for it, no lost callback runs, and the
 * hold (renewed on the server) expires within one watchdog lease. */
static void test_lifetime_close_mid_renewal(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *c = proxied_client(p, 300);
    lk k = lk_new(c, PLAIN, "renew");
    lost_log log;
    unsigned n0;
    int64_t t0;
    (void)state;

    memset(&log, 0, sizeof(log));
    rdlt_assert_ok(rdl_lock_set_lost_cb(k.l, on_lost, &log));
    rdlt_assert_ok(rdl_lock_acquire_as(k.l, A, 0, RDL_LEASE_AUTO));
    t0 = rdlt_now_ms();
    while (renewals(c) == 0 && rdlt_now_ms() - t0 < 2000)
        rdlt_sleep_ms(5); /* the renewal script is loaded */
    assert_true(renewals(c) > 0);
    /* Only the watchdog sends scripts from now on. */
    n0 = rdlt_proxy_count(p, "EVALSHA");
    rdlt_proxy_delay_reply(p, "EVALSHA", NULL, 3000, 1);
    if (rdlt_proxy_wait_count(p, "EVALSHA", n0 + 1, 2000) != 0)
        fail_msg("no renewal within 2 s");
    rdlt_sleep_ms(30); /* it reached the server */

    t0 = rdlt_now_ms();
    rdlt_assert_ok(rdl_client_close(c));
    rdlt_assert_between(rdlt_now_ms() - t0, 0, PROMPT_MS);
    rdlt_assert_rc(rdl_lock_release_as(k.l, A), RDL_ECLOSED);
    lk_free(&k);
    rdlt_client_free(c);
    expect_no_locks_within(s, 300 + SLACK_MS);
    assert_int_equal(loaded(&log.count), 0);
}

/* A release sent, its reply held back, when another thread closes the
 * client: the release returns at once with RDL_ECONNLOST (its outcome is
 * unknown to the client), and the lock is free (the server applied it). */
static void test_lifetime_close_mid_release(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *c = proxied_client(p, 300);
    lk k = lk_new(c, PLAIN, "rel");
    waiter w = {k.l, A, 0, 0, -999, 0, 0};
    rdlt_thread *t;
    unsigned n0;
    int64_t t0;
    (void)state;

    warm_scripts(c);
    rdlt_assert_ok(rdl_lock_acquire_as(k.l, A, 0, 2000));
    n0 = rdlt_proxy_count(p, "EVALSHA");
    rdlt_proxy_delay_reply(p, "EVALSHA", NULL, 3000, 1);
    t = rdlt_thread_start(release_thread, &w);
    if (rdlt_proxy_wait_count(p, "EVALSHA", n0 + 1, 2000) != 0)
        fail_msg("the release was not sent");
    rdlt_sleep_ms(30);
    assert_int_equal(loaded(&w.done), 0);

    t0 = rdlt_now_ms();
    rdlt_assert_ok(rdl_client_close(c));
    rdlt_thread_join(t);
    rdlt_assert_rc(w.rc, RDL_ECONNLOST);
    rdlt_assert_between(w.done_at - t0, 0, PROMPT_MS);
    lk_free(&k);
    rdlt_client_free(c);
    /* The server applied the release before the close. */
    expect_no_locks_within(s, SLACK_MS);
}

/* A one-shot try sent, its reply held back, when another thread closes the
 * client: the acquisition reports RDL_ECONNLOST (it may have been granted:
 * outcome unknown), not RDL_ECLOSED, and a hold it took expires by its
 * lease. */
static void test_lifetime_close_try_in_flight(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *c = proxied_client(p, 300);
    lk k = lk_new(c, PLAIN, "try");
    waiter w = {k.l, A, 0, 1000, -999, 0, 0};
    rdlt_thread *t;
    unsigned n0;
    int64_t t0;
    (void)state;

    warm_scripts(c);
    n0 = rdlt_proxy_count(p, "EVALSHA");
    rdlt_proxy_delay_reply(p, "EVALSHA", NULL, 3000, 1);
    t = rdlt_thread_start(wait_thread, &w);
    if (rdlt_proxy_wait_count(p, "EVALSHA", n0 + 1, 2000) != 0)
        fail_msg("the try was not sent");
    rdlt_sleep_ms(30);
    assert_int_equal(loaded(&w.done), 0);

    t0 = rdlt_now_ms();
    rdlt_assert_ok(rdl_client_close(c));
    rdlt_thread_join(t);
    rdlt_assert_rc(w.rc, RDL_ECONNLOST);
    rdlt_assert_between(w.done_at - t0, 0, PROMPT_MS);
    assert_int_equal(rdl_lock_fencing_token(k.l, A), 0);
    /* The server granted it; the undo could not be sent. */
    assert_int_equal(rdlt_count_held(s, "rdl:lock:{try}"), 1);
    lk_free(&k);
    rdlt_client_free(c);
    expect_no_locks_within(s, 1000 + SLACK_MS);
}

/* ---- lost callbacks running ------------------------------------------------ */

/* Deletes the key of plain lock `name`, so the watchdog finds the hold
 * gone at its next renewal. */
static void delete_plain(rdlt_server *s, const char *name)
{
    redisReply *r = rdlt_cmd(s, "DEL rdl:lock:{%s}", name);
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    assert_int_equal(r->integer, 1);
    freeReplyObject(r);
}

/* rdl_lock_free() of a multilock while a part's loss runs the multilock's
 * lost callback on the loop thread: the free returns only after the
 * callback has returned. */
static void test_lifetime_free_multilock_during_lost_cb(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = wd_client(s, 300);
    rdl_lock_t *parts[2], *ml = NULL;
    lost_log log;
    int64_t t0;
    (void)state;

    memset(&log, 0, sizeof(log));
    log.sleep_ms = 200;
    parts[0] = rdlt_lock(c, "la");
    parts[1] = rdlt_lock(c, "lb");
    rdlt_assert_ok(rdl_multilock_new(parts, 2, &ml));
    rdlt_defer(free_lock, ml);
    rdlt_assert_ok(rdl_lock_set_lost_cb(ml, on_lost, &log));
    rdlt_assert_ok(rdl_lock_acquire_as(ml, A, 0, RDL_LEASE_AUTO));
    rdlt_sleep_ms(200);
    delete_plain(s, "lb");
    if (!rdlt_wait_flag(&log.entered, 2000))
        fail_msg("no lost callback within 2 s");
    assert_int_equal(loaded(&log.exited), 0);
    t0 = rdlt_now_ms();
    rdlt_lock_free(ml);
    if (!loaded(&log.exited))
        fail_msg("rdl_lock_free() returned after %lld ms while the lost "
                 "callback still ran",
                 (long long)(rdlt_now_ms() - t0));
    rdlt_assert_between(rdlt_now_ms() - t0, 0, PROMPT_MS);
    rdlt_assert_rc(loaded(&log.reason), RDL_ELOST);
    rdlt_lock_free(parts[1]);
    rdlt_lock_free(parts[0]);
    rdlt_sleep_ms(200);
    assert_int_equal(loaded(&log.count), 1);
    rdlt_client_free(c);
    expect_no_locks_within(s, 300 + SLACK_MS);
}

/* rdl_lock_set_lost_cb(lock, NULL, NULL) while the callback runs returns
 * only after it has returned; no call follows. */
/* The composite's lost callback frees the composite itself (the callback
 * is the last user of the object): the free must not wait for the call it
 * is made from, and the object must outlive that call. */
static void on_lost_free(rdl_lock_t *lock, rdl_owner_t owner, int reason,
                         void *data)
{
    lost_log *log = data;
    (void)owner;
    __atomic_store_n(&log->reason, reason, __ATOMIC_RELAXED);
    rdl_lock_free(lock);
    __atomic_add_fetch(&log->count, 1, __ATOMIC_ACQ_REL);
    __atomic_store_n(&log->exited, 1, __ATOMIC_RELEASE);
}

static void test_lifetime_free_multilock_inside_its_lost_cb(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = wd_client(s, 300);
    rdl_lock_t *parts[2], *ml = NULL;
    lost_log log;
    (void)state;

    memset(&log, 0, sizeof(log));
    parts[0] = rdlt_lock(c, "fa");
    parts[1] = rdlt_lock(c, "fb");
    rdlt_assert_ok(rdl_multilock_new(parts, 2, &ml));
    rdlt_assert_ok(rdl_lock_set_lost_cb(ml, on_lost_free, &log));
    rdlt_assert_ok(rdl_lock_acquire_as(ml, A, 0, RDL_LEASE_AUTO));
    delete_plain(s, "fb");
    if (!rdlt_wait_flag(&log.exited, 2000))
        fail_msg("no lost callback within 2 s");
    rdlt_assert_rc(loaded(&log.reason), RDL_ELOST);
    rdlt_lock_free(parts[1]);
    rdlt_lock_free(parts[0]);
    rdlt_sleep_ms(200);
    assert_int_equal(loaded(&log.count), 1);
    rdlt_client_free(c);
    expect_no_locks_within(s, 300 + SLACK_MS);
}

static void test_lifetime_clear_lost_cb_while_running(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = wd_client(s, 300);
    lk k = lk_new(c, PLAIN, "clear");
    lost_log log;
    int64_t t0;
    (void)state;

    memset(&log, 0, sizeof(log));
    log.sleep_ms = 200;
    rdlt_assert_ok(rdl_lock_set_lost_cb(k.l, on_lost, &log));
    rdlt_assert_ok(rdl_lock_acquire_as(k.l, A, 0, RDL_LEASE_AUTO));
    rdlt_sleep_ms(200);
    delete_plain(s, "clear");
    if (!rdlt_wait_flag(&log.entered, 2000))
        fail_msg("no lost callback within 2 s");
    assert_int_equal(loaded(&log.exited), 0);
    t0 = rdlt_now_ms();
    rdlt_assert_ok(rdl_lock_set_lost_cb(k.l, NULL, NULL));
    if (!loaded(&log.exited))
        fail_msg("rdl_lock_set_lost_cb() returned after %lld ms while the "
                 "callback still ran",
                 (long long)(rdlt_now_ms() - t0));
    rdlt_assert_between(rdlt_now_ms() - t0, 0, PROMPT_MS);
    rdlt_assert_rc(loaded(&log.reason), RDL_ELOST);

    /* A second loss after the clear calls nothing. */
    rdlt_assert_rc(rdl_lock_release_as(k.l, A), RDL_ELOST);
    rdlt_assert_ok(rdl_lock_acquire_as(k.l, A, 0, RDL_LEASE_AUTO));
    delete_plain(s, "clear");
    rdlt_sleep_ms(600);
    assert_int_equal(loaded(&log.count), 1);
    rdlt_assert_rc(rdl_lock_release_as(k.l, A), RDL_ELOST);
    lk_free(&k);
    rdlt_client_free(c);
    expect_no_locks_within(s, 300 + SLACK_MS);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_lifetime_close_blocking_waiter_plain),
    RDLT_TEST(test_lifetime_close_blocking_waiter_fair),
    RDLT_TEST(test_lifetime_close_blocking_waiter_read),
    RDLT_TEST(test_lifetime_close_blocking_waiter_write),
    RDLT_TEST(test_lifetime_close_fair_waiter_watchdog_running),
    RDLT_TEST(test_lifetime_close_write_waiter_watchdog_running),
    RDLT_TEST(test_lifetime_close_async_waiter_plain),
    RDLT_TEST(test_lifetime_close_async_waiter_fair),
    RDLT_TEST(test_lifetime_close_async_waiter_read),
    RDLT_TEST(test_lifetime_close_async_waiter_write),
    RDLT_TEST(test_lifetime_close_async_fair_waiter_watchdog_running),
    RDLT_TEST(test_lifetime_close_holding_auto),
    RDLT_TEST(test_lifetime_close_holding_fixed),
    RDLT_TEST(test_lifetime_free_locks_then_client_holding_auto),
    RDLT_TEST(test_lifetime_close_clients_then_free_locks),
    RDLT_TEST(test_lifetime_close_mid_renewal),
    RDLT_TEST(test_lifetime_close_mid_release),
    RDLT_TEST(test_lifetime_close_try_in_flight),
    RDLT_TEST(test_lifetime_free_multilock_during_lost_cb),
    RDLT_TEST(test_lifetime_free_multilock_inside_its_lost_cb),
    RDLT_TEST(test_lifetime_clear_lost_cb_while_running),
};

RDLT_MAIN(tests)
