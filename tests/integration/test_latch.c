/* The count-down latch (src/latch, scripts/latch_*.lua): set only at 0,
 * count down never below 0, await that wakes every waiter of every client
 * with one message and does not poll, expiry, retries that do not count
 * twice, bad input that writes nothing, and the cluster.
 *
 * "Woken by the message" is told from "woke by its capped sleep" by the
 * clients' counters (wakeups) and the server's (INFO commandstats), not by
 * timings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdlt.h"

#define NAME_MAX_BYTES 1024 /* the longest name (as for locks) */
/* How long a latch's hash outlives its expiry (the applied set's window)
 * for rdlt_client()'s 1 s command timeout: 1000 x (3 + 2) + 1000. */
#define WINDOW_MS 6000

static void free_latch(void *l)
{
    rdl_latch_free(l);
}

static rdl_latch_t *latch(rdl_client_t *c, const char *name)
{
    rdl_latch_t *l = NULL;
    rdlt_assert_ok(rdl_latch_new(c, name, &l));
    assert_non_null(l);
    rdlt_defer(free_latch, l);
    return l;
}

static uint64_t count_of(rdl_latch_t *l)
{
    uint64_t n = 12345;
    rdlt_assert_ok(rdl_latch_count(l, &n));
    return n;
}

static long long exists(rdlt_server *s, const char *key)
{
    redisReply *r = rdlt_cmd(s, "EXISTS %s", key);
    long long n = r->integer;
    freeReplyObject(r);
    return n;
}

/* Records in the applied set of a latch's hash (fields "d:..."). */
static long long applied_records(rdlt_server *s, const char *key)
{
    redisReply *r = rdlt_cmd(s, "HKEYS %s", key);
    long long n = 0;
    size_t i;
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    for (i = 0; i < r->elements; i++)
        n += strncmp(r->element[i]->str, "d:", 2) == 0;
    freeReplyObject(r);
    return n;
}

static void reset_stats(rdlt_server *s)
{
    freeReplyObject(rdlt_cmd(s, "CONFIG RESETSTAT"));
}

/* Subscribers of a (classic) channel. */
static long long subscribers(rdlt_server *s, const char *channel)
{
    redisReply *r = rdlt_cmd(s, "PUBSUB NUMSUB %s", channel);
    long long n = r->type == REDIS_REPLY_ARRAY && r->elements == 2
                      ? r->element[1]->integer
                      : -1;
    freeReplyObject(r);
    return n;
}

static void wait_subscribers(rdlt_server *s, const char *channel, long long n)
{
    int64_t end = rdlt_now_ms() + 10000;
    while (subscribers(s, channel) != n) {
        if (rdlt_now_ms() > end)
            fail_msg("%s: %lld subscribers, expected %lld", channel,
                     subscribers(s, channel), n);
        rdlt_sleep_ms(5);
    }
}

typedef struct waiter {
    rdl_latch_t *l;
    int64_t wait_ms;
    int rc;
    int done; /* atomic flag */
    int64_t done_at;
} waiter;

