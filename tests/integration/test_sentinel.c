/* Redis Sentinel (redis+sentinel://): a master, two replicas and three
 * sentinels of each test's own (tests/support/sentinel.c). The client must
 * find the master through any sentinel it can reach, say clearly when it
 * cannot, and follow a failover: holds are kept or reported lost, never
 * silently gone, and waiters are served by the new master. */
#include <signal.h>
#include <string.h>

#include "rdlt.h"

#define A ((rdl_owner_t)1)
#define B ((rdl_owner_t)2)

static rdl_client_t *sentinel_client(const char *url)
{
    rdl_client_t *c = rdlt_client_new(url);
    int rc;
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 2000));
    rc = rdl_client_connect(c);
    if (rc != 0)
        fail_msg("connect %s: %s: %s", url, rdl_err_name(rc),
                 rdl_client_errmsg(c));
    return c;
}

/* The lock's hash is on the master the sentinels name, not elsewhere. */
static void test_sentinel_lock_on_master(void **state)
{
    rdlt_sentinel *sn = rdlt_sentinel_start(NULL);
    rdl_client_t *c = sentinel_client(rdlt_sentinel_url(sn));
    rdl_lock_t *l = rdlt_lock(c, "s");
    rdlt_server *m = rdlt_sentinel_master(sn);
    redisReply *r;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000));
    r = rdlt_cmd(m, "HGET rdl:lock:{s} o");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    freeReplyObject(r);
    rdlt_assert_rc(rdl_lock_acquire_as(l, B, 0, 10000), RDL_EBUSY);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
}

static int count_named(const rdl_lock_entry_t *e, void *data)
{
    if (strcmp(e->name, "listed") == 0 && strcmp(e->kind, "lock") == 0)
        (*(int *)data)++;
    return 0;
}

/* rdl_client_list_locks() scans the master the sentinels name, not a
 * replica, and after a failover the new master. */
static void test_sentinel_list_locks(void **state)
{
    rdlt_sentinel *sn = rdlt_sentinel_start(NULL);
    rdl_client_t *c = sentinel_client(rdlt_sentinel_url(sn));
    rdl_lock_t *l = rdlt_lock(c, "listed");
    rdlt_server *old = rdlt_sentinel_master(sn), *now;
    size_t masters = 0;
    int64_t end;
    redisReply *r;
    int seen = 0, i, rc;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 60000));
    rdlt_assert_ok(rdl_client_master_count(c, &masters));
    assert_int_equal(masters, 1);
    rdlt_assert_ok(rdl_client_list_locks(c, NULL, count_named, &seen));
    assert_int_equal(seen, 1);
    assert_true(rdlt_cmd_calls(old, "scan") >= 1);
    for (i = 0; i < RDLT_SENTINEL_DATA; i++)
        if (rdlt_sentinel_data(sn, i) != old)
            assert_int_equal(rdlt_cmd_calls(rdlt_sentinel_data(sn, i), "scan"),
                             0);
    /* The hold reached the replicas before the switch. */
    r = rdlt_cmd(old, "WAIT 2 2000");
    assert_int_equal(r->integer, 2);
    freeReplyObject(r);
    now = rdlt_sentinel_failover(sn);
    /* A listing cut by the switch (its connection moved) may fail; the
     * client then follows the new master within seconds. */
    end = rdlt_now_ms() + 10000;
    do {
        long long before = rdlt_cmd_calls(now, "scan");
        seen = 0;
        rc = rdl_client_list_locks(c, NULL, count_named, &seen);
        if (rc == 0 && seen == 1 && rdlt_cmd_calls(now, "scan") > before)
            break;
        rdlt_sleep_ms(100);
    } while (rdlt_now_ms() < end);
    if (rc != 0 || seen != 1 || rdlt_cmd_calls(now, "scan") == 0)
        fail_msg("after the failover: %s (%s), listed %d", rdl_err_name(rc),
                 rdl_client_errmsg(c), seen);
}

/* Errors name the problem: an unknown master name is RDL_ENOMASTER; no
 * sentinel reachable is RDL_ECONNREFUSED naming each address tried. */
static void test_sentinel_errors(void **state)
{
    rdlt_sentinel *sn = rdlt_sentinel_start(NULL);
    rdl_client_t *c;
    char url[256];
    int rc, port = rdlt_server_port(rdlt_sentinel_node(sn, 0));
    (void)state;

    snprintf(url, sizeof(url), "redis+sentinel://127.0.0.1:%d/nosuchmaster",
             port);
    c = rdlt_client_new(url);
    rdlt_assert_rc(rdl_client_connect(c), RDL_ENOMASTER);
    assert_non_null(strstr(rdl_client_errmsg(c), "nosuchmaster"));

    rdlt_server_stop(rdlt_sentinel_node(sn, 0));
    snprintf(url, sizeof(url),
             "redis+sentinel://127.0.0.1:%d,127.0.0.1:1/" RDLT_SENTINEL_NAME,
             port);
    c = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 1000, 1000));
    rc = rdl_client_connect(c);
    rdlt_assert_rc(rc, RDL_ECONNREFUSED);
    snprintf(url, sizeof(url), "127.0.0.1:%d", port);
    assert_non_null(strstr(rdl_client_errmsg(c), url));
    assert_non_null(strstr(rdl_client_errmsg(c), "127.0.0.1:1"));
}

