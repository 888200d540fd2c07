/* Redis Sentinel (redis+sentinel://): a master, two replicas and three
 * sentinels of each test's own (tests/support/sentinel.c). The client must
 * find the master through any sentinel it can reach, say clearly when it
 * cannot, and follow a failover: holds are kept or reported lost, never
 * silently gone, and waiters are served by the new master. */
#include <signal.h>
#include <string.h>
#include <strings.h>
#include <stdio.h>

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

/* Sentinel i asks for password pw from now on (Sentinel has no CONFIG
 * SET; its default user's password is set through ACL). The sentinels'
 * own links to each other then fail, which a connect does not need. */
static void sentinel_requires(rdlt_sentinel *sn, int i, const char *pw)
{
    redisReply *r = rdlt_cmd(rdlt_sentinel_node(sn, i),
                             "ACL SETUSER default resetpass >%s", pw);
    if (r->type == REDIS_REPLY_ERROR)
        fail_msg("ACL SETUSER on sentinel %d: %s", i, r->str);
    freeReplyObject(r);
}

/* The sentinels require a password of their own (?sentinel_password=).
 * When every sentinel refuses the one in the URL, the connect fails with
 * RDL_EAUTH, as a wrong password on the data node does, and says the
 * sentinels refused the credentials: it is not a reachability problem
 * (RDL_ECONNREFUSED), and trying again will not help. When only some
 * refuse and another answers, the connect succeeds. */
static void test_sentinel_password_refused(void **state)
{
    rdlt_sentinel *sn = rdlt_sentinel_start(NULL);
    rdl_client_t *c;
    rdl_lock_t *l;
    char url[512];
    int i, rc;
    (void)state;

    for (i = 0; i < RDLT_SENTINELS; i++)
        sentinel_requires(sn, i, "sentpass");
    snprintf(url, sizeof(url), "%s?sentinel_password=wrong",
             rdlt_sentinel_url(sn));
    c = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 2000));
    rc = rdl_client_connect(c);
    if (rc != RDL_EAUTH)
        fail_msg("wrong sentinel password: %s (%s), expected RDL_EAUTH",
                 rdl_err_name(rc), rdl_client_errmsg(c));
    if (strstr(rdl_client_errmsg(c), "refused the credentials") == NULL)
        fail_msg("the message does not say the sentinels refused the "
                 "credentials: %s",
                 rdl_client_errmsg(c));

    /* The right password: connects. */
    snprintf(url, sizeof(url), "%s?sentinel_password=sentpass",
             rdlt_sentinel_url(sn));
    c = sentinel_client(url);
    l = rdlt_lock(c, "sentpass");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));

    /* The first sentinel asked (the first in the URL) takes another
     * password: the next one answers. */
    sentinel_requires(sn, 0, "other");
    c = sentinel_client(url);
    l = rdlt_lock(c, "sentpass");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));

    /* No password at all: NOAUTH is a refusal too. And a sentinel that
     * cannot be reached does not make a refusal by the others a
     * reachability problem. */
    c = rdlt_client_new(rdlt_sentinel_url(sn));
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 2000));
    rdlt_assert_rc(rdl_client_connect(c), RDL_EAUTH);
    assert_non_null(strstr(rdl_client_errmsg(c), "refused the credentials"));
    rdlt_server_stop(rdlt_sentinel_node(sn, 2));
    snprintf(url, sizeof(url), "%s?sentinel_password=wrong",
             rdlt_sentinel_url(sn));
    c = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 2000));
    rdlt_assert_rc(rdl_client_connect(c), RDL_EAUTH);
    assert_non_null(strstr(rdl_client_errmsg(c), "refused the credentials"));
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

/* A fake sentinel (tests/support/fake.c) that names `master_port` as the
 * master while `known` is set, and answers nil (it does not know the
 * master) when it is not. */
typedef struct fake_sentinel {
    int master_port; /* atomic */
    int known;       /* atomic */
} fake_sentinel;