static void *await_thread(void *arg)
{
    waiter *w = arg;
    w->rc = rdl_latch_await(w->l, w->wait_ms);
    w->done_at = rdlt_now_ms();
    __atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* ---- the tests ----------------------------------------------------------- */

static void test_latch_count_down_to_zero_not_below(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_latch_t *l = latch(c, "down");
    redisReply *r;
    (void)state;

    assert_int_equal(count_of(l), 0); /* absent */
    rdlt_assert_ok(rdl_latch_set(l, 3, 30000));
    assert_int_equal(count_of(l), 3);
    rdlt_assert_ok(rdl_latch_count_down(l));
    assert_int_equal(count_of(l), 2);
    rdlt_assert_ok(rdl_latch_count_down(l));
    rdlt_assert_ok(rdl_latch_count_down(l));
    assert_int_equal(count_of(l), 0);
    /* Never below 0. */
    rdlt_assert_ok(rdl_latch_count_down(l));
    rdlt_assert_ok(rdl_latch_count_down(l));
    assert_int_equal(count_of(l), 0);
    r = rdlt_cmd(s, "HGET rdl:latch:{down} c");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    assert_string_equal(r->str, "0");
    freeReplyObject(r);
    /* The key keeps the expiry the set gave it: the time to live, and the
     * window of the applied set (6 s with a 1 s command timeout). */
    r = rdlt_cmd(s, "PTTL rdl:latch:{down}");
    rdlt_assert_between(r->integer, 1, 30000 + WINDOW_MS);
    freeReplyObject(r);
    /* A count down of an absent latch creates nothing. */
    rdlt_assert_ok(rdl_latch_count_down(latch(c, "never-set")));
    assert_int_equal(exists(s, "rdl:latch:{never-set}"), 0);
}

static void test_latch_set_only_at_zero(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s), *c2 = rdlt_client(s);
    rdl_latch_t *l = latch(c, "busy"), *l2 = latch(c2, "busy");
    redisReply *r;
    (void)state;

    rdlt_assert_ok(rdl_latch_set(l, 2, 30000));
    rdlt_assert_rc(rdl_latch_set(l2, 5, 1000), RDL_EBUSY);
    assert_non_null(strstr(rdl_client_errmsg(c2), "count 2"));
    rdlt_assert_rc(rdl_latch_set(l, 2, 30000), RDL_EBUSY);
    /* Nothing changed: neither the count nor the time to live. */
    assert_int_equal(count_of(l2), 2);
    r = rdlt_cmd(s, "PTTL rdl:latch:{busy}");
    rdlt_assert_between(r->integer, 1000 + WINDOW_MS + 1, 30000 + WINDOW_MS);
    freeReplyObject(r);

    rdlt_assert_ok(rdl_latch_count_down(l2));
    rdlt_assert_rc(rdl_latch_set(l2, 7, 30000), RDL_EBUSY);
    assert_int_equal(count_of(l), 1);
    rdlt_assert_ok(rdl_latch_count_down(l));
    /* At 0 it may be set again, by anyone, with a new time to live. */
    rdlt_assert_ok(rdl_latch_set(l2, 4, 20000));
    assert_int_equal(count_of(l), 4);
    r = rdlt_cmd(s, "PTTL rdl:latch:{busy}");
    rdlt_assert_between(r->integer, 1, 20000 + WINDOW_MS);
    freeReplyObject(r);
}

/* Counts beyond Lua's exact numbers (2^53), and borrows. */
static void test_latch_large_counts(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_latch_t *l = latch(c, "large");
    (void)state;

    rdlt_assert_ok(rdl_latch_set(l, UINT64_MAX, 30000));
    assert_true(count_of(l) == UINT64_MAX);
    rdlt_assert_ok(rdl_latch_count_down(l));
    assert_true(count_of(l) == UINT64_MAX - 1);
    freeReplyObject(rdlt_cmd(s, "DEL rdl:latch:{large}"));

    rdlt_assert_ok(rdl_latch_set(l, 1000, 30000));
    rdlt_assert_ok(rdl_latch_count_down(l));
    assert_int_equal(count_of(l), 999);
    freeReplyObject(rdlt_cmd(s, "DEL rdl:latch:{large}"));
    rdlt_assert_ok(rdl_latch_set(l, 10, 30000));
    rdlt_assert_ok(rdl_latch_count_down(l));
    assert_int_equal(count_of(l), 9);
}

/* An absent latch, or one at 0, is open: await returns at once, without
 * subscribing. */
static void test_latch_await_open_returns_at_once(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_latch_t *l = latch(c, "open");
    rdl_client_stats_t before;
    (void)state;

    before = rdlt_stats(c);
    rdlt_assert_ok(rdl_latch_await(l, 0));
    rdlt_assert_ok(rdl_latch_await(l, 10000));
    rdlt_assert_ok(rdl_latch_await(l, RDL_WAIT_FOREVER));
    rdlt_assert_ok(rdl_latch_set(l, 1, 30000));
    rdlt_assert_ok(rdl_latch_count_down(l));
    rdlt_assert_ok(rdl_latch_await(l, RDL_WAIT_FOREVER));
    assert_int_equal(rdlt_stats(c).subscribes, before.subscribes);
    /* Four checks, a set and a count down: one script call each. */
    assert_int_equal(rdlt_stats(c).scripts - before.scripts, 6);
}

