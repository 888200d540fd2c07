/* The semaphore (src/semaphore, scripts/semaphore_*.lua): never more holders
 * than the total in force, per-owner leases (a crashed holder's permits
 * come back), the watchdog, a stored total, one wake-up per freed permit,
 * idempotent retries, the MultiLock, and bad input. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pthread.h>

#include "rdlt.h"

#define A ((rdl_owner_t)1)
#define B ((rdl_owner_t)2)
#define C ((rdl_owner_t)3)

static void free_lock(void *l)
{
    rdl_lock_free(l);
}

static rdl_lock_t *sem(rdl_client_t *c, const char *name, uint32_t permits)
{
    rdl_lock_t *l = NULL;
    rdlt_assert_ok(rdl_semaphore_new(c, name, permits, &l));
    rdlt_defer(free_lock, l);
    return l;
}

/* Bad input is refused before anything is written. */
static void test_semaphore_bad_input(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = (rdl_lock_t *)&l, *plain = rdlt_lock(c, "plain");
    rdl_lock_t *ok = sem(c, "ok", 2);
    (void)state;

    rdlt_assert_rc(rdl_semaphore_new(c, "zero", 0, &l), RDL_EINVAL);
    assert_null(l);
    assert_non_null(strstr(rdl_client_errmsg(c), "permits"));
    rdlt_assert_rc(
        rdl_semaphore_new(c, "big", RDL_SEMAPHORE_MAX_PERMITS + 1, &l),
        RDL_EINVAL);
    rdlt_assert_rc(rdl_semaphore_new(c, "", 1, &l), RDL_EINVAL);
    rdlt_assert_rc(rdl_semaphore_new(c, NULL, 1, &l), RDL_EINVAL);
    rdlt_assert_rc(rdl_semaphore_new(NULL, "x", 1, &l), RDL_EINVAL);
    rdlt_assert_rc(rdl_semaphore_new(c, "x", 1, NULL), RDL_EINVAL);
    rdlt_assert_rc(rdl_semaphore_set_permits(NULL, 1), RDL_EINVAL);
    rdlt_assert_rc(rdl_semaphore_set_permits(plain, 1), RDL_EINVAL);
    rdlt_assert_rc(rdl_semaphore_set_permits(ok, 0), RDL_EINVAL);
    rdlt_assert_rc(rdl_lock_acquire_as(ok, A, 0, 0), RDL_EINVAL);
    rdlt_assert_rc(rdl_lock_release_as(ok, A), RDL_ENOTHELD);
    assert_int_equal(rdlt_count_keys(s, "rdl:sem*"), 0);
}

/* Never more holders than permits; each acquisition a larger token; a
 * release lets the next one in; info counts permits in use. */
static void test_semaphore_permits_limit(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = sem(c, "lim", 3);
    rdl_lock_info_t info;
    uint64_t last = 0;
    rdl_owner_t o;
    (void)state;

    for (o = 10; o < 13; o++) {
        rdlt_assert_ok(rdl_lock_acquire_as(l, o, 0, 30000));
        assert_true(rdl_lock_fencing_token(l, o) > last);
        last = rdl_lock_fencing_token(l, o);
    }
    rdlt_assert_rc(rdl_lock_acquire_as(l, 13, 0, 30000), RDL_EBUSY);
    rdlt_assert_rc(rdl_lock_acquire_as(l, 13, 200, 30000), RDL_ETIMEDOUT);
    info = rdlt_info(l, 10);
    assert_int_equal(info.permits, 3);
    assert_int_equal(info.holders, 3);
    assert_int_equal(info.hold_count, 1);
    assert_true(info.locked && info.held_by_owner);
    assert_true(info.ttl_ms > 0 && info.ttl_ms <= 30000);
    assert_int_equal(info.fencing_token, last);
    rdlt_assert_ok(rdl_lock_release_as(l, 11));
    rdlt_assert_ok(rdl_lock_acquire_as(l, 13, 0, 30000));
    assert_true(rdl_lock_fencing_token(l, 13) > last);
    for (o = 10; o < 14; o++)
        if (o != 11)
            rdlt_assert_ok(rdl_lock_release_as(l, o));
    info = rdlt_info(l, 10);
    assert_int_equal(info.holders, 0);
    assert_false(info.locked);
    assert_int_equal(info.ttl_ms, -2);
}

