/* The watchdog (src/watchdog, docs/design.md#watchdog): RDL_LEASE_AUTO holds
 * outlive their lease while held, stop being renewed when released or freed,
 * are renewed in batches, and are reported when lost. Leases here are short
 * (100..1000 ms) so each test runs in seconds. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdlt.h"

#define A ((rdl_owner_t)1)
#define B ((rdl_owner_t)2)

static rdl_client_t *wd_client(rdlt_server *s, int64_t lease_ms,
                               int64_t command_ms)
{
    rdl_client_t *c = rdlt_client_new(rdlt_server_url(s));
    int rc;
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, command_ms));
    rdlt_assert_ok(rdl_client_set_watchdog_ms(c, lease_ms));
    rc = rdl_client_connect(c);
    if (rc != 0)
        fail_msg("connect: %s: %s", rdl_err_name(rc), rdl_client_errmsg(c));
    return c;
}

static long long pttl(rdlt_server *s, const char *key)
{
    redisReply *r = rdlt_cmd(s, "PTTL %s", key);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

/* A server that accepts DEBUG (off by default since Redis 7). */
static rdlt_server *debug_server(void)
{
    static const char *const args[] = {"--enable-debug-command", "yes", NULL};
    return rdlt_server_start_args(args);
}

/* Runs a command that must succeed (DEBUG SLEEP, CLIENT PAUSE). */
static void check_ok(redisReply *r, const char *cmd)
{
    if (r->type == REDIS_REPLY_ERROR)
        fail_msg("%s: %s", cmd, r->str);
    freeReplyObject(r);
}
#define ok_cmd(s, cmd) check_ok(rdlt_cmd(s, cmd), cmd)

/* Lost callbacks, recorded. */
typedef struct lost_log {
    int count;
    int reason;
    rdl_owner_t owner;
} lost_log;

static void on_lost(rdl_lock_t *lock, rdl_owner_t owner, int reason, void *data)
{
    lost_log *log = data;
    (void)lock;
    log->owner = owner;
    log->reason = reason;
    __atomic_add_fetch(&log->count, 1, __ATOMIC_RELEASE);
}

/* ---- renewal ----------------------------------------------------------------- */

/* A hold outlives ten leases while its owner works, then a release frees
 * it and renewals stop. */
static void test_watchdog_hold_outlives_ten_leases(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = wd_client(s, 300, 1000), *other = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "long-job"),
               *lo = rdlt_lock(other, "long-job");
    rdl_client_stats_t st;
    lost_log log = {0, 0, 0};
    int i;
    (void)state;

    rdlt_assert_ok(rdl_lock_set_lost_cb(l, on_lost, &log));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, RDL_LEASE_AUTO));
    rdlt_assert_between(pttl(s, "rdl:lock:{long-job}"), 1, 300);
    for (i = 0; i < 10; i++) {
        rdlt_sleep_ms(300);
        rdlt_assert_rc(rdl_lock_acquire_as(lo, B, 0, 1000), RDL_EBUSY);
        rdlt_assert_between(pttl(s, "rdl:lock:{long-job}"), 1, 300);
        assert_true(rdl_lock_valid_ms(l, A) > 0);
    }
    st = rdlt_stats(c);
    /* One renewal per period (100 ms) over 3 s, give or take. */
    rdlt_assert_between(st.renewals, 20, 40);
    assert_int_equal(st.holds_lost, 0);
    assert_int_equal(log.count, 0);

    rdlt_assert_ok(rdl_lock_release_as(l, A));
    assert_int_equal(rdlt_count_held(s, "*"), 0);
    assert_int_equal(rdl_lock_valid_ms(l, A), 0);
    st = rdlt_stats(c);
    rdlt_sleep_ms(400);
    assert_int_equal(rdlt_stats(c).renewal_calls, st.renewal_calls);
    rdlt_assert_ok(rdl_lock_acquire_as(lo, B, 0, 1000));
}

