/* MultiLock and RedLock (src/multilock): all-or-nothing over parts of any
 * kind, no deadlock between overlapping multilocks, quorum over independent
 * servers. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdlt.h"

#define A ((rdl_owner_t)1)
#define B ((rdl_owner_t)2)

static void free_lock(void *l)
{
    rdl_lock_free(l);
}

static rdl_lock_t *multi(rdl_lock_t *const *parts, size_t n, int red)
{
    rdl_lock_t *ml = NULL;
    rdlt_assert_ok(red ? rdl_redlock_new(parts, n, &ml)
                       : rdl_multilock_new(parts, n, &ml));
    rdlt_defer(free_lock, ml);
    return ml;
}

/* ---- MultiLock ---------------------------------------------------------------- */

static void test_multilock_all_or_nothing(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s), *other = rdlt_client(s);
    rdl_lock_t *fair = NULL;
    rdl_lock_t *parts[3], *ml, *ob;
    (void)state;

    parts[0] = rdlt_lock(c, "order:1");
    rdlt_assert_ok(rdl_fairlock_new(c, "payment:1", &fair));
    rdlt_defer(free_lock, fair);
    parts[1] = fair;
    parts[2] = rdlt_lock(c, "stock:1");
    ml = multi(parts, 3, 0);
    assert_string_equal(rdl_lock_name(ml), "order:1+payment:1+stock:1");

    rdlt_assert_ok(rdl_lock_acquire_as(ml, A, 0, 5000));
    assert_int_equal(rdlt_info(parts[0], A).hold_count, 1);
    assert_int_equal(rdlt_info(parts[1], A).hold_count, 1);
    assert_int_equal(rdlt_info(parts[2], A).hold_count, 1);
    assert_true(rdlt_info(ml, A).held_by_owner);
    assert_true(rdl_multilock_part_token(ml, A, 0) > 0);
    assert_true(rdl_multilock_part_token(ml, A, 2) > 0);
    assert_true(rdl_lock_fencing_token(ml, A) > 0);
    assert_true(rdl_lock_valid_ms(ml, A) > 4000);
    rdlt_assert_rc(rdl_lock_acquire_as(ml, B, 0, 5000), RDL_EBUSY);
    rdlt_assert_ok(rdl_lock_release_as(ml, A));
    assert_int_equal(rdlt_info(parts[1], A).locked, 0);
    rdlt_assert_rc(rdl_lock_release_as(ml, A), RDL_ENOTHELD);

    /* A part held elsewhere: nothing is left held after the budget. */
    ob = rdlt_lock(other, "stock:1");
    rdlt_assert_ok(rdl_lock_acquire_as(ob, B, 0, 5000));
    rdlt_assert_rc(rdl_lock_acquire_as(ml, A, 300, 5000), RDL_ETIMEDOUT);
    assert_int_equal(rdlt_info(parts[0], A).locked, 0);
    assert_int_equal(rdlt_info(parts[1], A).locked, 0);
    assert_non_null(strstr(rdl_client_errmsg(c), "stock:1"));
    rdlt_assert_rc(rdl_lock_acquire_as(ml, A, 0, 5000), RDL_EBUSY);
    assert_int_equal(rdlt_info(parts[0], A).locked, 0);
    rdlt_assert_ok(rdl_lock_release_as(ob, B));
}

/* Two multilocks over overlapping sets, listed in different orders, taken
 * by many threads: no deadlock, and never two holders of one part. */
typedef struct shared {
    rdl_lock_t *ml[2];
    int inside[3]; /* holders per resource, checked atomically */
    int overlap, failures;
} shared;

typedef struct worker {
    shared *sh;
    int which;
} worker;

static const int uses[2][3] = {{1, 1, 0}, {1, 1, 1}};

