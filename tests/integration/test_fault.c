/* Faults (docs/design.md#tests): holders killed or stopped, connections killed,
 * servers restarted, killed or paused. Each must cost at most a lease or a
 * reconnect, never a hang, a crash (SIGPIPE included: the test processes keep
 * its default action on purpose) or a wrong answer. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdlt.h"

#define A ((rdl_owner_t)1)
#define B ((rdl_owner_t)2)

/* ---- holders in another process ------------------------------------------- */

typedef struct holder {
    char url[64];
    const char *name;
    int64_t lease_ms;
    int64_t release_after_ms; /* 0: hold until killed */
} holder;

/* Child process: acquire, report, then sleep forever or release later and
 * report the result. No cmocka here (see rdlt_child_start()). */
static int hold(void *arg, int fd)
{
    holder *h = arg;
    rdl_client_t *c = NULL;
    rdl_lock_t *l = NULL;
    int rc;

    if ((rc = rdl_client_new(&c)) != 0 ||
        (rc = rdl_client_set_url(c, h->url)) != 0 ||
        (rc = rdl_client_connect(c)) != 0 ||
        (rc = rdl_lock_new(c, h->name, &l)) != 0 ||
        (rc = rdl_lock_acquire(l, 0, h->lease_ms)) != 0) {
        rdlt_child_say(fd, "error %s %s", rdl_err_name(rc),
                       c != NULL ? rdl_client_errmsg(c) : "");
        return 1;
    }
    rdlt_child_say(
        fd, "acquired %llu",
        (unsigned long long)rdl_lock_fencing_token(l, rdl_owner_self()));
    if (h->release_after_ms <= 0)
        for (;;)
            pause();
    rdlt_sleep_ms(h->release_after_ms);
    rc = rdl_lock_release(l);
    rdlt_child_say(fd, "released %d", rc);
    rdl_lock_free(l);
    rdl_client_free(c);
    return 0;
}

static uint64_t expect_acquired(rdlt_child *ch)
{
    char line[512];
    unsigned long long token = 0;
    if (rdlt_child_hear(ch, line, sizeof(line), 10000) != 0)
        fail_msg("the holder process said nothing");
    if (sscanf(line, "acquired %llu", &token) != 1 || token == 0)
        fail_msg("holder process: %s", line);
    return token;
}

/* A holder killed with SIGKILL frees the lock within its lease. */
static void test_fault_holder_killed(void **state)
{
    rdlt_server *s = rdlt_server_start();
    holder h = {"", "killed", 1000, 0};
    rdlt_child *ch;
    rdl_client_t *c;
    rdl_lock_t *l;
    uint64_t t1;
    int64_t t0, took;
    (void)state;

    snprintf(h.url, sizeof(h.url), "%s", rdlt_server_url(s));
    /* Fork before this process has threads of its own. */
    ch = rdlt_child_start(hold, &h);
    t1 = expect_acquired(ch);
    c = rdlt_client(s);
    l = rdlt_lock(c, "killed");
    rdlt_assert_rc(rdl_lock_acquire_as(l, A, 0, 5000), RDL_EBUSY);

    rdlt_child_signal(ch, SIGKILL);
    t0 = rdlt_now_ms();
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 5000, 5000));
    took = rdlt_now_ms() - t0;
    rdlt_assert_between(took, 0, h.lease_ms + 1000);
    assert_true(rdl_lock_fencing_token(l, A) > t1);
}

/* A holder stopped past its lease loses the lock to another owner, whose
 * token is larger; its late release, once it runs again, reports
 * RDL_ELOST and leaves the new holder's hold alone. */