/* One owner may hold several permits: each acquisition takes one (if one
 * is free) with a token of its own, each release returns one. */
static void test_semaphore_owner_holds_several(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = sem(c, "several", 2);
    uint64_t t1;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    t1 = rdl_lock_fencing_token(l, A);
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    assert_true(rdl_lock_fencing_token(l, A) > t1);
    assert_int_equal(rdlt_info(l, A).hold_count, 2);
    rdlt_assert_rc(rdl_lock_acquire_as(l, A, 0, 30000), RDL_EBUSY);
    rdlt_assert_rc(rdl_lock_acquire_as(l, B, 0, 30000), RDL_EBUSY);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    assert_int_equal(rdlt_info(l, A).hold_count, 1);
    rdlt_assert_ok(rdl_lock_acquire_as(l, B, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    rdlt_assert_rc(rdl_lock_release_as(l, A), RDL_ENOTHELD);
    rdlt_assert_ok(rdl_lock_release_as(l, B));
}

static int crash_holder(void *arg, int fd)
{
    const char *url = arg;
    rdl_client_t *c = NULL;
    rdl_lock_t *l = NULL;
    if (rdl_client_new(&c) != 0 || rdl_client_set_url(c, url) != 0 ||
        rdl_client_connect(c) != 0 || rdl_semaphore_new(c, "crash", 2, &l) != 0)
        return 1;
    if (rdl_lock_acquire_as(l, 7, 0, 1500) != 0 ||
        rdl_lock_acquire_as(l, 7, 0, 1500) != 0)
        return 2;
    rdlt_child_say(fd, "held");
    for (;;)
        pause();
    return 0;
}

/* A holder killed with SIGKILL: its permits come back when its lease
 * ends, while another holder's (longer) lease is untouched; a waiter
 * sleeping on them gets one then. */
static void test_semaphore_crashed_holder_returns(void **state)
{
    rdlt_server *s = rdlt_server_start();
    char url[64], line[32];
    rdlt_child *ch;
    rdl_client_t *c;
    rdl_lock_t *l;
    int64_t t0;
    (void)state;

    snprintf(url, sizeof(url), "redis://127.0.0.1:%d", rdlt_server_port(s));
    ch = rdlt_child_start(crash_holder, url);
    if (rdlt_child_hear(ch, line, sizeof(line), 10000) != 0)
        fail_msg("the child never held its permits");
    c = rdlt_client(s);
    l = sem(c, "crash", 2);
    rdlt_assert_rc(rdl_lock_acquire_as(l, A, 0, 60000), RDL_EBUSY);
    rdlt_child_signal(ch, SIGKILL);
    t0 = rdlt_now_ms();
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 10000, 60000));
    rdlt_assert_ok(rdl_lock_acquire_as(l, B, 0, 60000));
    assert_true(rdlt_now_ms() - t0 < 5000);
    assert_int_equal(rdlt_info(l, A).holders, 2);
    rdlt_assert_rc(rdl_lock_acquire_as(l, C, 0, 60000), RDL_EBUSY);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    rdlt_assert_ok(rdl_lock_release_as(l, B));
}

/* RDL_LEASE_AUTO: the watchdog keeps every permit of the owner alive
 * long past the lease; the permits go when released. */
static void test_semaphore_auto_lease_kept(void **state)
{
    rdlt_server *s = rdlt_server_start();
    char url[64];
    rdl_client_t *c;
    rdl_lock_t *l, *other;
    (void)state;

    snprintf(url, sizeof(url), "redis://127.0.0.1:%d", rdlt_server_port(s));
    c = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_set_watchdog_ms(c, 500));
    rdlt_assert_ok(rdl_client_connect(c));
    l = sem(c, "auto", 2);
    other = sem(rdlt_client(s), "auto", 2);
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, RDL_LEASE_AUTO));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, RDL_LEASE_AUTO));
    rdlt_sleep_ms(2000);
    assert_int_equal(rdlt_info(l, A).hold_count, 2);
    assert_int_equal(rdlt_info(other, A).holders, 2);
    assert_true(rdl_lock_valid_ms(l, A) > 0);
    rdlt_assert_rc(rdl_lock_acquire_as(other, B, 0, 5000), RDL_EBUSY);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    rdlt_sleep_ms(1200);
    assert_int_equal(rdlt_info(other, A).holders, 1);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    rdlt_assert_ok(rdl_lock_acquire_as(other, B, 0, 5000));
    rdlt_assert_ok(rdl_lock_release_as(other, B));
}

