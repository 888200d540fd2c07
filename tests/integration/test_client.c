/* The client (include/rdl/client.h): configuration, connecting, the
 * handshake (AUTH, SELECT, CLIENT SETNAME), closing, counters. */
#include <ctype.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdlt.h"
#include "internal.h"

#define A ((rdl_owner_t)1)
#define B ((rdl_owner_t)2)

static void test_client_connect_and_id(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c1 = rdlt_client(s), *c2 = rdlt_client(s);
    const char *id = rdl_client_id(c1);
    rdl_client_stats_t st;
    size_t i;
    (void)state;

    assert_non_null(id);
    assert_int_equal(strlen(id), 32);
    for (i = 0; i < 32; i++)
        if (!isxdigit((unsigned char)id[i]) || isupper((unsigned char)id[i]))
            fail_msg("client id \"%s\" is not lowercase hex", id);
    assert_string_not_equal(id, rdl_client_id(c2));
    rdlt_assert_ok(rdl_client_stats(c1, &st));
    assert_true(st.connects >= 1);
    assert_true(st.acquires == 0);
    rdlt_assert_rc(rdl_client_stats(NULL, &st), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_stats(c1, NULL), RDL_EINVAL);
}

/* Connections are named "rdl:<client-id>:cmd|sub", so an operator can find
 * them; they go away when the client closes. */
static void test_client_connections_are_named(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s), *other = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "named"), *lo = rdlt_lock(other, "named");
    char cmd[64], sub[64], any[64];
    int64_t deadline;
    (void)state;

    snprintf(cmd, sizeof(cmd), "rdl:%s:cmd", rdl_client_id(c));
    snprintf(sub, sizeof(sub), "rdl:%s:sub", rdl_client_id(c));
    snprintf(any, sizeof(any), "rdl:%s:", rdl_client_id(c));
    assert_int_equal(rdlt_count_clients(s, cmd), 1);
    /* A wait needs the subscriber connection. */
    rdlt_assert_ok(rdl_lock_acquire_as(lo, A, 0, 30000));
    rdlt_assert_rc(rdl_lock_acquire_as(l, A, 200, 5000), RDL_ETIMEDOUT);
    assert_int_equal(rdlt_count_clients(s, sub), 1);
    assert_int_equal(rdlt_count_clients(s, cmd), 1);

    rdlt_assert_ok(rdl_client_close(c));
    deadline = rdlt_now_ms() + 2000;
    while (rdlt_count_clients(s, any) > 0 && rdlt_now_ms() < deadline)
        rdlt_sleep_ms(10);
    assert_int_equal(rdlt_count_clients(s, any), 0);
    /* The other client is untouched. */
    snprintf(any, sizeof(any), "rdl:%s:cmd", rdl_client_id(other));
    assert_int_equal(rdlt_count_clients(s, any), 1);
}

static void test_client_connect_refused(void **state)
{
    rdlt_server *s = rdlt_server_start();
    int port = rdlt_server_port(s);
    char url[64];
    rdl_client_t *c;
    int64_t t0, took;
    (void)state;

    /* A port where nothing listens: the server's, once it is stopped. */
    rdlt_server_stop(s);
    snprintf(url, sizeof(url), "redis://127.0.0.1:%d", port);
    c = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 500, 500));
    t0 = rdlt_now_ms();
    rdlt_assert_rc(rdl_client_connect(c), RDL_ECONNREFUSED);
    took = rdlt_now_ms() - t0;
    rdlt_assert_between(took, 0, 2000);
    if (strstr(rdl_client_errmsg(c), url + 8) == NULL)
        fail_msg("errmsg \"%s\" does not name %s", rdl_client_errmsg(c),
                 url + 8);

    /* After a failure the client can connect again. */
    rdlt_server_restart(s);
    rdlt_assert_ok(rdl_client_connect(c));
    {
        rdl_lock_t *l = rdlt_lock(c, "after-refused");
        rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 1000));
    }
}

/* Connecting to something that accepts but never answers is bounded by
 * the connect timeout. */
static void test_client_connect_timeout(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client_new(rdlt_server_url(s));
    int64_t t0, took;
    int rc;
    (void)state;

    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 300, 300));
    rdlt_server_signal(s, SIGSTOP);
    t0 = rdlt_now_ms();
    rc = rdl_client_connect(c);
    took = rdlt_now_ms() - t0;
    rdlt_server_signal(s, SIGCONT);
    rdlt_assert_rc(rc, RDL_ECONNREFUSED);
    rdlt_assert_between(took, 250, 2000);
}

