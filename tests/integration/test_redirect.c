/* Cluster redirects and failures on cue (src/cluster/router.c), against
 * scripted fake nodes (tests/support/fake.c) that forward what they do not
 * script to a real standalone server. Each test says exactly which reply
 * the client gets and checks what it sent where. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdlt.h"
#include "internal.h"
#include "cluster/cluster_int.h" /* RDL__REDIRECT_BUDGET */

#define A ((rdl_owner_t)1)

/* Two fake nodes in front of one server, and the scenario's state. */
typedef struct scene {
    rdlt_server *backend;
    rdlt_fake *a, *b;
    unsigned slot; /* of the lock "r" */
    int mode;
    int saw_publish, saw_spublish; /* a script was asked to use it */
} scene;

enum {
    MOVED_ONCE,
    ASK_ONCE,
    TRYAGAIN_3,
    CLUSTERDOWN,
    PING_PONG,
    NOSCRIPT_ONCE,
    DROP_ONCE,
    APPLIED_DROP_ONCE,
    OLD_SERVER,
    SLOTS_FAIL_ONCE,
    SLOTS_HALVES,
    SLOTS_PARTIAL,
    PLAIN
};

static int is_cmd(char **argv, size_t *lens, const char *name)
{
    return lens[0] == strlen(name) && strncasecmp(argv[0], name, lens[0]) == 0;
}

static int rule(rdlt_fake *f, void *data, int argc, char **argv, size_t *lens,
                unsigned n, char *out, size_t outlen)
{
    scene *s = data;
    int other = rdlt_fake_port(f == s->a ? s->b : s->a), i;
    if (s->mode == OLD_SERVER && is_cmd(argv, lens, "COMMAND")) {
        snprintf(out, outlen, "*1\r\n$-1\r\n"); /* no SPUBLISH here */
        return RDLT_FAKE_REPLY;
    }
    if (is_cmd(argv, lens, "SUBSCRIBE") && argc == 2) {
        snprintf(out, outlen, "*3\r\n$9\r\nsubscribe\r\n$%zu\r\n%s\r\n:1\r\n",
                 lens[1], argv[1]);
        return RDLT_FAKE_REPLY;
    }
    if ((s->mode == SLOTS_HALVES || s->mode == SLOTS_PARTIAL) &&
        is_cmd(argv, lens, "CLUSTER")) {
        /* a serves the first half; b the second, or nobody. */
        int pa = rdlt_fake_port(s->a), pb = rdlt_fake_port(s->b);
        if (s->mode == SLOTS_HALVES)
            snprintf(out, outlen,
                     "*2\r\n*3\r\n:0\r\n:8191\r\n*2\r\n$9\r\n127.0.0.1\r\n"
                     ":%d\r\n*3\r\n:8192\r\n:16383\r\n*2\r\n$9\r\n"
                     "127.0.0.1\r\n:%d\r\n",
                     pa, pb);
        else
            snprintf(out, outlen,
                     "*1\r\n*3\r\n:0\r\n:8191\r\n*2\r\n$9\r\n127.0.0.1\r\n"
                     ":%d\r\n",
                     pa);
        return RDLT_FAKE_REPLY;
    }
    if (s->mode == SLOTS_FAIL_ONCE && is_cmd(argv, lens, "CLUSTER") && n == 1) {
        snprintf(out, outlen, "-ERR not ready yet\r\n");
        return RDLT_FAKE_REPLY;
    }
    if (!is_cmd(argv, lens, "EVALSHA") && !is_cmd(argv, lens, "EVAL"))
        return RDLT_FAKE_FORWARD;
    for (i = 1; i < argc; i++) {
        if (is_cmd(argv + i, lens + i, "publish"))
            __atomic_store_n(&s->saw_publish, 1, __ATOMIC_SEQ_CST);
        if (is_cmd(argv + i, lens + i, "spublish"))
            __atomic_store_n(&s->saw_spublish, 1, __ATOMIC_SEQ_CST);
    }
    if (!is_cmd(argv, lens, "EVALSHA"))
        return RDLT_FAKE_FORWARD;
    switch (s->mode) {
    case MOVED_ONCE:
        if (f != s->a || n != 1)
            return RDLT_FAKE_FORWARD;
        /* The slot moved to b: both nodes say so from now on. */
        rdlt_fake_set_owner(s->a, other);
        rdlt_fake_set_owner(s->b, other);
        snprintf(out, outlen, "-MOVED %u 127.0.0.1:%d\r\n", s->slot, other);
        return RDLT_FAKE_REPLY;
    case ASK_ONCE:
        if (f != s->a || n != 1)
            return RDLT_FAKE_FORWARD;
        snprintf(out, outlen, "-ASK %u 127.0.0.1:%d\r\n", s->slot, other);
        return RDLT_FAKE_REPLY;
    case TRYAGAIN_3:
        if (n > 3)
            return RDLT_FAKE_FORWARD;
        snprintf(out, outlen,
                 "-TRYAGAIN Multiple keys request during "
                 "rehashing of slot\r\n");
        return RDLT_FAKE_REPLY;
    case CLUSTERDOWN:
        snprintf(out, outlen, "-CLUSTERDOWN The cluster is down\r\n");
        return RDLT_FAKE_REPLY;
    case PING_PONG:
        snprintf(out, outlen, "-MOVED %u 127.0.0.1:%d\r\n", s->slot, other);
        return RDLT_FAKE_REPLY;
    case NOSCRIPT_ONCE:
        if (n != 1)
            return RDLT_FAKE_FORWARD;
        snprintf(out, outlen, "-NOSCRIPT No matching script.\r\n");
        return RDLT_FAKE_REPLY;
    case DROP_ONCE:
        return n == 1 ? RDLT_FAKE_DROP : RDLT_FAKE_FORWARD;
    case APPLIED_DROP_ONCE:
        return n == 1 ? RDLT_FAKE_FORWARD_DROP : RDLT_FAKE_FORWARD;
    }
    return RDLT_FAKE_FORWARD;
}

