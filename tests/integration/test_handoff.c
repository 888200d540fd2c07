/* Hand-offs of the plain lock (issue: "one wake-up per hand-off"): a
 * release wakes exactly one waiter across all clients, the one that
 * registered first (and a read-write lock's writer release one writer); a
 * waiter that left, or whose registration lapsed, does not keep the wake-up
 * from the others; an uncontended cycle runs 8 server commands and publishes
 * nothing.
 *
 * "Woken by the message" is told from "woke by its capped sleep" by the
 * client's counters (wakeups, attempts), not by timings. Dead waiters are
 * registrations made by the test itself with the acquire script (an owner
 * that never acts again). */
#include <string.h>

#include "rdlt.h"

#define A ((rdl_owner_t)1)
#define B ((rdl_owner_t)2)
#define K 4

static long long total_commands(rdlt_server *s)
{
    redisReply *r = rdlt_cmd(s, "INFO stats");
    const char *p = strstr(r->str, "total_commands_processed:");
    long long n = p != NULL ? strtoll(p + 25, NULL, 10) : -1;
    freeReplyObject(r);
    return n;
}

/* Registers `owner` as a waiter of the held lock `name` with the acquire
 * script, as a client that then dies would: lifetime ms. */
static void register_dead(rdlt_server *s, const char *name, const char *owner,
                          int64_t life_ms)
{
    char *body = rdlt_read_script(RDL_TEST_SCRIPTS_DIR, "lock_acquire");
    char key[128], channel[128], life[24];
    redisReply *r;
    /* A name with its own hash tag is not wrapped (src/core/keys.c). */
    int tagged = strchr(name, '{') != NULL;
    snprintf(key, sizeof(key), tagged ? "rdl:lock:%s" : "rdl:lock:{%s}", name);
    snprintf(channel, sizeof(channel),
             tagged ? "rdl:lock.ch:%s" : "rdl:lock.ch:{%s}", name);
    snprintf(life, sizeof(life), "%lld", (long long)life_ms);
    /* The acquire contract (src/lock/lock_int.h): owner, lease, request
     * id, registration lifetime, publish command, channel, retention. */
    r = rdlt_cmd(s, "EVAL %s 1 %s %s 30000 dead-req %s publish %s 86400000",
                 body, key, owner, life, channel);
    free(body);
    if (r->type != REDIS_REPLY_ARRAY || r->element[0]->integer != 0 ||
        r->element[2]->integer != 1)
        fail_msg("the dead waiter was not registered");
    freeReplyObject(r);
}

/* Runs the leave script for `owner`, as a waiter that gives up does. */
static void leave(rdlt_server *s, const char *name, const char *owner)
{
    char *body = rdlt_read_script(RDL_TEST_SCRIPTS_DIR, "lock_leave");
    char key[128], channel[128];
    snprintf(key, sizeof(key), "rdl:lock:{%s}", name);
    snprintf(channel, sizeof(channel), "rdl:lock.ch:{%s}", name);
    freeReplyObject(
        rdlt_cmd(s, "EVAL %s 1 %s %s publish %s", body, key, owner, channel));
    free(body);
}

typedef struct waiter {
    rdl_client_t *c;
    rdl_lock_t *l;
    int64_t wait_ms;
    int64_t lease_ms; /* 0: 30 s */
    int rc;
    int acquired; /* atomic flag */
    int go;       /* atomic: release now */
    int order;
} waiter;

static int next_order;

