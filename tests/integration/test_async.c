/* The async API on the caller's loop (rdl_client_set_loop): callbacks run
 * exactly once, on the loop thread, never inside the submitting call;
 * cancellation leaves nothing held. The loop runs on a thread of the test
 * (tests/support/loop.c), so the main thread can make blocking calls and
 * assertions while it runs. */
#include <string.h>

#include "rdlt.h"

#define A ((rdl_owner_t)1)
#define B ((rdl_owner_t)2)

typedef struct actx {
    rdlt_loop *lp;
    rdl_client_t *c;
    rdl_lock_t *l;
    rdl_req_t req;
    rdl_owner_t owner;
    int64_t wait_ms;
    int64_t lease_ms;
    int rc;       /* of the last call made on the loop */
    int in_call;  /* set around submitting and cancelling calls */
    int status;   /* given to the callback */
    int calls;    /* callbacks so far */
    int inside;   /* callbacks that ran inside a call of ours */
    int off_loop; /* callbacks that ran off the loop thread */
    int done;
} actx;

static void on_done(rdl_req_t *req, int status)
{
    actx *x = req->data;
    x->status = status;
    x->calls++;
    if (x->in_call)
        x->inside++;
    if (!rdlt_loop_on_thread(x->lp))
        x->off_loop++;
    __atomic_store_n(&x->done, 1, __ATOMIC_RELEASE);
}

static void do_connect(void *arg)
{
    actx *x = arg;
    x->rc = rdl_client_connect(x->c);
}

static void do_acquire(void *arg)
{
    actx *x = arg;
    memset(&x->req, 0, sizeof(x->req));
    x->req.data = x;
    __atomic_store_n(&x->done, 0, __ATOMIC_RELEASE);
    x->in_call = 1;
    x->rc = rdl_lock_acquire_async(&x->req, x->l, x->owner, x->wait_ms,
                                   x->lease_ms, on_done);
    x->in_call = 0;
}

static void do_release(void *arg)
{
    actx *x = arg;
    memset(&x->req, 0, sizeof(x->req));
    x->req.data = x;
    __atomic_store_n(&x->done, 0, __ATOMIC_RELEASE);
    x->in_call = 1;
    x->rc = rdl_lock_release_async(&x->req, x->l, x->owner, on_done);
    x->in_call = 0;
}

static void do_cancel(void *arg)
{
    actx *x = arg;
    x->in_call = 1;
    x->rc = rdl_req_cancel(&x->req);
    x->in_call = 0;
}

static void do_acquire_then_cancel(void *arg)
{
    actx *x = arg;
    do_acquire(x);
    if (x->rc == 0)
        do_cancel(x);
}

static void do_blocking_acquire(void *arg)
{
    actx *x = arg;
    x->rc = rdl_lock_acquire_as(x->l, x->owner, 0, 1000);
}

static void do_close(void *arg)
{
    actx *x = arg;
    x->in_call = 1;
    x->rc = rdl_client_close(x->c);
    x->in_call = 0;
}

/* A loop thread, and a client on it connected to s, with a lock "name". */
static void setup(actx *x, rdlt_server *s, const char *name)
{
    memset(x, 0, sizeof(*x));
    x->lp = rdlt_loop_start();
    x->c = rdlt_client_new(rdlt_server_url(s));
    rdlt_assert_ok(rdl_client_set_timeouts_ms(x->c, 2000, 1000));
    rdlt_assert_ok(rdl_client_set_loop(x->c, rdlt_loop_uv(x->lp)));
    rdlt_loop_call(x->lp, do_connect, x);
    rdlt_assert_ok(x->rc);
    x->l = rdlt_lock(x->c, name);
    x->owner = B;
    x->wait_ms = 0;
    x->lease_ms = 5000;
}

/* Frees the lock and client and stops the loop, which must then have no
 * handle left open. */
static void finish(actx *x)
{
    rdlt_lock_free(x->l);
    rdlt_client_free(x->c);
    assert_int_equal(rdlt_loop_stop(x->lp), 0);
}

