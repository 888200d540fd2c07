/* Races under contention and faults, made deterministic with the fault
 * proxy (tests/support/proxy.c): lost wake-ups, retried releases and force
 * releases, multilock grants and losses, re-entry with mixed leases. Each
 * test reproduces one defect of the correctness issue and failed before
 * its fix; the comment above it says what it saw then. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "rdlt.h"

#define A ((rdl_owner_t)1)
#define B ((rdl_owner_t)2)
#define C ((rdl_owner_t)3)

/* ---- helpers ----------------------------------------------------------- */

static void free_lock(void *p)
{
    rdl_lock_free(p);
}

/* How many times the server ran a script (EVALSHA, FCALL or EVAL) since
 * it started. */
static long long server_scripts(rdlt_server *s)
{
    return rdlt_script_calls(s) + rdlt_cmd_calls(s, "eval");
}

/* Waits until the server ran more than `n` scripts. */
static void await_scripts(rdlt_server *s, long long n)
{
    int64_t deadline = rdlt_now_ms() + 5000;
    while (server_scripts(s) <= n) {
        if (rdlt_now_ms() > deadline)
            fail_msg("the script never reached the server");
        rdlt_sleep_ms(1);
    }
}

static long long exists(rdlt_server *s, const char *key)
{
    redisReply *r = rdlt_cmd(s, "EXISTS %s", key);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

/* 1 if the key holds something (a free lock's hash is kept on purpose). */
static long long held(rdlt_server *s, const char *key)
{
    return exists(s, key) && !rdlt_key_retained(s, key);
}

static void await_free(rdlt_server *s, const char *key)
{
    int64_t deadline = rdlt_now_ms() + 5000;
    while (held(s, key)) {
        if (rdlt_now_ms() > deadline)
            fail_msg("%s is still held", key);
        rdlt_sleep_ms(1);
    }
}

static long long pttl(rdlt_server *s, const char *key)
{
    redisReply *r = rdlt_cmd(s, "PTTL %s", key);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

/* Runs every lock script once through c, so that later EVALSHAs are not
 * answered NOSCRIPT (which would double the proxy's counts). */
static void warm_up(rdl_client_t *c)
{
    rdl_lock_t *l = rdlt_lock(c, "warm-up");
    rdlt_assert_ok(rdl_lock_acquire_as(l, C, 0, 5000));
    rdlt_assert_ok(rdl_lock_release_as(l, C));
    rdlt_assert_rc(rdl_lock_force_release(l), RDL_ENOTHELD);
    rdlt_lock_free(l);
}

/* A blocking acquisition on a thread of its own. */
typedef struct job {
    rdl_lock_t *lock;
    rdl_owner_t owner;
    int64_t wait_ms, lease_ms;
    int rc;
    int done;
    int64_t done_at;
} job;

static void *acquire_job(void *arg)
{
    job *j = arg;
    j->rc = rdl_lock_acquire_as(j->lock, j->owner, j->wait_ms, j->lease_ms);
    j->done_at = rdlt_now_ms();
    __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void *release_job(void *arg)
{
    job *j = arg;
    j->rc = rdl_lock_release_as(j->lock, j->owner);
    j->done_at = rdlt_now_ms();
    __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void *force_job(void *arg)
{
    job *j = arg;
    j->rc = rdl_lock_force_release(j->lock);
    j->done_at = rdlt_now_ms();
    __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void await_job(job *j)
{
    if (!rdlt_wait_flag(&j->done, 15000))
        fail_msg("the call did not return");
}

/* ---- lost wake-ups ------------------------------------------------------ */

/* The release is published while the new waiter's "busy" answer is still
 * on its way (the proxy holds it back), on a channel the client is still
 * subscribed to from an earlier waiter, with nobody asleep. Before: the
 * message was dropped and the waiter slept out the holder's 4 s lease. */
static void check_wake_during_try(const char *kind)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *cp = rdlt_proxy_client(p), *cd = rdlt_client(s);
    int fair = strcmp(kind, "fair") == 0;
    rdl_lock_t *lp, *ld;
    rdlt_thread *t;
    long long ran;
    int64_t released_at;
    job j;

    if (fair) {
        rdlt_assert_ok(rdl_fairlock_new(cp, "wake", &lp));
        rdlt_defer(free_lock, lp);
        rdlt_assert_ok(rdl_fairlock_new(cd, "wake", &ld));
        rdlt_defer(free_lock, ld);
    } else {
        lp = rdlt_lock(cp, "wake");
        ld = rdlt_lock(cd, "wake");
    }
    rdlt_assert_ok(rdl_lock_acquire_as(ld, A, 0, 4000));
    /* An earlier waiter leaves the client subscribed (the entry lingers). */
    rdlt_assert_rc(rdl_lock_acquire_as(lp, C, 100, 5000), RDL_ETIMEDOUT);

    ran = server_scripts(s);
    rdlt_proxy_delay_reply(p, "EVALSHA", NULL, 600, 1);
    memset(&j, 0, sizeof(j));
    j.lock = lp;
    j.owner = B;
    j.wait_ms = 10000;
    j.lease_ms = 5000;
    t = rdlt_thread_start(acquire_job, &j);
    await_scripts(s, ran);       /* the try ran: busy, its answer held back */
    released_at = rdlt_now_ms(); /* before: the grant may beat the return */
    rdlt_assert_ok(rdl_lock_release_as(ld, A));
    await_job(&j);
    rdlt_thread_join(t);
    rdlt_assert_ok(j.rc);
    /* The answer came 600 ms late; then one more try. Not the lease. */
    rdlt_assert_between(j.done_at - released_at, 0, 2000);
    rdlt_assert_ok(rdl_lock_release_as(lp, B));
}

static void test_races_wake_during_try(void **state)
{
    (void)state;
    check_wake_during_try("lock");
}

/* The fair lock's hand-off names the new head, who has not joined yet. */
static void test_races_fair_handoff_before_join(void **state)
{
    (void)state;
    check_wake_during_try("fair");
}

typedef struct actx {
    rdlt_loop *lp;
    rdl_client_t *c;
    rdl_lock_t *l;
    rdl_req_t req[2];
    int status[2];
    int done[2];
    int64_t done_at[2];
} actx;

static void on_done(rdl_req_t *req, int status)
{
    actx *x = req->data;
    int i = req == &x->req[0] ? 0 : 1;
    x->status[i] = status;
    x->done_at[i] = rdlt_now_ms();
    __atomic_store_n(&x->done[i], 1, __ATOMIC_RELEASE);
}

static void do_connect(void *arg)
{
    actx *x = arg;
    rdlt_assert_ok(rdl_client_connect(x->c));
}

static void do_wait_both(void *arg)
{
    actx *x = arg;
    int i;
    for (i = 0; i < 2; i++) {
        x->req[i].data = x;
        if (rdl_lock_acquire_async(&x->req[i], x->l, (rdl_owner_t)(10 + i),
                                   10000, 5000, on_done) != 0)
            x->status[i] = -1000;
    }
}

/* Cancels the first (sleeping) waiter from a timer callback that first
 * blocks the loop until the release message is in the socket: the next
 * poll then reports the socket before the cancel's completion (posted
 * later), so the message is read first. */
typedef struct cancel_ctx {
    actx *x;
    rdl_lock_t *holder;
    uv_timer_t timer;
    int rc;
} cancel_ctx;

static void on_cancel_timer(uv_timer_t *t)
{
    cancel_ctx *k = t->data;
    rdlt_sleep_ms(300); /* the release (other thread) lands meanwhile */
    (void)rdl_req_cancel(&k->x->req[0]);
    uv_close((uv_handle_t *)t, NULL);
}

static void do_release_then_cancel(void *arg)
{
    cancel_ctx *k = arg;
    uv_timer_init(rdlt_loop_uv(k->x->lp), &k->timer);
    k->timer.data = k;
    /* Not at once: the loop first polls once more with nothing ready, so
     * the event of this call's own wake-up is gone from the poll set. */
    uv_timer_start(&k->timer, on_cancel_timer, 100, 0);
}

static void *release_later(void *arg)
{
    cancel_ctx *k = arg;
    rdlt_sleep_ms(200); /* while the timer blocks the loop */
    k->rc = rdl_lock_release_as(k->holder, A);
    return NULL;
}

/* Two local waiters sleep; the first is cancelled just as a release
 * message arrives. Before: the cancelled waiter took the wake-one message
 * and dropped it, and the other slept out the holder's 5 s lease. */
static void test_races_cancel_passes_wake_on(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *cd = rdlt_client(s);
    rdl_lock_t *ld = rdlt_lock(cd, "pass");
    cancel_ctx k;
    rdlt_thread *t;
    actx x;
    (void)state;

    memset(&x, 0, sizeof(x));
    x.lp = rdlt_loop_start();
    x.c = rdlt_client_new(rdlt_server_url(s));
    rdlt_assert_ok(rdl_client_set_timeouts_ms(x.c, 2000, 1000));
    rdlt_assert_ok(rdl_client_set_loop(x.c, rdlt_loop_uv(x.lp)));
    rdlt_loop_call(x.lp, do_connect, &x);
    x.l = rdlt_lock(x.c, "pass");

    rdlt_assert_ok(rdl_lock_acquire_as(ld, A, 0, 5000));
    rdlt_loop_call(x.lp, do_wait_both, &x);
    rdlt_sleep_ms(300); /* both asleep, subscribed */
    k.x = &x;
    k.holder = ld;
    t = rdlt_thread_start(release_later, &k);
    rdlt_loop_call(x.lp, do_release_then_cancel, &k);
    rdlt_thread_join(t);
    rdlt_assert_ok(k.rc);
    if (!rdlt_wait_flag(&x.done[1], 8000))
        fail_msg("the second waiter never acquired");
    rdlt_assert_ok(x.status[1]);
    if (!rdlt_wait_flag(&x.done[0], 2000))
        fail_msg("the cancelled waiter never completed");
    rdlt_assert_rc(x.status[0], RDL_ECANCELED);
    /* Woken by the message, not by its 5 s sleep. */
    rdlt_assert_between(x.done_at[1] - x.done_at[0], -2000, 1500);
    rdlt_assert_ok(rdl_lock_release_as(x.l, 11));
    rdlt_lock_free(x.l);
    rdlt_client_free(x.c);
    assert_int_equal(rdlt_loop_stop(x.lp), 0);
}

/* The head of a fair queue takes the lock and its fixed lease runs out
 * (it never releases; Redis publishes nothing on expiry). The waiter
 * behind it, now the head, slept as the second on the old head's queue
 * entry. Before: nobody told it it was the head, and it slept on that
 * deadline (seconds) while the lock was free; found by the stress test
 * (plain_fair_rw, seed 1001). Now it is told, tries, and sleeps on the
 * holder's lease. */
static void test_races_fair_new_head_watches_holder(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *ch = rdlt_client(s), *c1 = rdlt_client(s),
                 *c2 = rdlt_client(s);
    rdl_lock_t *lh, *l1, *l2;
    rdlt_thread *t1, *t2;
    int64_t granted;
    job j1, j2;
    (void)state;

    rdlt_assert_ok(rdl_fairlock_new(ch, "head", &lh));
    rdlt_defer(free_lock, lh);
    rdlt_assert_ok(rdl_fairlock_new(c1, "head", &l1));
    rdlt_defer(free_lock, l1);
    rdlt_assert_ok(rdl_fairlock_new(c2, "head", &l2));
    rdlt_defer(free_lock, l2);
    rdlt_assert_ok(rdl_lock_acquire_as(lh, A, 0, 5000));
    memset(&j1, 0, sizeof(j1));
    j1.lock = l1;
    j1.owner = B;
    j1.wait_ms = 10000;
    j1.lease_ms = 800; /* taken, then left to expire */
    t1 = rdlt_thread_start(acquire_job, &j1);
    while (rdlt_info(lh, A).waiters < 1)
        rdlt_sleep_ms(2);
    memset(&j2, 0, sizeof(j2));
    j2.lock = l2;
    j2.owner = C;
    j2.wait_ms = 15000;
    j2.lease_ms = 5000;
    t2 = rdlt_thread_start(acquire_job, &j2);
    while (rdlt_info(lh, A).waiters < 2)
        rdlt_sleep_ms(2);
    rdlt_sleep_ms(200); /* both asleep: the second on the head's entry */
    rdlt_assert_ok(rdl_lock_release_as(lh, A));
    await_job(&j1);
    rdlt_thread_join(t1);
    rdlt_assert_ok(j1.rc);
    granted = j1.done_at;
    await_job(&j2);
    rdlt_thread_join(t2);
    rdlt_assert_ok(j2.rc);
    /* The first hold ran out 800 ms after its grant; then one wake-up. */
    rdlt_assert_between(j2.done_at - granted, 700, 800 + 700);
    rdlt_assert_ok(rdl_lock_release_as(l2, C));
}

/* ---- read-write lock wake-ups ------------------------------------------ */

static void free_rw(void *p)
{
    rdl_rwlock_free(p);
}

static rdl_rwlock_t *rwlock(rdl_client_t *c, const char *name)
{
    rdl_rwlock_t *rw;
    rdlt_assert_ok(rdl_rwlock_new(c, name, &rw));
    rdlt_defer(free_rw, rw);
    return rw;
}

/* A reader crashed (its client closed without releasing) and its share
 * expired; the last live reader leaves. Before: the expired share still
 * counted, nobody was woken, and the writer slept out the live reader's
 * 10 s lease. */
static void test_races_rw_last_live_reader_wakes_writer(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c1 = rdlt_client(s), *c2 = rdlt_client(s);
    rdl_rwlock_t *dead = rwlock(c1, "rw"), *live = rwlock(c2, "rw");
    rdlt_thread *t;
    int64_t released_at;
    job j;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(rdl_rwlock_read(dead), A, 0, 600));
    rdlt_assert_ok(rdl_lock_acquire_as(rdl_rwlock_read(live), B, 0, 10000));
    memset(&j, 0, sizeof(j));
    j.lock = rdl_rwlock_write(live);
    j.owner = C;
    j.wait_ms = 15000;
    j.lease_ms = 5000;
    t = rdlt_thread_start(acquire_job, &j);
    rdlt_assert_ok(rdl_client_close(c1)); /* the reader dies holding */
    rdlt_sleep_ms(900);                   /* and its own lease ends */
    /* Taken before the release: the writer, woken by it, may be granted
     * before the release call returns here (seen at -2 ms). */
    released_at = rdlt_now_ms();
    rdlt_assert_ok(rdl_lock_release_as(rdl_rwlock_read(live), B));
    await_job(&j);
    rdlt_thread_join(t);
    rdlt_assert_ok(j.rc);
    rdlt_assert_between(j.done_at - released_at, 0, 1500);
    rdlt_assert_ok(rdl_lock_release_as(rdl_rwlock_write(live), C));
}

/* The last live waiting writer gives up while a dead writer's entry is
 * still in the set. Before: ZCARD counted the dead entry and the readers
 * held back by writers were not woken. */
static void test_races_rw_leave_ignores_dead_writers(void **state)
{
    rdlt_server *s = rdlt_server_start();
    char *body = rdlt_read_script(RDL_TEST_SCRIPTS_DIR, "rwlock_leave");
    redisContext *sub;
    redisReply *r;
    struct timeval tv = {3, 0};
    (void)state;

    sub = redisConnect("127.0.0.1", rdlt_server_port(s));
    assert_non_null(sub);
    assert_int_equal(sub->err, 0);
    r = redisCommand(sub, "SUBSCRIBE ch");
    freeReplyObject(r);
    /* A dead writer (expired entry) and a live one, who gives up. */
    freeReplyObject(rdlt_cmd(s, "ZADD ww 1 dead-writer"));
    freeReplyObject(rdlt_cmd(s, "ZADD ww 99999999999999 me"));
    /* KEYS: hold, fence, waiting writers (every rw script's keys). */
    r = rdlt_cmd(s, "EVAL %s 3 hold fence ww me publish ch", body);
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    assert_int_equal(r->integer, 1);
    freeReplyObject(r);
    redisSetTimeout(sub, tv);
    r = NULL;
    if (redisGetReply(sub, (void **)&r) != REDIS_OK || r == NULL)
        fail_msg("no wake-up was published");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_string_equal(r->element[2]->str, "1");
    freeReplyObject(r);
    redisFree(sub);
    free(body);
}

/* ---- retries that must not double-apply -------------------------------- */

/* A force release whose reply is lost is retried after the next owner took
 * the lock. Before: the retry's DEL freed the next owner's hold. */
static void test_races_force_release_retry_spares_next_owner(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *cp = rdlt_proxy_client(p), *cd = rdlt_client(s);
    rdl_lock_t *lp = rdlt_lock(cp, "forced"), *ld = rdlt_lock(cd, "forced");
    rdlt_thread *t;
    job j;
    (void)state;

    warm_up(cp);
    rdlt_assert_ok(rdl_lock_acquire_as(ld, A, 0, 30000));
    rdlt_proxy_drop_reply(p, "EVALSHA", "{forced}", 1);
    rdlt_proxy_hold_new(p, 1); /* the reconnect waits */
    memset(&j, 0, sizeof(j));
    j.lock = lp;
    t = rdlt_thread_start(force_job, &j);
    await_free(s, "rdl:lock:{forced}"); /* applied; the reply is lost */
    rdlt_assert_ok(rdl_lock_acquire_as(ld, B, 0, 30000));
    rdlt_proxy_hold_new(p, 0); /* now the retry goes out */
    await_job(&j);
    rdlt_thread_join(t);
    rdlt_assert_ok(j.rc);
    assert_true(rdlt_info(ld, B).held_by_owner);
    rdlt_assert_ok(rdl_lock_release_as(ld, B));
}

/* A grant heard of only after its lease could have ended: the try's reply
 * is lost and its retry waits for the connection longer than the lease.
 * The retry finds the first hold expired and is granted afresh, but the
 * client must count the lease from the first send. Before: the call
 * reported success with a hold already over (token 0, valid 0 ms; the
 * stress test saw it as "a grant without a token"). Now it gives the
 * grant back and reports the unknown outcome. */
static void test_races_grant_heard_after_its_lease(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *cp = rdlt_proxy_client(p), *cd = rdlt_client(s);
    rdl_lock_t *lp = rdlt_lock(cp, "late"), *ld = rdlt_lock(cd, "late");
    rdlt_thread *t;
    job j;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(ld, B, 0, 30000)); /* scripts loaded */
    rdlt_assert_ok(rdl_lock_release_as(ld, B));
    rdlt_proxy_drop_reply(p, "EVALSHA", "{late}", 1);
    rdlt_proxy_hold_new(p, 1); /* the reconnect waits */
    memset(&j, 0, sizeof(j));
    j.lock = lp;
    j.owner = A;
    j.wait_ms = 0;
    j.lease_ms = 300;
    t = rdlt_thread_start(acquire_job, &j);
    while (!rdlt_info(ld, B).locked) /* applied; the reply is lost */
        rdlt_sleep_ms(1);
    rdlt_sleep_ms(400); /* the lease runs out */
    rdlt_proxy_hold_new(p, 0);
    await_job(&j);
    rdlt_thread_join(t);
    if (j.rc == 0)
        fail_msg("reported acquired: token %llu, valid %lld ms",
                 (unsigned long long)rdl_lock_fencing_token(lp, A),
                 (long long)rdl_lock_valid_ms(lp, A));
    rdlt_assert_rc(j.rc, RDL_ECONNLOST);
    /* The fresh grant was given back. */
    while (rdlt_info(ld, B).locked)
        rdlt_sleep_ms(1);
    rdlt_assert_ok(rdl_lock_acquire_as(ld, B, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(ld, B));
}

/* The hold of A on lp is the server's: a re-entry keeps its token, and two
 * releases free the name (ld: the same name on a direct client). */
static void reenter_keeps_token(rdl_lock_t *lp, rdl_lock_t *ld, uint64_t token)
{
    rdlt_assert_ok(rdl_lock_acquire_as(lp, A, 0, 30000));
    assert_int_equal(rdl_lock_fencing_token(lp, A), token);
    rdlt_assert_ok(rdl_lock_release_as(lp, A));
    rdlt_assert_ok(rdl_lock_release_as(lp, A));
    assert_false(rdlt_info(ld, B).locked);
}

/* A grant whose answer arrives, not lost but late, after its lease ran
 * out: the process was paused, or the answer held up, between the server's
 * grant and the client reading it. The stress test's faults run saw it as
 * "re-entry changed the token": the acquisition returned a hold already
 * over on the client's clock, so the re-entry right after it was a fresh
 * grant with a new token. Now such a grant is given back: with budget left
 * the call tries again and returns a hold it can vouch for; on a single
 * try it reports RDL_ETIMEDOUT. */
static void check_grant_answered_after_its_lease(int64_t wait_ms)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *cp = rdlt_proxy_client(p), *cd = rdlt_client(s);
    rdl_lock_t *lp = rdlt_lock(cp, "tardy"), *ld = rdlt_lock(cd, "tardy");
    uint64_t token;
    job j;

    warm_up(cp);
    rdlt_proxy_delay_reply(p, "EVALSHA", "{tardy}", 600, 1);
    memset(&j, 0, sizeof(j));
    j.lock = lp;
    j.owner = A;
    j.wait_ms = wait_ms;
    j.lease_ms = 300;
    (void)acquire_job(&j);
    if (wait_ms == 0) {
        if (j.rc == 0)
            fail_msg("reported acquired 300 ms after its lease: token %llu, "
                     "valid %lld ms",
                     (unsigned long long)rdl_lock_fencing_token(lp, A),
                     (long long)rdl_lock_valid_ms(lp, A));
        rdlt_assert_rc(j.rc, RDL_ETIMEDOUT);
        assert_int_equal(rdl_lock_fencing_token(lp, A), 0);
        /* Given back, or expired: free either way, nothing left behind. */
        while (rdlt_info(ld, B).locked)
            rdlt_sleep_ms(1);
        return;
    }
    rdlt_assert_ok(j.rc);
    token = rdl_lock_fencing_token(lp, A);
    if (rdl_lock_valid_ms(lp, A) <= 0)
        fail_msg("granted a hold already over: token %llu",
                 (unsigned long long)token);
    reenter_keeps_token(lp, ld, token);
}

static void test_races_grant_answered_after_its_lease(void **state)
{
    (void)state;
    check_grant_answered_after_its_lease(5000);
}

static void test_races_one_try_answered_after_its_lease(void **state)
{
    (void)state;
    check_grant_answered_after_its_lease(0);
}

/* A re-entry answered after its own (short) lease, while the outer hold's
 * lease still runs: the level is as good as the hold (a re-entry never
 * shortens it), so it is kept, not given back. */
static void test_races_reentry_answered_late_within_outer_lease(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *cp = rdlt_proxy_client(p), *cd = rdlt_client(s);
    rdl_lock_t *lp = rdlt_lock(cp, "tardy"), *ld = rdlt_lock(cd, "tardy");
    uint64_t token;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(lp, A, 0, 30000));
    token = rdl_lock_fencing_token(lp, A);
    rdlt_proxy_delay_reply(p, "EVALSHA", "{tardy}", 600, 1);
    rdlt_assert_ok(rdl_lock_acquire_as(lp, A, 0, 300));
    assert_int_equal(rdl_lock_fencing_token(lp, A), token);
    assert_int_equal(rdlt_info(lp, A).hold_count, 2);
    assert_true(rdl_lock_valid_ms(lp, A) > 20000);
    rdlt_assert_ok(rdl_lock_release_as(lp, A));
    rdlt_assert_ok(rdl_lock_release_as(lp, A));
    assert_false(rdlt_info(ld, B).locked);
}

/* The other side of the rule above: a try that waited for a connection
 * longer than its lease (a reconnect; a Sentinel client parked through a
 * failover) could not run before it left, so its lease counts from then.
 * A single try is granted a hold it can vouch for, not given back. */
static void test_races_try_waited_for_connection_past_its_lease(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *cp = rdlt_proxy_client(p), *cd = rdlt_client(s);
    rdl_lock_t *lp = rdlt_lock(cp, "parked"), *ld = rdlt_lock(cd, "parked");
    rdlt_thread *t;
    uint64_t token;
    job j;
    (void)state;

    warm_up(cp);
    rdlt_proxy_hold_new(p, 1);
    rdlt_proxy_reset(p, 0); /* the reconnect waits */
    memset(&j, 0, sizeof(j));
    j.lock = lp;
    j.owner = A;
    j.wait_ms = 0;
    j.lease_ms = 300;
    t = rdlt_thread_start(acquire_job, &j);
    rdlt_sleep_ms(600); /* past the lease, within the command timeout */
    assert_false(rdlt_info(ld, B).locked);
    rdlt_proxy_hold_new(p, 0);
    await_job(&j);
    rdlt_thread_join(t);
    rdlt_assert_ok(j.rc);
    token = rdl_lock_fencing_token(lp, A);
    assert_true(rdl_lock_valid_ms(lp, A) > 0);
    reenter_keeps_token(lp, ld, token);
}

/* A final release whose reply is lost is retried after another owner
 * acquired and released. Before: the retry found neither its hold nor its
 * request id (the fence kept only the last one) and reported RDL_ELOST. */
static void check_release_retry(const char *kind)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *cp = rdlt_proxy_client(p), *cd = rdlt_client(s);
    rdl_lock_t *lp, *ld;
    rdl_rwlock_t *rp = NULL, *rd = NULL;
    const char *key;
    rdlt_thread *t;
    job j;

    warm_up(cp);
    if (strcmp(kind, "fair") == 0) {
        rdlt_assert_ok(rdl_fairlock_new(cp, "rel", &lp));
        rdlt_defer(free_lock, lp);
        rdlt_assert_ok(rdl_fairlock_new(cd, "rel", &ld));
        rdlt_defer(free_lock, ld);
        key = "rdl:fair:{rel}";
    } else if (strcmp(kind, "rw") == 0) {
        rp = rwlock(cp, "rel");
        rd = rwlock(cd, "rel");
        lp = rdl_rwlock_write(rp);
        ld = rdl_rwlock_write(rd);
        key = "rdl:rw:{rel}";
    } else {
        lp = rdlt_lock(cp, "rel");
        ld = rdlt_lock(cd, "rel");
        key = "rdl:lock:{rel}";
    }
    /* This kind's scripts are loaded before the proxy drops a reply. */
    rdlt_assert_ok(rdl_lock_acquire_as(lp, C, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(lp, C));
    rdlt_assert_ok(rdl_lock_acquire_as(lp, A, 0, 30000));
    rdlt_proxy_drop_reply(p, "EVALSHA", "{rel}", 1);
    rdlt_proxy_hold_new(p, 1);
    memset(&j, 0, sizeof(j));
    j.lock = lp;
    j.owner = A;
    t = rdlt_thread_start(release_job, &j);
    await_free(s, key);
    /* Another owner comes and goes meanwhile. */
    rdlt_assert_ok(rdl_lock_acquire_as(ld, B, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(ld, B));
    rdlt_proxy_hold_new(p, 0);
    await_job(&j);
    rdlt_thread_join(t);
    rdlt_assert_ok(j.rc);
    assert_int_equal(rdlt_info(ld, A).locked, 0);
}

static void test_races_release_retry_after_other_owner(void **state)
{
    (void)state;
    check_release_retry("lock");
}

static void test_races_fair_release_retry_after_other_owner(void **state)
{
    (void)state;
    check_release_retry("fair");
}

static void test_races_rw_release_retry_after_other_owner(void **state)
{
    (void)state;
    check_release_retry("rw");
}

/* The applied set stays bounded: with a 100 ms command timeout (a 1.5 s
 * window), records older than the window are pruned as new ones come, and
 * no per-owner field is left behind (the read-write lock used to keep one
 * per owner forever). Within the window every record is kept. Pruning
 * goes by generation (scripts/lib/applied.lua): the 200 records of the
 * first burst span generations 0-2 (prunes at 64 and 128 records), and
 * the prune at 256 drops generations 0 and 1 (128 records), which began
 * more than a window earlier; the rest is younger or in generation 2. */
static long long fence_fields(rdlt_server *s, const char *key,
                              const char *prefix)
{
    redisReply *r = rdlt_cmd(s, "HKEYS %s", key);
    long long n = 0;
    size_t i;
    for (i = 0; i < r->elements; i++)
        if (strncmp(r->element[i]->str, prefix, strlen(prefix)) == 0)
            n++;
    freeReplyObject(r);
    return n;
}

static void cycles(rdl_lock_t *l, rdl_lock_t *rl, int from, int n)
{
    int i;
    for (i = from; i < from + n; i++) {
        rdl_owner_t o = (rdl_owner_t)(100 + i);
        rdlt_assert_ok(rdl_lock_acquire_as(rl, o, 0, 5000));
        rdlt_assert_ok(rdl_lock_release_as(rl, o));
        rdlt_assert_ok(rdl_lock_acquire_as(l, o, 0, 5000));
        rdlt_assert_ok(rdl_lock_release_as(l, o));
    }
}

static void test_races_applied_set_bounded(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client_new(rdlt_server_url(s));
    rdl_rwlock_t *rw;
    rdl_lock_t *l;
    (void)state;

    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 100));
    rdlt_assert_ok(rdl_client_connect(c));
    rw = rwlock(c, "many");
    l = rdlt_lock(c, "many");
    cycles(l, rdl_rwlock_read(rw), 0, 200);
    assert_int_equal(fence_fields(s, "rdl:lock:{many}", "d:"), 200);
    assert_int_equal(fence_fields(s, "rdl:rw.fence:{many}", "d:"), 200);
    rdlt_sleep_ms(1700); /* the window passes */
    cycles(l, rdl_rwlock_read(rw), 200, 60);
    assert_int_equal(fence_fields(s, "rdl:lock:{many}", "d:"), 260 - 128);
    assert_int_equal(fence_fields(s, "rdl:rw.fence:{many}", "d:"), 260 - 128);
    assert_int_equal(fence_fields(s, "rdl:rw.fence:{many}", "r:"), 0);
}