static void *wait_thread(void *arg)
{
    waiter *w = arg;
    w->rc = rdl_lock_acquire_as(w->l, A, w->wait_ms,
                                w->lease_ms > 0 ? w->lease_ms : 30000);
    if (w->rc == 0) {
        w->order = __atomic_add_fetch(&next_order, 1, __ATOMIC_SEQ_CST);
        __atomic_store_n(&w->acquired, 1, __ATOMIC_SEQ_CST);
        rdlt_wait_flag(&w->go, 30000);
        w->rc = rdl_lock_release_as(w->l, A);
    }
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

/* Starts a waiter on lock `name` of the held lock hl, once its client is
 * subscribed to the lock's channel (a short wait that gives up leaves the
 * subscription lingering), so that its one try registers it and it then
 * sleeps: a confirmation of its subscription would make it try again. */
static rdlt_thread *start_waiter_lease(waiter *w, rdlt_server *s,
                                       const char *name, rdl_lock_t *hl,
                                       uint32_t nth, int64_t lease_ms)
{
    rdlt_thread *t;
    memset(w, 0, sizeof(*w));
    w->c = rdlt_client(s);
    w->l = rdlt_lock(w->c, name);
    w->wait_ms = RDL_WAIT_FOREVER;
    w->lease_ms = lease_ms;
    rdlt_assert_rc(rdl_lock_acquire_as(w->l, B, 100, 30000), RDL_ETIMEDOUT);
    t = rdlt_thread_start(wait_thread, w);
    wait_waiters(hl, nth);
    return t;
}

static rdlt_thread *start_waiter(waiter *w, rdlt_server *s, const char *name,
                                 rdl_lock_t *hl, uint32_t nth)
{
    return start_waiter_lease(w, s, name, hl, nth, 0);
}

/* The client's tries so far (every acquire script call). */
static uint64_t tries(rdl_client_t *c)
{
    return rdlt_stats(c).attempts;
}

/* w was woken by a message and took the lock with one try more than n. */
static void expect_handed(waiter *w, uint64_t n, const char *what)
{
    if (!rdlt_wait_flag(&w->acquired, 10000))
        fail_msg("%s was not handed the lock", what);
    assert_int_equal(tries(w->c), n + 1);
    assert_true(rdlt_stats(w->c).wakeups >= 1);
}

/* Lets w release and end. */
static void finish(waiter *w, rdlt_thread *t)
{
    __atomic_store_n(&w->go, 1, __ATOMIC_SEQ_CST);
    rdlt_thread_join(t);
    rdlt_assert_ok(w->rc);
}

/* K clients wait; each release wakes exactly one of them, in the order in
 * which they registered: K hand-offs cost K tries beyond the first ones,
 * where a wake-up per client cost K per hand-off. */
static void test_handoff_one_try_per_release_across_clients(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *holder = rdlt_client(s);
    rdl_lock_t *hl = rdlt_lock(holder, "one");
    waiter w[K];
    rdlt_thread *t[K];
    uint64_t tries0 = 0, tries1 = 0, messages;
    int i, j;
    (void)state;

    next_order = 0;
    rdlt_assert_ok(rdl_lock_acquire_as(hl, A, 0, 30000));
    for (i = 0; i < K; i++) /* registered in this order */
        t[i] = start_waiter(&w[i], s, "one", hl, (uint32_t)i + 1);
    for (i = 0; i < K; i++)
        tries0 += tries(w[i].c);
    assert_int_equal(rdlt_cmd_calls(s, "publish"), 0);

    rdlt_assert_ok(rdl_lock_release_as(hl, A));
    for (i = 0; i < K; i++) {
        if (!rdlt_wait_flag(&w[i].acquired, 10000))
            fail_msg("waiter %d (registered %d-th) was not handed the lock", i,
                     i + 1);
        /* Nobody else tried: give a herd time to show before the next. */
        rdlt_sleep_ms(100);
        for (j = 0, tries1 = 0; j < K; j++)
            tries1 += tries(w[j].c);
        assert_int_equal(tries1, tries0 + (uint64_t)i + 1);
        assert_int_equal(w[i].order, i + 1);
        __atomic_store_n(&w[i].go, 1, __ATOMIC_SEQ_CST);
    }
    for (i = 0; i < K; i++) {
        rdlt_thread_join(t[i]);
        rdlt_assert_ok(w[i].rc);
        assert_true(rdlt_stats(w[i].c).wakeups >= 1);
    }
    /* One message per hand-off (the last release found nobody waiting),
     * and none for the grants: every lease is 30 s, so each new one ends
     * after the next waiter's own sleep does (lib/waiters: waiter_recap
     * tells the first waiter of a new lease only when it ends sooner). */
    assert_int_equal(rdlt_cmd_calls(s, "publish"), K);
    /* Each message reached only the client it named, not every client
     * with a waiter on the lock (each listens on its own channel). */
    for (i = 0, messages = 0; i < K; i++)
        messages += rdlt_stats(w[i].c).messages;
    assert_int_equal(messages, K);
    assert_int_equal(rdlt_info(hl, B).waiters, 0);
    assert_int_equal(rdlt_count_held(s, "rdl:*"), 0);
}

/* An uncontended acquire and release: 9 server commands (the two scripts;
 * HMGET, TIME, HSET and PEXPIRE in the acquire; HMGET, HSET and PEXPIRE in
 * the release), no PUBLISH, one key. TIME keeps tokens increasing across a
 * failover that lost the latest grants (docs/design-notes.md). */
static void test_handoff_uncontended_cycle_commands(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "cheap");
    long long n0, n1;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(l, A)); /* the hash now exists */
    n0 = total_commands(s);
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    n1 = total_commands(s);
    assert_int_equal(n1 - n0 - 1, 9); /* - 1: the first INFO */
    assert_int_equal(rdlt_cmd_calls(s, "publish"), 0);
    assert_int_equal(rdlt_count_keys(s, "rdl:*"), 1);
}

