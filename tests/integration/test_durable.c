/* Durable acquisitions (rdl_client_set_durability, docs/design.md#durability):
 * a grant is reported only once WAIT confirms the replicas have it, so a
 * failover to a confirmed replica never hands a held lock to a second owner.
 * Run on the Sentinel fixture (a master, two replicas, three sentinels). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdlt.h"

#define A ((rdl_owner_t)1)
#define B ((rdl_owner_t)2)

static rdl_client_t *durable_client(const char *url, int replicas,
                                    int64_t timeout_ms)
{
    rdl_client_t *c = rdlt_client_new(url);
    int rc;
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 3000));
    if (replicas != 0)
        rdlt_assert_ok(rdl_client_set_durability(c, replicas, timeout_ms));
    rc = rdl_client_connect(c);
    if (rc != 0)
        fail_msg("connect: %s: %s", rdl_err_name(rc), rdl_client_errmsg(c));
    return c;
}

/* The owner field of lock `name` as server s has it, or NULL. */
static int held_on(rdlt_server *s, const char *name)
{
    redisReply *r = rdlt_cmd(s, "HGET rdl:lock:{%s} o", name);
    int held = r->type == REDIS_REPLY_STRING && r->len > 0;
    freeReplyObject(r);
    return held;
}

static void wait_free(rdlt_server *s, const char *name)
{
    int64_t deadline = rdlt_now_ms() + 5000;
    while (held_on(s, name)) {
        if (rdlt_now_ms() > deadline)
            fail_msg("lock %s stayed held after a refused grant", name);
        rdlt_sleep_ms(10);
    }
}

/* Bad settings are refused, and settings are configuration. */
static void test_durable_settings(void **state)
{
    rdl_client_t *c = rdlt_client_new("redis://127.0.0.1:1");
    (void)state;
    rdlt_assert_rc(rdl_client_set_durability(c, -2, 100), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_durability(c, 1001, 100), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_durability(c, 1, 0), RDL_EINVAL);
    /* WAIT blocks its connection: it must end before the command timeout. */
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 1000, 1000));
    rdlt_assert_rc(rdl_client_set_durability(c, 1, 1000), RDL_EINVAL);
    assert_non_null(strstr(rdl_client_errmsg(c), "command timeout"));
    rdlt_assert_ok(rdl_client_set_durability(c, RDL_REPLICAS_ALL, 500));
    rdlt_assert_ok(rdl_client_set_durability(c, 0, 0)); /* off */
    rdlt_assert_rc(rdl_client_set_durability(NULL, 1, 100), RDL_EINVAL);
}

/* Every kind is confirmed: the grant is on both replicas when the call
 * returns. */