/* One sentinel down: the others answer. */
static void test_sentinel_one_down(void **state)
{
    rdlt_sentinel *sn = rdlt_sentinel_start(NULL);
    rdl_client_t *c;
    rdl_lock_t *l;
    (void)state;
    rdlt_server_stop(rdlt_sentinel_node(sn, 0));
    c = sentinel_client(rdlt_sentinel_url(sn));
    l = rdlt_lock(c, "one-down");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
}

/* The data nodes require a password (the URL's userinfo); the sentinels
 * take none. A wrong password fails the connect with RDL_EAUTH. */
static void test_sentinel_auth(void **state)
{
    rdlt_sentinel *sn = rdlt_sentinel_start("s3cret");
    rdl_client_t *c = sentinel_client(rdlt_sentinel_url(sn));
    rdl_lock_t *l = rdlt_lock(c, "auth");
    char url[256];
    (void)state;
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    snprintf(url, sizeof(url), "redis+sentinel://:wrong@127.0.0.1:%d/%s",
             rdlt_server_port(rdlt_sentinel_node(sn, 1)), RDLT_SENTINEL_NAME);
    c = rdlt_client_new(url);
    rdlt_assert_rc(rdl_client_connect(c), RDL_EAUTH);
}

typedef struct waiter {
    rdl_lock_t *lock;
    int rc;
} waiter;

static void *wait_for_lock(void *arg)
{
    waiter *w = arg;
    w->rc = rdl_lock_acquire_as(w->lock, B, 25000, 10000);
    if (w->rc == 0)
        w->rc = rdl_lock_release_as(w->lock, B);
    return NULL;
}

/* Acquires and releases `l` until its hash shows up on `m`; 1 if that
 * happens within ms. */
static int lands_on(rdl_lock_t *l, rdlt_server *m, int64_t ms)
{
    int64_t deadline = rdlt_now_ms() + ms;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "HGET rdl:lock:{%s} o", rdl_lock_name(l));
    do {
        redisReply *r;
        int there;
        rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000));
        r = rdlt_cmd(m, cmd);
        there = r->type == REDIS_REPLY_STRING;
        freeReplyObject(r);
        rdlt_assert_ok(rdl_lock_release_as(l, A));
        if (there)
            return 1;
        rdlt_sleep_ms(20);
    } while (rdlt_now_ms() < deadline);
    return 0;
}

/* A hold and a waiter across a failover. `kill`: SIGKILL the master; else
 * SENTINEL FAILOVER (the old master keeps accepting writes for seconds:
 * the client must follow +switch-master, not wait for READONLY). The hold
 * is kept or reported lost (RDL_ELOST), never silently gone; the waiter is
 * served on the new master long before the 30 s lease; new acquisitions
 * work and go to the new master. */
static void failover_case(int kill)
{
    rdlt_sentinel *sn = rdlt_sentinel_start(NULL);
    rdl_client_t *c = sentinel_client(rdlt_sentinel_url(sn));
    rdl_client_t *c2 = sentinel_client(rdlt_sentinel_url(sn));
    rdl_lock_t *l = rdlt_lock(c, "fo"), *l2 = rdlt_lock(c2, "fo");
    rdl_lock_t *other = rdlt_lock(c, "fo-other");
    rdlt_server *old = rdlt_sentinel_master(sn), *now;
    waiter w = {l2, -1};
    rdlt_thread *t;
    redisReply *r;
    int rc;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    t = rdlt_thread_start(wait_for_lock, &w);
    while (rdlt_info(l, A).waiters < 1)
        rdlt_sleep_ms(10);
    /* The hold reached the replicas before the switch. */
    r = rdlt_cmd(old, "WAIT 2 2000");
    assert_int_equal(r->integer, 2);
    freeReplyObject(r);
    if (kill) {
        rdlt_server_signal(old, SIGKILL);
        now = rdlt_sentinel_wait_switch(sn, old, 20000);
    } else {
        now = rdlt_sentinel_failover(sn);
    }
    assert_ptr_not_equal(now, old);
    rc = rdl_lock_release_as(l, A);
    if (rc != 0 && rc != RDL_ELOST)
        fail_msg("release after the failover: %s (%s)", rdl_err_name(rc),
                 rdl_client_errmsg(c));
    rdlt_thread_join(t);
    if (w.rc != 0)
        fail_msg("waiter: %s", rdl_err_name(w.rc));
    /* New grants go to the new master within a second of the sentinels
     * agreeing on it (the client follows the leader's +promoted-slave;
     * its periodic check alone runs every 2 s, and the old master still
     * takes writes for seconds). */
    assert_true(lands_on(other, now, 1000));
}

static void test_sentinel_failover(void **state)
{
    (void)state;
    failover_case(0);
}