/* A waiter that gave up passes on the wake-up it was sent: the release
 * named it (it registered first), it leaves, and the next one is woken by
 * the leave. */
static void test_handoff_leave_passes_wakeup(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *holder = rdlt_client(s);
    rdl_lock_t *hl = rdlt_lock(holder, "pass");
    waiter w;
    rdlt_thread *t;
    uint64_t n;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(hl, A, 0, 30000));
    register_dead(s, "pass", "gone:1", 60000);
    t = start_waiter(&w, s, "pass", hl, 2);
    n = tries(w.c);
    rdlt_assert_ok(rdl_lock_release_as(hl, A)); /* names "gone:1" */
    rdlt_sleep_ms(100);
    assert_int_equal(w.acquired, 0);
    assert_int_equal(tries(w.c), n);
    leave(s, "pass", "gone:1");
    expect_handed(&w, n, "the waiter behind the one that left");
    finish(&w, t);
}

/* A real waiter that gives up (budget spent) leaves the registry: the
 * next release wakes the one behind it. */
static void test_handoff_timed_out_waiter_leaves(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *holder = rdlt_client(s), *quitter = rdlt_client(s);
    rdl_lock_t *hl = rdlt_lock(holder, "quit");
    rdl_lock_t *ql = rdlt_lock(quitter, "quit");
    waiter w;
    rdlt_thread *t;
    uint64_t n;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(hl, A, 0, 30000));
    rdlt_assert_rc(rdl_lock_acquire_as(ql, A, 200, 30000), RDL_ETIMEDOUT);
    t = start_waiter(&w, s, "quit", hl, 1); /* the quitter left */
    n = tries(w.c);
    rdlt_assert_ok(rdl_lock_release_as(hl, A));
    expect_handed(&w, n, "the waiter behind a departed one");
    finish(&w, t);
}

/* A waiter that died without leaving: once its registration lapsed (by
 * server time), releases pass it by. */