/* The stored total is in force: the first acquisition stores its
 * object's; another client's object with another total follows it;
 * set_permits changes it; lowering revokes nothing, it stops grants. */
static void test_semaphore_total_stored_wins(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_lock_t *l5 = sem(rdlt_client(s), "tot", 5);
    rdl_lock_t *l2 = sem(rdlt_client(s), "tot", 2);
    rdl_owner_t o;
    (void)state;

    assert_int_equal(rdlt_info(l2, A).permits, 2); /* nothing stored yet */
    for (o = 10; o < 13; o++)
        rdlt_assert_ok(rdl_lock_acquire_as(l5, o, 0, 30000));
    assert_int_equal(rdlt_info(l2, A).permits, 5);
    rdlt_assert_ok(rdl_lock_acquire_as(l2, 13, 0, 30000)); /* 4 of 5 */
    rdlt_assert_ok(rdl_semaphore_set_permits(l2, 2));
    assert_int_equal(rdlt_info(l5, A).permits, 2);
    assert_int_equal(rdlt_info(l5, A).holders, 4); /* nothing revoked */
    rdlt_assert_rc(rdl_lock_acquire_as(l5, 14, 0, 30000), RDL_EBUSY);
    for (o = 10; o < 13; o++)
        rdlt_assert_ok(rdl_lock_release_as(l5, o));
    rdlt_assert_ok(rdl_lock_acquire_as(l5, 14, 0, 30000)); /* 2 of 2 */
    rdlt_assert_rc(rdl_lock_acquire_as(l5, 15, 0, 30000), RDL_EBUSY);
    rdlt_assert_ok(rdl_semaphore_set_permits(l5, 3));
    rdlt_assert_ok(rdl_lock_acquire_as(l5, 15, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(l2, 13));
    rdlt_assert_ok(rdl_lock_release_as(l5, 14));
    rdlt_assert_ok(rdl_lock_release_as(l5, 15));
}

typedef struct waiter {
    rdl_client_t *c;
    rdl_lock_t *l;
    int64_t lease_ms; /* 0: 30 s */
    int rc;
    int done; /* atomic */
} waiter;

static void *wait_thread(void *arg)
{
    waiter *w = arg;
    w->rc = rdl_lock_acquire_as(w->l, A, RDL_WAIT_FOREVER,
                                w->lease_ms > 0 ? w->lease_ms : 30000);
    __atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void wait_waiters(rdl_lock_t *l, uint32_t n)
{
    int64_t deadline = rdlt_now_ms() + 10000;
    while (rdlt_info(l, B).waiters != n) {
        if (rdlt_now_ms() > deadline)
            fail_msg("%u waiters never registered (%u)", n,
                     rdlt_info(l, B).waiters);
        rdlt_sleep_ms(5);
    }
}

static int count_done(waiter *w, int n)
{
    int i, d = 0;
    for (i = 0; i < n; i++)
        d += __atomic_load_n(&w[i].done, __ATOMIC_SEQ_CST);
    return d;
}

/* Each permit freed wakes exactly one waiter, across clients, by its
 * message (not by a capped sleep), in the order they registered; a
 * release that frees two permits' worth (set_permits) wakes two. */
static void test_semaphore_one_wakeup_per_permit(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *hc = rdlt_client(s);
    rdl_lock_t *hl = sem(hc, "wake", 2);
    waiter w[4];
    rdlt_thread *t[4];
    long long pub;
    uint64_t tries0 = 0;
    int i;
    (void)state;

    /* The waiters' leases (30 s) are no shorter than what the holders
     * have left, so no grant tells the next waiter of a sooner expiry
     * (a "recap" message): every message counted is a wake-up. */
    rdlt_assert_ok(rdl_lock_acquire_as(hl, 100, 0, 30000));
    rdlt_assert_ok(rdl_lock_acquire_as(hl, 101, 0, 30000));
    for (i = 0; i < 4; i++) {
        memset(&w[i], 0, sizeof(w[i]));
        w[i].c = rdlt_client(s);
        w[i].l = sem(w[i].c, "wake", 2);
        /* Subscribed before its one try, so that try registers it. */
        rdlt_assert_rc(rdl_lock_acquire_as(w[i].l, B, 100, 30000),
                       RDL_ETIMEDOUT);
        if (i == 0)
            tries0 = rdlt_stats(w[0].c).attempts;
        t[i] = rdlt_thread_start(wait_thread, &w[i]);
        wait_waiters(hl, (uint32_t)i + 1);
    }
    pub = rdlt_cmd_calls(s, "publish");
    rdlt_assert_ok(rdl_lock_release_as(hl, 100));
    if (!rdlt_wait_flag(&w[0].done, 5000))
        fail_msg("the first waiter was not woken");
    rdlt_thread_join(t[0]);
    rdlt_assert_ok(w[0].rc);
    assert_int_equal(rdlt_stats(w[0].c).wakeups, 1);
    /* No polling: the wait's first try (it registers) and the one after
     * the wake-up; a subscription confirmation may add one. */
    assert_true(rdlt_stats(w[0].c).attempts - tries0 <= 3);
    assert_int_equal(rdlt_cmd_calls(s, "publish") - pub, 1);
    rdlt_sleep_ms(200);
    assert_int_equal(count_done(w, 4), 1);
    /* The message reached only the client it named. */
    for (i = 1; i < 4; i++)
        assert_int_equal(rdlt_stats(w[i].c).messages, 0);

    rdlt_assert_ok(rdl_semaphore_set_permits(hl, 4)); /* two more */
    if (!rdlt_wait_flag(&w[1].done, 5000) || !rdlt_wait_flag(&w[2].done, 5000))
        fail_msg("raising the total did not wake two waiters");
    rdlt_thread_join(t[1]);
    rdlt_thread_join(t[2]);
    assert_int_equal(rdlt_cmd_calls(s, "publish") - pub, 3);
    rdlt_assert_ok(w[1].rc);
    rdlt_assert_ok(w[2].rc);
    assert_int_equal(rdlt_stats(w[1].c).wakeups, 1);
    assert_int_equal(rdlt_stats(w[2].c).wakeups, 1);
    rdlt_sleep_ms(200);
    assert_int_equal(count_done(w, 4), 3);

    rdlt_assert_ok(rdl_lock_release_as(hl, 101));
    if (!rdlt_wait_flag(&w[3].done, 5000))
        fail_msg("the last waiter was not woken");
    rdlt_thread_join(t[3]);
    rdlt_assert_ok(w[3].rc);
    assert_int_equal(rdlt_stats(w[3].c).wakeups, 1);
    for (i = 0; i < 4; i++)
        rdlt_assert_ok(rdl_lock_release_as(w[i].l, A));
}

/* Starts a waiter of the full semaphore "relay" (total 1) with lease
 * lease_ms, once its client is subscribed, and waits until it is the
 * nth registration. */
static rdlt_thread *start_relay_waiter(waiter *w, rdlt_server *s,
                                       rdl_lock_t *hl, uint32_t nth,
                                       int64_t lease_ms)
{
    rdlt_thread *t;
    memset(w, 0, sizeof(*w));
    w->c = rdlt_client(s);
    w->l = sem(w->c, "relay", 1);
    w->lease_ms = lease_ms;
    rdlt_assert_rc(rdl_lock_acquire_as(w->l, B, 100, 30000), RDL_ETIMEDOUT);
    t = rdlt_thread_start(wait_thread, w);
    wait_waiters(hl, nth);
    return t;
}

/* Runs semaphore_acquire.lua (register: ARGV[4] a lifetime) or
 * semaphore_leave.lua for `owner` on "relay", as a client would. */
static redisReply *relay_script(rdlt_server *s, const char *script,
                                const char *owner)
{
    char *body = rdlt_read_script(RDL_TEST_SCRIPTS_DIR, script);
    redisReply *r;
    if (strcmp(script, "semaphore_leave") == 0)
        r = rdlt_cmd(s,
                     "EVAL %s 2 rdl:sem:{relay} rdl:sem.x:{relay} %s publish "
                     "rdl:sem.ch:{relay}",
                     body, owner);
    else
        r = rdlt_cmd(s,
                     "EVAL %s 2 rdl:sem:{relay} rdl:sem.x:{relay} %s 30000 "
                     "dead-req 60000 publish rdl:sem.ch:{relay} 86400000 1",
                     body, owner);
    free(body);
    return r;
}

/* The first waiter in line is told when a permit may come back (the
 * grant's recap); when it gives up with no permit free, its leave tells
 * the next one instead, which otherwise sleeps on the 8 s lease it saw
 * at its own try past the new holder's 2 s (as for the plain lock:
 * test_handoff_leave_passes_new_lease). */
static void test_semaphore_leave_passes_new_lease(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *hc = rdlt_client(s);
    rdl_lock_t *hl = sem(hc, "relay", 1);
    waiter v, w;
    rdlt_thread *tv, *tw;
    redisReply *r;
    int64_t t0;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(hl, 100, 0, 8000));
    tv = start_relay_waiter(&v, s, hl, 1, 2000);
    r = relay_script(s, "semaphore_acquire", "gone:1"); /* second */
    if (r->type != REDIS_REPLY_ARRAY || r->element[2]->integer != 1)
        fail_msg("the dead waiter was not registered");
    freeReplyObject(r);
    tw = start_relay_waiter(&w, s, hl, 3, 0);
    rdlt_assert_ok(rdl_lock_release_as(hl, 100)); /* names v */
    if (!rdlt_wait_flag(&v.done, 10000))
        fail_msg("the first waiter was not handed the permit");
    rdlt_thread_join(tv);
    rdlt_assert_ok(v.rc);
    t0 = rdlt_now_ms(); /* v's grant told "gone:1" its 2 s lease */
    freeReplyObject(relay_script(s, "semaphore_leave", "gone:1"));
    if (!rdlt_wait_flag(&w.done, 4500))
        fail_msg("the last waiter slept on through the new holder's 2 s "
                 "lease after the waiter told of it left");
    /* Not before the 2 s lease ran out (less the time t0 was read
     * late), and well before the 8 s one. */
    rdlt_assert_between(rdlt_now_ms() - t0, 1000, 4500);
    rdlt_thread_join(tw);
    rdlt_assert_ok(w.rc);
    rdlt_assert_ok(rdl_lock_release_as(w.l, A));
    assert_int_not_equal(rdl_lock_release_as(v.l, A), 0); /* ran out */
}

/* Lost replies: a retried acquisition takes one permit, not two; a
 * retried release returns one, not two (the fault proxy drops the
 * replies after the server applied the scripts). */
static void test_semaphore_retries_count_once(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *c = rdlt_proxy_client(p);
    rdl_lock_t *l = sem(c, "retry", 3), *d = sem(rdlt_client(s), "retry", 3);
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, C, 0, 30000)); /* scripts loaded */
    rdlt_assert_ok(rdl_lock_release_as(l, C));
    rdlt_proxy_drop_reply(p, "EVALSHA", "{retry}", 1);
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 5000, 30000));
    assert_int_equal(rdlt_info(d, A).holders, 1);
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    rdlt_proxy_drop_reply(p, "EVALSHA", "{retry}", 1);
    rdlt_assert_ok(rdl_lock_release_as(l, A)); /* 3 -> 2, once */
    assert_int_equal(rdlt_info(d, A).holders, 2);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    rdlt_proxy_drop_reply(p, "EVALSHA", "{retry}", 1);
    rdlt_assert_ok(rdl_lock_release_as(l, A)); /* the last one */
    assert_int_equal(rdlt_info(d, A).holders, 0);
    rdlt_assert_rc(rdl_lock_release_as(l, A), RDL_ENOTHELD);
}

