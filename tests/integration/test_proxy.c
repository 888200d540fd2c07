/* The fault proxy (tests/support/proxy.c) with real rdl clients: what it
 * relays works, and each fault it injects has the effect its documentation
 * promises, as the client and the server see it. Later fault tests rely
 * on these effects, so they are checked here once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdlt.h"

#define A ((rdl_owner_t)1)
#define B ((rdl_owner_t)2)

/* How many script calls (EVALSHA or FCALL) the server ran since the last
 * CONFIG RESETSTAT. */
static long long server_evalsha(rdlt_server *s)
{
    return rdlt_script_calls(s);
}

static void reset_stats(rdlt_server *s)
{
    freeReplyObject(rdlt_cmd(s, "CONFIG RESETSTAT"));
}

/* Loads the lock scripts on the server (the first EVALSHA of each is
 * answered NOSCRIPT and sent again as EVAL), so later counts see one
 * EVALSHA per call. */
static void warm_up(rdl_client_t *c)
{
    rdl_lock_t *l = rdlt_lock(c, "warm-up");
    rdlt_assert_ok(rdl_lock_acquire(l, 0, 5000));
    (void)rdlt_info(l, rdl_owner_self());
    rdlt_assert_ok(rdl_lock_release(l));
    rdlt_lock_free(l);
}

typedef struct waiter {
    rdl_lock_t *lock;
    rdl_owner_t owner;
    int64_t wait_ms;
    int rc;
    int done;
    int64_t done_at;
} waiter;

static void *wait_thread(void *arg)
{
    waiter *w = arg;
    w->rc = rdl_lock_acquire_as(w->lock, w->owner, w->wait_ms, 5000);
    w->done_at = rdlt_now_ms();
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Waits until the waiter's subscription went through the proxy and it
 * has settled into its sleep. */
static void wait_subscribed(rdlt_proxy *p)
{
    int64_t deadline = rdlt_now_ms() + 5000;
    while (rdlt_proxy_count(p, "SUBSCRIBE") +
               rdlt_proxy_count(p, "SSUBSCRIBE") ==
           0) {
        if (rdlt_now_ms() > deadline)
            fail_msg("the waiter never subscribed through the proxy");
        rdlt_sleep_ms(2);
    }
    rdlt_sleep_ms(300);
}

/* Locks work through the proxy, and a waiter is woken by the release
 * message on its subscriber connection, well before its sleep would end. */
static void test_proxy_pass_through(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *ch = rdlt_proxy_client(p), *cw = rdlt_proxy_client(p);
    rdl_lock_t *lh = rdlt_lock(ch, "pass"), *lw = rdlt_lock(cw, "pass");
    waiter w = {lw, B, 10000, -999, 0, 0};
    int64_t released;
    char *log;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(lh, A, 0, 30000));
    assert_int_equal(rdlt_info(lh, A).hold_count, 1);
    rdlt_thread_start(wait_thread, &w);
    wait_subscribed(p);
    assert_int_equal(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 0);
    /* Two command connections and the waiter's subscriber connection. */
    assert_int_equal(rdlt_proxy_connections(p), 3);
    released = rdlt_now_ms();
    rdlt_assert_ok(rdl_lock_release_as(lh, A));
    assert_true(rdlt_wait_flag(&w.done, 5000));
    rdlt_assert_ok(w.rc);
    rdlt_assert_between(w.done_at - released, 0, 3000);
    assert_int_equal(rdlt_info(lw, B).hold_count, 1);
    rdlt_assert_ok(rdl_lock_release_as(lw, B));

    log = rdlt_proxy_log(p);
    assert_non_null(strstr(log, "CLIENT"));
    assert_true(strstr(log, "EVALSHA") != NULL || strstr(log, "FCALL") != NULL);
    free(log);
    assert_true(rdlt_proxy_count(p, "evalsha") >= 4);
}

/* The acquire's reply is lost after the server applied it: rdl retries
 * with the same request id, and the lock is held once, not twice. */