static void test_handoff_lapsed_registration_passed_by(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *holder = rdlt_client(s);
    rdl_lock_t *hl = rdlt_lock(holder, "lapse");
    waiter w;
    rdlt_thread *t;
    uint64_t n;
    int64_t lapse;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(hl, A, 0, 30000));
    /* Long enough for the live waiter to register first on a loaded
     * machine (its start makes a try of its own). */
    lapse = rdlt_now_ms() + 2000;
    register_dead(s, "lapse", "dead:1", 2000);
    t = start_waiter(&w, s, "lapse", hl, 2);
    n = tries(w.c);
    rdlt_sleep_ms(lapse + 100 - rdlt_now_ms()); /* the dead one lapses */
    assert_int_equal(rdlt_info(hl, B).waiters, 1);
    rdlt_assert_ok(rdl_lock_release_as(hl, A));
    expect_handed(&w, n, "the live waiter");
    finish(&w, t);
    /* Its fields are gone too. */
    {
        redisReply *r = rdlt_cmd(s, "HEXISTS rdl:lock:{lapse} q:dead:1");
        assert_int_equal(r->integer, 0);
        freeReplyObject(r);
    }
}

/* A waiter that died with its registration still live takes one wake-up,
 * at most: the others then wake by their capped sleeps (the holder's
 * lease), and the dead registration is gone for the next release. */
static void test_handoff_dead_waiter_absorbs_at_most_one(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *holder = rdlt_client(s);
    rdl_lock_t *hl = rdlt_lock(holder, "absorb");
    waiter w;
    rdlt_thread *t;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(hl, A, 0, 2000));
    register_dead(s, "absorb", "dead:1", 60000);
    t = start_waiter(&w, s, "absorb", hl, 2);
    rdlt_assert_ok(rdl_lock_release_as(hl, A)); /* to the dead one */
    assert_int_equal(rdlt_info(hl, B).waiters, 1);
    if (!rdlt_wait_flag(&w.acquired, 10000))
        fail_msg("the live waiter never woke");
    assert_int_equal(rdlt_stats(w.c).wakeups, 0); /* its timer woke it */
    assert_int_equal(rdlt_info(hl, B).waiters, 0);
    finish(&w, t);
}

/* A waiter whose busy answer is late (the proxy holds it back) while a
 * release names another client's waiter: when it joins the channel, that
 * message is no reason to try again. It was: every message the channel
 * had since the try counted, and in the peers' hand-off test such a wasted
 * try came with about one hand-off in fifty. */
static void test_handoff_message_for_another_owner_ignored(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_t *holder = rdlt_client(s);
    rdl_lock_t *hl = rdlt_lock(holder, "other");
    waiter v, w;
    rdlt_thread *tv, *tw;
    uint64_t n;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(hl, A, 0, 30000));
    tv = start_waiter(&v, s, "other", hl, 1);
    memset(&w, 0, sizeof(w));
    w.c = rdlt_proxy_client(p);
    w.l = rdlt_lock(w.c, "other");
    w.wait_ms = RDL_WAIT_FOREVER;
    rdlt_assert_rc(rdl_lock_acquire_as(w.l, B, 100, 30000), RDL_ETIMEDOUT);
    n = tries(w.c);
    rdlt_proxy_delay_reply(p, "EVALSHA", "{other}", 300, 1);
    tw = rdlt_thread_start(wait_thread, &w);
    wait_waiters(hl, 2); /* applied; its answer is held back */
    rdlt_assert_ok(rdl_lock_release_as(hl, A)); /* names v's owner */
    if (!rdlt_wait_flag(&v.acquired, 10000))
        fail_msg("the first waiter was not handed the lock");
    rdlt_sleep_ms(500); /* w's answer arrives, w joins and sleeps */
    assert_int_equal(tries(w.c), n + 1);
    assert_int_equal(w.acquired, 0);
    finish(&v, tv); /* names w's owner */
    expect_handed(&w, n + 1, "the second waiter");
    finish(&w, tw);
}

/* The waiter behind the one that is handed the lock sleeps on the lease
 * it saw at its own try (the first holder's, 5 s). The new holder takes a
 * 300 ms lease and never releases: its lease runs out, and Redis
 * publishes nothing. Before: nothing woke the second waiter until its 5 s
 * were over (the stress test saw a free lock with a waiter for a second).
 * Now the grant tells the first waiter in line the new lease. */