static void test_durable_grant_reaches_replicas(void **state)
{
    rdlt_sentinel *sn = rdlt_sentinel_start(NULL);
    rdl_client_t *c =
        durable_client(rdlt_sentinel_url(sn), RDL_REPLICAS_ALL, 1000);
    rdl_lock_t *l = rdlt_lock(c, "d"), *f = NULL;
    rdl_rwlock_t *rw = NULL;
    int i;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    for (i = 1; i < RDLT_SENTINEL_DATA; i++)
        assert_true(held_on(rdlt_sentinel_data(sn, i), "d"));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    rdlt_assert_ok(rdl_fairlock_new(c, "df", &f));
    rdlt_assert_ok(rdl_lock_acquire_as(f, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(f, A));
    rdl_lock_free(f);
    rdlt_assert_ok(rdl_rwlock_new(c, "drw", &rw));
    rdlt_assert_ok(rdl_lock_acquire_as(rdl_rwlock_write(rw), A, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(rdl_rwlock_write(rw), A));
    rdlt_assert_ok(rdl_lock_acquire_as(rdl_rwlock_read(rw), A, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(rdl_rwlock_read(rw), A));
    rdl_rwlock_free(rw);
    /* A semaphore's permit: the permits in use reach both replicas. */
    {
        rdl_lock_t *sem = NULL;
        rdlt_assert_ok(rdl_semaphore_new(c, "ds", 2, &sem));
        rdlt_assert_ok(rdl_lock_acquire_as(sem, A, 0, 30000));
        for (i = 1; i < RDLT_SENTINEL_DATA; i++) {
            redisReply *r =
                rdlt_cmd(rdlt_sentinel_data(sn, i), "HGET rdl:sem:{ds} u");
            assert_int_equal(r->type, REDIS_REPLY_STRING);
            assert_string_equal(r->str, "1");
            freeReplyObject(r);
        }
        rdlt_assert_ok(rdl_lock_release_as(sem, A));
        rdl_lock_free(sem);
    }
    /* A MultiLock's parts (one hash tag: without durability the one-call
     * path would take them; with it each part is confirmed). */
    {
        rdl_lock_t *parts[2] = {rdlt_lock(c, "{dm}a"), rdlt_lock(c, "{dm}b")};
        rdl_lock_t *ml = NULL;
        rdlt_assert_ok(rdl_multilock_new(parts, 2, &ml));
        rdlt_assert_ok(rdl_lock_acquire_as(ml, A, 0, 30000));
        for (i = 1; i < RDLT_SENTINEL_DATA; i++) {
            redisReply *r =
                rdlt_cmd(rdlt_sentinel_data(sn, i), "HGET rdl:lock:{dm}b o");
            assert_int_equal(r->type, REDIS_REPLY_STRING);
            freeReplyObject(r);
        }
        rdlt_assert_ok(rdl_lock_release_as(ml, A));
        rdl_lock_free(ml);
    }
}

/* Replicas paused: the grant is refused with RDL_ENOREPLICAS within the
 * timeout (plus slack), the message says how many confirmed, and nothing
 * stays held. With one replica of two paused, RDL_REPLICAS_ALL refuses
 * too (a paused replica still counts as connected), one replica does not. */
static void test_durable_replicas_paused(void **state)
{
    rdlt_sentinel *sn = rdlt_sentinel_start(NULL);
    rdl_client_t *all =
        durable_client(rdlt_sentinel_url(sn), RDL_REPLICAS_ALL, 300);
    rdl_client_t *one = durable_client(rdlt_sentinel_url(sn), 1, 300);
    rdl_lock_t *la = rdlt_lock(all, "p"), *l1 = rdlt_lock(one, "p");
    rdlt_server *m = rdlt_sentinel_master(sn);
    rdlt_server *r1 = rdlt_sentinel_data(sn, 1),
                *r2 = rdlt_sentinel_data(sn, 2);
    int64_t t0, deadline;
    (void)state;

    rdlt_server_signal(r1, SIGSTOP);
    rdlt_assert_rc(rdl_lock_acquire_as(la, A, 0, 30000), RDL_ENOREPLICAS);
    assert_non_null(strstr(rdl_client_errmsg(all), "1 of 2 replicas"));
    wait_free(m, "p");
    rdlt_assert_ok(rdl_lock_acquire_as(l1, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(l1, A));

    rdlt_server_signal(r2, SIGSTOP);
    t0 = rdlt_now_ms();
    rdlt_assert_rc(rdl_lock_acquire_as(l1, A, 0, 30000), RDL_ENOREPLICAS);
    rdlt_assert_between(rdlt_now_ms() - t0, 250, 2500);
    assert_non_null(strstr(rdl_client_errmsg(one), "0 of 1 replicas"));
    wait_free(m, "p");
    /* A semaphore's permit is given back the same way. */
    {
        rdl_lock_t *sem = NULL;
        rdlt_assert_ok(rdl_semaphore_new(one, "ps", 1, &sem));
        rdlt_assert_rc(rdl_lock_acquire_as(sem, A, 0, 30000), RDL_ENOREPLICAS);
        deadline = rdlt_now_ms() + 5000;
        while (rdlt_info(sem, B).holders != 0 && rdlt_now_ms() < deadline)
            rdlt_sleep_ms(20);
        assert_int_equal(rdlt_info(sem, B).holders, 0);
        rdl_lock_free(sem);
    }
    rdlt_server_signal(r1, SIGCONT);
    rdlt_server_signal(r2, SIGCONT);
    /* Once both replicas are linked and synced again, the next grant is
     * confirmed. */
    rdlt_sentinel_wait_synced(sn, 15000);
    rdlt_assert_ok(rdl_lock_acquire_as(la, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(la, A));
}

/* RDL_REPLICAS_ALL counts a replica the master no longer lists: one whose
 * link dropped (paused, its connection cut) is missing from ROLE, and a
 * grant confirmed by the others alone could be lost to it if it were
 * promoted. The client saw two replicas, so it waits for two and refuses
 * until the missing one is back. */
static void test_durable_all_waits_for_an_unlisted_replica(void **state)
{
    rdlt_sentinel *sn = rdlt_sentinel_start(NULL);
    rdl_client_t *all =
        durable_client(rdlt_sentinel_url(sn), RDL_REPLICAS_ALL, 300);
    rdl_lock_t *la = rdlt_lock(all, "u");
    rdlt_server *m = rdlt_sentinel_master(sn);
    rdlt_server *r1 = rdlt_sentinel_data(sn, 1);
    redisReply *q;
    int64_t deadline;
    int rc;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(la, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(la, A));
    rdlt_server_signal(r1, SIGSTOP);
    freeReplyObject(rdlt_cmd(m, "CLIENT KILL TYPE replica"));
    /* Until ROLE lists the other replica again and not the paused one. */
    deadline = rdlt_now_ms() + 10000;
    for (;;) {
        q = rdlt_cmd(m, "ROLE");
        rc = q->type == REDIS_REPLY_ARRAY && q->elements >= 3 &&
             q->element[2]->elements == 1;
        freeReplyObject(q);
        if (rc || rdlt_now_ms() > deadline)
            break;
        rdlt_sleep_ms(20);
    }
    assert_true(rc);
    rdlt_assert_rc(rdl_lock_acquire_as(la, A, 0, 30000), RDL_ENOREPLICAS);
    assert_non_null(strstr(rdl_client_errmsg(all), "1 of 2 replicas"));
    wait_free(m, "u");
    rdlt_server_signal(r1, SIGCONT);
    rdlt_sentinel_wait_synced(sn, 15000);
    rdlt_assert_ok(rdl_lock_acquire_as(la, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(la, A));
}

typedef struct slow_grant {
    rdl_lock_t *lock;
    int rc;
} slow_grant;

static void *grant_thread(void *arg)
{
    slow_grant *g = arg;
    g->rc = rdl_lock_acquire_as(g->lock, B, 0, 30000);
    return NULL;
}

/* Unrelated commands are not held up by a WAIT: while the replicas are
 * paused and a durable grant waits for them, a release on the same client
 * goes through at once (it travels on the main line). */
static void test_durable_wait_blocks_nothing_else(void **state)
{
    rdlt_sentinel *sn = rdlt_sentinel_start(NULL);
    rdl_client_t *c = durable_client(rdlt_sentinel_url(sn), 1, 1500);
    rdl_lock_t *held = rdlt_lock(c, "h"), *slow = rdlt_lock(c, "s");
    slow_grant g = {slow, -1};
    rdlt_thread *t;
    int64_t t0;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(held, A, 0, 30000));
    rdlt_server_signal(rdlt_sentinel_data(sn, 1), SIGSTOP);
    rdlt_server_signal(rdlt_sentinel_data(sn, 2), SIGSTOP);
    t = rdlt_thread_start(grant_thread, &g);
    rdlt_sleep_ms(200); /* its WAIT is pending now */
    t0 = rdlt_now_ms();
    rdlt_assert_ok(rdl_lock_release_as(held, A));
    assert_true(rdlt_now_ms() - t0 < 1000);
    rdlt_thread_join(t);
    rdlt_assert_rc(g.rc, RDL_ENOREPLICAS);
    rdlt_server_signal(rdlt_sentinel_data(sn, 1), SIGCONT);
    rdlt_server_signal(rdlt_sentinel_data(sn, 2), SIGCONT);
}

static void on_lost(rdl_lock_t *lock, rdl_owner_t owner, int reason, void *data)
{
    (void)lock;
    (void)owner;
    (void)reason;
    __atomic_store_n((int *)data, 1, __ATOMIC_SEQ_CST);
}

/* Renewals count only once the replicas confirm them: with the replicas
 * paused, the master goes on renewing an auto-leased hold, but its local
 * deadline stops moving and the watchdog reports the hold lost when the
 * last confirmed lease ends (a failover then could lose it). */
static void test_durable_renewals_need_replicas(void **state)
{
    rdlt_sentinel *sn = rdlt_sentinel_start(NULL);
    rdl_client_t *c = rdlt_client_new(rdlt_sentinel_url(sn));
    rdl_lock_t *l;
    int lost = 0, rc;
    (void)state;

    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 3000));
    rdlt_assert_ok(rdl_client_set_watchdog_ms(c, 1500));
    rdlt_assert_ok(rdl_client_set_durability(c, 1, 300));
    rc = rdl_client_connect(c);
    if (rc != 0)
        fail_msg("connect: %s: %s", rdl_err_name(rc), rdl_client_errmsg(c));
    l = rdlt_lock(c, "renew");
    rdlt_assert_ok(rdl_lock_set_lost_cb(l, on_lost, &lost));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, RDL_LEASE_AUTO));
    rdlt_sleep_ms(2000); /* confirmed renewals keep it */
    assert_int_equal(__atomic_load_n(&lost, __ATOMIC_SEQ_CST), 0);
    rdlt_server_signal(rdlt_sentinel_data(sn, 1), SIGSTOP);
    rdlt_server_signal(rdlt_sentinel_data(sn, 2), SIGSTOP);
    if (!rdlt_wait_flag(&lost, 5000))
        fail_msg("the hold outlived its last confirmed renewal");
    assert_true(held_on(rdlt_sentinel_master(sn), "renew"));
    rdlt_assert_rc(rdl_lock_release_as(l, A), RDL_ELOST);
    rdlt_server_signal(rdlt_sentinel_data(sn, 1), SIGCONT);
    rdlt_server_signal(rdlt_sentinel_data(sn, 2), SIGCONT);
}

/* Hold, kill -9 the master, wait for the promotion, try from another
 * client. With durability the promoted replica has the hold: the other
 * client does not get it, and tokens go on increasing. Without it, and
 * with the replicas paused while the grant is made (so the one promoted
 * never saw it), the other client gets the lock while the first still
 * believes it holds it: the double grant durability exists to prevent
 * (a durable grant under the same conditions is refused, as
 * test_durable_replicas_paused shows). */
static void failover_case(int durable)
{
    rdlt_sentinel *sn = rdlt_sentinel_start(NULL);
    rdl_client_t *c1 = durable_client(rdlt_sentinel_url(sn),
                                      durable ? RDL_REPLICAS_ALL : 0, 1000);
    rdl_client_t *c2 = durable_client(rdlt_sentinel_url(sn), 0, 1000);
    rdl_lock_t *l1 = rdlt_lock(c1, "fo"), *l2 = rdlt_lock(c2, "fo");
    rdlt_server *m = rdlt_sentinel_master(sn);
    rdlt_server *r1 = rdlt_sentinel_data(sn, 1),
                *r2 = rdlt_sentinel_data(sn, 2);
    uint64_t before;
    int64_t deadline;
    int rc = RDL_EBUSY;

    if (!durable) {
        /* The grant must not reach the replicas: paused, and their links
         * cut, so not even the kernel's buffers hold it when they wake. */
        rdlt_server_signal(r1, SIGSTOP);
        rdlt_server_signal(r2, SIGSTOP);
        freeReplyObject(rdlt_cmd(m, "CLIENT KILL TYPE replica"));
    }
    rdlt_assert_ok(rdl_lock_acquire_as(l1, A, 0, 60000));
    before = rdl_lock_fencing_token(l1, A);
    rdlt_server_signal(m, SIGKILL);
    if (!durable) {
        rdlt_server_signal(r1, SIGCONT);
        rdlt_server_signal(r2, SIGCONT);
    }
    rdlt_sentinel_wait_switch(sn, m, 30000);
    /* Keep trying for a while after the switch: the second client may take
     * a moment to follow it. */
    deadline = rdlt_now_ms() + 3000;
    while (rdlt_now_ms() < deadline && rc != 0) {
        rc = rdl_lock_acquire_as(l2, B, 0, 10000);
        if (rc != 0)
            rdlt_sleep_ms(100);
    }
    if (durable) {
        rdlt_assert_rc(rc, RDL_EBUSY);
        rdlt_assert_ok(rdl_lock_release_as(l1, A));
        rdlt_assert_ok(rdl_lock_acquire_as(l2, B, 0, 10000));
        assert_true(rdl_lock_fencing_token(l2, B) > before);
        rdlt_assert_ok(rdl_lock_release_as(l2, B));
    } else {
        rdlt_assert_ok(rc); /* the double grant */
        assert_true(rdl_lock_fencing_token(l2, B) > before);
        rdlt_assert_rc(rdl_lock_release_as(l1, A), RDL_ELOST);
        rdlt_assert_ok(rdl_lock_release_as(l2, B));
    }
}

static void test_durable_failover_keeps_the_hold(void **state)
{
    (void)state;
    failover_case(1);
}

/* Frees the lock whoever holds it (a hold a lost release brought back),
 * or finds it free. */
static void free_anyway(rdl_lock_t *l)
{
    int rc = rdl_lock_force_release(l);
    if (rc != 0 && rc != RDL_ENOTHELD)
        fail_msg("force release: %s", rdl_err_name(rc));
}

/* The same, again and again on one deployment: each round a durable hold,
 * kill -9 of whichever node is master, the promotion, the other client
 * refused, the hold released as its own, a token above every earlier one;
 * then the killed node restarts and rejoins as a replica.
 *
 * A round in which Sentinel switched the master a second time on its own
 * (a freshly promoted master that missed its pings for down-after on a
 * loaded machine, seen in CI) does not count: the second switch may lose
 * what was written on the first new master - here the hold's release and
 * the other client's grant - which Sentinel's asynchronous replication
 * allows and durability does not cover (it confirms grants, not
 * releases: docs/design-notes.md "What the loops found"). The lost
 * release brings the hold back until its lease ends; the test frees it
 * and goes on, and needs three rounds with one switch each. */
static rdl_client_t *level_client(const char *url, int replicas,
                                  int64_t timeout_ms, int level);
static void wait_aof_replicas(rdlt_server *m, int n);

static void failover_loop(rdlt_sentinel *sn, int level)
{
    rdl_client_t *c1 =
        level_client(rdlt_sentinel_url(sn), RDL_REPLICAS_ALL, 1000, level);
    rdl_client_t *c2 = durable_client(rdlt_sentinel_url(sn), 0, 1000);
    rdl_lock_t *l1 = rdlt_lock(c1, "loop"), *l2 = rdlt_lock(c2, "loop");
    uint64_t last = 0;
    long long epoch = rdlt_sentinel_config_epoch(sn);
    int round, clean = 0;

    if (level != RDL_DURABLE_RECEIVED)
        wait_aof_replicas(rdlt_sentinel_master(sn), 2);
    for (round = 0; clean < 3; round++) {
        rdlt_server *m = rdlt_sentinel_master(sn);
        int64_t deadline;
        uint64_t t;
        int rc = RDL_EBUSY;

        if (round == 6)
            fail_msg("only %d of 6 rounds had one master switch", clean);
        rdlt_assert_ok(rdl_lock_acquire_as(l1, A, 0, 60000));
        t = rdl_lock_fencing_token(l1, A);
        if (rdlt_sentinel_config_epoch(sn) != epoch) {
            /* Switched since the last round ended: start again. */
            print_message("round %d: an unplanned master switch\n", round);
            free_anyway(l2);
            rc = rdl_lock_release_as(l1, A); /* freed above */
            if (rc != 0 && rc != RDL_ENOTHELD && rc != RDL_ELOST)
                fail_msg("release: %s", rdl_err_name(rc));
            epoch = rdlt_sentinel_config_epoch(sn);
            continue;
        }
        if (t <= last)
            fail_msg("round %d: token %llu after %llu", round,
                     (unsigned long long)t, (unsigned long long)last);
        rdlt_server_signal(m, SIGKILL);
        rdlt_sentinel_wait_switch(sn, m, 30000);
        epoch = rdlt_sentinel_config_epoch(sn);
        deadline = rdlt_now_ms() + 2000;
        while (rdlt_now_ms() < deadline && rc == RDL_EBUSY) {
            rc = rdl_lock_acquire_as(l2, B, 0, 10000);
            if (rc != 0)
                rdlt_sleep_ms(100);
        }
        if (rc == 0)
            fail_msg("round %d: a second owner got the durable hold", round);
        rdlt_assert_ok(rdl_lock_release_as(l1, A));
        rdlt_assert_ok(rdl_lock_acquire_as(l2, B, 0, 10000));
        if (rdl_lock_fencing_token(l2, B) <= t)
            fail_msg("round %d: token %llu after %llu", round,
                     (unsigned long long)rdl_lock_fencing_token(l2, B),
                     (unsigned long long)t);
        last = rdl_lock_fencing_token(l2, B);
        rdlt_assert_ok(rdl_lock_release_as(l2, B));
        rdlt_server_restart(m);
        rdlt_sentinel_wait_synced(sn, 30000);
        /* A replica's file counts once it was rewritten after its sync
         * (seen under ASan: the next grant refused, 1 of 2 files). */
        if (level != RDL_DURABLE_RECEIVED)
            wait_aof_replicas(rdlt_sentinel_master(sn), 2);
        if (rdlt_sentinel_config_epoch(sn) != epoch) {
            print_message("round %d: an unplanned master switch\n", round);
            free_anyway(l2);
            epoch = rdlt_sentinel_config_epoch(sn);
            continue;
        }
        clean++;
    }
}

static void test_durable_failover_loop(void **state)
{
    (void)state;
    failover_loop(rdlt_sentinel_start(NULL), RDL_DURABLE_RECEIVED);
}

/* A crash failover that leaves the old master down: the new master has
 * one replica, and RDL_REPLICAS_ALL waits for that one. The client saw two
 * replicas before the switch; the promoted one is the master now, and the
 * old master, down, is not a live replica the sentinels list, so neither
 * is waited for. (The count used to stay at the two the sentinels gave
 * before the switch, noted again at every durable use: every grant and
 * renewal was refused, "1 of 2 replicas confirmed", until the old master
 * came back.)
 *
 * A hold auto-leased just before the kill is kept: its renewals on the new
 * master are confirmed. Its lease must outlast the failover (about 2.5 s
 * here: down-after 1 s, then the election), which no renewal can cross:
 * with a 1.5 s lease the hold is rightly lost before the switch. 8 s
 * leaves room for a slow failover and still runs out, were the renewals
 * refused, a few seconds after it. */
#define CRASH_WD_MS 8000

static void test_durable_all_after_crash_failover(void **state)
{
    rdlt_sentinel *sn = rdlt_sentinel_start(NULL);
    rdl_client_t *c = rdlt_client_new(rdlt_sentinel_url(sn));
    rdl_lock_t *held, *l;
    rdlt_server *m = rdlt_sentinel_master(sn), *now, *left = NULL;
    int64_t killed, switched, deadline;
    int lost = 0, rc, i;
    (void)state;

    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 3000));
    rdlt_assert_ok(rdl_client_set_watchdog_ms(c, CRASH_WD_MS));
    rdlt_assert_ok(rdl_client_set_durability(c, RDL_REPLICAS_ALL, 1000));
    rc = rdl_client_connect(c);
    if (rc != 0)
        fail_msg("connect: %s: %s", rdl_err_name(rc), rdl_client_errmsg(c));
    held = rdlt_lock(c, "kept");
    l = rdlt_lock(c, "after");
    rdlt_assert_ok(rdl_lock_set_lost_cb(held, on_lost, &lost));
    rdlt_assert_ok(rdl_lock_acquire_as(held, A, 0, RDL_LEASE_AUTO));

    rdlt_server_signal(m, SIGKILL);
    killed = rdlt_now_ms();
    now = rdlt_sentinel_wait_switch(sn, m, 30000);
    switched = rdlt_now_ms();
    for (i = 0; i < RDLT_SENTINEL_DATA; i++)
        if (rdlt_sentinel_data(sn, i) != m && rdlt_sentinel_data(sn, i) != now)
            left = rdlt_sentinel_data(sn, i);
    /* Within a few seconds of the switch: the client follows it, and the
     * remaining replica syncs with the new master. */
    deadline = rdlt_now_ms() + 5000;
    do {
        rc = rdl_lock_acquire_as(l, A, 0, 10000);
        if (rc != 0)
            rdlt_sleep_ms(100);
    } while (rc != 0 && rdlt_now_ms() < deadline);
    if (rc != 0)
        fail_msg("%lld ms after the switch, the old master down: %s (%s)",
                 (long long)(rdlt_now_ms() - switched), rdl_err_name(rc),
                 rdl_client_errmsg(c));
    assert_true(held_on(left, "after"));
    rdlt_assert_ok(rdl_lock_release_as(l, A));

    if (switched - killed > CRASH_WD_MS - 2000) {
        /* No renewal could reach a master in time. */
        print_message("the switch took %lld ms: the hold is not checked\n",
                      (long long)(switched - killed));
        return;
    }
    /* Past the lease the hold had at the kill, and then some: only
     * confirmed renewals on the new master can have kept it. */
    rdlt_sleep_ms(killed + CRASH_WD_MS + 2000 - rdlt_now_ms());
    if (__atomic_load_n(&lost, __ATOMIC_SEQ_CST))
        fail_msg("the hold taken before the kill was reported lost (%s)",
                 rdl_client_errmsg(c));
    rdlt_assert_ok(rdl_lock_release_as(held, A));
}