static void test_client_configuration_after_connect(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    (void)state;

    rdlt_assert_rc(rdl_client_set_url(c, rdlt_server_url(s)), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_prefix(c, "other"), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_timeouts_ms(c, 100, 100), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_watchdog_ms(c, 1000), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_connect(c), RDL_EINVAL);
}

static void test_client_configuration_ranges(void **state)
{
    rdl_client_t *c = rdlt_client_new(NULL);
    (void)state;

    rdlt_assert_rc(rdl_client_set_timeouts_ms(c, 0, 100), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_timeouts_ms(c, 100, 0), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_timeouts_ms(c, -1, 100), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_timeouts_ms(c, 3600001, 100), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_timeouts_ms(c, 100, 3600001), RDL_EINVAL);
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 1, 1));
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 3600000, 3600000));
    rdlt_assert_rc(rdl_client_set_watchdog_ms(c, 99), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_watchdog_ms(c, 86400001), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_watchdog_ms(c, -1), RDL_EINVAL);
    rdlt_assert_ok(rdl_client_set_watchdog_ms(c, 100));
    rdlt_assert_ok(rdl_client_set_watchdog_ms(c, 86400000));
    rdlt_assert_rc(rdl_client_set_timeouts_ms(NULL, 1, 1), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_watchdog_ms(NULL, 1000), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_prefix(NULL, "p"), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_loop(NULL, NULL), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_loop(c, NULL), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_connect(NULL), RDL_EINVAL);
    assert_non_null(rdl_client_errmsg(NULL));
    /* Closing or freeing a client that never connected is harmless. */
    rdlt_assert_ok(rdl_client_close(c));
    rdlt_client_free(c);
    rdl_client_free(NULL);
}

static void test_client_password(void **state)
{
    static const char *const args[] = {"--requirepass", "s3cret", NULL};
    rdlt_server *s = rdlt_server_start_args(args);
    char url[128];
    rdl_client_t *c;
    rdl_lock_t *l;
    (void)state;

    c = rdlt_client_new(rdlt_server_url(s));
    rdlt_assert_rc(rdl_client_connect(c), RDL_EAUTH);
    assert_true(strlen(rdl_client_errmsg(c)) > 0);

    snprintf(url, sizeof(url), "redis://:wrong@127.0.0.1:%d",
             rdlt_server_port(s));
    c = rdlt_client_new(url);
    rdlt_assert_rc(rdl_client_connect(c), RDL_EAUTH);

    snprintf(url, sizeof(url), "redis://:s3cret@127.0.0.1:%d",
             rdlt_server_port(s));
    c = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_connect(c));
    l = rdlt_lock(c, "auth");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 1000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
}

static void test_client_acl_user(void **state)
{
    static const char *const args[] = {"--user", "alice", "on",    ">p@ss:w/d",
                                       "~*",     "&*",    "+@all", NULL};
    rdlt_server *s = rdlt_server_start_args(args);
    char url[128];
    rdl_client_t *c;
    rdl_lock_t *l;
    (void)state;

    snprintf(url, sizeof(url), "redis://alice:nope@127.0.0.1:%d",
             rdlt_server_port(s));
    c = rdlt_client_new(url);
    rdlt_assert_rc(rdl_client_connect(c), RDL_EAUTH);

    /* Percent-encoded password. */
    snprintf(url, sizeof(url), "redis://alice:p%%40ss%%3Aw%%2Fd@127.0.0.1:%d",
             rdlt_server_port(s));
    c = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_connect(c));
    l = rdlt_lock(c, "acl");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 1000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
}

/* Redis 7 gives new ACL users no channel access (acl-pubsub-default
 * resetchannels), so PUBLISH and SUBSCRIBE fail with NOPERM for a user
 * made without "&*". Locks must stay correct there. */
static const char *const no_channels[] = {"--user", "bob",   "on", ">pw",
                                          "~*",     "+@all", NULL};

static rdl_client_t *bob(rdlt_server *s)
{
    char url[128];
    rdl_client_t *c;
    snprintf(url, sizeof(url), "redis://bob:pw@127.0.0.1:%d",
             rdlt_server_port(s));
    c = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 1000, 1000));
    rdlt_assert_ok(rdl_client_connect(c));
    return c;
}