static void test_handoff_new_holder_lease_reaches_next_waiter(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *holder = rdlt_client(s);
    rdl_lock_t *hl = rdlt_lock(holder, "short");
    waiter v, w;
    rdlt_thread *tv, *tw;
    int64_t t0;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(hl, A, 0, 5000));
    tv = start_waiter_lease(&v, s, "short", hl, 1, 300);
    tw = start_waiter(&w, s, "short", hl, 2);
    rdlt_assert_ok(rdl_lock_release_as(hl, A)); /* names v */
    if (!rdlt_wait_flag(&v.acquired, 10000))
        fail_msg("the first waiter was not handed the lock");
    t0 = rdlt_now_ms();
    if (!rdlt_wait_flag(&w.acquired, 4000))
        fail_msg("the second waiter slept on through the new holder's "
                 "300 ms lease");
    rdlt_assert_between(rdlt_now_ms() - t0, 250, 3000);
    finish(&w, tw);
    __atomic_store_n(&v.go, 1, __ATOMIC_SEQ_CST);
    rdlt_thread_join(tv);
    rdlt_assert_rc(v.rc, RDL_ELOST); /* its lease ran out */
}

/* The first waiter in line is the one a grant tells the new holder's
 * lease (waiter_recap); the others sleep on the leases they saw. When it
 * gives up while the lock is held, its leave passes that on: the next
 * waiter, asleep on the first holder's 8 s lease, must wake when the new
 * holder's 2 s lease runs out. Before, the leave told nobody, and the
 * waiter slept on past a free lock (the stress test's wake-up violation on
 * Redis 6.2: a waiter asleep 354 ms on a free lock). With `retry`, the
 * waiter that was told tries once more before it leaves, as a waiter
 * whose budget ends does (its last try): that try puts it at the back,
 * behind the one that must now be told. */
static void leave_relay(int retry)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *holder = rdlt_client(s);
    rdl_lock_t *hl = rdlt_lock(holder, "relay");
    waiter v, w;
    rdlt_thread *tv, *tw;
    int64_t t0;

    rdlt_assert_ok(rdl_lock_acquire_as(hl, A, 0, 8000));
    tv = start_waiter_lease(&v, s, "relay", hl, 1, 2000);
    register_dead(s, "relay", "gone:1", 60000); /* second in line */
    tw = start_waiter(&w, s, "relay", hl, 3);
    rdlt_assert_ok(rdl_lock_release_as(hl, A)); /* names v */
    if (!rdlt_wait_flag(&v.acquired, 10000))
        fail_msg("the first waiter was not handed the lock");
    t0 = rdlt_now_ms(); /* v's grant told "gone:1" its 2 s lease */
    if (retry)
        register_dead(s, "relay", "gone:1", 60000); /* now behind w */
    leave(s, "relay", "gone:1");                    /* gives up while v holds */
    if (!rdlt_wait_flag(&w.acquired, 4500))
        fail_msg("the last waiter slept on through the new holder's 2 s "
                 "lease after the waiter told of it left");
    /* Not before the 2 s lease ran out (less the time t0 was read
     * late), and well before the 8 s one. */
    rdlt_assert_between(rdlt_now_ms() - t0, 1000, 4500);
    finish(&w, tw);
    __atomic_store_n(&v.go, 1, __ATOMIC_SEQ_CST);
    rdlt_thread_join(tv);
    rdlt_assert_rc(v.rc, RDL_ELOST); /* its lease ran out */
}

static void test_handoff_leave_passes_new_lease(void **state)
{
    (void)state;
    leave_relay(0);
}

/* The stress test again (Redis 6.2, seed 1001, a 4-minute run): three
 * waiters slept 1.6 s past a free lock after the one told of a 445 ms
 * lease made its last try (moving to the back) and left. */