static void test_durable_off_failover_double_grant(void **state)
{
    (void)state;
    failover_case(0);
}

/* ---- a grant heard of after its lease: the give-back and the retry ----- */

enum { LATE_PLAIN, LATE_FAIR, LATE_SEM, LATE_WRITE, LATE_READ };

/* The lock of kind k named "late<k>" on c (rw: the read-write lock, to
 * free after the lock). */
static rdl_lock_t *late_lock(rdl_client_t *c, int k, rdl_rwlock_t **rw)
{
    char name[16];
    rdl_lock_t *l = NULL;
    snprintf(name, sizeof(name), "late%d", k);
    *rw = NULL;
    switch (k) {
    case LATE_FAIR:
        rdlt_assert_ok(rdl_fairlock_new(c, name, &l));
        return l;
    case LATE_SEM:
        rdlt_assert_ok(rdl_semaphore_new(c, name, 2, &l));
        return l;
    case LATE_WRITE:
    case LATE_READ:
        rdlt_assert_ok(rdl_rwlock_new(c, name, rw));
        return k == LATE_WRITE ? rdl_rwlock_write(*rw) : rdl_rwlock_read(*rw);
    default:
        return rdlt_lock(c, name);
    }
}

/* A master whose replica syncs at once (not after the default 5 s). */
static const char *const no_sync_delay[] = {"--repl-diskless-sync-delay", "0",
                                            NULL};