/* A release (or force release) either frees the lock and says so, or
 * fails and leaves it held. */
static void test_client_no_channel_access_release(void **state)
{
    rdlt_server *s = rdlt_server_start_args(no_channels);
    rdl_client_t *c = bob(s);
    rdl_lock_t *l = rdlt_lock(c, "nochan");
    rdl_lock_info_t info;
    char why[2][160] = {"", ""};
    int rc, i;
    (void)state;

    for (i = 0; i < 2; i++) {
        const char *what = i == 0 ? "release" : "force release";
        rdlt_assert_ok(rdl_lock_acquire_as(l, i == 0 ? A : B, 0, 5000));
        rc = i == 0 ? rdl_lock_release_as(l, A) : rdl_lock_force_release(l);
        info = rdlt_info(l, A);
        print_message("%s: %s (%s); locked afterwards: %d\n", what,
                      rdl_err_name(rc), rdl_client_errmsg(c), info.locked);
        if (rc == 0 && info.locked)
            snprintf(why[i], sizeof(why[i]), "%s returned 0, lock held", what);
        if (rc != 0 && !info.locked)
            snprintf(why[i], sizeof(why[i]),
                     "%s failed with %s, yet the lock was freed", what,
                     rdl_err_name(rc));
        freeReplyObject(rdlt_cmd(s, "FLUSHALL"));
    }
    if (why[0][0] || why[1][0])
        fail_msg("%s%s%s", why[0], why[0][0] && why[1][0] ? "; " : "", why[1]);
}

/* A waiter that cannot subscribe still gets the lock within the holder's lease
 * (docs/design.md#waiting: a missing wake-up costs at most one lease). */
static void test_client_no_channel_access_wait(void **state)
{
    rdlt_server *s = rdlt_server_start_args(no_channels);
    rdl_client_t *c = bob(s);
    rdl_lock_t *l = rdlt_lock(c, "nochan");
    int64_t t0, took;
    int rc;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 500));
    t0 = rdlt_now_ms();
    rc = rdl_lock_acquire_as(l, B, 5000, 5000);
    took = rdlt_now_ms() - t0;
    print_message("waiter: %s (%s) after %lld ms\n", rdl_err_name(rc),
                  rdl_client_errmsg(c), (long long)took);
    rdlt_assert_ok(rc);
    rdlt_assert_between(took, 300, 1500);
}

static void test_client_database(void **state)
{
    rdlt_server *s = rdlt_server_start();
    char url[128];
    rdl_client_t *c;
    rdl_lock_t *l;
    redisReply *r;
    long long in3;
    (void)state;

    snprintf(url, sizeof(url), "%s/3", rdlt_server_url(s));
    c = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_connect(c));
    l = rdlt_lock(c, "db");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 5000));
    assert_int_equal(rdlt_dbsize(s), 0);
    freeReplyObject(rdlt_cmd(s, "SELECT 3"));
    in3 = rdlt_dbsize(s);
    freeReplyObject(rdlt_cmd(s, "SELECT 0"));
    assert_true(in3 >= 1);

    /* A database the server does not have. */
    snprintf(url, sizeof(url), "%s/99", rdlt_server_url(s));
    c = rdlt_client_new(url);
    rdlt_assert_rc(rdl_client_connect(c), RDL_ESERVER);
    assert_true(strlen(rdl_client_errmsg(c)) > 0);
    r = rdlt_cmd(s, "PING");
    freeReplyObject(r);
}

static void test_client_prefix(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client_new(rdlt_server_url(s));
    rdl_lock_t *l;
    (void)state;

    rdlt_assert_ok(rdl_client_set_prefix(c, "myapp"));
    rdlt_assert_ok(rdl_client_connect(c));
    l = rdlt_lock(c, "x");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 5000));
    assert_true(rdlt_count_keys(s, "myapp:lock:{x}*") >= 1);
    assert_int_equal(rdlt_count_keys(s, "rdl:*"), 0);
    assert_int_equal(rdlt_count_keys(s, "*") - rdlt_count_keys(s, "myapp:*"),
                     0);
}

typedef struct blocked {
    rdl_lock_t *lock;
    int rc;
    int64_t done_at;
} blocked;