static void test_latch_await_times_out(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_latch_t *l = latch(c, "closed");
    int64_t t0, took;
    (void)state;

    rdlt_assert_ok(rdl_latch_set(l, 1, 30000));
    rdlt_assert_rc(rdl_latch_await(l, 0), RDL_ETIMEDOUT);
    assert_non_null(strstr(rdl_client_errmsg(c), "did not reach 0"));
    t0 = rdlt_now_ms();
    rdlt_assert_rc(rdl_latch_await(l, 300), RDL_ETIMEDOUT);
    took = rdlt_now_ms() - t0;
    rdlt_assert_between(took, 300, 5000);
    assert_int_equal(count_of(l), 1);
    rdlt_assert_ok(rdl_latch_count_down(l));
    rdlt_assert_ok(rdl_latch_await(l, 0));
}

/* Waiters on four clients sleep on the latch's channel without polling;
 * the count down that reaches 0 publishes once and wakes them all. */
static void test_latch_waiters_on_many_clients_wake_together(void **state)
{
    enum { N = 4 };
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *cs = rdlt_client(s), *cw[N];
    rdl_latch_t *ls = latch(cs, "many");
    waiter w[N];
    rdlt_thread *t[N];
    int64_t zero_at;
    long long checks;
    int i;
    (void)state;

    rdlt_assert_ok(rdl_latch_set(ls, 2, 60000));
    for (i = 0; i < N; i++) {
        cw[i] = rdlt_client(s);
        memset(&w[i], 0, sizeof(w[i]));
        w[i].l = latch(cw[i], "many");
        w[i].wait_ms = RDL_WAIT_FOREVER;
    }
    for (i = 0; i < N; i++)
        t[i] = rdlt_thread_start(await_thread, &w[i]);
    wait_subscribers(s, "rdl:latch.ch:{many}", N);
    reset_stats(s);
    /* A first count down wakes nobody. */
    rdlt_assert_ok(rdl_latch_count_down(ls));
    rdlt_sleep_ms(500); /* time to poll, for a waiter that would */
    for (i = 0; i < N; i++)
        assert_false(__atomic_load_n(&w[i].done, __ATOMIC_SEQ_CST));
    /* Taken before the call: the message the count down publishes can
     * wake a waiter before the call returns to this thread. */
    zero_at = rdlt_now_ms();
    rdlt_assert_ok(rdl_latch_count_down(ls));
    for (i = 0; i < N; i++) {
        if (!rdlt_wait_flag(&w[i].done, 10000))
            fail_msg("waiter %d did not wake", i);
        rdlt_thread_join(t[i]);
        rdlt_assert_ok(w[i].rc);
        rdlt_assert_between(w[i].done_at - zero_at, 0, 3000);
        /* Woken by the message, not by its capped sleep. */
        assert_true(rdlt_stats(cw[i]).wakeups >= 1);
    }
    /* One message for all. Each waiter checked at most three times since
     * it subscribed: once when the subscription was confirmed, at most
     * once at the end of a 1 s sleep, and once when woken. */
    assert_int_equal(rdlt_cmd_calls(s, "publish"), 1);
    checks = rdlt_script_calls(s) - 2;
    print_message("%lld checks by %d waiters\n", checks, N);
    rdlt_assert_between(checks, N, 3 * N);
}

/* An expired latch reads 0 and opens its waiters, although Redis
 * publishes nothing on expiry; a count down changes nothing. Its key goes
 * away once the applied set's window has passed too. */