/* ---- local validity ----------------------------------------------------- */

/* An auto hold re-entered with a fixed lease shorter than the TTL left:
 * the script leaves the TTL alone. Before: the local deadline moved as if
 * a whole watchdog lease had been granted, overstating rdl_lock_valid_ms()
 * by the time since the last renewal. */
static void test_races_valid_ms_mixed_reentry(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client_new(rdlt_server_url(s));
    rdl_lock_t *l;
    int64_t valid;
    long long left;
    (void)state;

    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 1000));
    rdlt_assert_ok(rdl_client_set_watchdog_ms(c, 6000));
    rdlt_assert_ok(rdl_client_connect(c));
    l = rdlt_lock(c, "mixed");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, RDL_LEASE_AUTO));
    rdlt_sleep_ms(1000); /* before the first renewal (every 2 s) */
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 500));
    valid = rdl_lock_valid_ms(l, A);
    left = pttl(s, "rdl:lock:{mixed}");
    if (valid > left)
        fail_msg("valid_ms %lld > the key's TTL %lld", (long long)valid, left);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
}

/* ---- multilock ------------------------------------------------------------ */

/* A part taken first runs down its fixed lease while the multilock waits
 * for the second, which its holder keeps for longer than that lease.
 * Before: the call returned 0 with the first part expired (a second owner
 * could take it). Now every part is held, with at least half the lease. */