static void *block_forever(void *arg)
{
    blocked *b = arg;
    b->rc = rdl_lock_acquire_as(b->lock, 2, RDL_WAIT_FOREVER, 5000);
    b->done_at = rdlt_now_ms();
    return NULL;
}

static int list_nothing(const rdl_lock_entry_t *e, void *data)
{
    (void)e;
    (void)data;
    return 0;
}

static void never_called(rdl_req_t *req, int status)
{
    (void)req;
    fail_msg("callback called with %d", status);
}

/* Every call that needs the server, on a client that is not connected,
 * fails with RDL_ENOTCONN and says so (not "closed": no close happened),
 * before the first connect and after a connect that failed. Objects can
 * be made before connecting; nothing connects on first use. */
static void calls_before_connect(rdl_client_t *c)
{
    rdl_lock_t *l, *sem, *fair, *multi;
    rdl_rwlock_t *rw;
    rdl_latch_t *latch;
    rdl_lock_info_t info;
    rdl_req_t req = {0};
    uint64_t count;
    size_t masters;

    rdlt_assert_ok(rdl_lock_new(c, "never", &l));
    rdlt_assert_ok(rdl_fairlock_new(c, "never-fair", &fair));
    rdlt_assert_ok(rdl_semaphore_new(c, "never-sem", 2, &sem));
    rdlt_assert_ok(rdl_rwlock_new(c, "never-rw", &rw));
    rdlt_assert_ok(rdl_latch_new(c, "never-latch", &latch));
    rdlt_assert_ok(
        rdl_multilock_new((rdl_lock_t *const[]){l, fair}, 2, &multi));

    rdlt_assert_rc(rdl_lock_acquire(l, 0, 1000), RDL_ENOTCONN);
    if (strstr(rdl_client_errmsg(c), "not connected") == NULL)
        fail_msg("errmsg \"%s\" does not say \"not connected\"",
                 rdl_client_errmsg(c));
    rdlt_assert_rc(rdl_lock_acquire_as(fair, A, 100, 1000), RDL_ENOTCONN);
    rdlt_assert_rc(rdl_lock_acquire(sem, 0, 1000), RDL_ENOTCONN);
    rdlt_assert_rc(rdl_lock_acquire(rdl_rwlock_read(rw), 0, 1000),
                   RDL_ENOTCONN);
    rdlt_assert_rc(rdl_lock_acquire(rdl_rwlock_write(rw), 0, 1000),
                   RDL_ENOTCONN);
    rdlt_assert_rc(rdl_lock_acquire(multi, 0, 1000), RDL_ENOTCONN);
    rdlt_assert_rc(rdl_lock_release(l), RDL_ENOTCONN);
    rdlt_assert_rc(rdl_lock_force_release(l), RDL_ENOTCONN);
    rdlt_assert_rc(rdl_lock_info(l, A, &info), RDL_ENOTCONN);
    rdlt_assert_rc(rdl_semaphore_set_permits(sem, 3), RDL_ENOTCONN);
    rdlt_assert_rc(rdl_latch_set(latch, 2, 10000), RDL_ENOTCONN);
    rdlt_assert_rc(rdl_latch_count_down(latch), RDL_ENOTCONN);
    rdlt_assert_rc(rdl_latch_await(latch, 0), RDL_ENOTCONN);
    rdlt_assert_rc(rdl_latch_count(latch, &count), RDL_ENOTCONN);
    rdlt_assert_rc(rdl_client_list_locks(c, "*", list_nothing, NULL),
                   RDL_ENOTCONN);
    rdlt_assert_rc(rdl_client_master_count(c, &masters), RDL_ENOTCONN);
    rdlt_assert_rc(rdl_lock_acquire_async(&req, l, A, 0, 1000, never_called),
                   RDL_ENOTCONN);
    rdlt_assert_rc(rdl_lock_release_async(&req, l, A, never_called),
                   RDL_ENOTCONN);
    if (strstr(rdl_client_errmsg(c), "not connected") == NULL)
        fail_msg("errmsg \"%s\" does not say \"not connected\"",
                 rdl_client_errmsg(c));
    assert_string_equal(rdl_err_name(RDL_ENOTCONN), "RDL_ENOTCONN");

    rdl_lock_free(multi);
    rdl_lock_free(l);
    rdl_lock_free(fair);
    rdl_lock_free(sem);
    rdl_rwlock_free(rw);
    rdl_latch_free(latch);
}