static void *work(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    int i, r;
    for (i = 0; i < 40; i++) {
        rdl_lock_t *ml = sh->ml[(w->which + i) % 2];
        const int *u = uses[(w->which + i) % 2];
        if (rdl_lock_acquire(ml, 20000, 5000) != 0) {
            __atomic_add_fetch(&sh->failures, 1, __ATOMIC_RELAXED);
            continue;
        }
        for (r = 0; r < 3; r++)
            if (u[r] &&
                __atomic_add_fetch(&sh->inside[r], 1, __ATOMIC_ACQ_REL) != 1)
                __atomic_add_fetch(&sh->overlap, 1, __ATOMIC_RELAXED);
        rdlt_sleep_ms(1);
        for (r = 0; r < 3; r++)
            if (u[r])
                __atomic_sub_fetch(&sh->inside[r], 1, __ATOMIC_ACQ_REL);
        if (rdl_lock_release(ml) != 0)
            __atomic_add_fetch(&sh->failures, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void test_multilock_overlapping_sets_no_deadlock(void **state)
{
    enum { THREADS = 6 };
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c1 = rdlt_client(s), *c2 = rdlt_client(s);
    rdl_lock_t *x[3], *y[3];
    shared sh;
    worker w[THREADS];
    rdlt_thread *t[THREADS];
    int i;
    (void)state;

    memset(&sh, 0, sizeof(sh));
    x[0] = rdlt_lock(c1, "ra");
    x[1] = rdlt_lock(c1, "rb");
    /* The second set names the same locks in the other order, through
     * another client. */
    y[0] = rdlt_lock(c2, "rc");
    y[1] = rdlt_lock(c2, "rb");
    y[2] = rdlt_lock(c2, "ra");
    sh.ml[0] = multi(x, 2, 0);
    sh.ml[1] = multi(y, 3, 0);
    for (i = 0; i < THREADS; i++) {
        w[i] = (worker){&sh, i};
        t[i] = rdlt_thread_start(work, &w[i]);
    }
    for (i = 0; i < THREADS; i++)
        rdlt_thread_join(t[i]);
    assert_int_equal(sh.failures, 0);
    assert_int_equal(sh.overlap, 0);
    assert_int_equal(rdlt_count_held(s, "rdl:lock:*"), 0);
}

typedef struct lost_log {
    int count, reason;
} lost_log;

static void on_lost(rdl_lock_t *lock, rdl_owner_t owner, int reason, void *data)
{
    lost_log *log = data;
    (void)lock;
    (void)owner;
    log->reason = reason;
    __atomic_add_fetch(&log->count, 1, __ATOMIC_RELEASE);
}

/* A part lost under an auto-leased multilock: the callback runs once and
 * the release says RDL_ELOST. */
static void test_multilock_part_lost(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client_new(rdlt_server_url(s)), *other;
    rdl_lock_t *parts[2], *ml;
    lost_log log = {0, 0};
    (void)state;

    rdlt_assert_ok(rdl_client_set_watchdog_ms(c, 300));
    rdlt_assert_ok(rdl_client_connect(c));
    other = rdlt_client(s);
    parts[0] = rdlt_lock(c, "lost-a");
    parts[1] = rdlt_lock(c, "lost-b");
    ml = multi(parts, 2, 0);
    rdlt_assert_ok(rdl_lock_set_lost_cb(ml, on_lost, &log));
    rdlt_assert_ok(rdl_lock_acquire_as(ml, A, 0, RDL_LEASE_AUTO));
    rdlt_sleep_ms(700); /* renewed past two leases */
    assert_true(rdlt_info(ml, A).held_by_owner);
    rdlt_assert_ok(rdl_lock_force_release(rdlt_lock(other, "lost-b")));
    if (!rdlt_wait_flag(&log.count, 1000))
        fail_msg("no lost callback");
    rdlt_sleep_ms(300);
    assert_int_equal(log.count, 1);
    rdlt_assert_rc(log.reason, RDL_ELOST);
    rdlt_assert_rc(rdl_lock_release_as(ml, A), RDL_ELOST);
    assert_int_equal(rdlt_info(parts[0], A).locked, 0);
}

/* Plain locks of one slot on one client: one script call takes them all,
 * atomically; a part held elsewhere is waited for, then all are taken. */
typedef struct late_release {
    rdl_lock_t *lock;
    int rc;
} late_release;

static void *release_later(void *arg)
{
    late_release *lr = arg;
    rdlt_sleep_ms(200);
    lr->rc = rdl_lock_release_as(lr->lock, B);
    return NULL;
}

static void test_multilock_same_slot_one_call(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s), *other = rdlt_client(s);
    rdl_lock_t *parts[3], *ml, *ob;
    rdl_client_stats_t st0, st1;
    late_release lr;
    rdlt_thread *t;
    (void)state;

    parts[0] = rdlt_lock(c, "{order:7}:stock");
    parts[1] = rdlt_lock(c, "{order:7}:payment");
    parts[2] = rdlt_lock(c, "{order:7}:invoice");
    ml = multi(parts, 3, 0);
    rdlt_assert_ok(rdl_client_stats(c, &st0));
    rdlt_assert_ok(rdl_lock_acquire_as(ml, A, 0, 5000));
    rdlt_assert_ok(rdl_client_stats(c, &st1));
    assert_int_equal(st1.scripts - st0.scripts, 1);
    assert_int_equal(rdlt_info(parts[1], A).hold_count, 1);
    assert_true(rdl_multilock_part_token(ml, A, 2) > 0);
    /* Re-entering counts once per part. */
    rdlt_assert_ok(rdl_lock_acquire_as(ml, A, 0, 5000));
    assert_int_equal(rdlt_info(parts[0], A).hold_count, 2);
    rdlt_assert_ok(rdl_lock_release_as(ml, A));
    rdlt_assert_ok(rdl_lock_release_as(ml, A));
    assert_int_equal(rdlt_count_held(s, "rdl:lock:*"), 0);

    /* A part held elsewhere: nothing taken while it is; all once free. */
    ob = rdlt_lock(other, "{order:7}:payment");
    rdlt_assert_ok(rdl_lock_acquire_as(ob, B, 0, 5000));
    rdlt_assert_rc(rdl_lock_acquire_as(ml, A, 0, 5000), RDL_EBUSY);
    assert_int_equal(rdlt_info(parts[0], A).locked, 0);
    lr.lock = ob;
    lr.rc = -999;
    t = rdlt_thread_start(release_later, &lr);
    rdlt_assert_ok(rdl_lock_acquire_as(ml, A, 5000, 5000));
    rdlt_thread_join(t);
    rdlt_assert_ok(lr.rc);
    assert_int_equal(rdlt_info(parts[0], A).hold_count, 1);
    assert_int_equal(rdlt_info(parts[1], A).hold_count, 1);
    assert_int_equal(rdlt_info(parts[2], A).hold_count, 1);
    rdlt_assert_ok(rdl_lock_release_as(ml, A));
    assert_int_equal(rdlt_count_held(s, "rdl:lock:*"), 0);
}

static void on_req(rdl_req_t *req, int status)
{
    (void)req;
    (void)status;
}

static void test_multilock_bad_input(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *a = rdlt_lock(c, "a"), *b = rdlt_lock(c, "b");
    rdl_lock_t *two[2] = {a, b}, *dup[2] = {a, a}, *null[2] = {a, NULL};
    rdl_lock_t *ml, *nested[2], *out = (rdl_lock_t *)&out;
    rdl_req_t req;
    (void)state;

    rdlt_assert_rc(rdl_multilock_new(NULL, 2, &out), RDL_EINVAL);
    assert_null(out);
    rdlt_assert_rc(rdl_multilock_new(two, 0, &out), RDL_EINVAL);
    rdlt_assert_rc(rdl_multilock_new(two, 2, NULL), RDL_EINVAL);
    rdlt_assert_rc(rdl_multilock_new(dup, 2, &out), RDL_EINVAL);
    rdlt_assert_rc(rdl_multilock_new(null, 2, &out), RDL_EINVAL);
    rdlt_assert_rc(rdl_redlock_new(two, 2, &out), RDL_EINVAL); /* 1 client */
    ml = multi(two, 2, 0);
    nested[0] = ml;
    nested[1] = a;
    rdlt_assert_rc(rdl_multilock_new(nested, 2, &out), RDL_EINVAL);
    rdlt_assert_rc(rdl_lock_acquire_as(ml, A, -5, 1000), RDL_EINVAL);
    memset(&req, 0, sizeof(req));
    rdlt_assert_rc(rdl_lock_acquire_async(&req, ml, A, 0, 1000, on_req),
                   RDL_ENOTSUP);
    rdlt_assert_rc(rdl_lock_release_async(&req, ml, A, on_req), RDL_ENOTSUP);
    assert_int_equal(rdlt_dbsize(s), 0);
}

/* ---- RedLock ------------------------------------------------------------------ */

typedef struct red {
    rdlt_server *s[5];
    rdl_client_t *c[5];
    rdl_lock_t *l[5];
    rdl_lock_t *rl;
} red;

static void red_setup(red *r, int n, const char *name)
{
    int i;
    for (i = 0; i < n; i++) {
        r->s[i] = rdlt_server_start();
        r->c[i] = rdlt_client_new(rdlt_server_url(r->s[i]));
        rdlt_assert_ok(rdl_client_set_timeouts_ms(r->c[i], 500, 500));
        rdlt_assert_ok(rdl_client_connect(r->c[i]));
        r->l[i] = rdlt_lock(r->c[i], name);
    }
    r->rl = multi(r->l, (size_t)n, 1);
}

static int held_on(red *r, int n)
{
    int i, held = 0;
    for (i = 0; i < n; i++)
        held += rdlt_count_held(r->s[i], "rdl:lock:*") > 0;
    return held;
}

static void redlock_all_up(int n)
{
    red r;
    memset(&r, 0, sizeof(r));
    red_setup(&r, n, "red");
    rdlt_assert_ok(rdl_lock_acquire_as(r.rl, A, 0, 5000));
    assert_int_equal(held_on(&r, n), n);
    assert_true(rdl_lock_valid_ms(r.rl, A) > 4000);
    rdlt_assert_rc(rdl_lock_acquire_as(r.rl, B, 0, 5000), RDL_EBUSY);
    rdlt_assert_rc(rdl_lock_acquire_as(r.rl, B, 300, 5000), RDL_ETIMEDOUT);
    print_message("%s\n", rdl_client_errmsg(r.c[0]));
    assert_non_null(strstr(rdl_client_errmsg(r.c[0]), "EBUSY"));
    rdlt_assert_ok(rdl_lock_release_as(r.rl, A));
    assert_int_equal(held_on(&r, n), 0);
    rdlt_assert_ok(rdl_lock_acquire_as(r.rl, B, 0, 5000));
    rdlt_assert_ok(rdl_lock_release_as(r.rl, B));
}

static void test_redlock_all_up_3(void **state)
{
    (void)state;
    redlock_all_up(3);
}

static void test_redlock_all_up_5(void **state)
{
    (void)state;
    redlock_all_up(5);
}

/* A minority of servers down: still works. A majority down: RDL_ENOQUORUM,
 * and nothing is left held on the servers that answered. */
static void redlock_down(int n, int down, int expect)
{
    red r;
    int i;
    memset(&r, 0, sizeof(r));
    red_setup(&r, n, "red-down");
    for (i = 0; i < down; i++)
        rdlt_server_stop(r.s[i]);
    rdlt_assert_rc(rdl_lock_acquire_as(r.rl, A, 0, 5000), expect);
    for (i = down; i < n; i++)
        assert_int_equal(rdlt_count_held(r.s[i], "rdl:lock:*"),
                         expect == 0 ? 1 : 0);
    if (expect == 0) {
        rdlt_assert_ok(rdl_lock_release_as(r.rl, A));
    } else {
        print_message("%s\n", rdl_client_errmsg(r.c[0]));
        assert_non_null(strstr(rdl_client_errmsg(r.c[0]), "needed"));
    }
    for (i = down; i < n; i++)
        assert_int_equal(rdlt_count_held(r.s[i], "rdl:lock:*"), 0);
}

static void test_redlock_minority_down(void **state)
{
    (void)state;
    redlock_down(3, 1, 0);
    rdlt_cleanup();
    redlock_down(5, 2, 0);
}

static void test_redlock_majority_down(void **state)
{
    (void)state;
    redlock_down(3, 2, RDL_ENOQUORUM);
    rdlt_cleanup();
    redlock_down(5, 3, RDL_ENOQUORUM);
}

/* A server stopped while A holds, then back: B never gets a majority. */
static void test_redlock_stopped_node_comes_back(void **state)
{
    red r;
    rdl_client_t *cb[3];
    rdl_lock_t *lb[3], *rb;
    int i;
    (void)state;

    memset(&r, 0, sizeof(r));
    red_setup(&r, 3, "red-back");
    for (i = 0; i < 3; i++) {
        cb[i] = rdlt_client_new(rdlt_server_url(r.s[i]));
        rdlt_assert_ok(rdl_client_set_timeouts_ms(cb[i], 500, 500));
        rdlt_assert_ok(rdl_client_connect(cb[i]));
        lb[i] = rdlt_lock(cb[i], "red-back");
    }
    rb = multi(lb, 3, 1);
    rdlt_assert_ok(rdl_lock_acquire_as(r.rl, A, 0, 10000));
    rdlt_server_signal(r.s[2], SIGSTOP);
    rdlt_assert_rc(rdl_lock_acquire_as(rb, B, 0, 10000), RDL_EBUSY);
    rdlt_server_signal(r.s[2], SIGCONT);
    rdlt_sleep_ms(600); /* the clients reconnect */
    rdlt_assert_rc(rdl_lock_acquire_as(rb, B, 0, 10000), RDL_EBUSY);
    assert_int_equal(held_on(&r, 3), 3);
    rdlt_assert_ok(rdl_lock_release_as(r.rl, A));
    rdlt_assert_ok(rdl_lock_acquire_as(rb, B, 2000, 10000));
    rdlt_assert_ok(rdl_lock_release_as(rb, B));
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_multilock_all_or_nothing),
    RDLT_TEST(test_multilock_overlapping_sets_no_deadlock),
    RDLT_TEST(test_multilock_part_lost),
    RDLT_TEST(test_multilock_bad_input),
    RDLT_TEST(test_multilock_same_slot_one_call),
    RDLT_TEST(test_redlock_all_up_3),
    RDLT_TEST(test_redlock_all_up_5),
    RDLT_TEST(test_redlock_minority_down),
    RDLT_TEST(test_redlock_majority_down),
    RDLT_TEST(test_redlock_stopped_node_comes_back),
};

RDLT_MAIN(tests)