static void test_races_multilock_never_grants_expired_part(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s), *co = rdlt_client(s);
    rdl_lock_t *parts[2], *ml, *other_a = rdlt_lock(co, "part-a"),
                               *other_b = rdlt_lock(co, "part-b");
    int64_t t0;
    (void)state;

    parts[0] = rdlt_lock(c, "part-a");
    parts[1] = rdlt_lock(c, "part-b");
    rdlt_assert_ok(rdl_multilock_new(parts, 2, &ml));
    rdlt_defer(free_lock, ml);
    rdlt_assert_ok(rdl_lock_acquire_as(other_b, B, 0, 1800));
    t0 = rdlt_now_ms();
    rdlt_assert_ok(rdl_lock_acquire_as(ml, A, 10000, 1000));
    assert_true(rdlt_now_ms() - t0 >= 1500); /* it did wait for part-b */
    assert_true(rdlt_info(parts[0], A).held_by_owner);
    assert_true(rdlt_info(parts[1], A).held_by_owner);
    assert_true(rdl_lock_valid_ms(ml, A) >= 300);
    rdlt_assert_rc(rdl_lock_acquire_as(other_a, B, 0, 1000), RDL_EBUSY);
    rdlt_assert_ok(rdl_lock_release_as(ml, A));
}

/* A part taken with an auto lease is lost (its key vanishes: a restart, a
 * failover) while the multilock waits for the next part. Before: the call
 * returned 0 with that part lost (token 0, its release RDL_ELOST), seen by
 * the stress test after a server restart. Now the grant checks every part
 * under the composite's lock and starts over. */