static void test_client_calls_before_connect(void **state)
{
    rdlt_server *s = rdlt_server_start();
    int port = rdlt_server_port(s);
    char url[64];
    rdl_client_t *c;
    rdl_lock_t *l;
    (void)state;

    c = rdlt_client_new(rdlt_server_url(s));
    calls_before_connect(c);

    /* A connect that failed leaves the client as new: still not
     * connected, and it can connect later. */
    rdlt_server_stop(s);
    snprintf(url, sizeof(url), "redis://127.0.0.1:%d", port);
    c = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 500, 500));
    rdlt_assert_rc(rdl_client_connect(c), RDL_ECONNREFUSED);
    calls_before_connect(c);
    rdlt_server_restart(s);
    rdlt_assert_ok(rdl_client_connect(c));
    l = rdlt_lock(c, "never");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 1000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
}

/* Closing completes waiting calls with RDL_ECLOSED, at once. */
static void test_client_close_ends_waits(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "close");
    blocked b = {l, -999, 0};
    rdlt_thread *t;
    int64_t closed;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    t = rdlt_thread_start(block_forever, &b);
    rdlt_sleep_ms(200);
    closed = rdlt_now_ms(); /* the waiter may return before close does */
    rdlt_assert_ok(rdl_client_close(c));
    rdlt_thread_join(t);
    rdlt_assert_rc(b.rc, RDL_ECLOSED);
    rdlt_assert_between(b.done_at - closed, 0, 500);
    rdlt_assert_rc(rdl_lock_acquire_as(l, A, 0, 1000), RDL_ECLOSED);
}

static void test_client_stats_count_work(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "stats");
    rdl_client_stats_t a, b;
    (void)state;

    rdlt_assert_ok(rdl_client_stats(c, &a));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 5000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    rdlt_assert_ok(rdl_client_stats(c, &b));
    assert_int_equal(b.acquires - a.acquires, 1);
    assert_int_equal(b.attempts - a.attempts, 1);
    assert_true(b.scripts - a.scripts >= 2);
    assert_true(b.commands - a.commands >= b.scripts - a.scripts);
    assert_int_equal(b.cmd_timeouts, 0);
}

/* The client's own loop thread blocks SIGPIPE (a write to a connection the
 * server closed must fail with EPIPE, not kill the process; libuv does not
 * prevent it on Linux) and the application's signals (SIGINT, SIGTERM go
 * to the application's threads). Read on the loop thread itself. */
typedef struct mask_probe {
    rdl__task task;
    uv_sem_t done;
    int pipe_blocked, int_blocked, segv_blocked;
} mask_probe;

static void read_mask(rdl__task *t, int status)
{
    mask_probe *p = (mask_probe *)t;
    sigset_t cur;
    (void)status;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    p->pipe_blocked = sigismember(&cur, SIGPIPE);
    p->int_blocked = sigismember(&cur, SIGINT);
    p->segv_blocked = sigismember(&cur, SIGSEGV);
    uv_sem_post(&p->done);
}

static void test_client_loop_thread_blocks_signals(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    mask_probe p;
    (void)state;

    memset(&p, 0, sizeof(p));
    assert_int_equal(uv_sem_init(&p.done, 0), 0);
    p.task.run = read_mask;
    rdlt_assert_ok(rdl__client_post(c, &p.task));
    uv_sem_wait(&p.done);
    uv_sem_destroy(&p.done);
    assert_int_equal(p.pipe_blocked, 1);
    assert_int_equal(p.int_blocked, 1);
    assert_int_equal(p.segv_blocked, 0);
}

/* A server (or proxy) that does not know CLIENT: the connection goes
 * unnamed, and everything else works. */
static void test_client_without_client_command(void **state)
{
    static const char *const args[] = {"--rename-command", "CLIENT", "", NULL};
    rdlt_server *s = rdlt_server_start_args(args);
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "unnamed");
    (void)state;
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 5000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
}

/* The server's script calls: FCALLs, EVALSHAs, and FUNCTION LOADs. */
typedef struct calls {
    long long fcall, evalsha, loads;
} calls;

static calls server_calls(rdlt_server *s)
{
    calls k;
    k.fcall = rdlt_cmd_calls(s, "fcall");
    k.evalsha = rdlt_cmd_calls(s, "evalsha");
    k.loads = rdlt_cmd_calls(s, "function|load");
    return k;
}