static void test_proxy_drop_reply(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *c = rdlt_proxy_client(p);
    rdl_lock_t *l = rdlt_lock(c, "dropped-reply");
    unsigned before;
    (void)state;

    warm_up(c);
    reset_stats(s);
    before = rdlt_proxy_count(p, "EVALSHA");
    rdlt_proxy_drop_reply(p, "EVALSHA", "dropped-reply", 1);
    rdlt_assert_ok(rdl_lock_acquire(l, 5000, 30000));
    assert_int_equal(rdlt_proxy_count(p, "EVALSHA") - before, 2);
    /* Both reached the server: the first was applied, the retry told. */
    assert_int_equal(server_evalsha(s), 2);
    assert_int_equal(rdlt_info(l, rdl_owner_self()).hold_count, 1);
    rdlt_assert_ok(rdl_lock_release(l));
    rdlt_assert_rc(rdl_lock_release(l), RDL_ENOTHELD);
}

/* The acquire is lost before the server saw it: the retry is the only
 * one the server runs. */
static void test_proxy_drop_request(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *c = rdlt_proxy_client(p);
    rdl_lock_t *l = rdlt_lock(c, "dropped-request");
    unsigned before;
    (void)state;

    warm_up(c);
    reset_stats(s);
    before = rdlt_proxy_count(p, "EVALSHA");
    rdlt_proxy_drop_request(p, "EVALSHA", "dropped-request", 1);
    rdlt_assert_ok(rdl_lock_acquire(l, 5000, 30000));
    assert_int_equal(rdlt_proxy_count(p, "EVALSHA") - before, 2);
    assert_int_equal(server_evalsha(s), 1);
    assert_int_equal(rdlt_info(l, rdl_owner_self()).hold_count, 1);
    rdlt_assert_ok(rdl_lock_release(l));
    rdlt_assert_rc(rdl_lock_release(l), RDL_ENOTHELD);
}

/* A delay on subscriber connections holds the release message back: the
 * waiter cannot wake before it is relayed, and wakes soon after. Its own
 * sleep (up to the holder's 30 s lease, capped by its 10 s budget) cannot
 * end it earlier. */
static void test_proxy_delay_subscriber(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *ch = rdlt_proxy_client(p), *cw = rdlt_proxy_client(p);
    rdl_lock_t *lh = rdlt_lock(ch, "slow-sub"), *lw = rdlt_lock(cw, "slow-sub");
    waiter w = {lw, B, 10000, -999, 0, 0};
    int64_t released, replied;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(lh, A, 0, 30000));
    rdlt_thread_start(wait_thread, &w);
    wait_subscribed(p);
    rdlt_proxy_delay(p, RDLT_PROXY_SUB, 1500);
    released = rdlt_now_ms();
    /* The command connection is not delayed: the release's reply comes
     * back before the message it published reaches the waiter. */
    rdlt_assert_ok(rdl_lock_release_as(lh, A));
    replied = rdlt_now_ms();
    assert_true(rdlt_wait_flag(&w.done, 10000));
    rdlt_assert_ok(w.rc);
    assert_true(w.done_at > replied);
    rdlt_assert_between(w.done_at - released, 1500, 1500 + 4000);
}

/* A one-shot reply delay: shorter than the command timeout, the call only
 * takes longer; longer, the call times out and rdl's retry answers. */
static void test_proxy_delay_reply(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *c = rdlt_proxy_client(p);
    rdl_lock_t *l = rdlt_lock(c, "slow-reply");
    unsigned before;
    int64_t t0;
    (void)state;

    warm_up(c);
    rdlt_assert_ok(rdl_lock_acquire(l, 0, 30000));

    before = rdlt_proxy_count(p, "EVALSHA");
    rdlt_proxy_delay_reply(p, "EVALSHA", "slow-reply", 500, 1);
    t0 = rdlt_now_ms();
    assert_int_equal(rdlt_info(l, rdl_owner_self()).hold_count, 1);
    rdlt_assert_between(rdlt_now_ms() - t0, 500, 500 + 3000);
    assert_int_equal(rdlt_proxy_count(p, "EVALSHA") - before, 1);

    before = rdlt_proxy_count(p, "EVALSHA");
    rdlt_proxy_delay_reply(p, "EVALSHA", "slow-reply", 2500, 1);
    t0 = rdlt_now_ms();
    assert_int_equal(rdlt_info(l, rdl_owner_self()).hold_count, 1);
    rdlt_assert_between(rdlt_now_ms() - t0, 1000, 1000 + 4000);
    assert_int_equal(rdlt_proxy_count(p, "EVALSHA") - before, 2);
    rdlt_assert_ok(rdl_lock_release(l));
}