static void wait_done(actx *x, int64_t timeout_ms)
{
    if (!rdlt_wait_flag(&x->done, timeout_ms))
        fail_msg("no callback within %lld ms", (long long)timeout_ms);
}

static void test_async_acquire_and_release(void **state)
{
    rdlt_server *s = rdlt_server_start();
    actx x;
    uint64_t token;
    (void)state;

    setup(&x, s, "async");
    rdlt_loop_call(x.lp, do_acquire, &x);
    rdlt_assert_ok(x.rc);
    wait_done(&x, 5000);
    rdlt_assert_ok(x.status);
    assert_ptr_equal(x.req.lock, x.l);
    token = x.req.fencing_token;
    assert_true(token > 0);
    assert_true(rdl_lock_fencing_token(x.l, B) == token);
    /* Blocking calls from another thread while the loop runs. */
    assert_int_equal(rdlt_info(x.l, B).hold_count, 1);

    rdlt_loop_call(x.lp, do_release, &x);
    rdlt_assert_ok(x.rc);
    wait_done(&x, 5000);
    rdlt_assert_ok(x.status);
    assert_int_equal(rdlt_info(x.l, B).locked, 0);

    rdlt_sleep_ms(100); /* a second callback would show up by now */
    assert_int_equal(x.calls, 2);
    assert_int_equal(x.inside, 0);
    assert_int_equal(x.off_loop, 0);
    finish(&x);
}

/* The callback of a request that completes at once (wait 0 on a busy
 * lock, a release of nothing) still comes later, not inside the call. */
static void test_async_quick_outcomes_not_inside_call(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *ch = rdlt_client(s);
    rdl_lock_t *lh = rdlt_lock(ch, "quick");
    actx x;
    (void)state;

    setup(&x, s, "quick");
    rdlt_assert_ok(rdl_lock_acquire_as(lh, A, 0, 30000));
    rdlt_loop_call(x.lp, do_acquire, &x);
    rdlt_assert_ok(x.rc);
    wait_done(&x, 5000);
    rdlt_assert_rc(x.status, RDL_EBUSY);
    rdlt_loop_call(x.lp, do_release, &x);
    rdlt_assert_ok(x.rc);
    wait_done(&x, 5000);
    rdlt_assert_rc(x.status, RDL_ENOTHELD);
    assert_int_equal(x.calls, 2);
    assert_int_equal(x.inside, 0);
    assert_int_equal(x.off_loop, 0);
    finish(&x);
}

static void test_async_blocking_call_on_loop_thread(void **state)
{
    rdlt_server *s = rdlt_server_start();
    actx x;
    (void)state;

    setup(&x, s, "deadlock");
    rdlt_loop_call(x.lp, do_blocking_acquire, &x);
    rdlt_assert_rc(x.rc, RDL_EDEADLK);
    assert_int_equal(rdlt_info(x.l, B).locked, 0);
    finish(&x);
}

/* A cancelled wait reports RDL_ECANCELED promptly, and the waiter does
 * not take the lock when it is released later. */
static void test_async_cancel_waiting_acquisition(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *ch = rdlt_client(s);
    rdl_lock_t *lh = rdlt_lock(ch, "cancel");
    rdl_lock_info_t info;
    int64_t t0;
    actx x;
    (void)state;

    setup(&x, s, "cancel");
    rdlt_assert_ok(rdl_lock_acquire_as(lh, A, 0, 30000));
    x.wait_ms = 10000;
    rdlt_loop_call(x.lp, do_acquire, &x);
    rdlt_assert_ok(x.rc);
    rdlt_sleep_ms(300);
    assert_int_equal(__atomic_load_n(&x.done, __ATOMIC_ACQUIRE), 0);

    t0 = rdlt_now_ms();
    rdlt_loop_call(x.lp, do_cancel, &x);
    rdlt_assert_ok(x.rc);
    wait_done(&x, 5000);
    rdlt_assert_between(rdlt_now_ms() - t0, 0, 500);
    rdlt_assert_rc(x.status, RDL_ECANCELED);
    assert_int_equal(x.req.fencing_token, 0);
    assert_int_equal(rdl_lock_fencing_token(x.l, B), 0);
    info = rdlt_info(lh, A);
    assert_int_equal(info.holders, 1);
    assert_int_equal(info.hold_count, 1);

    /* Cancelling what is no longer pending is an error. */
    rdlt_loop_call(x.lp, do_cancel, &x);
    rdlt_assert_rc(x.rc, RDL_EINVAL);

    rdlt_assert_ok(rdl_lock_release_as(lh, A));
    rdlt_sleep_ms(300);
    info = rdlt_info(x.l, B);
    assert_int_equal(info.locked, 0);
    assert_int_equal(info.held_by_owner, 0);
    assert_int_equal(x.calls, 1);
    assert_int_equal(x.inside, 0);
    finish(&x);
}