static void test_handoff_leave_after_last_try_passes_new_lease(void **state)
{
    (void)state;
    leave_relay(1);
}

/* Waiters that leave while the lock is held (a mass cancel) move the
 * registry's front past the holes they leave: each leave reads the front
 * to tell the first in line the holder's lease, and with the front left
 * behind, the k-th leave passed k - 1 holes (100,000 cancelled waiters in
 * the memory figure kept the server busy for seconds). */
static void test_handoff_leaves_move_the_front(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *holder = rdlt_client(s);
    rdl_lock_t *hl = rdlt_lock(holder, "mass");
    redisReply *r;
    char owner[32];
    int i;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(hl, A, 0, 30000));
    for (i = 1; i <= 100; i++) {
        snprintf(owner, sizeof(owner), "gone:%d", i);
        register_dead(s, "mass", owner, 60000);
    }
    for (i = 1; i <= 100; i++) { /* in the order they came */
        snprintf(owner, sizeof(owner), "gone:%d", i);
        leave(s, "mass", owner);
        r = rdlt_cmd(s, "HGET rdl:lock:{mass} qh");
        if (r->type != REDIS_REPLY_STRING || atoi(r->str) != i + 1)
            fail_msg("after %d leaves the front is at %s, not %d", i,
                     r->type == REDIS_REPLY_STRING ? r->str : "(none)", i + 1);
        freeReplyObject(r);
    }
    assert_int_equal(rdlt_info(hl, B).waiters, 0);
    rdlt_assert_ok(rdl_lock_release_as(hl, A));
}

/* Registrations written before each kept its wake ("<lapse>:<owner>",
 * by an older rdl's waiter still within its lifetime) are read as waking
 * at their lapse: the release names the first, and a grant tells the
 * next the new lease, as before; no script fails on them. */
static void test_handoff_registration_without_wake(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *holder = rdlt_client(s), *other = rdlt_client(s);
    rdl_lock_t *hl = rdlt_lock(holder, "oldreg");
    rdl_lock_t *ol = rdlt_lock(other, "oldreg");
    redisReply *r;
    long long now_ms, pub;
    char v1[64], v2[64];
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(hl, A, 0, 30000));
    r = rdlt_cmd(s, "TIME");
    now_ms = strtoll(r->element[0]->str, NULL, 10) * 1000;
    freeReplyObject(r);
    snprintf(v1, sizeof(v1), "%lld:old1:1", now_ms + 60000);
    snprintf(v2, sizeof(v2), "%lld:old2:1", now_ms + 60000);
    freeReplyObject(rdlt_cmd(s,
                             "HSET rdl:lock:{oldreg} s:1 %s q:old1:1 1 s:2 %s "
                             "q:old2:1 2 qt 2",
                             v1, v2));
    assert_int_equal(rdlt_info(hl, B).waiters, 2);
    pub = rdlt_cmd_calls(s, "publish");
    rdlt_assert_ok(rdl_lock_release_as(hl, A)); /* names old1 */
    assert_int_equal(rdlt_cmd_calls(s, "publish"), pub + 1);
    assert_int_equal(rdlt_info(hl, B).waiters, 1);
    r = rdlt_cmd(s, "HGET rdl:lock:{oldreg} q:old1:1");
    assert_int_equal(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    /* old2 is first now, waking "at its lapse": a 1 s lease is told. */
    rdlt_assert_ok(rdl_lock_acquire_as(ol, A, 0, 1000));
    assert_int_equal(rdlt_cmd_calls(s, "publish"), pub + 2);
    rdlt_assert_ok(rdl_lock_release_as(ol, A)); /* names old2 */
    assert_int_equal(rdlt_info(hl, B).waiters, 0);
}

static void free_multi(void *l)
{
    rdl_lock_free(l);
}