/* A fixed lease is never renewed. */
static void test_watchdog_fixed_lease_not_renewed(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = wd_client(s, 300, 1000);
    rdl_lock_t *l = rdlt_lock(c, "fixed");
    int64_t valid;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 500));
    valid = rdl_lock_valid_ms(l, A);
    rdlt_assert_between(valid, 400, 500);
    rdlt_sleep_ms(700);
    assert_int_equal(rdlt_count_held(s, "rdl:lock:{fixed}"), 0);
    assert_int_equal(rdl_lock_valid_ms(l, A), 0);
    assert_int_equal(rdlt_stats(c).renewal_calls, 0);
    rdlt_assert_rc(rdl_lock_release_as(l, A), RDL_ELOST);
}

/* A reentrant hold is renewed while any level is held. */
static void test_watchdog_reentrant_renewed_until_last_release(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = wd_client(s, 300, 1000);
    rdl_lock_t *l = rdlt_lock(c, "re");
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, RDL_LEASE_AUTO));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, RDL_LEASE_AUTO));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    rdlt_sleep_ms(1000);
    assert_int_equal(rdlt_info(l, A).hold_count, 1);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    assert_int_equal(rdlt_info(l, A).locked, 0);
    rdlt_sleep_ms(400);
    assert_int_equal(rdlt_info(l, A).locked, 0);
}

/* A fixed-lease hold re-entered with RDL_LEASE_AUTO becomes auto. */
static void test_watchdog_fixed_then_auto_reentry(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = wd_client(s, 300, 1000);
    rdl_lock_t *l = rdlt_lock(c, "mixed");
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 200));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, RDL_LEASE_AUTO));
    rdlt_sleep_ms(900);
    assert_int_equal(rdlt_info(l, A).hold_count, 2);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    assert_int_equal(rdlt_info(l, A).locked, 0);
}

/* 10,000 auto-leased holds: at most 100 renewal calls per period, every
 * hold renewed, none lost. */
static void test_watchdog_ten_thousand_holds_batched(void **state)
{
    enum { N = 10000 };
    const int64_t lease = 6000, period = lease / 3;
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = wd_client(s, lease, 2000);
    rdl_lock_t **locks = calloc(N, sizeof(*locks));
    rdl_client_stats_t st0, st1;
    char name[32];
    int i;
    (void)state;

    assert_non_null(locks);
    for (i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "many-%d", i);
        rdlt_assert_ok(rdl_lock_new(c, name, &locks[i]));
        rdlt_assert_ok(rdl_lock_acquire_as(locks[i], A, 0, RDL_LEASE_AUTO));
    }
    /* Measured in the steady state: the first renewal of each hold may
     * come early, to join a batch; after it, holds renewed together stay
     * together. */
    rdlt_sleep_ms(period);
    st0 = rdlt_stats(c);
    rdlt_sleep_ms(2 * period);
    st1 = rdlt_stats(c);
    print_message("2 periods: %llu renewal calls, %llu holds renewed\n",
                  (unsigned long long)(st1.renewal_calls - st0.renewal_calls),
                  (unsigned long long)(st1.renewals - st0.renewals));
    rdlt_assert_between(st1.renewal_calls - st0.renewal_calls, 1, 2 * 100);
    rdlt_assert_between(st1.renewals - st0.renewals, N, 3 * N);
    assert_int_equal(st1.holds_lost, 0);
    assert_int_equal(st1.renewal_failures, 0);
    for (i = 0; i < N; i++) {
        rdlt_assert_ok(rdl_lock_release_as(locks[i], A));
        rdl_lock_free(locks[i]);
    }
    free(locks);
    assert_int_equal(rdlt_count_held(s, "rdl:lock:*"), 0);
}