static void test_races_multilock_part_lost_while_taking(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client_new(rdlt_server_url(s)), *co = rdlt_client(s);
    rdl_lock_t *parts[2], *ml, *other = rdlt_lock(co, "lw-b");
    rdlt_thread *t;
    int64_t deadline;
    job j;
    (void)state;

    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 1000));
    rdlt_assert_ok(rdl_client_set_watchdog_ms(c, 900));
    rdlt_assert_ok(rdl_client_connect(c));
    parts[0] = rdlt_lock(c, "lw-a");
    parts[1] = rdlt_lock(c, "lw-b");
    rdlt_assert_ok(rdl_multilock_new(parts, 2, &ml));
    rdlt_defer(free_lock, ml);
    rdlt_assert_ok(rdl_lock_acquire_as(other, B, 0, 30000));
    memset(&j, 0, sizeof(j));
    j.lock = ml;
    j.owner = A;
    j.wait_ms = 10000;
    j.lease_ms = RDL_LEASE_AUTO;
    t = rdlt_thread_start(acquire_job, &j);
    deadline = rdlt_now_ms() + 5000;
    while (rdl_lock_valid_ms(parts[0], A) == 0) { /* taken and recorded */
        if (rdlt_now_ms() > deadline)
            fail_msg("the first part was never taken");
        rdlt_sleep_ms(1);
    }
    freeReplyObject(rdlt_cmd(s, "DEL rdl:lock:{lw-a}"));
    while (rdl_lock_valid_ms(parts[0], A) > 0) { /* the watchdog saw it */
        if (rdlt_now_ms() > deadline)
            fail_msg("the loss of the first part was never noticed");
        rdlt_sleep_ms(5);
    }
    rdlt_assert_ok(rdl_lock_release_as(other, B));
    await_job(&j);
    rdlt_thread_join(t);
    rdlt_assert_ok(j.rc);
    assert_true(rdl_lock_fencing_token(parts[0], A) > 0);
    assert_true(rdl_lock_fencing_token(parts[1], A) > 0);
    assert_true(rdlt_info(parts[0], A).held_by_owner);
    assert_true(rdlt_info(parts[1], A).held_by_owner);
    rdlt_assert_ok(rdl_lock_release_as(ml, A));
}