/* n acquire-and-release cycles with a lease (no watchdog), each checked. */
static void cycles(rdl_lock_t *l, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 5000));
        rdlt_assert_ok(rdl_lock_release_as(l, A));
    }
}

/* Where the server has functions (Redis 7.0+, Valkey), the handshake loads
 * the scripts' library and every script call is an FCALL; before 7.0
 * they are EVALSHAs (docs/design-notes.md "Script cost"). */
static void test_client_calls_functions(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "fn");
    calls k;
    (void)state;

    cycles(l, 10);
    k = server_calls(s);
    if (rdlt_server_has_command(s, "FCALL")) {
        redisReply *r = rdlt_cmd(s, "FUNCTION LIST LIBRARYNAME rdl_*");
        assert_int_equal(r->type, REDIS_REPLY_ARRAY);
        assert_int_equal(r->elements, 1);
        freeReplyObject(r);
        assert_int_equal(k.loads, 1);
        assert_int_equal(k.fcall, 20);
        assert_int_equal(k.evalsha, 0);
    } else {
        assert_int_equal(k.fcall, 0);
        assert_true(k.evalsha >= 18); /* the first of each may be an EVAL */
    }
}

/* FUNCTION FLUSH (or DELETE) under a connected client: the next call runs
 * as EVAL, the library is loaded again once, and the calls after it are
 * FCALLs again. No wait is needed for the reload: the refused call's
 * FUNCTION LOAD goes on its connection before its EVAL (script.c), so
 * the load's reply, which puts the connection back on FCALL, is in before
 * the call returns. */
static void test_client_function_flush(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "flushed");
    calls k0, k1, k2;
    redisReply *r;
    (void)state;

    if (!rdlt_server_has_command(s, "FCALL"))
        skip();
    cycles(l, 2);
    r = rdlt_cmd(s, "FUNCTION FLUSH");
    freeReplyObject(r);
    k0 = server_calls(s);
    cycles(l, 1);
    k1 = server_calls(s);
    assert_int_equal(k1.loads - k0.loads, 1);
    cycles(l, 20);
    k2 = server_calls(s);
    assert_int_equal(k2.loads, k1.loads);
    assert_int_equal(k2.fcall - k1.fcall, 40);
    assert_int_equal(k2.evalsha, k1.evalsha);
    r = rdlt_cmd(s, "FUNCTION LIST LIBRARYNAME rdl_*");
    assert_int_equal(r->elements, 1);
    freeReplyObject(r);
}

/* A client of ACL user `user` (password "pw") on s, not yet connected. */
static rdl_client_t *user_client(rdlt_server *s, const char *user)
{
    char url[128];
    snprintf(url, sizeof(url), "redis://%s:pw@127.0.0.1:%d", user,
             rdlt_server_port(s));
    return rdlt_client_new(url);
}

/* An ACL that refuses FUNCTION and FCALL, from the start or from a moment
 * on: the client's calls go as EVALSHA and every one works. */