static scene *scene_start(int mode)
{
    static scene s;
    memset(&s, 0, sizeof(s));
    s.mode = mode;
    s.slot = rdl__slot("rdl:lock:{r}", strlen("rdl:lock:{r}"));
    s.backend = rdlt_server_start();
    /* The backend starts without scripts: its own NOSCRIPT replies reach
     * the client through the fakes like any other reply. */
    s.a = rdlt_fake_start(s.backend, rule, &s);
    s.b = rdlt_fake_start(s.backend, rule, &s);
    return &s;
}

static rdl_client_t *client_for(scene *s, int64_t command_ms)
{
    char url[128];
    rdl_client_t *c;
    int rc;
    snprintf(url, sizeof(url), "redis+cluster://127.0.0.1:%d",
             rdlt_fake_port(s->a));
    c = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, command_ms));
    rc = rdl_client_connect(c);
    if (rc != 0)
        fail_msg("connect: %s: %s", rdl_err_name(rc), rdl_client_errmsg(c));
    return c;
}

/* The test's log check: `want` occurs in the fake's command log. */
static void assert_log_has(rdlt_fake *f, const char *want)
{
    char *log = rdlt_fake_log(f);
    int ok = strstr(log, want) != NULL;
    if (!ok) {
        char copy[512];
        snprintf(copy, sizeof(copy), "%s", log);
        free(log);
        fail_msg("log \"%s\" lacks \"%s\"", copy, want);
    }
    free(log);
}

/* MOVED: the command goes to the new owner, the table is fixed (the
 * release goes straight there) and a refresh follows. */
static void test_redirect_moved(void **state)
{
    scene *s = scene_start(MOVED_ONCE);
    rdl_client_t *c = client_for(s, 2000);
    rdl_lock_t *l = rdlt_lock(c, "r");
    int64_t end;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    assert_int_equal(rdlt_stats(c).redirects, 1);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    assert_int_equal(rdlt_fake_count(s->a, "EVALSHA"), 1);
    assert_int_equal(rdlt_fake_count(s->b, "EVALSHA"), 2);
    end = rdlt_now_ms() + 2000;
    while (rdlt_stats(c).refreshes < 2 && rdlt_now_ms() < end)
        rdlt_sleep_ms(10);
    assert_true(rdlt_stats(c).refreshes >= 2);
}

/* ASK: ASKING and the command, back to back on the node named; the table
 * is not changed, so the next command goes to the owner again. */