/* A budget that runs out while parts are taken is a timeout: the first
 * part's answer comes back (the proxy holds it) after the budget ended,
 * and the second part, held elsewhere, gets one try. Before: RDL_EBUSY. */
static void test_races_multilock_budget_is_timeout(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *c = rdlt_proxy_client(p), *co = rdlt_client(s);
    rdl_lock_t *parts[2], *ml, *other = rdlt_lock(co, "tb");
    (void)state;

    warm_up(c);
    parts[0] = rdlt_lock(c, "ta");
    parts[1] = rdlt_lock(c, "tb");
    rdlt_assert_ok(rdl_multilock_new(parts, 2, &ml));
    rdlt_defer(free_lock, ml);
    rdlt_assert_ok(rdl_lock_acquire_as(other, B, 0, 30000));
    rdlt_proxy_delay_reply(p, "EVALSHA", "{ta}", 500, 1);
    rdlt_assert_rc(rdl_lock_acquire_as(ml, A, 300, 5000), RDL_ETIMEDOUT);
    rdlt_assert_rc(rdl_lock_acquire_as(ml, A, 0, 5000), RDL_EBUSY);
    assert_int_equal(rdlt_info(parts[0], A).locked, 0);
}

typedef struct lost_log {
    int count;
} lost_log;