static int fake_sentinel_rule(rdlt_fake *f, void *data, int argc, char **argv,
                              size_t *lens, unsigned n, char *out,
                              size_t outlen)
{
    fake_sentinel *fs = data;
    (void)f;
    (void)lens;
    (void)n;
    if (argc == 2 && strcasecmp(argv[0], "SUBSCRIBE") == 0) {
        snprintf(out, outlen, "*3\r\n$9\r\nsubscribe\r\n$%zu\r\n%s\r\n:1\r\n",
                 strlen(argv[1]), argv[1]);
        return RDLT_FAKE_REPLY;
    }
    if (argc < 2 || strcasecmp(argv[0], "SENTINEL") != 0)
        return RDLT_FAKE_FORWARD;
    if (strcasecmp(argv[1], "MASTER") == 0) {
        snprintf(out, outlen, "*2\r\n$12\r\nconfig-epoch\r\n$1\r\n1\r\n");
    } else if (strcasecmp(argv[1], "get-master-addr-by-name") == 0) {
        char port[16];
        int len = snprintf(port, sizeof(port), "%d",
                           __atomic_load_n(&fs->master_port, __ATOMIC_ACQUIRE));
        if (!__atomic_load_n(&fs->known, __ATOMIC_ACQUIRE))
            snprintf(out, outlen, "*-1\r\n");
        else
            snprintf(out, outlen, "*2\r\n$9\r\n127.0.0.1\r\n$%d\r\n%s\r\n", len,
                     port);
    } else {
        snprintf(out, outlen, "-ERR not faked\r\n");
    }
    return RDLT_FAKE_REPLY;
}

/* A client (not connected yet) whose one sentinel is the fake node f, for
 * the master "fake", with a connect timeout of 2 s and this command
 * timeout. */
static rdl_client_t *fake_sentinel_client(rdlt_fake *f, int64_t command_ms)
{
    char url[128];
    rdl_client_t *c;
    snprintf(url, sizeof(url), "redis+sentinel://127.0.0.1:%d/fake",
             rdlt_fake_port(f));
    c = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, command_ms));
    return c;
}

/* Every sentinel stops knowing the master: the client keeps using the
 * master it confirmed, and looks again with a growing delay (100 ms,
 * doubling up to 2 s, with jitter) instead of every 100 ms, so a
 * Sentinel deployment that lost its master, or is down, is not asked ten
 * times a second by every client. Counted over 2.5 s: a fixed 100 ms
 * would be about 25 rounds, the backoff about 6; a slower machine only
 * makes fewer. */
static void test_sentinel_failed_rounds_back_off(void **state)
{
    rdlt_server *m = rdlt_server_start();
    fake_sentinel fs = {rdlt_server_port(m), 1};
    rdlt_fake *f = rdlt_fake_start(m, fake_sentinel_rule, &fs);
    rdl_client_t *c = fake_sentinel_client(f, 1000);
    rdl_lock_t *l;
    unsigned before, first, after;
    int64_t until;
    (void)state;

    rdlt_assert_ok(rdl_client_connect(c));
    l = rdlt_lock(c, "backoff");
    rdlt_assert_ok(rdl_lock_acquire(l, 0, 5000));
    rdlt_assert_ok(rdl_lock_release(l));

    __atomic_store_n(&fs.known, 0, __ATOMIC_RELEASE);
    /* The next periodic round (every 2 s) is the first to fail. */
    before = rdlt_fake_count(f, "SENTINEL");
    until = rdlt_now_ms() + 5000;
    while ((first = rdlt_fake_count(f, "SENTINEL")) < before + 2 &&
           rdlt_now_ms() < until)
        rdlt_sleep_ms(10);
    assert_true(first >= before + 2);
    rdlt_sleep_ms(2500);
    after = rdlt_fake_count(f, "SENTINEL");
    /* Two commands per round (the epoch, then the address). */
    if (after - first > 2 * 12)
        fail_msg("%u rounds in 2.5 s after the first failed one",
                 (after - first) / 2);
    /* The confirmed master is still used meanwhile. */
    rdlt_assert_ok(rdl_lock_acquire(l, 0, 5000));
    rdlt_assert_ok(rdl_lock_release(l));

    /* Known again: a round finds it, and the rounds are periodic again. */
    __atomic_store_n(&fs.known, 1, __ATOMIC_RELEASE);
    rdlt_sleep_ms(2100);
    before = rdlt_fake_count(f, "SENTINEL");
    rdlt_sleep_ms(1500);
    if (rdlt_fake_count(f, "SENTINEL") - before > 2 * 2)
        fail_msg("%u rounds in 1.5 s with the master known",
                 (rdlt_fake_count(f, "SENTINEL") - before) / 2);
}