typedef struct late_try {
    rdl_lock_t *lock;
    rdl_owner_t owner;
    int64_t wait_ms, lease_ms;
    int rc;
} late_try;

static void *late_try_thread(void *arg)
{
    late_try *t = arg;
    t->rc = rdl_lock_acquire_as(t->lock, t->owner, t->wait_ms, t->lease_ms);
    return NULL;
}

/* A durable try whose grant is heard of after its lease is given back,
 * and the acquisition tries again as a new request. The give-back is
 * conditional (it applies only if the hold's last request is the
 * acquisition it undoes), so the retry must not reach the server first:
 * a re-entry there would make the give-back a no-op and leave a level
 * the caller does not know of.
 *
 * The case seen: the replica is stopped, so another thread's durable
 * grant waits in WAIT on the durable line; this thread's try (lease
 * 300 ms) queues behind that WAIT on the server, and runs only when the
 * replica is resumed 400 ms later: its grant is live on the server, and
 * late for the client. The give-back is then dropped on its way (its
 * connection closes, so it is sent again after a reconnect), which makes
 * certain that a retry on another connection gets there first. Before,
 * the give-back went on the main line and the retry on the durable one:
 * the retry re-entered, the resent give-back found another request id,
 * and after the caller's release the lock stayed held (a second permit
 * for a semaphore) until its lease ended. Now every follow-up of a try
 * goes on the tries' line, behind it: the release frees the lock. */