static void on_lost(rdl_lock_t *l, rdl_owner_t o, int reason, void *data)
{
    lost_log *log = data;
    (void)l;
    (void)o;
    (void)reason;
    __atomic_add_fetch(&log->count, 1, __ATOMIC_ACQ_REL);
}

/* A re-entered composite loses a part. Before: the first release dropped
 * the composite's state and released one level of the surviving part; the
 * second answered RDL_ENOTHELD, and the surviving part stayed held and
 * renewed. */
static void test_races_multilock_lost_reentered_releases_all(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client_new(rdlt_server_url(s));
    rdl_lock_t *parts[2], *ml;
    lost_log log = {0};
    (void)state;

    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 1000));
    rdlt_assert_ok(rdl_client_set_watchdog_ms(c, 900));
    rdlt_assert_ok(rdl_client_connect(c));
    parts[0] = rdlt_lock(c, "lost-a");
    parts[1] = rdlt_lock(c, "lost-b");
    rdlt_assert_ok(rdl_multilock_new(parts, 2, &ml));
    rdlt_defer(free_lock, ml);
    rdlt_assert_ok(rdl_lock_set_lost_cb(ml, on_lost, &log));
    rdlt_assert_ok(rdl_lock_acquire_as(ml, A, 0, RDL_LEASE_AUTO));
    rdlt_assert_ok(rdl_lock_acquire_as(ml, A, 0, RDL_LEASE_AUTO));
    freeReplyObject(rdlt_cmd(s, "DEL rdl:lock:{lost-a}"));
    if (!rdlt_wait_flag(&log.count, 5000))
        fail_msg("the composite was not reported lost");
    rdlt_assert_rc(rdl_lock_release_as(ml, A), RDL_ELOST);
    assert_int_equal(held(s, "rdl:lock:{lost-b}"), 0);
    rdlt_assert_rc(rdl_lock_release_as(ml, A), RDL_ELOST);
    rdlt_assert_rc(rdl_lock_release_as(ml, A), RDL_ENOTHELD);
    rdlt_sleep_ms(700); /* a renewal would bring nothing back */
    assert_int_equal(held(s, "rdl:lock:{lost-b}"), 0);
}

/* A re-entry after the hold vanished unnoticed (the server lost it: a
 * restart or failover; here a DEL) was granted as a new hold with a new
 * token, and the caller went on believing it held its outer level (seen
 * by a long faults stress run across a restart). Now the re-entry gives
 * the new level back and reports RDL_ELOST, and so does the release of
 * the outer level. */
static void check_reentry_after_loss(int64_t lease_ms)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "vanished");
    lost_log log = {0};

    rdlt_assert_ok(rdl_lock_set_lost_cb(l, on_lost, &log));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, lease_ms));
    freeReplyObject(rdlt_cmd(s, "DEL rdl:lock:{vanished}"));
    rdlt_assert_rc(rdl_lock_acquire_as(l, A, 0, lease_ms), RDL_ELOST);
    await_free(s, "rdl:lock:{vanished}"); /* the new level given back */
    assert_int_equal(rdl_lock_fencing_token(l, A), 0);
    assert_int_equal(rdl_lock_valid_ms(l, A), 0);
    rdlt_assert_rc(rdl_lock_release_as(l, A), RDL_ELOST);
    rdlt_assert_rc(rdl_lock_release_as(l, A), RDL_ENOTHELD);
    /* The lost callback is the watchdog's: auto holds only. */
    assert_int_equal(__atomic_load_n(&log.count, __ATOMIC_ACQUIRE),
                     lease_ms == RDL_LEASE_AUTO ? 1 : 0);
    /* A new acquisition is a new hold, as always. */
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, lease_ms));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
}

static void test_races_reentry_after_unnoticed_loss_auto(void **state)
{
    (void)state;
    check_reentry_after_loss(RDL_LEASE_AUTO);
}

static void test_races_reentry_after_unnoticed_loss_fixed(void **state)
{
    (void)state;
    check_reentry_after_loss(30000);
}

/* ---- a re-entry that reaches the server after its hold's lease ---------- */

typedef struct reentry {
    rdl_lock_t *l;
    int rc;
} reentry;

static void *reenter_thread(void *arg)
{
    reentry *x = arg;
    x->rc = rdl_lock_acquire_as(x->l, A, 0, 1000);
    return NULL;
}

/* A re-entry sent while its hold was valid, but run by the server after
 * the hold's lease ran out (the server paused, a failover, a durable
 * line held up by WAIT), makes a new hold (count 1, a new token). Its
 * answer came back within its own lease, so it is not late, and the
 * client's deadline had passed by then: before, that was taken as a
 * fresh acquisition and returned 0 with a new token, while the caller
 * went on believing it held its outer level (the durable_sentinel long
 * run: "re-entry changed the token", then the outer release said
 * RDL_ENOTHELD). The outer level was lost before this re-entry ran: the
 * call says RDL_ELOST and gives the new level back. Made certain by
 * stopping the server from before the re-entry is sent until after the
 * hold's lease. */