/* Cancelling at every point of a short acquisition: whatever the
 * callback reports, RDL_ECANCELED never leaves the lock held. */
static void test_async_cancel_never_leaves_lock_held(void **state)
{
    rdlt_server *s = rdlt_server_start();
    actx x;
    int i, cancelled = 0, acquired = 0;
    (void)state;

    setup(&x, s, "cancel-race");
    for (i = 0; i < 40; i++) {
        rdl_lock_info_t info;
        if (i % 2 == 0) {
            rdlt_loop_call(x.lp, do_acquire_then_cancel, &x);
        } else {
            rdlt_loop_call(x.lp, do_acquire, &x);
            rdlt_assert_ok(x.rc);
            rdlt_sleep_ms(i % 5 == 0 ? 0 : 1);
            rdlt_loop_call(x.lp, do_cancel, &x);
        }
        wait_done(&x, 5000);
        info = rdlt_info(x.l, B);
        if (x.status == RDL_ECANCELED) {
            cancelled++;
            if (info.locked)
                fail_msg("round %d: cancelled, yet the lock is held "
                         "(count %u)",
                         i, info.hold_count);
            assert_int_equal(rdl_lock_fencing_token(x.l, B), 0);
        } else {
            rdlt_assert_ok(x.status);
            acquired++;
            assert_int_equal(info.hold_count, 1);
            rdlt_assert_ok(rdl_lock_release_as(x.l, B));
        }
    }
    assert_int_equal(x.inside, 0);
    assert_true(cancelled > 0);
    print_message("cancelled %d, completed %d\n", cancelled, acquired);
    finish(&x);
}

/* Closing the client on its loop completes a waiting request with
 * RDL_ECLOSED (during the call, as documented) and frees every handle. */
static void test_async_close_completes_pending(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *ch = rdlt_client(s);
    rdl_lock_t *lh = rdlt_lock(ch, "close");
    actx x;
    (void)state;

    setup(&x, s, "close");
    rdlt_assert_ok(rdl_lock_acquire_as(lh, A, 0, 30000));
    x.wait_ms = RDL_WAIT_FOREVER;
    rdlt_loop_call(x.lp, do_acquire, &x);
    rdlt_assert_ok(x.rc);
    rdlt_sleep_ms(200);
    rdlt_loop_call(x.lp, do_close, &x);
    rdlt_assert_ok(x.rc);
    wait_done(&x, 1000);
    rdlt_assert_rc(x.status, RDL_ECLOSED);
    assert_int_equal(x.calls, 1);
    rdlt_loop_call(x.lp, do_acquire, &x);
    rdlt_assert_rc(x.rc, RDL_ECLOSED);
    rdlt_sleep_ms(100);
    assert_int_equal(x.calls, 1);
    finish(&x);
}

typedef struct bare {
    rdl_client_t *c;
    int rc;
} bare;

static void do_connect_bare(void *arg)
{
    bare *b = arg;
    b->rc = rdl_client_connect(b->c);
}

static void do_close_bare(void *arg)
{
    bare *b = arg;
    b->rc = rdl_client_close(b->c);
}