static void test_redirect_ask(void **state)
{
    scene *s = scene_start(ASK_ONCE);
    rdl_client_t *c = client_for(s, 2000);
    rdl_lock_t *l = rdlt_lock(c, "r");
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    assert_log_has(s->b, "ASKING EVALSHA");
    assert_int_equal(rdlt_fake_count(s->b, "ASKING"), 1);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    assert_int_equal(rdlt_fake_count(s->a, "EVALSHA"), 2);
    assert_int_equal(rdlt_fake_count(s->b, "EVALSHA"), 1);
    assert_int_equal(rdlt_stats(c).redirects, 1);
}

/* TRYAGAIN is retried with backoff until it passes. */
static void test_redirect_tryagain(void **state)
{
    scene *s = scene_start(TRYAGAIN_3);
    rdl_client_t *c = client_for(s, 2000);
    rdl_lock_t *l = rdlt_lock(c, "r");
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    assert_int_equal(rdlt_fake_count(s->a, "EVALSHA"), 4);
    assert_int_equal(rdlt_stats(c).redirects, 0);
    assert_true(rdlt_info(l, A).held_by_owner);
}

/* CLUSTERDOWN is retried within the command timeout, then reported. */
static void test_redirect_clusterdown(void **state)
{
    scene *s = scene_start(CLUSTERDOWN);
    rdl_client_t *c = client_for(s, 500);
    rdl_lock_t *l = rdlt_lock(c, "r");
    int64_t t0 = rdlt_now_ms();
    (void)state;

    rdlt_assert_rc(rdl_lock_acquire_as(l, A, 0, 30000), RDL_ECLUSTERDOWN);
    rdlt_assert_between(rdlt_now_ms() - t0, 200, 3000);
    assert_true(rdlt_fake_count(s->a, "EVALSHA") >= 3);
    assert_true(strlen(rdl_client_errmsg(c)) > 0);
}

/* Two nodes that send a command to each other: the budget ends it. */
static void test_redirect_budget(void **state)
{
    scene *s = scene_start(PING_PONG);
    rdl_client_t *c = client_for(s, 2000);
    rdl_lock_t *l = rdlt_lock(c, "r");
    (void)state;

    rdlt_assert_rc(rdl_lock_acquire_as(l, A, 0, 30000), RDL_EREDIRECT);
    assert_int_equal(rdlt_stats(c).redirects, RDL__REDIRECT_BUDGET + 1);
    assert_int_equal(rdlt_fake_count(s->a, "EVALSHA") +
                         rdlt_fake_count(s->b, "EVALSHA"),
                     RDL__REDIRECT_BUDGET + 1);
}

/* NOSCRIPT (a node that never ran the script): the same call as EVAL. */
static void test_redirect_noscript(void **state)
{
    scene *s = scene_start(NOSCRIPT_ONCE);
    rdl_client_t *c = client_for(s, 2000);
    rdl_lock_t *l = rdlt_lock(c, "r");
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    assert_log_has(s->a, "EVALSHA EVAL");
    assert_int_equal(rdlt_stats(c).script_loads, 1);
    /* The release script is new to the backend: a real NOSCRIPT, and the
     * same recovery. */
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    assert_int_equal(rdlt_fake_count(s->a, "EVAL"), 2);
    assert_int_equal(rdlt_stats(c).script_loads, 2);
    /* Both are cached now: EVALSHA alone from here on. */
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    assert_int_equal(rdlt_fake_count(s->a, "EVAL"), 2);
    assert_int_equal(rdlt_fake_count(s->a, "EVALSHA"), 4);
    assert_false(rdlt_info(l, A).locked);
}

/* A connection dropped before the command ran: the retry after the
 * reconnect takes the lock once. */
static void test_redirect_drop_before(void **state)
{
    scene *s = scene_start(DROP_ONCE);
    rdl_client_t *c = client_for(s, 2000);
    rdl_lock_t *l = rdlt_lock(c, "r");
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 5000, 30000));
    assert_int_equal(rdlt_fake_count(s->a, "EVALSHA"), 2);
    assert_int_equal(rdlt_info(l, A).hold_count, 1);
}

/* A connection dropped after the command ran, before its reply: the retry
 * (same request id) reports the hold instead of taking a second level. */