static void late_grant_case(int k)
{
    rdlt_server *m = rdlt_server_start_args(no_sync_delay);
    rdlt_server *rep = rdlt_server_start_replica(m);
    rdlt_proxy *p = rdlt_proxy_start(m);
    rdl_client_t *c = rdlt_client_new(rdlt_proxy_url(p));
    rdl_client_t *other = rdlt_client_new(rdlt_server_url(m));
    rdl_rwlock_t *rw, *rw2;
    rdl_lock_t *l, *l2, *blocker;
    late_try ta, tb;
    rdlt_thread *a, *b;
    unsigned sent;
    int rc;

    rdlt_server_wait_replicas(m, 1, 10000);
    /* Command timeout 2917 ms: the give-back's applied-set window is then
     * 2917 * 5 + 1000 = 15585 ms (src/core/retry.h), an argument that no
     * try carries, by which the proxy knows the give-back. */
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 2917));
    rdlt_assert_ok(rdl_client_set_durability(c, 1, 2000));
    rc = rdl_client_connect(c);
    if (rc != 0)
        fail_msg("connect: %s: %s", rdl_err_name(rc), rdl_client_errmsg(c));
    rdlt_assert_ok(rdl_client_connect(other));
    l = late_lock(c, k, &rw);
    l2 = late_lock(other, k, &rw2);
    blocker = rdlt_lock(c, "blocker");
    /* The scripts are loaded (else a try's first answer is NOSCRIPT). */
    rdlt_assert_ok(rdl_lock_acquire_as(l2, B, 0, 10000));
    rdlt_assert_ok(rdl_lock_release_as(l2, B));
    rdlt_assert_ok(rdl_lock_acquire_as(blocker, B, 0, 10000));
    rdlt_assert_ok(rdl_lock_release_as(blocker, B));

    rdlt_server_signal(rep, SIGSTOP);
    ta = (late_try){blocker, A, 0, 30000, -1};
    a = rdlt_thread_start(late_try_thread, &ta);
    if (rdlt_proxy_wait_count(p, "WAIT", 2, 5000) != 0)
        fail_msg("the blocker's WAIT was not sent");
    rdlt_proxy_drop_request(p, "EVALSHA", "15585", 1);
    sent = rdlt_proxy_count(p, "EVALSHA");
    tb = (late_try){l, B, 5000, 300, -1};
    b = rdlt_thread_start(late_try_thread, &tb);
    if (rdlt_proxy_wait_count(p, "EVALSHA", sent + 1, 5000) != 0)
        fail_msg("the try was not sent");
    rdlt_sleep_ms(400); /* at least: the try runs after its lease */
    rdlt_server_signal(rep, SIGCONT);
    rdlt_thread_join(a);
    rdlt_thread_join(b);
    rdlt_assert_ok(ta.rc);
    rdlt_assert_ok(rdl_lock_release_as(blocker, A));
    if (tb.rc != 0)
        fail_msg("acquire: %s: %s", rdl_err_name(tb.rc), rdl_client_errmsg(c));
    /* try, give-back, retry, at least */
    assert_true(rdlt_proxy_count(p, "EVALSHA") >= sent + 3);
    rc = rdl_lock_release_as(l, B);
    if (rc != 0)
        fail_msg("release: %s: %s", rdl_err_name(rc), rdl_client_errmsg(c));
    /* Nothing is left: a wait-0 try of another client gets every permit
     * there is (both of a semaphore). */
    if (k == LATE_READ) /* a reader's level is seen by a writer */
        l2 = rdl_rwlock_write(rw2);
    rdlt_assert_ok(rdl_lock_acquire_as(l2, B, 0, 10000));
    if (k == LATE_SEM)
        rdlt_assert_ok(rdl_lock_acquire_as(l2, (rdl_owner_t)3, 0, 10000));
    if (rw != NULL) {
        rdl_rwlock_free(rw);
        rdl_rwlock_free(rw2);
    } else if (k != LATE_PLAIN) { /* rdlt_lock()'s are freed by teardown */
        rdl_lock_free(l);
        rdl_lock_free(l2);
    }
}

static void test_durable_late_grant_plain(void **state)
{
    (void)state;
    late_grant_case(LATE_PLAIN);
}

static void test_durable_late_grant_fair(void **state)
{
    (void)state;
    late_grant_case(LATE_FAIR);
}

static void test_durable_late_grant_semaphore(void **state)
{
    (void)state;
    late_grant_case(LATE_SEM);
}

static void test_durable_late_grant_write(void **state)
{
    (void)state;
    late_grant_case(LATE_WRITE);
}

static void test_durable_late_grant_read(void **state)
{
    (void)state;
    late_grant_case(LATE_READ);
}

/* ---- WAITAOF: the FSYNCED levels (rdl_client_set_durable_level) ------- */

/* Append-only nodes that fsync every write: with the default (everysec)
 * a replica's file confirms a write only at its next fsync, up to about a
 * second later, as long as the tests' durable timeouts. */
static const char *const aof_yes[] = {"--appendonly", "yes", "--appendfsync",
                                      "always", NULL};

/* A client at `level` (durability off when replicas is 0), connected;
 * fails the test if it cannot connect. */