/* Releases racing renewals in flight never leave the key alive. */
static void test_watchdog_release_during_renewal(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = wd_client(s, 300, 1000);
    rdl_lock_t *l = rdlt_lock(c, "race");
    lost_log log = {0, 0, 0};
    int i, alive = 0;
    (void)state;

    rdlt_assert_ok(rdl_lock_set_lost_cb(l, on_lost, &log));
    srand(7);
    for (i = 0; i < 100; i++) {
        int rc;
        rdlt_assert_ok(rdl_lock_acquire_as(l, A, 1000, RDL_LEASE_AUTO));
        rdlt_sleep_ms(rand() % 110); /* the period is 100 ms */
        rc = rdl_lock_release_as(l, A);
        if (rc != 0)
            fail_msg("iteration %d: release %s, lost %d (%s)", i,
                     rdl_err_name(rc), log.count, rdl_err_name(log.reason));
        alive += rdlt_count_held(s, "rdl:lock:{race}") != 0;
    }
    assert_int_equal(alive, 0);
    assert_true(rdlt_stats(c).renewals > 0); /* renewals did overlap the loop */
    rdlt_sleep_ms(400);
    assert_int_equal(rdlt_count_held(s, "rdl:lock:{race}"), 0);
}

/* A freed lock object's holds are no longer renewed: they expire within
 * one lease (and a period), and no callback runs. */
static void test_watchdog_freed_lock_stops_renewal(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = wd_client(s, 300, 1000);
    rdl_lock_t *l = NULL;
    lost_log log = {0, 0, 0};
    (void)state;

    rdlt_assert_ok(rdl_lock_new(c, "freed", &l));
    rdlt_assert_ok(rdl_lock_set_lost_cb(l, on_lost, &log));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, RDL_LEASE_AUTO));
    rdl_lock_free(l);
    rdlt_sleep_ms(600);
    assert_int_equal(rdlt_count_held(s, "rdl:lock:{freed}"), 0);
    assert_int_equal(log.count, 0);
}

/* ---- lost holds -------------------------------------------------------------- */

/* Another client force-releases the hold: the next renewal finds it gone,
 * the callback runs once with RDL_ELOST, the release reports RDL_ELOST, and
 * the owner can acquire again. */
static void test_watchdog_lost_on_force_release(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = wd_client(s, 300, 1000), *other = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "forced"), *lo = rdlt_lock(other, "forced");
    lost_log log = {0, 0, 0};
    (void)state;

    rdlt_assert_ok(rdl_lock_set_lost_cb(l, on_lost, &log));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, RDL_LEASE_AUTO));
    rdlt_assert_ok(rdl_lock_force_release(lo));
    rdlt_assert_ok(rdl_lock_acquire_as(lo, B, 0, 5000));
    if (!rdlt_wait_flag(&log.count, 1000))
        fail_msg("no lost callback within 1 s");
    rdlt_sleep_ms(300);
    assert_int_equal(log.count, 1);
    rdlt_assert_rc(log.reason, RDL_ELOST);
    assert_true(log.owner == A);
    assert_int_equal(rdl_lock_valid_ms(l, A), 0);
    assert_int_equal(rdl_lock_fencing_token(l, A), 0);
    assert_int_equal(rdlt_stats(c).holds_lost, 1);
    rdlt_assert_rc(rdl_lock_release_as(l, A), RDL_ELOST);
    assert_int_equal(rdlt_info(lo, B).hold_count, 1); /* untouched */
    rdlt_assert_ok(rdl_lock_release_as(lo, B));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, RDL_LEASE_AUTO));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
}