/* The same as above for a grant by a MultiLock's one-call path (every part
 * a plain lock on one server: lock_acquire_multi), past a dead first
 * registration: the release goes to the dead waiter, which never takes the
 * lock; the multilock takes it with a 300 ms lease and never releases; the
 * live waiter behind, asleep on the first holder's 5 s lease, must learn
 * the new lease from the multilock's grant, which tells the first live
 * registration (passing the dead one whose wake-up was spent). */
static void test_handoff_multilock_grant_reaches_next_waiter(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *holder = rdlt_client(s), *mc = rdlt_client(s);
    rdl_lock_t *hl = rdlt_lock(holder, "{ms}one");
    /* One hash tag: the one-call path (scripts/lock_acquire_multi.lua). */
    rdl_lock_t *parts[2] = {rdlt_lock(mc, "{ms}one"), rdlt_lock(mc, "{ms}two")};
    rdl_lock_t *ml = NULL;
    waiter w;
    rdlt_thread *tw;
    int64_t t0;
    (void)state;

    rdlt_assert_ok(rdl_multilock_new(parts, 2, &ml));
    rdlt_defer(free_multi, ml);
    rdlt_assert_ok(rdl_lock_acquire_as(hl, A, 0, 5000));
    register_dead(s, "{ms}one", "dead:1", 60000);
    tw = start_waiter(&w, s, "{ms}one", hl, 2);
    rdlt_assert_ok(rdl_lock_release_as(hl, A)); /* names the dead one */
    rdlt_assert_ok(rdl_lock_acquire_as(ml, A, 0, 300));
    t0 = rdlt_now_ms();
    if (!rdlt_wait_flag(&w.acquired, 4000))
        fail_msg("the waiter slept on through the multilock's 300 ms lease");
    rdlt_assert_between(rdlt_now_ms() - t0, 250, 3000);
    finish(&w, tw);
    rdlt_assert_rc(rdl_lock_release_as(ml, A), RDL_ELOST);
}

static void free_rw(void *p)
{
    rdl_rwlock_free(p);
}

static rdl_lock_t *write_side(rdl_client_t *c, const char *name)
{
    rdl_rwlock_t *rw = NULL;
    rdlt_assert_ok(rdl_rwlock_new(c, name, &rw));
    rdlt_defer(free_rw, rw);
    return rdl_rwlock_write(rw);
}

/* Starts two waiting writers of `name` (held by hw's client), each on a
 * client of its own with lease lease_ms (0: 30 s), in this order. */
static void start_writers(waiter w[2], rdlt_thread *t[2], rdlt_server *s,
                          const char *name, rdl_lock_t *hw, int64_t lease_ms)
{
    int i;
    for (i = 0; i < 2; i++) {
        memset(&w[i], 0, sizeof(w[i]));
        w[i].c = rdlt_client(s);
        w[i].l = write_side(w[i].c, name);
        w[i].wait_ms = RDL_WAIT_FOREVER;
        w[i].lease_ms = lease_ms;
        /* Subscribed first (see start_waiter). */
        rdlt_assert_rc(rdl_lock_acquire_as(w[i].l, B, 100, 30000),
                       RDL_ETIMEDOUT);
        t[i] = rdlt_thread_start(wait_thread, &w[i]);
        wait_waiters(hw, (uint32_t)i + 1);
    }
}

/* The read-write lock's writers likewise: the writer's release names one
 * waiting writer (none of the waiters is a reader), so of two writers
 * waiting in two clients one is woken, then the other. */