static void test_latch_ttl_expiry(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s), *cw = rdlt_client(s);
    rdl_latch_t *l = latch(c, "expires");
    waiter w;
    rdlt_thread *t;
    int64_t end;
    (void)state;

    memset(&w, 0, sizeof(w));
    w.l = latch(cw, "expires");
    w.wait_ms = 20000;
    rdlt_assert_ok(rdl_latch_set(l, 5, 300));
    assert_int_equal(count_of(l), 5);
    t = rdlt_thread_start(await_thread, &w);
    rdlt_assert_ok(rdl_latch_await(l, 20000));
    if (!rdlt_wait_flag(&w.done, 10000))
        fail_msg("the waiter did not see the expiry");
    rdlt_thread_join(t);
    rdlt_assert_ok(w.rc);
    assert_int_equal(count_of(l), 0);
    rdlt_assert_ok(rdl_latch_count_down(l));
    assert_int_equal(count_of(l), 0);
    end = rdlt_now_ms() + 300 + WINDOW_MS + 10000;
    while (exists(s, "rdl:latch:{expires}")) {
        if (rdlt_now_ms() > end)
            fail_msg("the expired latch's key stayed");
        rdlt_sleep_ms(50);
    }
    assert_int_equal(count_of(l), 0);
    rdlt_assert_ok(rdl_latch_await(w.l, 0));
    /* An expired latch may be set again. */
    rdlt_assert_ok(rdl_latch_set(l, 1, 30000));
    assert_int_equal(count_of(w.l), 1);
}

/* Bad input: RDL_EINVAL, and nothing written, in Redis or in *out. */
static void test_latch_bad_input(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_latch_t *l = latch(c, "bad"), *out = (rdl_latch_t *)&out;
    char *longname = malloc(NAME_MAX_BYTES + 2);
    uint64_t n = 77;
    (void)state;

    assert_non_null(longname);
    memset(longname, 'x', NAME_MAX_BYTES + 1);
    longname[NAME_MAX_BYTES + 1] = '\0';
    rdlt_assert_rc(rdl_latch_new(NULL, "x", &out), RDL_EINVAL);
    assert_null(out);
    out = (rdl_latch_t *)&out;
    rdlt_assert_rc(rdl_latch_new(c, NULL, &out), RDL_EINVAL);
    assert_null(out);
    rdlt_assert_rc(rdl_latch_new(c, "", &out), RDL_EINVAL);
    assert_null(out);
    rdlt_assert_rc(rdl_latch_new(c, longname, &out), RDL_EINVAL);
    assert_null(out);
    rdlt_assert_rc(rdl_latch_new(c, "}untagged", &out), RDL_EINVAL);
    assert_null(out);
    rdlt_assert_rc(rdl_latch_new(c, "x", NULL), RDL_EINVAL);
    free(longname);

    rdlt_assert_rc(rdl_latch_set(l, 0, 1000), RDL_EINVAL);
    rdlt_assert_rc(rdl_latch_set(l, 1, 0), RDL_EINVAL);
    rdlt_assert_rc(rdl_latch_set(l, 1, -1), RDL_EINVAL);
    rdlt_assert_rc(rdl_latch_set(l, 1, RDL_LEASE_MAX_MS + 1), RDL_EINVAL);
    assert_non_null(strstr(rdl_client_errmsg(c), "ttl_ms"));
    rdlt_assert_rc(rdl_latch_set(NULL, 1, 1000), RDL_EINVAL);
    rdlt_assert_rc(rdl_latch_count_down(NULL), RDL_EINVAL);
    rdlt_assert_rc(rdl_latch_await(NULL, 0), RDL_EINVAL);
    rdlt_assert_rc(rdl_latch_await(l, -2), RDL_EINVAL);
    rdlt_assert_rc(rdl_latch_count(NULL, &n), RDL_EINVAL);
    assert_int_equal(n, 77);
    rdlt_assert_rc(rdl_latch_count(l, NULL), RDL_EINVAL);
    assert_int_equal(exists(s, "rdl:latch:{bad}"), 0);
    assert_int_equal(rdlt_dbsize(s), 0);

    /* The largest time to live is fine. */
    rdlt_assert_ok(rdl_latch_set(l, 1, RDL_LEASE_MAX_MS));
    assert_int_equal(count_of(l), 1);
    rdl_latch_free(NULL);
}

/* A count down whose reply is lost after the server applied it is sent
 * again with the same request id: counted once. The same for a set,
 * whose retry must not answer RDL_EBUSY to its own first send. */