static rdl_client_t *level_client(const char *url, int replicas,
                                  int64_t timeout_ms, int level)
{
    rdl_client_t *c = rdlt_client_new(url);
    int rc;
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 3000));
    if (replicas != 0)
        rdlt_assert_ok(rdl_client_set_durability(c, replicas, timeout_ms));
    rdlt_assert_ok(rdl_client_set_durable_level(c, level));
    rc = rdl_client_connect(c);
    if (rc != 0)
        fail_msg("connect: %s: %s", rdl_err_name(rc), rdl_client_errmsg(c));
    return c;
}

/* rdl_client_connect() of a durable client at `level`; its time in *ms. */
static int level_connect(const char *url, int level, rdl_client_t **out,
                         int64_t *ms)
{
    rdl_client_t *c = rdlt_client_new(url);
    int64_t t0;
    int rc;
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 3000));
    rdlt_assert_ok(rdl_client_set_durability(c, 1, 1000));
    rdlt_assert_ok(rdl_client_set_durable_level(c, level));
    t0 = rdlt_now_ms();
    rc = rdl_client_connect(c);
    *ms = rdlt_now_ms() - t0;
    *out = c;
    return rc;
}

/* 1 if the servers the tests start have WAITAOF (Redis 7.2+, Valkey 8+):
 * one throwaway server tells. */
static int servers_have_waitaof(void)
{
    static int known = -1;
    if (known < 0) {
        rdlt_server *s = rdlt_server_start();
        known = rdlt_server_has_command(s, "WAITAOF");
        rdlt_release(s);
    }
    return known;
}

static void need_waitaof(void)
{
    if (servers_have_waitaof())
        return;
    print_message("skipped: this redis-server (RDL_TEST_REDIS_SERVER or "
                  "PATH) has no WAITAOF; it needs Redis 7.2+ or Valkey 8+\n");
    skip();
}

/* A master with append-only files (appendonly 1) or without. */
static rdlt_server *aof_master(int appendonly)
{
    const char *args[] = {"--repl-diskless-sync-delay",
                          "0",
                          "--appendonly",
                          appendonly ? "yes" : "no",
                          "--appendfsync",
                          "always",
                          NULL};
    return rdlt_server_start_args(args);
}

static rdlt_server *aof_replica(rdlt_server *m, int appendonly)
{
    char port[16];
    const char *args[] = {"--replicaof",
                          "127.0.0.1",
                          port,
                          "--appendonly",
                          appendonly ? "yes" : "no",
                          "--appendfsync",
                          "always",
                          NULL};
    snprintf(port, sizeof(port), "%d", rdlt_server_port(m));
    return rdlt_server_start_args(args);
}

/* Waits until n replicas of m confirm a write in their append-only files
 * (a replica's file is rewritten after its first sync; until then it
 * may not count). */
static void wait_aof_replicas(rdlt_server *m, int n)
{
    int64_t deadline = rdlt_now_ms() + 15000;
    long long got = 0;
    freeReplyObject(rdlt_cmd(m, "SET rdlt:aof 1"));
    for (;;) {
        redisReply *r = rdlt_cmd(m, "WAITAOF 0 %d 100", n);
        got = r->type == REDIS_REPLY_ARRAY && r->elements == 2
                  ? r->element[1]->integer
                  : 0;
        freeReplyObject(r);
        if (got >= n)
            break;
        if (rdlt_now_ms() > deadline)
            fail_msg("%lld of %d replicas' files confirmed in 15 s", got, n);
        rdlt_sleep_ms(20);
    }
    freeReplyObject(rdlt_cmd(m, "DEL rdlt:aof"));
}

/* The level is a setting: checked, and fixed once connected. */
static void test_durable_level_settings(void **state)
{
    rdl_client_t *c = rdlt_client_new("redis://127.0.0.1:1");
    rdlt_server *s;
    (void)state;
    rdlt_assert_rc(rdl_client_set_durable_level(c, -1), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_durable_level(c, 3), RDL_EINVAL);
    assert_non_null(strstr(rdl_client_errmsg(c), "durable level 3"));
    rdlt_assert_rc(rdl_client_set_durable_level(NULL, RDL_DURABLE_FSYNCED),
                   RDL_EINVAL);
    rdlt_assert_ok(rdl_client_set_durable_level(c, RDL_DURABLE_FSYNCED));
    rdlt_assert_ok(rdl_client_set_durable_level(c, RDL_DURABLE_FSYNCED_MASTER));
    rdlt_assert_ok(rdl_client_set_durable_level(c, RDL_DURABLE_RECEIVED));
    s = rdlt_server_start();
    c = rdlt_client(s);
    rdlt_assert_rc(rdl_client_set_durable_level(c, RDL_DURABLE_FSYNCED),
                   RDL_EINVAL);
    assert_non_null(strstr(rdl_client_errmsg(c), "already connected"));
}

static void assert_no_waitaof_refusal(rdl_client_t *c, int rc, int64_t ms,
                                      int port)
{
    char addr[32];
    const char *msg = rdl_client_errmsg(c);
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
    if (rc != RDL_ENOTSUP)
        fail_msg("connect: %s (%s), expected RDL_ENOTSUP", rdl_err_name(rc),
                 msg);
    if (strstr(msg, "WAITAOF") == NULL || strstr(msg, "7.2") == NULL ||
        strstr(msg, "Valkey 8") == NULL || strstr(msg, addr) == NULL)
        fail_msg("the message does not say it: \"%s\"", msg);
    /* At once, not after the connect timeout (2000 ms). */
    rdlt_assert_between(ms, 0, 1500);
    print_message("refused in %lld ms: %s\n", (long long)ms, msg);
}

/* A server without WAITAOF (Redis 7.0 and older) cannot confirm the
 * FSYNCED levels: the connect says so, at once. With durability off the
 * level is unused and the connect succeeds. */
static void test_durable_fsynced_needs_waitaof(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c;
    int64_t ms;
    int rc;
    (void)state;
    if (rdlt_server_has_command(s, "WAITAOF")) {
        print_message("skipped: this redis-server has WAITAOF; the refusal "
                      "is for servers without it (Redis 7.0 and older)\n");
        skip();
    }
    rc = level_connect(rdlt_server_url(s), RDL_DURABLE_FSYNCED, &c, &ms);
    assert_no_waitaof_refusal(c, rc, ms, rdlt_server_port(s));
    rc = level_connect(rdlt_server_url(s), RDL_DURABLE_FSYNCED_MASTER, &c, &ms);
    assert_no_waitaof_refusal(c, rc, ms, rdlt_server_port(s));
    level_client(rdlt_server_url(s), 0, 0, RDL_DURABLE_FSYNCED);
    level_client(rdlt_server_url(s), 1, 1000, RDL_DURABLE_RECEIVED);
}