typedef struct set_job {
    rdl_lock_t *l;
    uint32_t permits;
    int rc;
    int done; /* atomic flag */
} set_job;

static void *set_permits_job(void *arg)
{
    set_job *j = arg;
    j->rc = rdl_semaphore_set_permits(j->l, j->permits);
    __atomic_store_n(&j->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* A set of the total whose reply is lost is sent again with the same
 * request id. Another client's set that lands between the first apply and
 * the retry stays in force: the retry finds its record and changes
 * nothing (storing a value is not idempotent once someone else stored
 * another). */
static void test_semaphore_set_retry_keeps_later_set(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *cp = rdlt_proxy_client(p), *cd = rdlt_client(s);
    rdl_lock_t *warm = sem(cp, "warm-up", 1), *lp = sem(cp, "race", 2);
    rdl_lock_t *ld = sem(cd, "race", 2);
    rdlt_thread *t;
    set_job j;
    int64_t end;
    unsigned before;
    (void)state;

    rdlt_assert_ok(rdl_semaphore_set_permits(warm, 1)); /* script loaded */
    rdlt_assert_ok(rdl_semaphore_set_permits(ld, 2));
    before = rdlt_proxy_count(p, "EVALSHA");
    rdlt_proxy_drop_reply(p, "EVALSHA", "{race}", 1);
    rdlt_proxy_hold_new(p, 1); /* the reconnect, and so the retry, waits */
    memset(&j, 0, sizeof(j));
    j.l = lp;
    j.permits = 3;
    t = rdlt_thread_start(set_permits_job, &j);
    end = rdlt_now_ms() + 10000;
    while (rdlt_info(ld, A).permits != 3) { /* applied; the reply is lost */
        if (rdlt_now_ms() > end)
            fail_msg("the first set was not applied");
        rdlt_sleep_ms(1);
    }
    rdlt_assert_ok(rdl_semaphore_set_permits(ld, 7));
    rdlt_proxy_hold_new(p, 0); /* now the retry goes out */
    if (!rdlt_wait_flag(&j.done, 10000))
        fail_msg("the set did not return");
    rdlt_thread_join(t);
    rdlt_assert_ok(j.rc);
    assert_int_equal(rdlt_proxy_count(p, "EVALSHA") - before, 2);
    assert_int_equal(rdlt_info(ld, A).permits, 7);
}

/* Runs semaphore_set.lua on the semaphore "direct" as request `id`: its
 * reply. */
static long long set_script(rdlt_server *s, const char *body, const char *id,
                            const char *total)
{
    /* ARGV: publish command, channel, request id, applied-set window
     * (every change's), the total, the retention. */
    redisReply *r = rdlt_cmd(s,
                             "EVAL %s 2 rdl:sem:{direct} rdl:sem.x:{direct} "
                             "publish rdl:sem.ch:{direct} %s 6000 %s 86400000",
                             body, id, total);
    long long v;
    if (r->type != REDIS_REPLY_INTEGER)
        fail_msg("semaphore_set replied type %d (%s)", r->type,
                 r->type == REDIS_REPLY_ERROR ? r->str : "");
    v = r->integer;
    freeReplyObject(r);
    return v;
}

/* The script itself: a retry of an applied set answers what the first
 * apply answered (the total before it) and stores nothing. */
static void test_semaphore_set_retry_answers_as_first(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_lock_t *l = sem(rdlt_client(s), "direct", 1);
    char *body = rdlt_read_script(RDL_TEST_SCRIPTS_DIR, "semaphore_set");
    (void)state;

    assert_int_equal(set_script(s, body, "req-a", "4"), 0);
    assert_int_equal(set_script(s, body, "req-b", "9"), 4);
    assert_int_equal(set_script(s, body, "req-a", "4"), 0);
    assert_int_equal(rdlt_info(l, A).permits, 9);
    assert_int_equal(set_script(s, body, "req-b", "9"), 4);
    assert_int_equal(set_script(s, body, "req-c", "5"), 9);
    assert_int_equal(rdlt_info(l, A).permits, 5);
    free(body);
}

/* Force release frees every permit; the total and the tokens stay. */
static void test_semaphore_force_release(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = sem(c, "force", 2);
    uint64_t t;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_acquire_as(l, B, 0, 30000));
    t = rdl_lock_fencing_token(l, B);
    rdlt_assert_ok(rdl_lock_force_release(l));
    assert_int_equal(rdlt_info(l, A).holders, 0);
    rdlt_assert_rc(rdl_lock_force_release(l), RDL_ENOTHELD);
    rdlt_assert_rc(rdl_lock_release_as(l, A), RDL_ENOTHELD);
    rdlt_assert_ok(rdl_lock_acquire_as(l, C, 0, 30000));
    assert_true(rdl_lock_fencing_token(l, C) > t);
    rdlt_assert_ok(rdl_lock_release_as(l, C));
}

/* In a MultiLock with a plain lock: all or nothing. */
static void test_semaphore_in_multilock(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *parts[2] = {sem(c, "msem", 1), rdlt_lock(c, "mplain")};
    rdl_lock_t *ml = NULL, *other = sem(rdlt_client(s), "msem", 1);
    (void)state;

    rdlt_assert_ok(rdl_multilock_new(parts, 2, &ml));
    rdlt_defer(free_lock, ml);
    rdlt_assert_ok(rdl_lock_acquire_as(ml, A, 0, 30000));
    assert_true(rdl_lock_fencing_token(ml, A) > 0);
    rdlt_assert_rc(rdl_lock_acquire_as(other, B, 0, 30000), RDL_EBUSY);
    rdlt_assert_ok(rdl_lock_release_as(ml, A));
    rdlt_assert_ok(rdl_lock_acquire_as(other, B, 0, 30000));
    rdlt_assert_rc(rdl_lock_acquire_as(ml, A, 200, 30000), RDL_ETIMEDOUT);
    assert_false(rdlt_info(parts[1], A).locked); /* nothing kept */
    rdlt_assert_ok(rdl_lock_release_as(other, B));
}

/* ---- giving up ----------------------------------------------------------- */

/* Registrations in the hash ("s:<seq>" and "q:<owner>" fields). */
static long long registrations(rdlt_server *s, const char *key)
{
    redisReply *r = rdlt_cmd(s, "HKEYS %s", key);
    long long n = 0;
    size_t i;
    for (i = 0; i < r->elements; i++)
        if (strncmp(r->element[i]->str, "s:", 2) == 0 ||
            strncmp(r->element[i]->str, "q:", 2) == 0)
            n++;
    freeReplyObject(r);
    return n;
}

/* A cancelled waiter and one whose budget ran out leave no registration,
 * and take no permit. */
static void test_semaphore_giving_up_leaves_no_trace(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_loop *lp = rdlt_loop_start();
    rdl_client_t *c = rdlt_client_new(rdlt_server_url(s));
    rdl_lock_t *held = sem(rdlt_client(s), "give-up", 1), *l;
    rdlt_async_acquire a;
    int64_t deadline;
    (void)state;

    rdlt_assert_ok(rdl_client_set_loop(c, rdlt_loop_uv(lp)));
    rdlt_loop_connect(lp, c);
    l = sem(c, "give-up", 1);
    rdlt_assert_ok(rdl_lock_acquire_as(held, A, 0, 30000));
    memset(&a, 0, sizeof(a));
    a.lock = l;
    a.owner = B;
    a.wait_ms = 30000;
    a.lease_ms = 5000;
    rdlt_async_acquire_start(lp, &a);
    wait_waiters(held, 1);
    rdlt_async_acquire_cancel(lp, &a);
    if (!rdlt_wait_flag(&a.status, 5000))
        fail_msg("the cancelled wait did not complete");
    rdlt_assert_rc(a.status, RDL_ECANCELED);
    /* The leave goes out as the wait ends: wait for it, do not race it. */
    deadline = rdlt_now_ms() + 5000;
    while (registrations(s, "rdl:sem:{give-up}") != 0 &&
           rdlt_now_ms() < deadline)
        rdlt_sleep_ms(10);
    assert_int_equal(registrations(s, "rdl:sem:{give-up}"), 0);

    rdlt_assert_rc(rdl_lock_acquire_as(held, B, 300, 5000), RDL_ETIMEDOUT);
    deadline = rdlt_now_ms() + 5000;
    while (registrations(s, "rdl:sem:{give-up}") != 0 &&
           rdlt_now_ms() < deadline)
        rdlt_sleep_ms(10);
    assert_int_equal(registrations(s, "rdl:sem:{give-up}"), 0);
    assert_int_equal(rdlt_info(held, A).holders, 1);
    rdlt_assert_ok(rdl_lock_release_as(held, A));
    assert_int_equal(rdlt_info(held, A).holders, 0);
    rdlt_client_free(c);
    assert_int_equal(rdlt_loop_stop(lp), 0);
}

/* Threads in this process and in two forked ones cycle on one semaphore;
 * a counter in shared memory records the holders at once, and never
 * exceeds the total. */
#define CYC_PERMITS 3
#define CYC_THREADS 4
#define CYC_ROUNDS 250 /* 3 processes x 4 threads: 3000 cycles */

typedef struct shared_count {
    int now, max, errors;
} shared_count;

typedef struct cycler {
    const char *url;
    shared_count *sh;
    rdl_owner_t owner;
} cycler;

static void *cycle_thread(void *arg)
{
    cycler *cy = arg;
    rdl_client_t *c = NULL;
    rdl_lock_t *l = NULL;
    int i;
    if (rdl_client_new(&c) != 0 || rdl_client_set_url(c, cy->url) != 0 ||
        rdl_client_connect(c) != 0 ||
        rdl_semaphore_new(c, "cycles", CYC_PERMITS, &l) != 0) {
        __atomic_add_fetch(&cy->sh->errors, 1, __ATOMIC_SEQ_CST);
        rdl_client_free(c);
        return NULL;
    }
    for (i = 0; i < CYC_ROUNDS; i++) {
        int n, m;
        if (rdl_lock_acquire_as(l, cy->owner, 20000, 10000) != 0) {
            __atomic_add_fetch(&cy->sh->errors, 1, __ATOMIC_SEQ_CST);
            continue;
        }
        n = __atomic_add_fetch(&cy->sh->now, 1, __ATOMIC_SEQ_CST);
        while ((m = __atomic_load_n(&cy->sh->max, __ATOMIC_SEQ_CST)) < n &&
               !__atomic_compare_exchange_n(&cy->sh->max, &m, n, 0,
                                            __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            ;
        usleep(300); /* held a moment: others wait meanwhile */
        __atomic_sub_fetch(&cy->sh->now, 1, __ATOMIC_SEQ_CST);
        if (rdl_lock_release_as(l, cy->owner) != 0)
            __atomic_add_fetch(&cy->sh->errors, 1, __ATOMIC_SEQ_CST);
    }
    rdl_lock_free(l);
    rdl_client_free(c);
    return NULL;
}

static void run_cyclers(const char *url, shared_count *sh, rdl_owner_t base)
{
    pthread_t t[CYC_THREADS];
    cycler cy[CYC_THREADS];
    int i;
    for (i = 0; i < CYC_THREADS; i++) {
        cy[i].url = url;
        cy[i].sh = sh;
        cy[i].owner = base + (rdl_owner_t)i;
        pthread_create(&t[i], NULL, cycle_thread, &cy[i]);
    }
    for (i = 0; i < CYC_THREADS; i++)
        pthread_join(t[i], NULL);
}

typedef struct child_arg {
    const char *url;
    shared_count *sh;
} child_arg;

static int cycle_child(void *arg, int fd)
{
    child_arg *a = arg;
    (void)fd;
    run_cyclers(a->url, a->sh, 1000);
    return 0;
}

static void test_semaphore_never_more_holders(void **state)
{
    rdlt_server *s = rdlt_server_start();
    char url[64];
    shared_count *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    child_arg a;
    rdlt_child *ch[2];
    int i;
    (void)state;

    assert_true(sh != MAP_FAILED);
    memset(sh, 0, sizeof(*sh));
    snprintf(url, sizeof(url), "redis://127.0.0.1:%d", rdlt_server_port(s));
    a.url = url;
    a.sh = sh;
    for (i = 0; i < 2; i++)
        ch[i] = rdlt_child_start(cycle_child, &a);
    run_cyclers(url, sh, 1);
    for (i = 0; i < 2; i++)
        assert_int_equal(rdlt_child_wait(ch[i], 120000), 0);
    assert_int_equal(sh->errors, 0);
    assert_true(sh->max >= 2 &&
                sh->max <= CYC_PERMITS); /* shared, never over */
    assert_int_equal(sh->now, 0);
    munmap(sh, sizeof(*sh));
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_semaphore_bad_input),
    RDLT_TEST(test_semaphore_permits_limit),
    RDLT_TEST(test_semaphore_owner_holds_several),
    RDLT_TEST(test_semaphore_crashed_holder_returns),
    RDLT_TEST(test_semaphore_auto_lease_kept),
    RDLT_TEST(test_semaphore_total_stored_wins),
    RDLT_TEST(test_semaphore_one_wakeup_per_permit),
    RDLT_TEST(test_semaphore_leave_passes_new_lease),
    RDLT_TEST(test_semaphore_retries_count_once),
    RDLT_TEST(test_semaphore_set_retry_keeps_later_set),
    RDLT_TEST(test_semaphore_set_retry_answers_as_first),
    RDLT_TEST(test_semaphore_force_release),
    RDLT_TEST(test_semaphore_in_multilock),
    RDLT_TEST(test_semaphore_giving_up_leaves_no_trace),
    RDLT_TEST(test_semaphore_never_more_holders),
};

RDLT_MAIN(tests)