static void test_latch_retry_after_lost_reply_counts_once(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *cp = rdlt_proxy_client(p), *cd = rdlt_client(s);
    rdl_latch_t *warm = latch(cp, "warm-up"), *lp = latch(cp, "retry");
    rdl_latch_t *ld = latch(cd, "retry");
    unsigned before;
    (void)state;

    /* Load the scripts, so each call below is one EVALSHA. */
    rdlt_assert_ok(rdl_latch_set(warm, 1, 30000));
    rdlt_assert_ok(rdl_latch_count_down(warm));
    (void)count_of(warm);

    reset_stats(s);
    before = rdlt_proxy_count(p, "EVALSHA");
    rdlt_proxy_drop_reply(p, "EVALSHA", "{retry}", 1);
    rdlt_assert_ok(rdl_latch_set(lp, 3, 30000));
    assert_int_equal(rdlt_proxy_count(p, "EVALSHA") - before, 2);
    assert_int_equal(rdlt_script_calls(s), 2);
    assert_int_equal(count_of(ld), 3);

    reset_stats(s);
    before = rdlt_proxy_count(p, "EVALSHA");
    rdlt_proxy_drop_reply(p, "EVALSHA", "{retry}", 1);
    rdlt_assert_ok(rdl_latch_count_down(lp));
    /* Both reached the server: the first was applied, the retry told. */
    assert_int_equal(rdlt_proxy_count(p, "EVALSHA") - before, 2);
    assert_int_equal(rdlt_script_calls(s), 2);
    assert_int_equal(count_of(ld), 2);

    /* The count down that reaches 0, its reply lost: one message. */
    rdlt_assert_ok(rdl_latch_count_down(lp));
    reset_stats(s);
    rdlt_proxy_drop_reply(p, "EVALSHA", "{retry}", 1);
    rdlt_assert_ok(rdl_latch_count_down(lp));
    assert_int_equal(rdlt_script_calls(s), 2);
    assert_int_equal(rdlt_cmd_calls(s, "publish"), 1);
    assert_int_equal(count_of(ld), 0);
    rdlt_assert_ok(rdl_latch_await(ld, 0));
}

/* The count down that reaches 0 by a user who may not publish (an ACL
 * without PUBLISH and SPUBLISH) succeeds and counts once: the message is
 * best effort, as in every other script (waiters also wake by their
 * capped sleep). A publish that raised an error after the count was
 * written reported a count down that had happened as RDL_ESCRIPT, and a
 * caller's retry would have counted twice. */
static void test_latch_count_down_without_publish_right(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s), *cq;
    rdl_latch_t *warm = latch(c, "warm-up"), *l = latch(c, "quiet"), *lq;
    char url[128];
    redisReply *r;
    long long before;
    (void)state;

    r = rdlt_cmd(s, "ACL SETUSER quiet on >pw ~* &* +@all -publish -spublish");
    if (r->type == REDIS_REPLY_ERROR) { /* Redis 6.2: no SPUBLISH to deny */
        freeReplyObject(r);
        r = rdlt_cmd(s, "ACL SETUSER quiet on >pw ~* &* +@all -publish");
    }
    assert_int_equal(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    snprintf(url, sizeof(url), "redis://quiet:pw@127.0.0.1:%d",
             rdlt_server_port(s));
    cq = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_set_timeouts_ms(cq, 1000, 1000));
    rdlt_assert_ok(rdl_client_connect(cq));
    lq = latch(cq, "quiet");

    /* Load the scripts, so the count down below is one EVALSHA. */
    rdlt_assert_ok(rdl_latch_set(warm, 1, 30000));
    rdlt_assert_ok(rdl_latch_count_down(warm));

    rdlt_assert_ok(rdl_latch_set(l, 1, 30000));
    before = applied_records(s, "rdl:latch:{quiet}");
    reset_stats(s);
    rdlt_assert_ok(rdl_latch_count_down(lq));
    assert_int_equal(rdlt_script_calls(s), 1);
    assert_int_equal(count_of(l), 0);
    /* One request applied: one more record in the applied set. */
    assert_int_equal(applied_records(s, "rdl:latch:{quiet}") - before, 1);
    rdlt_assert_ok(rdl_latch_await(lq, 0));
}