static void test_handoff_rw_writer_release_wakes_one_writer(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *holder = rdlt_client(s);
    rdl_lock_t *hw = write_side(holder, "rw");
    waiter w[2];
    rdlt_thread *t[2];
    uint64_t n = 0, m;
    int i, first;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(hw, A, 0, 30000));
    start_writers(w, t, s, "rw", hw, 0);
    /* Counted by wake-ups (messages that woke a waiter), not tries: on a
     * loaded machine a waiter may also try when a timer of its own fires,
     * which says nothing about whom the release woke. */
    for (i = 0; i < 2; i++)
        n += rdlt_stats(w[i].c).wakeups;
    rdlt_assert_ok(rdl_lock_release_as(hw, A));
    while (!w[0].acquired && !w[1].acquired)
        rdlt_sleep_ms(1);
    rdlt_sleep_ms(100);
    first = w[0].acquired ? 0 : 1;
    assert_int_equal(w[1 - first].acquired, 0);
    m = rdlt_stats(w[0].c).wakeups + rdlt_stats(w[1].c).wakeups;
    assert_int_equal(m, n + 1);
    __atomic_store_n(&w[first].go, 1, __ATOMIC_SEQ_CST);
    if (!rdlt_wait_flag(&w[1 - first].acquired, 10000))
        fail_msg("the second writer was not handed the lock");
    rdlt_sleep_ms(100);
    assert_int_equal(rdlt_stats(w[0].c).wakeups + rdlt_stats(w[1].c).wakeups,
                     n + 2);
    __atomic_store_n(&w[1 - first].go, 1, __ATOMIC_SEQ_CST);
    for (i = 0; i < 2; i++) {
        rdlt_thread_join(t[i]);
        rdlt_assert_ok(w[i].rc);
    }
}

/* The read-write lock's writers: the writer behind the one that is
 * handed the lock sleeps on the lease it saw at its own try (8 s); the
 * new writer takes 2 s and never releases. The second must wake when that
 * lease runs out, as for the plain lock
 * (test_handoff_new_holder_lease_reaches_next_waiter). */
static void test_handoff_rw_new_writer_lease_reaches_next(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *holder = rdlt_client(s);
    rdl_lock_t *hw = write_side(holder, "rwshort");
    waiter w[2];
    rdlt_thread *t[2];
    int64_t t0;
    int i, first;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(hw, A, 0, 8000));
    start_writers(w, t, s, "rwshort", hw, 2000);
    rdlt_assert_ok(rdl_lock_release_as(hw, A));
    while (!w[0].acquired && !w[1].acquired)
        rdlt_sleep_ms(1);
    t0 = rdlt_now_ms();
    first = w[0].acquired ? 0 : 1;
    if (!rdlt_wait_flag(&w[1 - first].acquired, 4500))
        fail_msg("the second writer slept on through the new writer's 2 s "
                 "lease");
    /* Not before the 2 s lease ran out (less the time t0 was read
     * late), and well before the 8 s one. */
    rdlt_assert_between(rdlt_now_ms() - t0, 1000, 4500);
    for (i = 0; i < 2; i++)
        __atomic_store_n(&w[i].go, 1, __ATOMIC_SEQ_CST);
    for (i = 0; i < 2; i++)
        rdlt_thread_join(t[i]);
    rdlt_assert_ok(w[1 - first].rc);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_handoff_one_try_per_release_across_clients),
    RDLT_TEST(test_handoff_uncontended_cycle_commands),
    RDLT_TEST(test_handoff_leave_passes_wakeup),
    RDLT_TEST(test_handoff_timed_out_waiter_leaves),
    RDLT_TEST(test_handoff_lapsed_registration_passed_by),
    RDLT_TEST(test_handoff_dead_waiter_absorbs_at_most_one),
    RDLT_TEST(test_handoff_rw_writer_release_wakes_one_writer),
    RDLT_TEST(test_handoff_rw_new_writer_lease_reaches_next),
    RDLT_TEST(test_handoff_message_for_another_owner_ignored),
    RDLT_TEST(test_handoff_new_holder_lease_reaches_next_waiter),
    RDLT_TEST(test_handoff_leave_passes_new_lease),
    RDLT_TEST(test_handoff_leave_after_last_try_passes_new_lease),
    RDLT_TEST(test_handoff_leaves_move_the_front),
    RDLT_TEST(test_handoff_registration_without_wake),
    RDLT_TEST(test_handoff_multilock_grant_reaches_next_waiter),
};

RDLT_MAIN(tests)