/* DEBUG SLEEP and CLIENT PAUSE shorter than the lease lose nothing. */
static void test_watchdog_server_stall_shorter_than_lease(void **state)
{
    rdlt_server *s = debug_server();
    rdl_client_t *c = wd_client(s, 1000, 2000);
    rdl_lock_t *l = rdlt_lock(c, "stall");
    lost_log log = {0, 0, 0};
    int i;
    (void)state;

    rdlt_assert_ok(rdl_lock_set_lost_cb(l, on_lost, &log));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, RDL_LEASE_AUTO));
    for (i = 0; i < 3; i++) {
        ok_cmd(s, "DEBUG SLEEP 0.4");
        rdlt_sleep_ms(400);
        ok_cmd(s, "CLIENT PAUSE 400 ALL");
        rdlt_sleep_ms(800);
    }
    assert_int_equal(log.count, 0);
    assert_int_equal(rdlt_stats(c).holds_lost, 0);
    assert_true(rdl_lock_valid_ms(l, A) > 0);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
}

/* A server stall longer than the lease reports the hold lost, once. */
static void test_watchdog_server_stall_longer_than_lease(void **state)
{
    rdlt_server *s = debug_server();
    rdl_client_t *c = wd_client(s, 300, 1000);
    rdl_lock_t *l = rdlt_lock(c, "long-stall");
    lost_log log = {0, 0, 0};
    (void)state;

    rdlt_assert_ok(rdl_lock_set_lost_cb(l, on_lost, &log));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, RDL_LEASE_AUTO));
    ok_cmd(s, "DEBUG SLEEP 1");
    if (!rdlt_wait_flag(&log.count, 2000))
        fail_msg("no lost callback within 2 s of the stall");
    rdlt_sleep_ms(300);
    assert_int_equal(log.count, 1);
    print_message("lost: %s\n", rdl_err_name(log.reason));
    assert_true(log.reason < 0);
    rdlt_assert_rc(rdl_lock_release_as(l, A), RDL_ELOST);
    assert_int_equal(rdlt_count_held(s, "rdl:lock:{long-stall}"), 0);
}

/* ---- processes ----------------------------------------------------------------- */

typedef struct holder {
    char url[64];
    const char *name;
    int64_t lease_ms; /* watchdog lease */
    int fd;
    int lost;
} holder;

static void child_lost(rdl_lock_t *lock, rdl_owner_t owner, int reason,
                       void *data)
{
    holder *h = data;
    (void)lock;
    (void)owner;
    rdlt_child_say(h->fd, "lost %s", rdl_err_name(reason));
    __atomic_store_n(&h->lost, 1, __ATOMIC_RELEASE);
}

/* Child: holds the lock with RDL_LEASE_AUTO until the watchdog reports it
 * lost, then releases it and reports the result. */
static int hold(void *arg, int fd)
{
    holder *h = arg;
    rdl_client_t *c = NULL;
    rdl_lock_t *l = NULL;
    int rc;

    h->fd = fd;
    if ((rc = rdl_client_new(&c)) != 0 ||
        (rc = rdl_client_set_url(c, h->url)) != 0 ||
        (rc = rdl_client_set_watchdog_ms(c, h->lease_ms)) != 0 ||
        (rc = rdl_client_connect(c)) != 0 ||
        (rc = rdl_lock_new(c, h->name, &l)) != 0 ||
        (rc = rdl_lock_set_lost_cb(l, child_lost, h)) != 0 ||
        (rc = rdl_lock_acquire(l, 0, RDL_LEASE_AUTO)) != 0) {
        rdlt_child_say(fd, "error %s", rdl_err_name(rc));
        return 1;
    }
    rdlt_child_say(
        fd, "acquired %llu",
        (unsigned long long)rdl_lock_fencing_token(l, rdl_owner_self()));
    while (!__atomic_load_n(&h->lost, __ATOMIC_ACQUIRE))
        rdlt_sleep_ms(5);
    rc = rdl_lock_release(l);
    rdlt_child_say(fd, "released %s", rdl_err_name(rc));
    rdl_lock_free(l);
    rdl_client_free(c);
    return 0;
}