typedef struct job {
    rdl_latch_t *l;
    int rc;
    int done; /* atomic flag */
} job;

static void *count_down_job(void *arg)
{
    job *j = arg;
    j->rc = rdl_latch_count_down(j->l);
    __atomic_store_n(&j->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* A count down is applied, its reply is lost, and before the retry goes
 * out the latch expires and is set again: the retry finds its record (the
 * hash outlives the expiry by the window) and does not count the new
 * latch down. */
static void test_latch_retry_after_expiry_and_set_counts_once(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *cp = rdlt_proxy_client(p), *cd = rdlt_client(s);
    rdl_latch_t *warm = latch(cp, "warm-up"), *lp = latch(cp, "gen");
    rdl_latch_t *ld = latch(cd, "gen");
    rdlt_thread *t;
    job j;
    (void)state;

    rdlt_assert_ok(rdl_latch_set(warm, 1, 30000)); /* scripts loaded */
    rdlt_assert_ok(rdl_latch_count_down(warm));
    rdlt_assert_ok(rdl_latch_set(ld, 2, 200));
    rdlt_proxy_drop_reply(p, "EVALSHA", "{gen}", 1);
    rdlt_proxy_hold_new(p, 1); /* the reconnect, and so the retry, waits */
    memset(&j, 0, sizeof(j));
    j.l = lp;
    t = rdlt_thread_start(count_down_job, &j);
    while (count_of(ld) != 1) /* applied; the reply is lost */
        rdlt_sleep_ms(1);
    rdlt_assert_ok(rdl_latch_await(ld, 5000)); /* expired */
    rdlt_assert_ok(rdl_latch_set(ld, 5, 30000));
    rdlt_proxy_hold_new(p, 0); /* now the retry goes out */
    if (!rdlt_wait_flag(&j.done, 10000))
        fail_msg("the count down did not return");
    rdlt_thread_join(t);
    rdlt_assert_ok(j.rc);
    assert_int_equal(count_of(ld), 5);
}

/* On a cluster: the key and channel share a slot, the channel is sharded,
 * and a waiter on another client wakes. */
static void test_latch_cluster(void **state)
{
    rdlt_cluster *cl = rdlt_cluster_start();
    rdl_client_t *c = rdlt_cluster_client(cl), *cw = rdlt_cluster_client(cl);
    rdl_latch_t *l = latch(c, "clustered");
    waiter w;
    rdlt_thread *t;
    (void)state;

    memset(&w, 0, sizeof(w));
    w.l = latch(cw, "clustered");
    w.wait_ms = 20000;
    rdlt_assert_ok(rdl_latch_set(l, 2, 30000));
    rdlt_assert_rc(rdl_latch_set(w.l, 2, 30000), RDL_EBUSY);
    t = rdlt_thread_start(await_thread, &w);
    rdlt_assert_ok(rdl_latch_count_down(l));
    assert_int_equal(count_of(w.l), 1);
    rdlt_assert_ok(rdl_latch_count_down(w.l));
    if (!rdlt_wait_flag(&w.done, 10000))
        fail_msg("the waiter did not wake");
    rdlt_thread_join(t);
    rdlt_assert_ok(w.rc);
    assert_int_equal(count_of(l), 0);
    rdlt_assert_ok(rdl_latch_await(l, 0));
}

/* A closed client: no new latch, and calls on a latch report it. */
static void test_latch_closed_client(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_latch_t *l = NULL, *out = NULL;
    uint64_t n = 5;
    (void)state;

    rdlt_assert_ok(rdl_latch_new(c, "closing", &l));
    rdlt_assert_ok(rdl_client_close(c));
    rdlt_assert_rc(rdl_latch_new(c, "closing", &out), RDL_ECLOSED);
    assert_null(out);
    rdlt_assert_rc(rdl_latch_set(l, 1, 1000), RDL_ECLOSED);
    rdlt_assert_rc(rdl_latch_count_down(l), RDL_ECLOSED);
    rdlt_assert_rc(rdl_latch_await(l, 1000), RDL_ECLOSED);
    rdlt_assert_rc(rdl_latch_count(l, &n), RDL_ECLOSED);
    assert_int_equal(n, 5);
    rdl_latch_free(l);
}

/* Closing the client ends a waiter that would wait forever. */
static void test_latch_close_ends_waiter(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s), *cw = rdlt_client(s);
    rdl_latch_t *l = latch(c, "abandoned");
    waiter w;
    rdlt_thread *t;
    (void)state;

    memset(&w, 0, sizeof(w));
    w.l = latch(cw, "abandoned");
    w.wait_ms = RDL_WAIT_FOREVER;
    rdlt_assert_ok(rdl_latch_set(l, 1, 60000));
    t = rdlt_thread_start(await_thread, &w);
    wait_subscribers(s, "rdl:latch.ch:{abandoned}", 1);
    rdlt_assert_ok(rdl_client_close(cw));
    if (!rdlt_wait_flag(&w.done, 10000))
        fail_msg("the waiter did not end");
    rdlt_thread_join(t);
    rdlt_assert_rc(w.rc, RDL_ECLOSED);
}

/* Blocking calls on the client's loop thread. */
typedef struct loop_ctx {
    rdl_client_t *c;
    rdl_latch_t *l;
    int rc_connect, rc_set, rc_down, rc_await, rc_count;
    uint64_t n;
} loop_ctx;

static void do_connect(void *arg)
{
    loop_ctx *x = arg;
    x->rc_connect = rdl_client_connect(x->c);
}

static void do_blocking(void *arg)
{
    loop_ctx *x = arg;
    x->rc_set = rdl_latch_set(x->l, 1, 1000);
    x->rc_down = rdl_latch_count_down(x->l);
    x->rc_await = rdl_latch_await(x->l, 1000);
    x->rc_count = rdl_latch_count(x->l, &x->n);
}

static void test_latch_loop_thread_is_edeadlk(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_loop *lp = rdlt_loop_start();
    loop_ctx x;
    (void)state;

    memset(&x, 0, sizeof(x));
    x.n = 9;
    x.c = rdlt_client_new(rdlt_server_url(s));
    rdlt_assert_ok(rdl_client_set_loop(x.c, rdlt_loop_uv(lp)));
    rdlt_loop_call(lp, do_connect, &x);
    rdlt_assert_ok(x.rc_connect);
    x.l = latch(x.c, "loop");
    rdlt_loop_call(lp, do_blocking, &x);
    rdlt_assert_rc(x.rc_set, RDL_EDEADLK);
    rdlt_assert_rc(x.rc_down, RDL_EDEADLK);
    rdlt_assert_rc(x.rc_await, RDL_EDEADLK);
    rdlt_assert_rc(x.rc_count, RDL_EDEADLK);
    assert_int_equal(x.n, 9);
    assert_int_equal(rdlt_dbsize(s), 0);
    /* From another thread they work. */
    rdlt_assert_ok(rdl_latch_set(x.l, 1, 30000));
    assert_int_equal(count_of(x.l), 1);
    rdlt_release(x.l);
    rdlt_client_free(x.c);
    assert_int_equal(rdlt_loop_stop(lp), 0);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_latch_count_down_to_zero_not_below),
    RDLT_TEST(test_latch_set_only_at_zero),
    RDLT_TEST(test_latch_large_counts),
    RDLT_TEST(test_latch_await_open_returns_at_once),
    RDLT_TEST(test_latch_await_times_out),
    RDLT_TEST(test_latch_waiters_on_many_clients_wake_together),
    RDLT_TEST(test_latch_ttl_expiry),
    RDLT_TEST(test_latch_bad_input),
    RDLT_TEST(test_latch_count_down_without_publish_right),
    RDLT_TEST(test_latch_retry_after_lost_reply_counts_once),
    RDLT_TEST(test_latch_retry_after_expiry_and_set_counts_once),
    RDLT_TEST(test_latch_cluster),
    RDLT_TEST(test_latch_closed_client),
    RDLT_TEST(test_latch_close_ends_waiter),
    RDLT_TEST(test_latch_loop_thread_is_edeadlk),
};

RDLT_MAIN(tests)