static void test_client_functions_refused(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c, *d;
    rdl_lock_t *l;
    calls k0, k1;
    redisReply *r;
    (void)state;

    if (!rdlt_server_has_command(s, "FCALL"))
        skip();
    r = rdlt_cmd(s, "ACL SETUSER carol on >pw ~* &* +@all -function -fcall");
    assert_int_equal(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    c = user_client(s, "carol");
    rdlt_assert_ok(rdl_client_connect(c));
    l = rdlt_lock(c, "acl");
    cycles(l, 5);
    k0 = server_calls(s);
    assert_int_equal(k0.fcall, 0);
    assert_int_equal(k0.loads, 0);

    /* Allowed at connect, refused later: NOPERM, and the call runs as
     * EVAL. */
    r = rdlt_cmd(s, "ACL SETUSER dave on >pw ~* &* +@all");
    freeReplyObject(r);
    d = user_client(s, "dave");
    rdlt_assert_ok(rdl_client_connect(d));
    l = rdlt_lock(d, "acl");
    cycles(l, 2);
    r = rdlt_cmd(s, "ACL SETUSER dave -fcall");
    freeReplyObject(r);
    k0 = server_calls(s);
    cycles(l, 5);
    k1 = server_calls(s);
    assert_int_equal(k1.fcall, k0.fcall);
    assert_true(k1.evalsha - k0.evalsha >= 8);
}

/* How many times the server refused cmd before running it (an ACL's
 * NOPERM): rejected_calls in INFO commandstats. */
static long long rejected_calls(rdlt_server *s, const char *cmd)
{
    redisReply *r = rdlt_cmd(s, "INFO commandstats");
    char field[64];
    const char *at;
    long long n = 0;
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    snprintf(field, sizeof(field), "cmdstat_%s:", cmd);
    at = strstr(r->str, field);
    if (at != NULL && (at = strstr(at, "rejected_calls=")) != NULL)
        n = atoll(at + strlen("rejected_calls="));
    freeReplyObject(r);
    return n;
}

/* An ACL that allows FUNCTION LIST but refuses FUNCTION LOAD: the
 * handshake finds no library and cannot load it, the connect succeeds
 * all the same and the calls go as EVALSHA. Once another user loaded the
 * library, a new connection of this user finds it and calls FCALL. */
static void test_client_function_load_refused(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c, *d;
    rdl_lock_t *l;
    calls k0, k1;
    redisReply *r;
    (void)state;

    if (!rdlt_server_has_command(s, "FCALL"))
        skip();
    r = rdlt_cmd(s, "ACL SETUSER erin on >pw ~* &* +@all -function "
                    "+function|list");
    assert_int_equal(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    c = user_client(s, "erin");
    rdlt_assert_ok(rdl_client_connect(c));
    l = rdlt_lock(c, "list-only");
    cycles(l, 5);
    k0 = server_calls(s);
    assert_int_equal(rejected_calls(s, "function|load"), 1);
    assert_int_equal(k0.loads, 0);
    assert_int_equal(k0.fcall, 0);
    assert_true(k0.evalsha >= 8);
    r = rdlt_cmd(s, "FUNCTION LIST LIBRARYNAME rdl_*");
    assert_int_equal(r->elements, 0);
    freeReplyObject(r);

    (void)rdlt_client(s); /* the default user: its handshake loads it */
    d = user_client(s, "erin");
    rdlt_assert_ok(rdl_client_connect(d));
    l = rdlt_lock(d, "list-only");
    cycles(l, 5);
    k1 = server_calls(s);
    assert_int_equal(k1.loads, 1);
    assert_int_equal(k1.fcall - k0.fcall, 10);
    assert_int_equal(rejected_calls(s, "function|load"), 1);
}

/* 1 if lock `name` is held on server s (its hash has an owner). */
static int held_on(rdlt_server *s, const char *name)
{
    redisReply *r = rdlt_cmd(s, "HGET rdl:lock:{%s} o", name);
    int held = r->type == REDIS_REPLY_STRING && r->len > 0;
    freeReplyObject(r);
    return held;
}

/* One durable acquisition whose FCALL is refused (how: `why`): it runs as
 * EVAL, once, and its grant is confirmed by one WAIT (the replica has it
 * when the call returns); `loads` FUNCTION LOADs go with it. */
static void durable_refused_grant(rdlt_server *m, rdlt_server *rep,
                                  rdl_lock_t *l, const char *name,
                                  long long loads, const char *why)
{
    calls k0 = server_calls(m), k1;
    long long eval0 = rdlt_cmd_calls(m, "eval");
    long long wait0 = rdlt_cmd_calls(m, "wait");
    int rc = rdl_lock_acquire_as(l, A, 0, 5000);
    if (rc != 0)
        fail_msg("%s: acquire: %s", why, rdl_err_name(rc));
    k1 = server_calls(m);
    if (rdlt_cmd_calls(m, "eval") - eval0 != 1 ||
        rdlt_cmd_calls(m, "wait") - wait0 != 1 || k1.loads - k0.loads != loads)
        fail_msg("%s: %lld EVAL, %lld WAIT, %lld FUNCTION LOAD", why,
                 rdlt_cmd_calls(m, "eval") - eval0,
                 rdlt_cmd_calls(m, "wait") - wait0, k1.loads - k0.loads);
    if (!held_on(rep, name))
        fail_msg("%s: the replica has no grant", why);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
}

/* A durable grant (on the durable line, confirmed with WAIT) whose FCALL
 * did not run, because the library is gone ("Function not found") or the
 * ACL refuses FCALL from a moment on (NOPERM naming fcall): the call is
 * sent again as EVAL, succeeds, and is still confirmed; with the replica
 * paused it is refused (RDL_ENOREPLICAS), so the retry does not skip the
 * confirmation. One master and one replica: durability needs no more. */
static void test_client_functions_refused_durable(void **state)
{
    static const char *const no_sync_delay[] = {"--repl-diskless-sync-delay",
                                                "0", NULL};
    rdlt_server *m = rdlt_server_start_args(no_sync_delay);
    rdlt_server *rep;
    rdl_client_t *c;
    rdl_lock_t *l;
    calls k0, k1;
    redisReply *r;
    int64_t deadline;
    int rc;
    (void)state;

    if (!rdlt_server_has_command(m, "FCALL"))
        skip();
    rep = rdlt_server_start_replica(m);
    rdlt_server_wait_replicas(m, 1, 10000);
    r = rdlt_cmd(m, "ACL SETUSER gus on >pw ~* &* +@all");
    assert_int_equal(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    c = user_client(m, "gus");
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 3000));
    rdlt_assert_ok(rdl_client_set_durability(c, 1, 500));
    rc = rdl_client_connect(c);
    if (rc != 0)
        fail_msg("connect: %s: %s", rdl_err_name(rc), rdl_client_errmsg(c));
    l = rdlt_lock(c, "durable-fn");
    cycles(l, 1); /* the durable line opens */
    k0 = server_calls(m);
    cycles(l, 1);
    k1 = server_calls(m);
    assert_int_equal(k1.fcall - k0.fcall, 2);
    k0 = k1;

    /* The replica paused: the EVAL runs the refused call, and WAIT finds
     * no replica with it; the grant is given back. */
    rdlt_server_signal(rep, SIGSTOP);
    r = rdlt_cmd(m, "FUNCTION FLUSH");
    freeReplyObject(r);
    rdlt_assert_rc(rdl_lock_acquire_as(l, A, 0, 5000), RDL_ENOREPLICAS);
    assert_int_equal(server_calls(m).loads - k0.loads, 1);
    rdlt_server_signal(rep, SIGCONT);
    rdlt_server_wait_replicas(m, 1, 10000);
    deadline = rdlt_now_ms() + 5000;
    while (held_on(m, "durable-fn") && rdlt_now_ms() < deadline)
        rdlt_sleep_ms(10);
    assert_false(held_on(m, "durable-fn"));

    /* The library is back: the durable line calls FCALL again. */
    k0 = server_calls(m);
    cycles(l, 1);
    k1 = server_calls(m);
    assert_int_equal(k1.fcall - k0.fcall, 2);

    r = rdlt_cmd(m, "FUNCTION FLUSH");
    freeReplyObject(r);
    durable_refused_grant(m, rep, l, "durable-fn", 1, "Function not found");
    r = rdlt_cmd(m, "ACL SETUSER gus -fcall");
    freeReplyObject(r);
    durable_refused_grant(m, rep, l, "durable-fn", 0, "NOPERM");
    /* Both lines were refused FCALL: they stay on EVALSHA. */
    k0 = server_calls(m);
    cycles(l, 2);
    k1 = server_calls(m);
    assert_int_equal(k1.fcall, k0.fcall);
    assert_true(k1.evalsha - k0.evalsha >= 4);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_client_calls_functions),
    RDLT_TEST(test_client_function_flush),
    RDLT_TEST(test_client_functions_refused),
    RDLT_TEST(test_client_function_load_refused),
    RDLT_TEST(test_client_functions_refused_durable),
    RDLT_TEST(test_client_without_client_command),
    RDLT_TEST(test_client_loop_thread_blocks_signals),
    RDLT_TEST(test_client_connect_and_id),
    RDLT_TEST(test_client_connections_are_named),
    RDLT_TEST(test_client_connect_refused),
    RDLT_TEST(test_client_calls_before_connect),
    RDLT_TEST(test_client_connect_timeout),
    RDLT_TEST(test_client_configuration_after_connect),
    RDLT_TEST(test_client_configuration_ranges),
    RDLT_TEST(test_client_password),
    RDLT_TEST(test_client_acl_user),
    RDLT_TEST(test_client_no_channel_access_release),
    RDLT_TEST(test_client_no_channel_access_wait),
    RDLT_TEST(test_client_database),
    RDLT_TEST(test_client_prefix),
    RDLT_TEST(test_client_close_ends_waits),
    RDLT_TEST(test_client_stats_count_work),
};

RDLT_MAIN(tests)