static void test_fault_holder_stopped_past_lease(void **state)
{
    rdlt_server *s = rdlt_server_start();
    holder h = {"", "stopped", 500, 1500};
    rdlt_child *ch;
    rdl_client_t *c;
    rdl_lock_t *l;
    rdl_lock_info_t info;
    char line[512];
    uint64_t t1;
    int rc = 0;
    (void)state;

    snprintf(h.url, sizeof(h.url), "%s", rdlt_server_url(s));
    ch = rdlt_child_start(hold, &h);
    t1 = expect_acquired(ch);
    rdlt_child_signal(ch, SIGSTOP);
    c = rdlt_client(s);
    l = rdlt_lock(c, "stopped");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 5000, 30000));
    assert_true(rdl_lock_fencing_token(l, A) > t1);

    rdlt_child_signal(ch, SIGCONT);
    if (rdlt_child_hear(ch, line, sizeof(line), 10000) != 0)
        fail_msg("the stopped holder said nothing after SIGCONT");
    if (sscanf(line, "released %d", &rc) != 1)
        fail_msg("holder process: %s", line);
    rdlt_assert_rc(rc, RDL_ELOST);
    info = rdlt_info(l, A);
    assert_int_equal(info.held_by_owner, 1);
    assert_int_equal(info.hold_count, 1);
    assert_int_equal(rdlt_child_wait(ch, 5000), 0);
}

/* ---- connections killed ---------------------------------------------------- */

typedef struct waiter {
    rdl_lock_t *lock;
    rdl_owner_t owner;
    int64_t wait_ms;
    int rc;
    int64_t done_at;
} waiter;

static void *wait_thread(void *arg)
{
    waiter *w = arg;
    w->rc = rdl_lock_acquire_as(w->lock, w->owner, w->wait_ms, 5000);
    w->done_at = rdlt_now_ms();
    return NULL;
}

/* CLIENT KILL of every rdl connection while a waiter sleeps: both clients
 * reconnect, the release goes through, and the waiter is woken. */
static void test_fault_client_kill_mid_wait(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *ch = rdlt_client(s), *cw = rdlt_client(s);
    rdl_lock_t *lh = rdlt_lock(ch, "killconn"), *lw = rdlt_lock(cw, "killconn");
    waiter w = {lw, B, 10000, -999, 0};
    char sub[64];
    rdlt_thread *t;
    int64_t released;
    int killed;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(lh, A, 0, 30000));
    t = rdlt_thread_start(wait_thread, &w);
    rdlt_sleep_ms(300);
    snprintf(sub, sizeof(sub), "rdl:%s:sub", rdl_client_id(cw));
    assert_int_equal(rdlt_count_clients(s, sub), 1);
    killed = rdlt_kill_clients(s, "rdl:");
    assert_true(killed >= 3); /* holder cmd, waiter cmd and sub */
    rdlt_sleep_ms(300);
    released = rdlt_now_ms(); /* the waiter may return before release does */
    rdlt_assert_ok(rdl_lock_release_as(lh, A));
    rdlt_thread_join(t);
    rdlt_assert_ok(w.rc);
    rdlt_assert_between(w.done_at - released, 0, 3000);
    assert_int_equal(rdlt_info(lw, B).hold_count, 1);
}

/* The same, with the release right after the kill: it may be published
 * while the waiter is not subscribed, and the try after the subscription
 * is restored must catch it. */
static void test_fault_release_while_waiter_reconnects(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *ch = rdlt_client(s), *cw = rdlt_client(s);
    rdl_lock_t *lh = rdlt_lock(ch, "gap"), *lw = rdlt_lock(cw, "gap");
    waiter w = {lw, B, 20000, -999, 0};
    char prefix[64];
    rdlt_thread *t;
    int64_t released;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(lh, A, 0, 30000));
    t = rdlt_thread_start(wait_thread, &w);
    rdlt_sleep_ms(300);
    snprintf(prefix, sizeof(prefix), "rdl:%s:", rdl_client_id(cw));
    assert_true(rdlt_kill_clients(s, prefix) >= 2);
    released = rdlt_now_ms(); /* the waiter may return before release does */
    rdlt_assert_ok(rdl_lock_release_as(lh, A));
    rdlt_thread_join(t);
    rdlt_assert_ok(w.rc);
    rdlt_assert_between(w.done_at - released, 0, 3000);
}

/* ---- the server restarted, killed, paused ---------------------------------- */