typedef struct park_call {
    rdl_lock_t *l;
    int rc;
    int done; /* atomic */
} park_call;

static void *park_acquire(void *arg)
{
    park_call *p = arg;
    p->rc = rdl_lock_acquire_as(p->l, (rdl_owner_t)1, 0, 5000);
    __atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* The sentinel names a replica (its view is behind a failover, or wrong):
 * the client moves to it, but ROLE says it is not a master, so commands
 * wait (parked) instead of meeting READONLY there, and the rounds back
 * off. When the sentinel names the master again, the waiting acquisition
 * runs there. */
static void test_sentinel_named_replica_is_not_used(void **state)
{
    rdlt_server *m = rdlt_server_start();
    rdlt_server *r = rdlt_server_start_replica(m);
    fake_sentinel fs = {rdlt_server_port(m), 1};
    rdlt_fake *f = rdlt_fake_start(m, fake_sentinel_rule, &fs);
    rdl_client_t *c = fake_sentinel_client(f, 8000);
    park_call p = {0};
    rdlt_thread *t;
    unsigned before;
    int64_t until;
    redisReply *rep;
    (void)state;

    rdlt_assert_ok(rdl_client_connect(c));
    p.l = rdlt_lock(c, "parked");

    /* From the next periodic round on, the sentinel names the replica. */
    __atomic_store_n(&fs.master_port, rdlt_server_port(r), __ATOMIC_RELEASE);
    before = rdlt_fake_count(f, "SENTINEL");
    until = rdlt_now_ms() + 5000;
    while (rdlt_fake_count(f, "SENTINEL") < before + 4 && rdlt_now_ms() < until)
        rdlt_sleep_ms(10);
    assert_true(rdlt_fake_count(f, "SENTINEL") >= before + 4);

    t = rdlt_thread_start(park_acquire, &p);
    rdlt_sleep_ms(500);
    assert_false(__atomic_load_n(&p.done, __ATOMIC_ACQUIRE));

    /* The next round finds the master: rounds back off to at most 2 s
     * (with jitter), so the acquisition runs within that and some slack.
     * Before: the round that the parked acquisition started was written
     * only when some timer next woke the loop (5-6 s here), because it
     * was sent from inside another connection's flush (conn.c). */
    __atomic_store_n(&fs.master_port, rdlt_server_port(m), __ATOMIC_RELEASE);
    if (!rdlt_wait_flag(&p.done, 3500))
        fail_msg("the parked acquisition did not run on the master within "
                 "a round's longest back-off");
    rdlt_thread_join(t);
    rdlt_assert_ok(p.rc);
    rep = rdlt_cmd(m, "HGET rdl:lock:{parked} o");
    assert_int_equal(rep->type, REDIS_REPLY_STRING);
    freeReplyObject(rep);
    rdlt_assert_ok(rdl_lock_release_as(p.l, (rdl_owner_t)1));
}

#define RO_N 10

typedef struct ro_batch {
    rdl_lock_t *l[RO_N];
    rdl_req_t req[RO_N];
    int status[RO_N]; /* 0 pending, 1 acquired, else its error code */
    int done;         /* loop thread */
    int all;          /* atomic */
} ro_batch;

static void ro_done(rdl_req_t *req, int status)
{
    ro_batch *b = req->data;
    b->status[req - b->req] = status == 0 ? 1 : status;
    if (++b->done == RO_N)
        __atomic_store_n(&b->all, 1, __ATOMIC_RELEASE);
}

/* In one loop iteration: the acquisitions leave as one batch. */
static void ro_start(void *arg)
{
    ro_batch *b = arg;
    int i, rc;
    for (i = 0; i < RO_N; i++) {
        b->req[i].data = b;
        rc = rdl_lock_acquire_async(&b->req[i], b->l[i], (rdl_owner_t)1, 0,
                                    10000, ro_done);
        if (rc != 0)
            ro_done(&b->req[i], rc);
    }
}

/* A fake node in front of a replica that says it is a master (ROLE), as
 * a demoted master does until the client hears of the switch. */
static int says_master_rule(rdlt_fake *f, void *data, int argc, char **argv,
                            size_t *lens, unsigned n, char *out, size_t outlen)
{
    (void)f;
    (void)data;
    (void)lens;
    (void)n;
    if (argc == 1 && strcasecmp(argv[0], "ROLE") == 0) {
        snprintf(out, outlen, "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n");
        return RDLT_FAKE_REPLY;
    }
    return RDLT_FAKE_FORWARD;
}

/* The client's confirmed master is in fact a replica (a demoted master
 * the client has not yet heard about): a batch of acquisitions runs there
 * and its writes meet READONLY inside the script. The batch fails as a
 * whole with READONLY, as one call would, so the client parks it, asks
 * the sentinel, moves to the real master and sends it there: every
 * acquisition is granted, none fails with RDL_EREADONLY. (Calls that each
 * answered READONLY inside the batch's reply would fail.) */
static void test_sentinel_batch_meets_readonly(void **state)
{
    rdlt_server *m = rdlt_server_start();
    rdlt_server *r = rdlt_server_start_replica(m);
    rdlt_fake *demoted = rdlt_fake_start(r, says_master_rule, NULL);
    fake_sentinel fs = {rdlt_fake_port(demoted), 1};
    rdlt_fake *f = rdlt_fake_start(m, fake_sentinel_rule, &fs);
    rdl_client_t *c = fake_sentinel_client(f, 8000);
    rdlt_loop *lp = rdlt_loop_start();
    static ro_batch b;
    char name[32];
    redisReply *rep;
    int i;
    (void)state;

    rdlt_assert_ok(rdl_client_set_loop(c, rdlt_loop_uv(lp)));
    rdlt_loop_connect(lp, c);
    memset(&b, 0, sizeof(b));
    for (i = 0; i < RO_N; i++) {
        snprintf(name, sizeof(name), "ro:%d", i);
        b.l[i] = rdlt_lock(c, name);
    }

    /* A round trip: the client has confirmed the node it was named (a
     * read, which the replica serves). */
    (void)rdlt_info(b.l[0], 1);
    /* The sentinel now names the real master; the client learns it only
     * when it asks, after READONLY. */
    __atomic_store_n(&fs.master_port, rdlt_server_port(m), __ATOMIC_RELEASE);
    rdlt_loop_call(lp, ro_start, &b);
    if (!rdlt_wait_flag(&b.all, 10000))
        fail_msg("after 10 s only %d of %d acquisitions ended", b.done, RO_N);
    for (i = 0; i < RO_N; i++)
        if (b.status[i] != 1)
            fail_msg("acquisition %d: %s", i, rdl_err_name(b.status[i]));
    /* The batch did run on the replica first, and the holds are on the
     * master. */
    assert_true(rdlt_cmd_calls(r, "eval") + rdlt_cmd_calls(r, "evalsha") >= 1);
    rep = rdlt_cmd(m, "HGET rdl:lock:{ro:3} o");
    assert_int_equal(rep->type, REDIS_REPLY_STRING);
    freeReplyObject(rep);
    for (i = 0; i < RO_N; i++)
        rdlt_lock_free(b.l[i]);
    rdlt_client_free(c);
    assert_int_equal(rdlt_loop_stop(lp), 0);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_sentinel_lock_on_master),
    RDLT_TEST(test_sentinel_list_locks),
    RDLT_TEST(test_sentinel_errors),
    RDLT_TEST(test_sentinel_one_down),
    RDLT_TEST(test_sentinel_auth),
    RDLT_TEST(test_sentinel_password_refused),
    RDLT_TEST(test_sentinel_failover),
    RDLT_TEST(test_sentinel_master_killed),
    RDLT_TEST(test_sentinel_tls),
    RDLT_TEST(test_sentinel_close_states),
    RDLT_TEST(test_sentinel_master_restart),
    RDLT_TEST(test_sentinel_failed_rounds_back_off),
    RDLT_TEST(test_sentinel_named_replica_is_not_used),
    RDLT_TEST(test_sentinel_batch_meets_readonly),
};

RDLT_MAIN(tests)