/* A blackhole makes an acquire time out (its retries, on connections whose
 * handshake never completes, cannot tell the outcome) without reaching
 * the server; once it is lifted, the client reconnects and goes on. */
static void test_proxy_blackhole(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *c = rdlt_proxy_client(p);
    rdl_lock_t *l = rdlt_lock(c, "partitioned");
    rdl_lock_t *l2 = rdlt_lock(c, "unreached");
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire(l, 0, 30000));
    rdlt_proxy_blackhole(p, 1);
    rdlt_assert_rc(rdl_lock_acquire(l2, 0, 30000), RDL_ECMDTIMEOUT);
    assert_int_equal(rdlt_count_keys(s, "*unreached*"), 0);
    rdlt_proxy_blackhole(p, 0);
    assert_int_equal(rdlt_info(l, rdl_owner_self()).hold_count, 1);
    rdlt_assert_ok(rdl_lock_acquire(l2, 0, 30000));
    rdlt_assert_ok(rdl_lock_release(l2));
    rdlt_assert_ok(rdl_lock_release(l));
}

typedef struct connector {
    rdl_client_t *c;
    int rc;
    int done;
} connector;

static void *connect_thread(void *arg)
{
    connector *k = arg;
    k->rc = rdl_client_connect(k->c);
    __atomic_store_n(&k->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Held new connections: the client's connect waits for its handshake
 * until they are let through, then completes. */
static void test_proxy_hold_new(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    connector k = {NULL, -999, 0};
    rdl_lock_t *l;
    (void)state;

    k.c = rdlt_client_new(rdlt_proxy_url(p));
    rdlt_assert_ok(rdl_client_set_timeouts_ms(k.c, 10000, 1000));
    rdlt_proxy_hold_new(p, 1);
    rdlt_thread_start(connect_thread, &k);
    rdlt_sleep_ms(500);
    assert_int_equal(__atomic_load_n(&k.done, __ATOMIC_ACQUIRE), 0);
    assert_int_equal(rdlt_proxy_connections(p), 1);
    assert_int_equal(rdlt_proxy_count(p, "CLIENT"), 0);
    rdlt_proxy_hold_new(p, 0);
    assert_true(rdlt_wait_flag(&k.done, 5000));
    rdlt_assert_ok(k.rc);
    assert_int_equal(rdlt_proxy_count(p, "CLIENT"), 1);
    l = rdlt_lock(k.c, "held");
    rdlt_assert_ok(rdl_lock_acquire(l, 0, 30000));
    rdlt_assert_ok(rdl_lock_release(l));
}

/* Reset, with a FIN and with a reset: the client reconnects both times and
 * goes on. */
static void test_proxy_reset(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *c = rdlt_proxy_client(p);
    rdl_lock_t *l = rdlt_lock(c, "reset");
    int rst;
    (void)state;

    for (rst = 0; rst <= 1; rst++) {
        unsigned hello = rdlt_proxy_count(p, "CLIENT");
        rdlt_assert_ok(rdl_lock_acquire(l, 0, 30000));
        assert_int_equal(rdlt_proxy_connections(p), 1);
        rdlt_proxy_reset(p, rst);
        assert_int_equal(rdlt_proxy_connections(p), 0);
        /* rdl reconnects by itself and runs its handshake again. */
        assert_int_equal(rdlt_proxy_wait_count(p, "CLIENT", hello + 1, 5000),
                         0);
        assert_int_equal(rdlt_info(l, rdl_owner_self()).hold_count, 1);
        rdlt_assert_ok(rdl_lock_release(l));
    }
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_proxy_pass_through), RDLT_TEST(test_proxy_drop_reply),
    RDLT_TEST(test_proxy_drop_request), RDLT_TEST(test_proxy_delay_subscriber),
    RDLT_TEST(test_proxy_delay_reply),  RDLT_TEST(test_proxy_blackhole),
    RDLT_TEST(test_proxy_hold_new),     RDLT_TEST(test_proxy_reset),
};

RDLT_MAIN(tests)