static void test_fault_server_restart(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "restart");
    rdl_client_stats_t st;
    uint64_t t1;
    int64_t deadline;
    int rc;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 5000));
    t1 = rdl_lock_fencing_token(l, A);
    rdlt_assert_ok(rdl_lock_release_as(l, A));

    rdlt_server_stop(s);
    rdlt_server_restart(s);
    deadline = rdlt_now_ms() + 5000;
    do {
        rc = rdl_lock_acquire_as(l, A, 0, 5000);
        if (rc == 0)
            break;
        if (rc != RDL_ECONNREFUSED && rc != RDL_ECONNLOST &&
            rc != RDL_ECMDTIMEOUT)
            fail_msg("after a restart: %s (%s)", rdl_err_name(rc),
                     rdl_client_errmsg(c));
        rdlt_sleep_ms(50);
    } while (rdlt_now_ms() < deadline);
    rdlt_assert_ok(rc);
    /* The server lost its data; tokens still increase. */
    assert_true(rdl_lock_fencing_token(l, A) > t1);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    rdlt_assert_ok(rdl_client_stats(c, &st));
    assert_true(st.connects >= 2);
}

typedef struct load {
    rdl_lock_t *lock;
    int stop;
    int ok_after; /* successful cycles since ok_after was reset */
    int bad;      /* codes no fault explains */
    int first_bad;
    int cycles;
} load;

static void *load_thread(void *arg)
{
    load *ld = arg;
    while (!__atomic_load_n(&ld->stop, __ATOMIC_ACQUIRE)) {
        int rc = rdl_lock_acquire_as(ld->lock, A, 0, 1000);
        __atomic_fetch_add(&ld->cycles, 1, __ATOMIC_RELAXED);
        if (rc == 0) {
            rc = rdl_lock_release_as(ld->lock, A);
            if (rc == 0)
                __atomic_fetch_add(&ld->ok_after, 1, __ATOMIC_RELAXED);
            else if (rc != RDL_ELOST && rc != RDL_ECONNLOST &&
                     rc != RDL_ECMDTIMEOUT && rc != RDL_ECONNREFUSED &&
                     __atomic_fetch_add(&ld->bad, 1, __ATOMIC_RELAXED) == 0)
                ld->first_bad = rc;
        } else if (rc != RDL_EBUSY && rc != RDL_ECONNLOST &&
                   rc != RDL_ECMDTIMEOUT && rc != RDL_ECONNREFUSED) {
            if (__atomic_fetch_add(&ld->bad, 1, __ATOMIC_RELAXED) == 0)
                ld->first_bad = rc;
            rdlt_sleep_ms(10);
        } else if (rc != RDL_EBUSY) {
            rdlt_sleep_ms(5);
        }
    }
    return NULL;
}

/* The server killed while commands are in flight: calls fail with the
 * codes of lost connections (no crash, no SIGPIPE, no hang), and work
 * again after the server is back. */
static void test_fault_server_killed_under_load(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "load");
    static load ld;
    rdlt_thread *t;
    int64_t deadline;
    (void)state;

    memset(&ld, 0, sizeof(ld));
    ld.lock = l;
    t = rdlt_thread_start(load_thread, &ld);
    rdlt_sleep_ms(300);
    assert_true(__atomic_load_n(&ld.ok_after, __ATOMIC_RELAXED) > 0);
    rdlt_server_signal(s, SIGKILL);
    rdlt_sleep_ms(500);
    rdlt_server_restart(s);
    __atomic_store_n(&ld.ok_after, 0, __ATOMIC_RELAXED);
    deadline = rdlt_now_ms() + 10000;
    while (__atomic_load_n(&ld.ok_after, __ATOMIC_RELAXED) < 10 &&
           rdlt_now_ms() < deadline)
        rdlt_sleep_ms(20);
    __atomic_store_n(&ld.stop, 1, __ATOMIC_RELEASE);
    rdlt_thread_join(t);
    if (ld.bad > 0)
        fail_msg("%d calls returned codes no fault explains, the first %s",
                 ld.bad, rdl_err_name(ld.first_bad));
    if (ld.ok_after < 10)
        fail_msg("only %d cycles succeeded within 10 s of the restart",
                 ld.ok_after);
}