/* client.h: on the caller's loop, rdl_client_close() may run on the loop
 * thread and rdl_client_free() may follow at once; free may be called from
 * any thread (as close). Freeing from another thread while the loop closes
 * the handles must neither touch freed memory nor leak the client (the
 * sanitizer build checks both). */
static void test_async_free_from_other_thread_after_close(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_loop *lp = rdlt_loop_start();
    int i;
    (void)state;

    for (i = 0; i < 200; i++) {
        bare b = {NULL, -999};
        rdlt_assert_ok(rdl_client_new(&b.c));
        rdlt_assert_ok(rdl_client_set_url(b.c, rdlt_server_url(s)));
        rdlt_assert_ok(rdl_client_set_loop(b.c, rdlt_loop_uv(lp)));
        rdlt_loop_call(lp, do_connect_bare, &b);
        rdlt_assert_ok(b.rc);
        if (i % 2)
            rdlt_sleep_ms(1); /* connected, or about to */
        rdlt_loop_call(lp, do_close_bare, &b);
        rdlt_assert_ok(b.rc);
        rdl_client_free(b.c); /* main thread, while the loop runs */
    }
    rdlt_sleep_ms(100);
    assert_int_equal(rdlt_loop_stop(lp), 0);
}

static void do_bad_arguments(void *arg)
{
    actx *x = arg;
    rdl_req_t req; /* never started: every call below must refuse it */
    int *rc = &x->rc;

    memset(&req, 0, sizeof(req));
    *rc = 0;
#define EXPECT(call, want)                                                     \
    do {                                                                       \
        if (*rc == 0 && (call) != (want))                                      \
            *rc = __LINE__;                                                    \
    } while (0)
    EXPECT(rdl_lock_acquire_async(NULL, x->l, B, 0, 1000, on_done), RDL_EINVAL);
    EXPECT(rdl_lock_acquire_async(&req, NULL, B, 0, 1000, on_done), RDL_EINVAL);
    EXPECT(rdl_lock_acquire_async(&req, x->l, B, 0, 1000, NULL), RDL_EINVAL);
    EXPECT(rdl_lock_acquire_async(&req, x->l, B, -2, 1000, on_done),
           RDL_EINVAL);
    EXPECT(rdl_lock_acquire_async(&req, x->l, B, 0, 0, on_done), RDL_EINVAL);
    EXPECT(rdl_lock_acquire_async(&req, x->l, B, 0, -5, on_done), RDL_EINVAL);
    EXPECT(rdl_lock_release_async(NULL, x->l, B, on_done), RDL_EINVAL);
    EXPECT(rdl_lock_release_async(&req, NULL, B, on_done), RDL_EINVAL);
    EXPECT(rdl_lock_release_async(&req, x->l, B, NULL), RDL_EINVAL);
    EXPECT(rdl_req_cancel(NULL), RDL_EINVAL);
    EXPECT(rdl_req_cancel(&req), RDL_EINVAL);
    /* A pending request cannot be submitted again. The pending one lives in
     * x, since it must outlive this function until its callback. */
    memset(&x->req, 0, sizeof(x->req));
    x->req.data = x;
    EXPECT(rdl_lock_acquire_async(&x->req, x->l, B, 10000, 1000, on_done), 0);
    EXPECT(rdl_lock_acquire_async(&x->req, x->l, B, 10000, 1000, on_done),
           RDL_EINVAL);
    EXPECT(rdl_lock_release_async(&x->req, x->l, B, on_done), RDL_EINVAL);
    EXPECT(rdl_req_cancel(&x->req), 0);
#undef EXPECT
}

static void test_async_bad_arguments(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *ch = rdlt_client(s);
    rdl_lock_t *lh = rdlt_lock(ch, "bad");
    actx x;
    (void)state;

    setup(&x, s, "bad");
    rdlt_assert_ok(rdl_lock_acquire_as(lh, A, 0, 30000));
    rdlt_loop_call(x.lp, do_bad_arguments, &x);
    if (x.rc != 0)
        fail_msg("unexpected result at test_async.c:%d", x.rc);
    /* Only the request that started calls back (RDL_ECANCELED). */
    wait_done(&x, 5000);
    rdlt_assert_rc(x.status, RDL_ECANCELED);
    rdlt_sleep_ms(100);
    assert_int_equal(x.calls, 1);
    assert_int_equal(x.inside, 0);
    assert_int_equal(rdlt_info(x.l, B).held_by_owner, 0);
    assert_int_equal(rdlt_info(lh, A).hold_count, 1);
    finish(&x);
}