static void test_redirect_drop_after_applied(void **state)
{
    scene *s = scene_start(APPLIED_DROP_ONCE);
    rdl_client_t *c = client_for(s, 2000);
    rdl_lock_t *l = rdlt_lock(c, "r");
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 5000, 30000));
    assert_int_equal(rdlt_fake_count(s->a, "EVALSHA"), 2);
    assert_int_equal(rdlt_info(l, A).hold_count, 1);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    assert_false(rdlt_info(l, A).locked);
}

/* A seed that refuses connections is skipped for the next one. */
static void test_redirect_seed_fallback(void **state)
{
    scene *s = scene_start(MOVED_ONCE);
    rdlt_server *dead = rdlt_server_start();
    char url[160];
    rdl_client_t *c;
    int port = rdlt_server_port(dead);
    (void)state;

    rdlt_server_stop(dead);
    snprintf(url, sizeof(url), "redis+cluster://127.0.0.1:%d,127.0.0.1:%d",
             port, rdlt_fake_port(s->b));
    c = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 2000));
    rdlt_assert_ok(rdl_client_connect(c));
    assert_int_equal(rdlt_fake_count(s->b, "CLUSTER"), 1);
}

/* A server without cluster support is refused at connect, saying why. */
static void test_redirect_not_a_cluster(void **state)
{
    rdlt_server *plain = rdlt_server_start();
    char url[128];
    rdl_client_t *c;
    int rc;
    (void)state;

    snprintf(url, sizeof(url), "redis+cluster://127.0.0.1:%d",
             rdlt_server_port(plain));
    c = rdlt_client_new(url);
    rc = rdl_client_connect(c);
    assert_true(rc < 0);
    if (strstr(rdl_client_errmsg(c), "CLUSTER SLOTS") == NULL)
        fail_msg("errmsg \"%s\" does not name CLUSTER SLOTS",
                 rdl_client_errmsg(c));
}

/* A waiter that times out on a held lock, then the holder's release: what
 * the client subscribed with and what the release script publishes with. */
static void wait_then_release(rdl_client_t *c)
{
    rdl_lock_t *l = rdlt_lock(c, "r");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    rdlt_assert_rc(rdl_lock_acquire_as(l, A + 1, 300, 30000), RDL_ETIMEDOUT);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
}

/* Redis 7 nodes: sharded pub/sub on both sides. (The fake nodes pass
 * COMMAND INFO and SPUBLISH on to their backend: a server without sharded
 * pub/sub, Redis 6.2, cannot play this scene; the next test plays it.) */
static void test_redirect_sharded_pubsub(void **state)
{
    scene *s = scene_start(PLAIN);
    (void)state;
    if (!rdlt_server_has_command(s->backend, "SPUBLISH")) {
        print_message("rdlt: the server has no SPUBLISH; skipping\n");
        skip();
    }
    wait_then_release(client_for(s, 2000));
    assert_int_equal(rdlt_fake_count(s->a, "SSUBSCRIBE"), 1);
    assert_int_equal(rdlt_fake_count(s->a, "SUBSCRIBE"), 0);
    assert_true(__atomic_load_n(&s->saw_spublish, __ATOMIC_SEQ_CST));
    assert_false(__atomic_load_n(&s->saw_publish, __ATOMIC_SEQ_CST));
}

/* Nodes without SPUBLISH (before 7.0): classic pub/sub on both sides. */
static void test_redirect_classic_pubsub_fallback(void **state)
{
    scene *s = scene_start(OLD_SERVER);
    (void)state;
    wait_then_release(client_for(s, 2000));
    assert_int_equal(rdlt_fake_count(s->a, "SUBSCRIBE"), 1);
    assert_int_equal(rdlt_fake_count(s->a, "SSUBSCRIBE"), 0);
    assert_true(__atomic_load_n(&s->saw_publish, __ATOMIC_SEQ_CST));
    assert_false(__atomic_load_n(&s->saw_spublish, __ATOMIC_SEQ_CST));
}

typedef struct loop_ctx {
    rdl_client_t *c;
    int rc;
} loop_ctx;

static void do_connect(void *arg)
{
    loop_ctx *x = arg;
    x->rc = rdl_client_connect(x->c);
}

/* On the caller's loop connect returns at once; a seed that cannot give
 * the table yet is asked again, locks work meanwhile (MOVED would lead
 * them), and closing leaves no handle open on the caller's loop. */