static uint64_t expect_acquired(rdlt_child *ch)
{
    char line[256];
    unsigned long long token = 0;
    if (rdlt_child_hear(ch, line, sizeof(line), 10000) != 0)
        fail_msg("the holder process said nothing");
    if (sscanf(line, "acquired %llu", &token) != 1 || token == 0)
        fail_msg("holder process: %s", line);
    return token;
}

/* The owner process is killed: the hold ends within one lease. */
static void test_watchdog_owner_killed(void **state)
{
    rdlt_server *s = rdlt_server_start();
    holder h = {"", "wd-killed", 300, -1, 0};
    rdlt_child *ch;
    rdl_client_t *c;
    rdl_lock_t *l;
    int64_t t0, took;
    (void)state;

    snprintf(h.url, sizeof(h.url), "%s", rdlt_server_url(s));
    ch = rdlt_child_start(hold, &h); /* before this process has threads */
    (void)expect_acquired(ch);
    c = rdlt_client(s);
    l = rdlt_lock(c, "wd-killed");
    rdlt_sleep_ms(700); /* past two leases: the child's watchdog works */
    rdlt_assert_rc(rdl_lock_acquire_as(l, A, 0, 5000), RDL_EBUSY);
    rdlt_child_signal(ch, SIGKILL);
    t0 = rdlt_now_ms();
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 5000, 5000));
    took = rdlt_now_ms() - t0;
    rdlt_assert_between(took, 0, 300 + 200);
}

/* The owner process is stopped past its lease: another client acquires
 * with a larger token; on SIGCONT the owner's lost callback runs and its
 * release returns RDL_ELOST, leaving the new hold alone. */
static void test_watchdog_owner_stopped_past_lease(void **state)
{
    rdlt_server *s = rdlt_server_start();
    holder h = {"", "wd-stopped", 300, -1, 0};
    rdlt_child *ch;
    rdl_client_t *c;
    rdl_lock_t *l;
    char line[256];
    uint64_t t1;
    (void)state;

    snprintf(h.url, sizeof(h.url), "%s", rdlt_server_url(s));
    ch = rdlt_child_start(hold, &h);
    t1 = expect_acquired(ch);
    c = rdlt_client(s);
    l = rdlt_lock(c, "wd-stopped");
    rdlt_child_signal(ch, SIGSTOP);
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 5000, 30000));
    assert_true(rdl_lock_fencing_token(l, A) > t1);

    rdlt_child_signal(ch, SIGCONT);
    if (rdlt_child_hear(ch, line, sizeof(line), 5000) != 0)
        fail_msg("the stopped holder reported no loss after SIGCONT");
    if (strncmp(line, "lost RDL_E", 10) != 0)
        fail_msg("holder process: %s", line);
    print_message("holder: %s\n", line);
    if (rdlt_child_hear(ch, line, sizeof(line), 5000) != 0)
        fail_msg("the stopped holder did not release");
    assert_string_equal(line, "released RDL_ELOST");
    assert_int_equal(rdlt_info(l, A).hold_count, 1);
    assert_int_equal(rdlt_child_wait(ch, 5000), 0);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_watchdog_hold_outlives_ten_leases),
    RDLT_TEST(test_watchdog_fixed_lease_not_renewed),
    RDLT_TEST(test_watchdog_reentrant_renewed_until_last_release),
    RDLT_TEST(test_watchdog_fixed_then_auto_reentry),
    RDLT_TEST(test_watchdog_ten_thousand_holds_batched),
    RDLT_TEST(test_watchdog_release_during_renewal),
    RDLT_TEST(test_watchdog_freed_lock_stops_renewal),
    RDLT_TEST(test_watchdog_lost_on_force_release),
    RDLT_TEST(test_watchdog_server_stall_shorter_than_lease),
    RDLT_TEST(test_watchdog_server_stall_longer_than_lease),
    RDLT_TEST(test_watchdog_owner_killed),
    RDLT_TEST(test_watchdog_owner_stopped_past_lease),
};

RDLT_MAIN(tests)