/* A server that stops answering: the call ends within its timeouts, and
 * if the acquisition turns out to have been applied, the call reported
 * its outcome as unknown (RDL_ECMDTIMEOUT or RDL_ECONNLOST), never as a
 * failure that implies nothing is held; the hold counts once. */
static void test_fault_server_paused_outcome_unknown(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client_new(rdlt_server_url(s));
    rdl_lock_t *l;
    rdl_lock_info_t info;
    int64_t t0, took;
    int rc;
    (void)state;

    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 300, 300));
    rdlt_assert_ok(rdl_client_connect(c));
    l = rdlt_lock(c, "paused");
    rdlt_assert_ok(rdl_lock_acquire_as(l, B, 0, 1000)); /* scripts loaded */
    rdlt_assert_ok(rdl_lock_release_as(l, B));

    rdlt_server_signal(s, SIGSTOP);
    t0 = rdlt_now_ms();
    rc = rdl_lock_acquire_as(l, A, 0, 10000);
    took = rdlt_now_ms() - t0;
    rdlt_server_signal(s, SIGCONT);
    if (rc == 0)
        fail_msg("acquired from a stopped server");
    rdlt_assert_between(took, 250, 3000);

    rdlt_sleep_ms(300); /* the server runs what it had received */
    {
        int64_t deadline = rdlt_now_ms() + 5000;
        int irc;
        while ((irc = rdl_lock_info(l, A, &info)) != 0 &&
               rdlt_now_ms() < deadline)
            rdlt_sleep_ms(50);
        rdlt_assert_ok(irc);
    }
    print_message("acquire returned %s; hold count afterwards %u\n",
                  rdl_err_name(rc), info.hold_count);
    rdlt_assert_between(info.hold_count, 0, 1);
    if (info.hold_count == 1 && rc != RDL_ECMDTIMEOUT && rc != RDL_ECONNLOST)
        fail_msg("the acquisition was applied, but the call returned %s, "
                 "which says it was not",
                 rdl_err_name(rc));
}

/* The same for a release: if it was applied, the call must not report a
 * failure that says it was not. */
static void test_fault_server_paused_release_outcome_unknown(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client_new(rdlt_server_url(s));
    rdl_lock_t *l;
    rdl_lock_info_t info;
    int64_t t0, took, deadline;
    int rc, irc;
    (void)state;

    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 300, 300));
    rdlt_assert_ok(rdl_client_connect(c));
    l = rdlt_lock(c, "paused-release");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000)); /* scripts loaded */
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000));

    rdlt_server_signal(s, SIGSTOP);
    t0 = rdlt_now_ms();
    rc = rdl_lock_release_as(l, A);
    took = rdlt_now_ms() - t0;
    rdlt_server_signal(s, SIGCONT);
    if (rc == 0)
        fail_msg("released on a stopped server");
    rdlt_assert_between(took, 250, 3000);

    rdlt_sleep_ms(300);
    deadline = rdlt_now_ms() + 5000;
    while ((irc = rdl_lock_info(l, A, &info)) != 0 && rdlt_now_ms() < deadline)
        rdlt_sleep_ms(50);
    rdlt_assert_ok(irc);
    print_message("release returned %s; locked afterwards %d\n",
                  rdl_err_name(rc), info.locked);
    if (!info.locked && rc != RDL_ECMDTIMEOUT && rc != RDL_ECONNLOST)
        fail_msg("the release was applied, but the call returned %s, which "
                 "says it was not",
                 rdl_err_name(rc));
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_fault_holder_killed),
    RDLT_TEST(test_fault_holder_stopped_past_lease),
    RDLT_TEST(test_fault_client_kill_mid_wait),
    RDLT_TEST(test_fault_release_while_waiter_reconnects),
    RDLT_TEST(test_fault_server_restart),
    RDLT_TEST(test_fault_server_killed_under_load),
    RDLT_TEST(test_fault_server_paused_outcome_unknown),
    RDLT_TEST(test_fault_server_paused_release_outcome_unknown),
};

RDLT_MAIN(tests)