static void test_races_reentry_run_after_its_lease(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s), *c2 = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "late-reentry"), *l2;
    reentry x = {NULL, -1};
    rdlt_thread *t;
    int64_t t0;
    (void)state;

    l2 = rdlt_lock(c2, "late-reentry");
    t0 = rdlt_now_ms();
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 1000));
    rdlt_server_signal(s, SIGSTOP);
    if (rdlt_now_ms() - t0 < 700) /* sent well before the lease ends */
        rdlt_sleep_ms(700 - (rdlt_now_ms() - t0));
    x.l = l;
    t = rdlt_thread_start(reenter_thread, &x);
    rdlt_sleep_ms(600); /* past the lease: the server runs it afterwards */
    rdlt_server_signal(s, SIGCONT);
    rdlt_thread_join(t);
    rdlt_assert_rc(x.rc, RDL_ELOST);
    /* The new level was given back before the call returned: another
     * client takes the lock at once. */
    rdlt_assert_ok(rdl_lock_acquire_as(l2, B, 0, 10000));
    rdlt_assert_ok(rdl_lock_release_as(l2, B));
}

/* ---- a release lost in a failover, the hold back on the new master ---- */

enum { RES_PLAIN, RES_FAIR, RES_SEM, RES_WRITE, RES_READ };

/* Lock `name` of kind k on c (a semaphore of 2 permits; rw: through *rw,
 * freed by the caller). */
static rdl_lock_t *res_lock(rdl_client_t *c, int k, rdl_rwlock_t **rw)
{
    rdl_lock_t *l = NULL;
    *rw = NULL;
    switch (k) {
    case RES_FAIR:
        rdlt_assert_ok(rdl_fairlock_new(c, "res", &l));
        rdlt_defer(free_lock, l);
        return l;
    case RES_SEM:
        rdlt_assert_ok(rdl_semaphore_new(c, "res", 2, &l));
        rdlt_defer(free_lock, l);
        return l;
    case RES_WRITE:
    case RES_READ:
        *rw = rwlock(c, "res");
        return k == RES_WRITE ? rdl_rwlock_write(*rw) : rdl_rwlock_read(*rw);
    default:
        return rdlt_lock(c, "res");
    }
}

typedef struct snapshot {
    int n;
    char key[8][64];
    long long pttl[8];
    char *dump[8];
    size_t len[8];
} snapshot;

/* The keys of name "res" (all kinds: one hash tag) as they are now. */
static void snap(rdlt_server *s, snapshot *sn)
{
    redisReply *keys = rdlt_cmd(s, "KEYS *{res}*");
    size_t i;
    sn->n = 0;
    for (i = 0; i < keys->elements && sn->n < 8; i++) {
        redisReply *t = rdlt_cmd(s, "PTTL %s", keys->element[i]->str);
        redisReply *d = rdlt_cmd(s, "DUMP %s", keys->element[i]->str);
        snprintf(sn->key[sn->n], sizeof(sn->key[0]), "%s",
                 keys->element[i]->str);
        sn->pttl[sn->n] = t->integer > 0 ? t->integer : 0;
        sn->dump[sn->n] = malloc(d->len);
        memcpy(sn->dump[sn->n], d->str, d->len);
        sn->len[sn->n] = d->len;
        sn->n++;
        freeReplyObject(t);
        freeReplyObject(d);
    }
    freeReplyObject(keys);
}

/* Puts them back as they were (REPLACE), as a failover to a replica that
 * missed the writes in between would. */
static void unsnap(rdlt_server *s, snapshot *sn)
{
    int i;
    for (i = 0; i < sn->n; i++) {
        redisReply *r = rdlt_cmd(s, "RESTORE %s %lld %b REPLACE", sn->key[i],
                                 sn->pttl[i], sn->dump[i], sn->len[i]);
        assert_int_equal(r->type, REDIS_REPLY_STATUS);
        freeReplyObject(r);
        free(sn->dump[i]);
    }
}

/* Durable grants survive a failover; releases are not confirmed, so a
 * release made just before one can be lost, and the hold comes back on the
 * new master (seen in the durable_sentinel stress profile after a forced
 * SENTINEL FAILOVER). Its owner, who released, then acquires again: the
 * server re-enters the hold it does not know of (count 2), and the one
 * release the caller makes left a level behind, renewed for ever with an
 * auto lease: nobody else got the lock again. Now a grant that counts
 * more levels than the client knows gives the extra ones back before the
 * caller hears of it, and the caller's release frees the lock. */
static void check_resurrected(int k, int64_t lease_ms)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s), *c2 = rdlt_client(s);
    rdl_rwlock_t *rw, *rw2;
    rdl_lock_t *l = res_lock(c, k, &rw), *l2 = res_lock(c2, k, &rw2);
    snapshot sn;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, lease_ms));
    snap(s, &sn);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    unsnap(s, &sn); /* the release is lost: the hold is back */
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, lease_ms));
    assert_int_equal(rdlt_info(l, A).hold_count, 1);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    if (k == RES_READ) /* a reader's level is seen by a writer */
        l2 = rdl_rwlock_write(rw2);
    rdlt_assert_ok(rdl_lock_acquire_as(l2, B, 0, 10000));
    if (k == RES_SEM) /* both permits are free */
        rdlt_assert_ok(rdl_lock_acquire_as(l2, (rdl_owner_t)3, 0, 10000));
}

static void test_races_resurrected_hold_plain(void **state)
{
    (void)state;
    check_resurrected(RES_PLAIN, RDL_LEASE_AUTO);
}

static void test_races_resurrected_hold_plain_fixed(void **state)
{
    (void)state;
    check_resurrected(RES_PLAIN, 30000);
}

static void test_races_resurrected_hold_fair(void **state)
{
    (void)state;
    check_resurrected(RES_FAIR, RDL_LEASE_AUTO);
}

static void test_races_resurrected_hold_semaphore(void **state)
{
    (void)state;
    check_resurrected(RES_SEM, RDL_LEASE_AUTO);
}

static void test_races_resurrected_hold_write(void **state)
{
    (void)state;
    check_resurrected(RES_WRITE, RDL_LEASE_AUTO);
}

static void test_races_resurrected_hold_read(void **state)
{
    (void)state;
    check_resurrected(RES_READ, RDL_LEASE_AUTO);
}

/* Parts that are one lock are refused: the script wrote the key twice on
 * one client, and on two clients the call waited for itself. */