/* The same through Sentinel: the master's connection is checked. */
static void test_durable_fsynced_needs_waitaof_sentinel(void **state)
{
    rdlt_sentinel *sn;
    rdl_client_t *c;
    int64_t ms;
    int rc;
    (void)state;
    if (servers_have_waitaof()) {
        print_message("skipped: this redis-server has WAITAOF; the refusal "
                      "is for servers without it (Redis 7.0 and older)\n");
        skip();
    }
    sn = rdlt_sentinel_start(NULL);
    rc = level_connect(rdlt_sentinel_url(sn), RDL_DURABLE_FSYNCED, &c, &ms);
    assert_no_waitaof_refusal(c, rc, ms,
                              rdlt_server_port(rdlt_sentinel_master(sn)));
}

/* FSYNCED: the grant is in both replicas' append-only files when the call
 * returns; FSYNCED_MASTER: in the master's too. Auto-leased holds are
 * renewed at the level. */
static void test_durable_fsynced_grant_in_files(void **state)
{
    rdlt_server *m, *r1, *r2;
    rdl_client_t *c, *cm;
    rdl_lock_t *l, *lm, *auto_l;
    int lost = 0, rc;
    (void)state;
    need_waitaof();
    m = aof_master(1);
    r1 = aof_replica(m, 1);
    r2 = aof_replica(m, 1);
    rdlt_server_wait_replicas(m, 2, 10000);
    wait_aof_replicas(m, 2);

    c = level_client(rdlt_server_url(m), RDL_REPLICAS_ALL, 1000,
                     RDL_DURABLE_FSYNCED);
    l = rdlt_lock(c, "inaof");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    assert_true(rdlt_server_aof_has(r1, "rdl:lock:{inaof}"));
    assert_true(rdlt_server_aof_has(r2, "rdl:lock:{inaof}"));
    assert_true(held_on(r1, "inaof") && held_on(r2, "inaof"));
    rdlt_assert_ok(rdl_lock_release_as(l, A));

    cm = level_client(rdlt_server_url(m), 2, 1000, RDL_DURABLE_FSYNCED_MASTER);
    lm = rdlt_lock(cm, "inaofm");
    rdlt_assert_ok(rdl_lock_acquire_as(lm, A, 0, 30000));
    assert_true(rdlt_server_aof_has(m, "rdl:lock:{inaofm}"));
    assert_true(rdlt_server_aof_has(r1, "rdl:lock:{inaofm}"));
    assert_true(rdlt_server_aof_has(r2, "rdl:lock:{inaofm}"));
    rdlt_assert_ok(rdl_lock_release_as(lm, A));

    /* Renewals confirmed by WAITAOF keep an auto-leased hold. */
    {
        rdl_client_t *w = rdlt_client_new(rdlt_server_url(m));
        rdlt_assert_ok(rdl_client_set_timeouts_ms(w, 2000, 3000));
        rdlt_assert_ok(rdl_client_set_watchdog_ms(w, 1500));
        rdlt_assert_ok(rdl_client_set_durability(w, RDL_REPLICAS_ALL, 500));
        rdlt_assert_ok(
            rdl_client_set_durable_level(w, RDL_DURABLE_FSYNCED_MASTER));
        rc = rdl_client_connect(w);
        if (rc != 0)
            fail_msg("connect: %s: %s", rdl_err_name(rc), rdl_client_errmsg(w));
        auto_l = rdlt_lock(w, "inaofauto");
        rdlt_assert_ok(rdl_lock_set_lost_cb(auto_l, on_lost, &lost));
        rdlt_assert_ok(rdl_lock_acquire_as(auto_l, A, 0, RDL_LEASE_AUTO));
        rdlt_sleep_ms(3000); /* two leases: only renewals keep it */
        assert_int_equal(__atomic_load_n(&lost, __ATOMIC_SEQ_CST), 0);
        assert_true(rdlt_stats(w).renewals >= 2);
        rdlt_assert_ok(rdl_lock_release_as(auto_l, A));
    }
}

/* A replica without appendonly never counts: RDL_REPLICAS_ALL at FSYNCED
 * is refused (RDL_ENOREPLICAS, the message counting files, nothing
 * held), where RECEIVED is confirmed. A count the files meet is
 * confirmed, and refused again while that replica is paused. */
static void test_durable_fsynced_refused_without_files(void **state)
{
    rdlt_server *m, *r1;
    rdl_client_t *all, *one, *recv;
    rdl_lock_t *la, *l1, *lr;
    int64_t t0;
    (void)state;
    need_waitaof();
    m = aof_master(1);
    r1 = aof_replica(m, 1);
    (void)aof_replica(m, 0);
    rdlt_server_wait_replicas(m, 2, 10000);
    wait_aof_replicas(m, 1);

    all = level_client(rdlt_server_url(m), RDL_REPLICAS_ALL, 300,
                       RDL_DURABLE_FSYNCED);
    la = rdlt_lock(all, "nofile");
    rdlt_assert_rc(rdl_lock_acquire_as(la, A, 0, 30000), RDL_ENOREPLICAS);
    if (strstr(rdl_client_errmsg(all), "1 of 2 replicas") == NULL ||
        strstr(rdl_client_errmsg(all), "append-only") == NULL)
        fail_msg("the refusal does not count files: \"%s\"",
                 rdl_client_errmsg(all));
    wait_free(m, "nofile");

    recv = level_client(rdlt_server_url(m), RDL_REPLICAS_ALL, 300,
                        RDL_DURABLE_RECEIVED);
    lr = rdlt_lock(recv, "nofile");
    rdlt_assert_ok(rdl_lock_acquire_as(lr, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(lr, A));

    one = level_client(rdlt_server_url(m), 1, 300, RDL_DURABLE_FSYNCED);
    l1 = rdlt_lock(one, "nofile");
    rdlt_assert_ok(rdl_lock_acquire_as(l1, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(l1, A));

    rdlt_server_signal(r1, SIGSTOP);
    t0 = rdlt_now_ms();
    rdlt_assert_rc(rdl_lock_acquire_as(l1, A, 0, 30000), RDL_ENOREPLICAS);
    rdlt_assert_between(rdlt_now_ms() - t0, 250, 2500);
    if (strstr(rdl_client_errmsg(one), "0 of 1 replicas") == NULL)
        fail_msg("unexpected message: \"%s\"", rdl_client_errmsg(one));
    wait_free(m, "nofile");
    rdlt_server_signal(r1, SIGCONT);
}

/* FSYNCED_MASTER with the master's appendonly off is refused at connect
 * (FSYNCED, which does not ask for the master's file, is not). A master
 * that refuses CONFIG cannot be checked at connect: the grant is refused
 * then, RDL_ENOTSUP quoting the server, and nothing is held. */
static void test_durable_fsynced_master_needs_its_file(void **state)
{
    rdlt_server *m, *m2;
    rdl_client_t *c;
    rdl_lock_t *l;
    int64_t ms;
    int rc;
    (void)state;
    need_waitaof();
    m = aof_master(0);
    (void)aof_replica(m, 1);
    rdlt_server_wait_replicas(m, 1, 10000);
    wait_aof_replicas(m, 1);

    rc = level_connect(rdlt_server_url(m), RDL_DURABLE_FSYNCED_MASTER, &c, &ms);
    if (rc != RDL_ENOTSUP || strstr(rdl_client_errmsg(c), "appendonly") == NULL)
        fail_msg("connect: %s (%s), expected RDL_ENOTSUP", rdl_err_name(rc),
                 rdl_client_errmsg(c));
    rdlt_assert_between(ms, 0, 1500);
    print_message("refused in %lld ms: %s\n", (long long)ms,
                  rdl_client_errmsg(c));
    c = level_client(rdlt_server_url(m), 1, 1000, RDL_DURABLE_FSYNCED);
    l = rdlt_lock(c, "mfile");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));

    {
        const char *args[] = {"--appendonly", "no", "--rename-command",
                              "CONFIG",       "",   NULL};
        m2 = rdlt_server_start_args(args);
    }
    c = level_client(rdlt_server_url(m2), RDL_REPLICAS_ALL, 1000,
                     RDL_DURABLE_FSYNCED_MASTER);
    l = rdlt_lock(c, "mfile2");
    rc = rdl_lock_acquire_as(l, A, 0, 30000);
    if (rc != RDL_ENOTSUP || strstr(rdl_client_errmsg(c), "appendonly") == NULL)
        fail_msg("acquire: %s (%s), expected RDL_ENOTSUP", rdl_err_name(rc),
                 rdl_client_errmsg(c));
    print_message("CONFIG refused, the grant refused: %s\n",
                  rdl_client_errmsg(c));
    wait_free(m2, "mfile2");
}