static void test_redirect_user_loop_first_round_retried(void **state)
{
    scene *s = scene_start(SLOTS_FAIL_ONCE);
    rdlt_loop *lp = rdlt_loop_start();
    char url[128];
    loop_ctx x;
    rdl_lock_t *l;
    int64_t end;
    (void)state;

    snprintf(url, sizeof(url), "redis+cluster://127.0.0.1:%d",
             rdlt_fake_port(s->a));
    x.c = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_set_timeouts_ms(x.c, 2000, 2000));
    rdlt_assert_ok(rdl_client_set_loop(x.c, rdlt_loop_uv(lp)));
    rdlt_loop_call(lp, do_connect, &x);
    rdlt_assert_ok(x.rc);
    end = rdlt_now_ms() + 3000;
    while (rdlt_fake_count(s->a, "CLUSTER") < 2 && rdlt_now_ms() < end)
        rdlt_sleep_ms(10);
    assert_int_equal(rdlt_fake_count(s->a, "CLUSTER"), 2);
    l = rdlt_lock(x.c, "r");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    rdlt_lock_free(l);
    rdlt_client_free(x.c);
    assert_int_equal(rdlt_loop_stop(lp), 0);
}

static int count_lock(const rdl_lock_entry_t *e, void *data)
{
    (void)e;
    (*(int *)data)++;
    return 0;
}

/* A listing scans each master of the table once, by a slot it serves.
 * Both fakes show the same backend, so every key comes back twice, from
 * two masters: each lock is still listed once. */
static void test_redirect_list_each_master(void **state)
{
    scene *s = scene_start(SLOTS_HALVES);
    rdl_client_t *c = client_for(s, 2000);
    size_t masters = 0;
    int seen = 0;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(rdlt_lock(c, "r"), A, 0, 30000));
    rdlt_assert_ok(rdl_lock_acquire_as(rdlt_lock(c, "q"), A, 0, 30000));
    rdlt_assert_ok(rdl_client_master_count(c, &masters));
    assert_int_equal(masters, 2);
    rdlt_assert_ok(rdl_client_list_locks(c, NULL, count_lock, &seen));
    assert_int_equal(seen, 2);
    assert_int_equal(rdlt_fake_count(s->a, "SCAN"), 1);
    assert_int_equal(rdlt_fake_count(s->b, "SCAN"), 1);
    assert_int_equal(rdlt_fake_count(s->a, "TIME"), 1);
    assert_int_equal(rdlt_fake_count(s->b, "TIME"), 1);
}

/* Slots no master serves: the listing fails rather than leave their
 * keys out, and scans nothing. */
static void test_redirect_list_uncovered_slots(void **state)
{
    scene *s = scene_start(SLOTS_PARTIAL);
    rdl_client_t *c = client_for(s, 2000);
    size_t masters = 9;
    int seen = 0;
    (void)state;

    rdlt_assert_rc(rdl_client_list_locks(c, NULL, count_lock, &seen),
                   RDL_ECLUSTERDOWN);
    assert_non_null(strstr(rdl_client_errmsg(c), "slot 8192"));
    rdlt_assert_rc(rdl_client_master_count(c, &masters), RDL_ECLUSTERDOWN);
    assert_int_equal(masters, 0);
    assert_int_equal(seen, 0);
    assert_int_equal(rdlt_fake_count(s->a, "SCAN"), 0);
    assert_int_equal(rdlt_fake_count(s->b, "SCAN"), 0);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_redirect_moved),
    RDLT_TEST(test_redirect_ask),
    RDLT_TEST(test_redirect_tryagain),
    RDLT_TEST(test_redirect_clusterdown),
    RDLT_TEST(test_redirect_budget),
    RDLT_TEST(test_redirect_noscript),
    RDLT_TEST(test_redirect_drop_before),
    RDLT_TEST(test_redirect_drop_after_applied),
    RDLT_TEST(test_redirect_seed_fallback),
    RDLT_TEST(test_redirect_not_a_cluster),
    RDLT_TEST(test_redirect_sharded_pubsub),
    RDLT_TEST(test_redirect_classic_pubsub_fallback),
    RDLT_TEST(test_redirect_user_loop_first_round_retried),
    RDLT_TEST(test_redirect_list_each_master),
    RDLT_TEST(test_redirect_list_uncovered_slots),
};

RDLT_MAIN(tests)