static void test_races_multilock_same_lock_refused(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s), *c2 = rdlt_client(s);
    rdl_rwlock_t *rw = rwlock(c, "views");
    rdl_lock_t *parts[2], *ml = NULL;
    rdl_lock_t *x = rdlt_lock(c, "x"), *tagged = rdlt_lock(c, "{x}"),
               *x2 = rdlt_lock(c, "x"), *xc2 = rdlt_lock(c2, "x");
    rdl_lock_t *fx;
    (void)state;

    rdlt_assert_ok(rdl_fairlock_new(c, "x", &fx));
    rdlt_defer(free_lock, fx);
    parts[0] = x;
    parts[1] = tagged;
    rdlt_assert_rc(rdl_multilock_new(parts, 2, &ml), RDL_EINVAL);
    parts[1] = x2;
    rdlt_assert_rc(rdl_multilock_new(parts, 2, &ml), RDL_EINVAL);
    parts[1] = xc2;
    rdlt_assert_rc(rdl_multilock_new(parts, 2, &ml), RDL_EINVAL);
    rdlt_assert_rc(rdl_redlock_new(parts, 2, &ml), RDL_EINVAL);
    parts[0] = rdl_rwlock_read(rw);
    parts[1] = rdl_rwlock_write(rw);
    rdlt_assert_rc(rdl_multilock_new(parts, 2, &ml), RDL_EINVAL);
    assert_null(ml);
    /* A fair lock and a plain lock of one name are different locks. */
    parts[0] = x;
    parts[1] = fx;
    rdlt_assert_ok(rdl_multilock_new(parts, 2, &ml));
    rdl_lock_free(ml);
}

/* The reproducer of the correctness issue: 6 threads on 2 clients, a ring
 * of 6 names, each thread a multilock over 3 consecutive names listed in
 * its own order, fixed 5 s leases, holds of 100 us. Before: several
 * moments per run where a name was held by two multilocks, RDL_ELOST on
 * release, and stalls of a whole lease (lost wake-ups). Now: no overlap
 * (an in-process occupancy count per name), every release succeeds, and
 * no acquisition waits anywhere near a lease. */
#define RING 6
#define RING_CYCLES 300

typedef struct ring_ctx {
    rdl_lock_t *ml;
    int *busy; /* occupancy per name */
    int first; /* the ring position of its first name */
    int overlaps, release_errors, acquire_errors;
    int64_t max_wait_ms;
} ring_ctx;

static void *ring_worker(void *arg)
{
    ring_ctx *r = arg;
    int i, k;
    for (i = 0; i < RING_CYCLES; i++) {
        int64_t t0 = rdlt_now_ms(), w;
        int rc = rdl_lock_acquire(r->ml, 20000, 5000);
        w = rdlt_now_ms() - t0;
        if (w > r->max_wait_ms)
            r->max_wait_ms = w;
        if (rc != 0) {
            r->acquire_errors++;
            continue;
        }
        for (k = 0; k < 3; k++)
            if (__atomic_add_fetch(&r->busy[(r->first + k) % RING], 1,
                                   __ATOMIC_ACQ_REL) != 1)
                r->overlaps++;
        uv_sleep(0);
        for (k = 0; k < 3; k++)
            __atomic_sub_fetch(&r->busy[(r->first + k) % RING], 1,
                               __ATOMIC_ACQ_REL);
        if (rdl_lock_release(r->ml) != 0)
            r->release_errors++;
    }
    return NULL;
}

static void test_races_multilock_ring(void **state)
{
    static const char *names[RING] = {"r0", "r1", "r2", "r3", "r4", "r5"};
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *cl[2] = {rdlt_client(s), rdlt_client(s)};
    int busy[RING] = {0};
    ring_ctx ctx[RING];
    rdlt_thread *t[RING];
    int i, k;
    (void)state;

    memset(ctx, 0, sizeof(ctx));
    for (i = 0; i < RING; i++) {
        rdl_lock_t *parts[3];
        for (k = 0; k < 3; k++) /* listed in a different order each */
            parts[(k + i) % 3] = rdlt_lock(cl[i % 2], names[(i + k) % RING]);
        rdlt_assert_ok(rdl_multilock_new(parts, 3, &ctx[i].ml));
        rdlt_defer(free_lock, ctx[i].ml);
        ctx[i].busy = busy;
        ctx[i].first = i;
    }
    for (i = 0; i < RING; i++)
        t[i] = rdlt_thread_start(ring_worker, &ctx[i]);
    for (i = 0; i < RING; i++)
        rdlt_thread_join(t[i]);
    for (i = 0; i < RING; i++) {
        assert_int_equal(ctx[i].overlaps, 0);
        assert_int_equal(ctx[i].acquire_errors, 0);
        assert_int_equal(ctx[i].release_errors, 0);
        rdlt_assert_between(ctx[i].max_wait_ms, 0, 2500);
    }
    assert_int_equal(rdlt_count_held(s, "*"), 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        RDLT_TEST(test_races_wake_during_try),
        RDLT_TEST(test_races_reentry_run_after_its_lease),
        RDLT_TEST(test_races_resurrected_hold_plain),
        RDLT_TEST(test_races_resurrected_hold_plain_fixed),
        RDLT_TEST(test_races_resurrected_hold_fair),
        RDLT_TEST(test_races_resurrected_hold_semaphore),
        RDLT_TEST(test_races_resurrected_hold_write),
        RDLT_TEST(test_races_resurrected_hold_read),
        RDLT_TEST(test_races_fair_handoff_before_join),
        RDLT_TEST(test_races_cancel_passes_wake_on),
        RDLT_TEST(test_races_grant_heard_after_its_lease),
        RDLT_TEST(test_races_grant_answered_after_its_lease),
        RDLT_TEST(test_races_one_try_answered_after_its_lease),
        RDLT_TEST(test_races_reentry_answered_late_within_outer_lease),
        RDLT_TEST(test_races_try_waited_for_connection_past_its_lease),
        RDLT_TEST(test_races_fair_new_head_watches_holder),
        RDLT_TEST(test_races_rw_last_live_reader_wakes_writer),
        RDLT_TEST(test_races_rw_leave_ignores_dead_writers),
        RDLT_TEST(test_races_force_release_retry_spares_next_owner),
        RDLT_TEST(test_races_release_retry_after_other_owner),
        RDLT_TEST(test_races_fair_release_retry_after_other_owner),
        RDLT_TEST(test_races_rw_release_retry_after_other_owner),
        RDLT_TEST(test_races_applied_set_bounded),
        RDLT_TEST(test_races_valid_ms_mixed_reentry),
        RDLT_TEST(test_races_multilock_never_grants_expired_part),
        RDLT_TEST(test_races_multilock_part_lost_while_taking),
        RDLT_TEST(test_races_multilock_budget_is_timeout),
        RDLT_TEST(test_races_multilock_lost_reentered_releases_all),
        RDLT_TEST(test_races_multilock_same_lock_refused),
        RDLT_TEST(test_races_reentry_after_unnoticed_loss_auto),
        RDLT_TEST(test_races_reentry_after_unnoticed_loss_fixed),
        RDLT_TEST(test_races_multilock_ring),
    };
    rdlt_init(argc, argv);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