static void test_sentinel_master_killed(void **state)
{
    (void)state;
    failover_case(1);
}

static void *wait_a_while(void *arg)
{
    waiter *w = arg;
    w->rc = rdl_lock_acquire_as(w->lock, B, 20000, 10000);
    return NULL;
}

/* Closing in every state: with a waiter blocked on a lock (it ends), and a
 * client whose connect failed because no sentinel answered (freed without a
 * leak: ASan runs this too). */
static void test_sentinel_close_states(void **state)
{
    rdlt_sentinel *sn = rdlt_sentinel_start(NULL);
    rdl_client_t *c = sentinel_client(rdlt_sentinel_url(sn));
    rdl_client_t *holder = sentinel_client(rdlt_sentinel_url(sn));
    rdl_lock_t *hl = rdlt_lock(holder, "close");
    rdl_client_t *dead;
    waiter w;
    rdlt_thread *t;
    int i;
    (void)state;

    w.lock = rdlt_lock(c, "close");
    w.rc = -1;
    rdlt_assert_ok(rdl_lock_acquire_as(hl, A, 0, 30000));
    t = rdlt_thread_start(wait_a_while, &w);
    while (rdlt_info(hl, A).waiters < 1)
        rdlt_sleep_ms(10);
    rdlt_assert_ok(rdl_client_close(c));
    rdlt_thread_join(t);
    /* RDL_ECLOSED while it slept; RDL_ECONNLOST if a try of it was written
     * and not answered yet (a retry after its subscription was confirmed):
     * both are what rdl_client_close() documents. */
    if (w.rc != RDL_ECLOSED && w.rc != RDL_ECONNLOST)
        fail_msg("the waiter got %s", rdl_err_name(w.rc));
    rdlt_assert_ok(rdl_lock_release_as(hl, A));

    for (i = 0; i < RDLT_SENTINELS; i++)
        rdlt_server_stop(rdlt_sentinel_node(sn, i));
    dead = rdlt_client_new(rdlt_sentinel_url(sn));
    rdlt_assert_ok(rdl_client_set_timeouts_ms(dead, 500, 500));
    rdlt_assert_rc(rdl_client_connect(dead), RDL_ECONNREFUSED);
    rdlt_client_free(dead);
    /* A connected client keeps working on the master it knows. */
    rdlt_assert_ok(rdl_lock_acquire_as(hl, A, 0, 10000));
    rdlt_assert_ok(rdl_lock_release_as(hl, A));
}

/* The master restarts (without its data): the client reconnects to it,
 * or follows the sentinels if they fail over meanwhile, and locks again. */
static void test_sentinel_master_restart(void **state)
{
    rdlt_sentinel *sn = rdlt_sentinel_start(NULL);
    rdl_client_t *c = sentinel_client(rdlt_sentinel_url(sn));
    rdl_lock_t *l = rdlt_lock(c, "restart");
    rdlt_server *m = rdlt_sentinel_master(sn);
    int64_t deadline;
    int rc = -1;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    rdlt_server_stop(m);
    rdlt_server_restart(m);
    deadline = rdlt_now_ms() + 20000;
    while (rc != 0 && rdlt_now_ms() < deadline) {
        rc = rdl_lock_acquire_as(l, A, 0, 10000);
        if (rc != 0)
            rdlt_sleep_ms(100);
    }
    rdlt_assert_ok(rc);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
}

/* rediss+sentinel://: TLS to the sentinels and the data nodes, across a
 * failover. */
static void test_sentinel_tls(void **state)
{
#ifdef RDL_WITH_TLS
    const rdlt_pki *k = rdlt_pki_make();
    rdlt_sentinel *sn = rdlt_sentinel_start_tls(NULL, k);
    rdl_client_t *c = rdlt_client_new(rdlt_sentinel_url(sn));
    rdl_tls_options_t o = {.ca_file = k->ca};
    rdl_lock_t *l;
    rdlt_server *now;
    int rc;
    (void)state;

    rdlt_assert_ok(rdl_client_set_tls(c, &o));
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 2000));
    rc = rdl_client_connect(c);
    if (rc != 0)
        fail_msg("connect: %s: %s", rdl_err_name(rc), rdl_client_errmsg(c));
    l = rdlt_lock(c, "tls");
    assert_true(lands_on(l, rdlt_sentinel_master(sn), 1000));
    now = rdlt_sentinel_failover(sn);
    assert_true(lands_on(l, now, 1000));
#else
    (void)state;
    skip(); /* a build without TLS: test_url checks rediss is refused */
#endif
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_sentinel_lock_on_master),
    RDLT_TEST(test_sentinel_list_locks),
    RDLT_TEST(test_sentinel_errors),
    RDLT_TEST(test_sentinel_one_down),
    RDLT_TEST(test_sentinel_auth),
    RDLT_TEST(test_sentinel_failover),
    RDLT_TEST(test_sentinel_master_killed),
    RDLT_TEST(test_sentinel_tls),
    RDLT_TEST(test_sentinel_close_states),
    RDLT_TEST(test_sentinel_master_restart),
};

RDLT_MAIN(tests)