/* test_durable_failover_loop on append-only nodes at FSYNCED. */
static void test_durable_fsynced_failover_loop(void **state)
{
    (void)state;
    need_waitaof();
    failover_loop(rdlt_sentinel_start_args(NULL, aof_yes), RDL_DURABLE_FSYNCED);
}

/* The field of lock `name`'s hash on s ("" if none). */
static void lock_field(rdlt_server *s, const char *name, const char *field,
                       char *out, size_t len)
{
    redisReply *r = rdlt_cmd(s, "HGET rdl:lock:{%s} %s", name, field);
    snprintf(out, len, "%s", r->type == REDIS_REPLY_STRING ? r->str : "");
    freeReplyObject(r);
}

/* What FSYNCED is for: the replicas crash (SIGKILL) and restart from their
 * files while the master cannot send them anything (paused), so what they
 * have is what their files had; then the master dies and one of them is
 * promoted. The hold and its fencing token are there, and no second
 * owner gets the lock. */
static void test_durable_fsynced_replicas_restart_from_files(void **state)
{
    rdlt_sentinel *sn;
    rdl_client_t *c1, *c2;
    rdl_lock_t *l1, *l2;
    rdlt_server *m, *now;
    char token[32], got[64];
    uint64_t t;
    int64_t deadline;
    int i, rc = RDL_EBUSY;
    (void)state;
    need_waitaof();
    sn = rdlt_sentinel_start_args(NULL, aof_yes);
    m = rdlt_sentinel_master(sn);
    wait_aof_replicas(m, 2);
    c1 = level_client(rdlt_sentinel_url(sn), RDL_REPLICAS_ALL, 1000,
                      RDL_DURABLE_FSYNCED);
    c2 = durable_client(rdlt_sentinel_url(sn), 0, 1000);
    l1 = rdlt_lock(c1, "crash");
    l2 = rdlt_lock(c2, "crash");
    rdlt_assert_ok(rdl_lock_acquire_as(l1, A, 0, 60000));
    t = rdl_lock_fencing_token(l1, A);
    snprintf(token, sizeof(token), "%llu", (unsigned long long)t);

    rdlt_server_signal(m, SIGSTOP);
    for (i = 0; i < RDLT_SENTINEL_DATA; i++) {
        rdlt_server *r = rdlt_sentinel_data(sn, i);
        if (r == m)
            continue;
        rdlt_server_signal(r, SIGKILL);
        rdlt_server_restart(r); /* answers once its file is loaded */
        lock_field(r, "crash", "o", got, sizeof(got));
        if (got[0] == '\0')
            fail_msg("replica %d restarted without the hold", i);
        lock_field(r, "crash", "t", got, sizeof(got));
        if (strcmp(got, token) != 0)
            fail_msg("replica %d restarted with token %s, not %s", i, got,
                     token);
    }
    rdlt_server_signal(m, SIGKILL);
    now = rdlt_sentinel_wait_switch(sn, m, 40000);
    lock_field(now, "crash", "t", got, sizeof(got));
    assert_string_equal(got, token);
    deadline = rdlt_now_ms() + 3000;
    while (rdlt_now_ms() < deadline && rc != 0) {
        rc = rdl_lock_acquire_as(l2, B, 0, 10000);
        if (rc != 0)
            rdlt_sleep_ms(100);
    }
    if (rc == 0)
        fail_msg("a second owner got the lock after the promotion");
    rdlt_assert_rc(rc, RDL_EBUSY);
    assert_int_equal(rdl_lock_fencing_token(l1, A), t);
    rdlt_assert_ok(rdl_lock_release_as(l1, A));
    rdlt_assert_ok(rdl_lock_acquire_as(l2, B, 0, 10000));
    assert_true(rdl_lock_fencing_token(l2, B) > t);
    rdlt_assert_ok(rdl_lock_release_as(l2, B));
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_durable_settings),
    RDLT_TEST(test_durable_grant_reaches_replicas),
    RDLT_TEST(test_durable_replicas_paused),
    RDLT_TEST(test_durable_wait_blocks_nothing_else),
    RDLT_TEST(test_durable_renewals_need_replicas),
    RDLT_TEST(test_durable_all_waits_for_an_unlisted_replica),
    RDLT_TEST(test_durable_failover_keeps_the_hold),
    RDLT_TEST(test_durable_failover_loop),
    RDLT_TEST(test_durable_all_after_crash_failover),
    RDLT_TEST(test_durable_off_failover_double_grant),
    RDLT_TEST(test_durable_late_grant_plain),
    RDLT_TEST(test_durable_late_grant_fair),
    RDLT_TEST(test_durable_late_grant_semaphore),
    RDLT_TEST(test_durable_late_grant_write),
    RDLT_TEST(test_durable_late_grant_read),
    RDLT_TEST(test_durable_level_settings),
    RDLT_TEST(test_durable_fsynced_needs_waitaof),
    RDLT_TEST(test_durable_fsynced_needs_waitaof_sentinel),
    RDLT_TEST(test_durable_fsynced_grant_in_files),
    RDLT_TEST(test_durable_fsynced_refused_without_files),
    RDLT_TEST(test_durable_fsynced_master_needs_its_file),
    RDLT_TEST(test_durable_fsynced_failover_loop),
    RDLT_TEST(test_durable_fsynced_replicas_restart_from_files),
};

RDLT_MAIN(tests)