/* ---- many requests ----------------------------------------------------- */

#define MANY 50

typedef struct many {
    rdlt_loop *lp;
    rdl_lock_t *l;
    rdl_req_t acq[MANY];
    rdl_req_t rel[MANY];
    uint64_t order[MANY]; /* tokens in the order of the callbacks */
    int acquired;
    int released;
    int failures;
    int first_failure;
    int done;
} many;

static void fail_many(many *m, int status)
{
    if (m->failures++ == 0)
        m->first_failure = status;
}

static void on_released(rdl_req_t *req, int status)
{
    many *m = req->data;
    if (status != 0)
        fail_many(m, status);
    if (++m->released == MANY)
        __atomic_store_n(&m->done, 1, __ATOMIC_RELEASE);
}

static void on_acquired(rdl_req_t *req, int status)
{
    many *m = req->data;
    int i = (int)(req - m->acq);
    if (status != 0) {
        fail_many(m, status);
        on_released(&m->rel[i], 0);
        return;
    }
    m->order[m->acquired++] = req->fencing_token;
    m->rel[i].data = m;
    if (rdl_lock_release_async(&m->rel[i], m->l, (rdl_owner_t)(100 + i),
                               on_released) != 0) {
        fail_many(m, RDL_EPROTO);
        on_released(&m->rel[i], 0);
    }
}

static void start_many(void *arg)
{
    many *m = arg;
    int i;
    for (i = 0; i < MANY; i++) {
        m->acq[i].data = m;
        if (rdl_lock_acquire_async(&m->acq[i], m->l, (rdl_owner_t)(100 + i),
                                   20000, 5000, on_acquired) != 0) {
            fail_many(m, RDL_EPROTO);
            on_released(&m->rel[i], 0);
        }
    }
}

/* 50 owners queue on one lock at once; each releases in its callback.
 * Every one gets it, one after the other, with increasing tokens. */
static void test_async_many_waiters_hand_over(void **state)
{
    rdlt_server *s = rdlt_server_start();
    static many m;
    actx x;
    int i;
    (void)state;

    setup(&x, s, "many");
    memset(&m, 0, sizeof(m));
    m.lp = x.lp;
    m.l = x.l;
    rdlt_loop_call(x.lp, start_many, &m);
    if (!rdlt_wait_flag(&m.done, 30000))
        fail_msg("after 30 s: %d acquired, %d released", m.acquired,
                 m.released);
    if (m.failures > 0)
        fail_msg("%d failures, the first %s", m.failures,
                 rdl_err_name(m.first_failure));
    assert_int_equal(m.acquired, MANY);
    for (i = 1; i < MANY; i++)
        if (m.order[i] <= m.order[i - 1])
            fail_msg("token %d (%llu) not above the one before (%llu)", i,
                     (unsigned long long)m.order[i],
                     (unsigned long long)m.order[i - 1]);
    assert_int_equal(rdlt_info(x.l, B).locked, 0);
    finish(&x);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_async_acquire_and_release),
    RDLT_TEST(test_async_quick_outcomes_not_inside_call),
    RDLT_TEST(test_async_blocking_call_on_loop_thread),
    RDLT_TEST(test_async_cancel_waiting_acquisition),
    RDLT_TEST(test_async_cancel_never_leaves_lock_held),
    RDLT_TEST(test_async_close_completes_pending),
    RDLT_TEST(test_async_free_from_other_thread_after_close),
    RDLT_TEST(test_async_bad_arguments),
    RDLT_TEST(test_async_many_waiters_hand_over),
};

RDLT_MAIN(tests)
