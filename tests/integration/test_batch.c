/* Batched script calls (src/core/batch.c): acquisitions and releases made
 * in one loop iteration leave in few commands, and each call still gets
 * exactly the outcome it would have had alone - a held name, a name whose
 * key is not a lock, a lost reply, a flushed script cache, a replica, a
 * client closed before the batch left. The calls are made on a loop of
 * the test's (tests/support/loop.c) through the fault proxy, which counts
 * the commands on the wire. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <uv.h>

#include "rdlt.h"

#ifndef RDL_TEST_BATCH_FIXTURE
#error "RDL_TEST_BATCH_FIXTURE must name the test batch script (build tree)"
#endif

#define N 40
#define OWNER ((rdl_owner_t)1)
/* MAX_CALLS of src/core/batch.c: a batch this full leaves at once. */
#define BATCH_MAX 32

/* Counts the iterations of a loop: a prepare handle runs once in each,
 * between two polls, where the connections' flushers run too. On the
 * heap: after a failed test the loop outlives the test's frame. */
typedef struct ticker {
    uv_prepare_t h;
    unsigned n;
} ticker;

typedef struct bctx {
    rdlt_loop *lp;
    rdl_client_t *c;
    rdl_lock_t *l[N];
    rdl_req_t req[N];
    int release;     /* the calls release instead of acquiring */
    int close_after; /* rdl_client_close() right after starting them */
    int close_rc;
    int status[N];       /* 0 pending, 1 done, else its error code */
    int done;            /* callbacks so far (loop thread) */
    int all;             /* atomic: every call has its outcome */
    int left[N];         /* chains: cycles still to run */
    int releasing[N];    /* chains: the call in flight is a release */
    int close_in_cb;     /* the first callback closes the client */
    int calls[N];        /* callbacks of each call (loop thread) */
    char tag[32];        /* the locks' names are <tag>:<i> */
    ticker *tick;        /* chains: the loop's iterations */
    redisContext *watch; /* chains: the server, for the probe */
    unsigned full_at;    /* chains: the iteration of the batch's 32nd call */
    int probe;           /* chains: PROBE_*, what the probe saw */
} bctx;

static void on_done(rdl_req_t *req, int status)
{
    bctx *b = req->data;
    int i = (int)(req - b->req);
    b->calls[i]++;
    b->status[i] = status == 0 ? 1 : status;
    if (b->close_in_cb && b->done == 0)
        b->close_rc = rdl_client_close(b->c);
    if (++b->done == N)
        __atomic_store_n(&b->all, 1, __ATOMIC_RELEASE);
}

/* Starts every call in one go on the loop thread: one loop iteration. */
static void start_all(void *arg)
{
    bctx *b = arg;
    int i, rc;
    b->done = 0;
    __atomic_store_n(&b->all, 0, __ATOMIC_RELEASE);
    for (i = 0; i < N; i++) {
        memset(&b->req[i], 0, sizeof(b->req[i]));
        b->req[i].data = b;
        b->status[i] = 0;
        b->calls[i] = 0;
        rc = b->release
                 ? rdl_lock_release_async(&b->req[i], b->l[i], OWNER, on_done)
                 : rdl_lock_acquire_async(&b->req[i], b->l[i], OWNER, 0, 10000,
                                          on_done);
        if (rc != 0)
            on_done(&b->req[i], rc);
    }
    if (b->close_after)
        b->close_rc = rdl_client_close(b->c);
}

static void do_connect(void *arg)
{
    bctx *b = arg;
    b->close_rc = rdl_client_connect(b->c);
}

/* A client on a loop thread of its own, for url (with TLS options, or
 * NULL; durable: grants confirmed by 1 replica), with locks <tag>:0..N-1. */
static void setup_opts(bctx *b, const char *url, const rdl_tls_options_t *tls,
                       int durable, const char *tag)
{
    char name[64];
    int i;
    memset(b, 0, sizeof(*b));
    snprintf(b->tag, sizeof(b->tag), "%s", tag);
    b->lp = rdlt_loop_start();
    b->c = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_set_timeouts_ms(b->c, 2000, 1000));
    if (tls != NULL)
        rdlt_assert_ok(rdl_client_set_tls(b->c, tls));
    if (durable)
        rdlt_assert_ok(rdl_client_set_durability(b->c, 1, 500));
    rdlt_assert_ok(rdl_client_set_loop(b->c, rdlt_loop_uv(b->lp)));
    rdlt_loop_call(b->lp, do_connect, b);
    rdlt_assert_ok(b->close_rc);
    for (i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "%s:%d", tag, i);
        b->l[i] = rdlt_lock(b->c, name);
    }
}

static void setup(bctx *b, const char *url, const char *tag)
{
    setup_opts(b, url, NULL, 0, tag);
}

static void run_all(bctx *b, int release)
{
    b->release = release;
    rdlt_loop_call(b->lp, start_all, b);
    if (!rdlt_wait_flag(&b->all, 20000))
        fail_msg("after 20 s only %d of %d calls had an outcome", b->done, N);
}

static void finish(bctx *b)
{
    int i;
    for (i = 0; i < N; i++)
        rdlt_lock_free(b->l[i]);
    rdlt_client_free(b->c);
    assert_int_equal(rdlt_loop_stop(b->lp), 0);
}

static void assert_all(const bctx *b, int want)
{
    int i;
    for (i = 0; i < N; i++)
        if (b->status[i] != want)
            fail_msg("call %d: %s, expected %s", i,
                     b->status[i] == 1 ? "done" : rdl_err_name(b->status[i]),
                     want == 1 ? "done" : rdl_err_name(want));
}

/* Every name held once by the owner (a count of 1: nothing applied twice),
 * or every name free. */
static void assert_held(bctx *b, int held)
{
    int i;
    for (i = 0; i < N; i++) {
        rdl_lock_info_t in = rdlt_info(b->l[i], OWNER);
        if (in.held_by_owner != held || in.hold_count != (uint32_t)held)
            fail_msg("lock %d: held %d count %u, expected %d", i,
                     in.held_by_owner, in.hold_count, held);
    }
}

/* 40 acquisitions made at once leave in a few commands (not 40), each
 * gets its own token, and 40 releases made at once free them all. */
static void test_batch_calls_share_commands(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    rdl_client_stats_t st0, st1;
    unsigned before;
    uint64_t tok[N];
    bctx b;
    int i;
    (void)state;

    setup(&b, rdlt_proxy_url(p), "many");
    before = rdlt_proxy_count(p, "EVALSHA");
    st0 = rdlt_stats(b.c);
    run_all(&b, 0);
    assert_all(&b, 1);
    st1 = rdlt_stats(b.c);
    if (rdlt_proxy_count(p, "EVALSHA") - before > N / 8)
        fail_msg("%u commands for %d acquisitions",
                 rdlt_proxy_count(p, "EVALSHA") - before, N);
    /* Every call still counts as a script call of its own. */
    assert_true(st1.scripts - st0.scripts >= N);
    for (i = 0; i < N; i++) {
        tok[i] = rdl_lock_fencing_token(b.l[i], OWNER);
        assert_true(tok[i] > 0);
    }
    assert_held(&b, 1);
    before = rdlt_proxy_count(p, "EVALSHA");
    run_all(&b, 1);
    assert_all(&b, 1);
    if (rdlt_proxy_count(p, "EVALSHA") - before > N / 8)
        fail_msg("%u commands for %d releases",
                 rdlt_proxy_count(p, "EVALSHA") - before, N);
    assert_held(&b, 0);
    assert_int_equal(rdlt_count_held(s, "*"), 0);
    /* A name's next grant, in the next batch, has a larger token. */
    run_all(&b, 0);
    assert_all(&b, 1);
    for (i = 0; i < N; i++)
        if (rdl_lock_fencing_token(b.l[i], OWNER) <= tok[i])
            fail_msg("lock %d: token %llu after %llu", i,
                     (unsigned long long)rdl_lock_fencing_token(b.l[i], OWNER),
                     (unsigned long long)tok[i]);
    run_all(&b, 1);
    assert_all(&b, 1);
    finish(&b);
}

/* In one batch, the names another client holds are busy and the others
 * are taken: outcomes do not leak from one call to the next. */
static void test_batch_outcomes_are_per_call(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *other = rdlt_client(s);
    rdl_lock_t *o3 = rdlt_lock(other, "mixed:3");
    rdl_lock_t *o7 = rdlt_lock(other, "mixed:7");
    bctx b;
    int i;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire(o3, 0, 10000));
    rdlt_assert_ok(rdl_lock_acquire(o7, 0, 10000));
    setup(&b, rdlt_server_url(s), "mixed");
    run_all(&b, 0);
    for (i = 0; i < N; i++)
        assert_int_equal(b.status[i], i == 3 || i == 7 ? RDL_EBUSY : 1);
    assert_true(rdlt_info(o3, 0).locked);
    assert_true(rdlt_info(o7, 0).locked);
    /* Releasing all: the two it never held say so, the rest are freed. */
    run_all(&b, 1);
    for (i = 0; i < N; i++)
        assert_int_equal(b.status[i], i == 3 || i == 7 ? RDL_ENOTHELD : 1);
    assert_true(rdlt_info(o3, 0).locked);
    finish(&b);
}

/* A call that fails on the server (its key is not a lock) fails alone:
 * the calls before and after it in the same command are applied. */
static void test_batch_error_stays_with_its_call(void **state)
{
    rdlt_server *s = rdlt_server_start();
    redisReply *r = rdlt_cmd(s, "SET rdl:lock:{bad:5} not-a-hash");
    bctx b;
    int i;
    (void)state;

    freeReplyObject(r);
    setup(&b, rdlt_server_url(s), "bad");
    run_all(&b, 0);
    for (i = 0; i < N; i++)
        if (i == 5 ? b.status[i] > 0 : b.status[i] != 1)
            fail_msg("acquire %d: %s", i,
                     b.status[i] == 1 ? "done" : rdl_err_name(b.status[i]));
    r = rdlt_cmd(s, "GET rdl:lock:{bad:5}");
    assert_string_equal(r->str, "not-a-hash");
    freeReplyObject(r);
    run_all(&b, 1);
    for (i = 0; i < N; i++)
        if (i != 5 && b.status[i] != 1)
            fail_msg("release %d: %s", i, rdl_err_name(b.status[i]));
    for (i = 0; i < N; i++)
        if (i != 5)
            assert_false(rdlt_info(b.l[i], OWNER).locked);
    finish(&b);
}

/* The reply of a batch is lost after the server applied it: every call in
 * it is retried with its own request id, and none is applied twice (each
 * hold has a count of 1, and one release frees it). */
static void test_batch_lost_reply_counts_once(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    uint64_t connects;
    bctx b;
    (void)state;

    setup(&b, rdlt_proxy_url(p), "lost");
    connects = rdlt_stats(b.c).connects;
    /* The command that carries lock 7's key: a batch of several. */
    rdlt_proxy_drop_reply(p, "EVALSHA", "lost:7}", 1);
    run_all(&b, 0);
    assert_all(&b, 1);
    assert_held(&b, 1);
    assert_true(rdlt_stats(b.c).connects > connects); /* the drop happened */
    connects = rdlt_stats(b.c).connects;
    rdlt_proxy_drop_reply(p, "EVALSHA", "lost:7}", 1);
    run_all(&b, 1);
    assert_all(&b, 1);
    assert_held(&b, 0);
    assert_true(rdlt_stats(b.c).connects > connects);
    assert_int_equal(rdlt_count_held(s, "*"), 0);
    finish(&b);
}

/* The server lost its script cache (SCRIPT FLUSH, as after a restart): the
 * batch is sent again with its body, and every call is applied once. */
static void test_batch_after_script_flush(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_stats_t st0;
    redisReply *r;
    bctx b;
    (void)state;

    setup(&b, rdlt_server_url(s), "flush");
    run_all(&b, 0);
    assert_all(&b, 1);
    r = rdlt_cmd(s, "SCRIPT FLUSH");
    freeReplyObject(r);
    /* And the function library, where the server has one (7.0+). */
    r = rdlt_cmd(s, "FUNCTION FLUSH");
    freeReplyObject(r);
    st0 = rdlt_stats(b.c);
    run_all(&b, 1);
    assert_all(&b, 1);
    assert_true(rdlt_stats(b.c).script_loads > st0.script_loads);
    assert_held(&b, 0);
    finish(&b);
}

/* Against a replica every call fails with RDL_EREADONLY, as it would
 * alone, and nothing is written. */
static void test_batch_on_replica_fails_each_call(void **state)
{
    rdlt_server *m = rdlt_server_start();
    rdlt_server *rep = rdlt_server_start_replica(m);
    bctx b;
    (void)state;

    setup(&b, rdlt_server_url(rep), "replica");
    run_all(&b, 0);
    assert_all(&b, RDL_EREADONLY);
    assert_int_equal(rdlt_dbsize(m), 0);
    finish(&b);
}

/* The client closes in the same loop iteration as the calls are made,
 * before the batch leaves: each call fails with RDL_ECLOSED, and nothing
 * is held on the server. A round of calls first makes the connection
 * ready, so the first 32 calls (a full batch) are already in its write
 * buffer at the close: never written, they too fail with RDL_ECLOSED, not
 * with RDL_ECONNLOST (an unknown outcome). Before, that depended on
 * whether the connection was ready yet. */
static void test_batch_close_before_it_leaves(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_proxy *p = rdlt_proxy_start(s);
    unsigned before;
    bctx b;
    (void)state;

    setup(&b, rdlt_proxy_url(p), "closing");
    run_all(&b, 0);
    assert_all(&b, 1);
    run_all(&b, 1);
    assert_all(&b, 1);
    before = rdlt_proxy_count(p, "EVALSHA");
    b.close_after = 1;
    run_all(&b, 0);
    rdlt_assert_ok(b.close_rc);
    assert_all(&b, RDL_ECLOSED);
    assert_int_equal(rdlt_proxy_count(p, "EVALSHA"), before);
    assert_int_equal(rdlt_count_held(s, "*"), 0);
    finish(&b);
}

/* The client (on the caller's loop) is closed from inside the first
 * callback of calls that share one reply: the batch's group reply, or
 * with durability the one WAIT that confirms them all. The shutdown
 * completes the calls still running with RDL_ECLOSED; the replies being
 * handed out must not then reach them a second time (before: a second
 * callback, then a second uv_close of the acquisition's timer, and the
 * process aborted). Every call's callback runs exactly once, and the loop
 * ends with no handle left open. */
static void close_in_first_callback(const char *url, int durable)
{
    bctx b;
    int i, answered = 0, ended = 0;

    setup_opts(&b, url, NULL, durable, durable ? "dclose" : "close");
    b.close_in_cb = 1;
    run_all(&b, 0);
    rdlt_assert_ok(b.close_rc);
    for (i = 0; i < N; i++) {
        if (b.calls[i] != 1)
            fail_msg("call %d: %d callbacks", i, b.calls[i]);
        /* Answered by the shared reply: granted, or with durability
         * refused because the WAIT ran out (a replica slow on a loaded
         * machine); either way the close ran inside its first callback. */
        if (b.status[i] == 1 || (durable && b.status[i] == RDL_ENOREPLICAS))
            answered++;
        else if (b.status[i] == RDL_ECLOSED || b.status[i] == RDL_ECONNLOST)
            ended++; /* never sent / sent, not answered at the close */
        else
            fail_msg("call %d: %s (%s)", i, rdl_err_name(b.status[i]),
                     rdl_client_errmsg(b.c));
    }
    assert_true(answered >= 1);
    assert_int_equal(answered + ended, N);
    finish(&b);
}

static void test_batch_close_in_first_callback(void **state)
{
    rdlt_server *s = rdlt_server_start();
    (void)state;
    close_in_first_callback(rdlt_server_url(s), 0);
}

static void test_batch_close_in_first_callback_durable(void **state)
{
    static const char *const no_sync_delay[] = {"--repl-diskless-sync-delay",
                                                "0", NULL};
    rdlt_server *s = rdlt_server_start_args(no_sync_delay);
    (void)rdlt_server_start_replica(s);
    rdlt_server_wait_replicas(s, 1, 10000);
    (void)state;
    close_in_first_callback(rdlt_server_url(s), 1);
}

/* ---- chains: each call made from the callback of the one before ------- */

#define ROUNDS 25
/* How long the probe waits for the server to show the full batch. */
#define PROBE_MS 2000

/* What the probe of a run of chains saw (run_chains). */
enum {
    PROBE_NONE,    /* it did not run */
    PROBE_SPLIT,   /* the two replies came in different loop iterations */
    PROBE_MIDREAD, /* the full batch reached the server between them */
    PROBE_LATE,    /* it had not after PROBE_MS */
    PROBE_ERROR    /* the probe's own connection failed */
};

static void on_chain(rdl_req_t *req, int status);

static void chain_call(bctx *b, int i)
{
    int rc;
    memset(&b->req[i], 0, sizeof(b->req[i]));
    b->req[i].data = b;
    rc = b->releasing[i]
             ? rdl_lock_release_async(&b->req[i], b->l[i], OWNER, on_chain)
             : rdl_lock_acquire_async(&b->req[i], b->l[i], OWNER, 0, 10000,
                                      on_chain);
    if (rc != 0)
        on_chain(&b->req[i], rc);
}

/* On the loop thread, blocking it: PROBE_MIDREAD once the server shows
 * lock <tag>:i free (its release applied; field o of its hash empty, as
 * rdlt_key_retained() reads it), PROBE_LATE if it does not within
 * PROBE_MS. No cmocka here: the main thread checks b->probe. */
static int probe_released(bctx *b, int i)
{
    int64_t until = rdlt_now_ms() + PROBE_MS;
    char key[64];
    snprintf(key, sizeof(key), "rdl:lock:{%s:%d}", b->tag, i);
    for (;;) {
        redisReply *r = redisCommand(b->watch, "HGET %s o", key);
        int free_now;
        if (r == NULL)
            return PROBE_ERROR;
        free_now = r->type == REDIS_REPLY_NIL ||
                   (r->type == REDIS_REPLY_STRING && r->len == 0);
        freeReplyObject(r);
        if (free_now)
            return PROBE_MIDREAD;
        if (rdlt_now_ms() >= until)
            return PROBE_LATE;
        rdlt_sleep_ms(1);
    }
}

static void on_chain(rdl_req_t *req, int status)
{
    bctx *b = req->data;
    int i = (int)(req - b->req);
    /* The replies of round 1's acquisitions (see run_chains): chain
     * BATCH_MAX - 1 makes the release that fills a batch; chain BATCH_MAX
     * is the first call answered by the next reply. */
    if (status == 0 && !b->releasing[i] && b->left[i] == ROUNDS) {
        if (i == BATCH_MAX - 1)
            b->full_at = b->tick->n;
        else if (i == BATCH_MAX)
            b->probe = b->tick->n != b->full_at
                           ? PROBE_SPLIT
                           : probe_released(b, BATCH_MAX - 1);
    }
    if (status != 0 || (b->releasing[i] && --b->left[i] == 0)) {
        b->status[i] = status == 0 ? 1 : status;
        if (++b->done == N)
            __atomic_store_n(&b->all, 1, __ATOMIC_RELEASE);
        return;
    }
    b->releasing[i] = !b->releasing[i];
    chain_call(b, i);
}

static void on_tick(uv_prepare_t *h)
{
    ((ticker *)h->data)->n++;
}

static void start_chains(void *arg)
{
    bctx *b = arg;
    int i;
    b->done = 0;
    __atomic_store_n(&b->all, 0, __ATOMIC_RELEASE);
    b->probe = PROBE_NONE;
    b->full_at = 0;
    for (i = 0; i < N; i++) {
        b->left[i] = ROUNDS;
        b->releasing[i] = 0;
        b->status[i] = 0;
        chain_call(b, i);
    }
}

static void start_ticker(void *arg)
{
    bctx *b = arg;
    uv_prepare_init(rdlt_loop_uv(b->lp), &b->tick->h);
    b->tick->h.data = b->tick;
    uv_prepare_start(&b->tick->h, on_tick);
}

static void on_tick_closed(uv_handle_t *h)
{
    free(h->data);
}

static void stop_ticker(void *arg)
{
    bctx *b = arg;
    uv_close((uv_handle_t *)&b->tick->h, on_tick_closed);
    b->tick = NULL;
}

/* N chains of ROUNDS acquire+release cycles, the calls made inside the
 * callbacks of replies: every chain ends, nothing is held, and the calls
 * shared commands. Over TLS too, where the mid-read write below happens
 * while a read's records are being decrypted.
 *
 * And the feature itself: a batch filled inside the callbacks of one read
 * leaves from between two replies of that read (rdl__conn_flush_soon),
 * not at the end of the loop iteration. Counting commands cannot show it:
 * either way round 1's 40 acquisitions leave as a batch of 32 (chains
 * 0..31, cut as soon as it is full) and one of 8 (32..39, at the flush),
 * each reply's callbacks make the same calls, and those leave in the same
 * two batches - 2 commands per reply pair, 4 per cycle, about 100 for
 * the 2000 calls whether the full batch leaves mid-read or at the end of
 * the iteration. What differs is when: the 32 replies of the first batch
 * make 32 releases, which fill a batch (it started empty: the previous
 * iteration's flush sent everything); with the mid-read flush it is
 * written before the next reply, the one of chains 32..39, is handed out;
 * without it, it sits in the write buffer until the loop's prepare phase.
 * So in chain 32's first callback, while no prepare phase has run since
 * chain 31's (the two replies came in one loop iteration, as they do when
 * one read holds both), the server must come to show lock 31 released
 * while the loop thread waits; without the mid-read flush it never can.
 * When the two replies come in different iterations the probe proves
 * nothing (PROBE_SPLIT) and the chains are run again, up to 10 times. A
 * first round of calls loads the scripts: a NOSCRIPT answer, resent with
 * the script's body, split round 1's replies in most first runs.
 *
 * The count: unbatched the 2 * N * ROUNDS = 2000 calls would be 2000
 * commands; batched they are about 100 (above). At most N * ROUNDS / 4 =
 * 250 (8 calls a command on average) leaves room for replies that come
 * in separate reads and cut batches short. */
static void run_chains(bctx *b, rdlt_server *s)
{
    rdl_client_stats_t st0, st1;
    struct timeval tv = {5, 0};
    int attempt, splits = 0;

    b->watch = redisConnectWithTimeout("127.0.0.1", rdlt_server_port(s), tv);
    if (b->watch == NULL || b->watch->err)
        fail_msg("probe: cannot connect to port %d", rdlt_server_port(s));
    redisSetTimeout(b->watch, tv);
    b->tick = calloc(1, sizeof(*b->tick));
    assert_non_null(b->tick);
    rdlt_loop_call(b->lp, start_ticker, b);
    run_all(b, 0);
    assert_all(b, 1);
    run_all(b, 1);
    assert_all(b, 1);
    for (attempt = 0; attempt < 10; attempt++) {
        st0 = rdlt_stats(b->c);
        rdlt_loop_call(b->lp, start_chains, b);
        if (!rdlt_wait_flag(&b->all, 30000))
            fail_msg("after 30 s only %d of %d chains ended (probe %d)",
                     b->done, N, b->probe);
        if (b->probe == PROBE_LATE)
            fail_msg("the batch filled in the first reply's callbacks had not "
                     "reached the server %d ms later, when the next reply of "
                     "the same read was handed out: no mid-read flush",
                     PROBE_MS);
        if (b->probe != PROBE_SPLIT && b->probe != PROBE_MIDREAD)
            fail_msg("probe: %d", b->probe);
        assert_all(b, 1);
        assert_held(b, 0);
        assert_int_equal(rdlt_count_held(s, "*"), 0);
        st1 = rdlt_stats(b->c);
        assert_true(st1.scripts - st0.scripts >= 2 * N * ROUNDS);
        if (st1.commands - st0.commands > N * ROUNDS / 4)
            fail_msg("%llu commands for %d calls",
                     (unsigned long long)(st1.commands - st0.commands),
                     2 * N * ROUNDS);
        if (b->probe == PROBE_MIDREAD)
            break;
        splits++;
    }
    rdlt_loop_call(b->lp, stop_ticker, b);
    redisFree(b->watch);
    b->watch = NULL;
    /* Redis 6.2 sent the two batches' replies apart in every run seen
     * (20 of 20): the probe cannot happen there. The flush is the
     * client's, and the newer servers test it. */
    if (b->probe != PROBE_MIDREAD && rdlt_server_major(s) > 0 &&
        rdlt_server_major(s) < 7) {
        print_message("rdlt: Redis %d never sent round 1's replies "
                      "together in %d runs; the mid-read flush is tested "
                      "on Redis 7 and later; skipping\n",
                      rdlt_server_major(s), splits);
        skip();
    }
    if (b->probe != PROBE_MIDREAD)
        fail_msg("in %d runs the replies of round 1 never came in one loop "
                 "iteration: the mid-read flush was not tested",
                 splits);
}

static void test_batch_chains(void **state)
{
    rdlt_server *s = rdlt_server_start();
    bctx b;
    (void)state;

    setup(&b, rdlt_server_url(s), "chain");
    run_chains(&b, s);
    finish(&b);
}

#ifdef RDL_WITH_TLS
static void test_batch_chains_over_tls(void **state)
{
    const rdlt_pki *k = rdlt_pki_make();
    rdlt_server *s = rdlt_tls_server_start(k, k->server, 0, NULL);
    rdl_tls_options_t o;
    bctx b;
    (void)state;

    memset(&o, 0, sizeof(o));
    o.ca_file = k->ca;
    setup_opts(&b, rdlt_tls_url(s), &o, 0, "tls");
    run_chains(&b, s);
    finish(&b);
}
#endif

/* On a cluster, calls of one slot share commands and calls of different
 * slots never do (a script's keys must share a slot): names of one hash
 * tag, then names spread over every master, all acquired and released. */
static void test_batch_cluster_slots(void **state)
{
    rdlt_cluster *cl = rdlt_cluster_start();
    rdl_client_stats_t st0;
    bctx b;
    (void)state;

    setup(&b, rdlt_cluster_url(cl), "{grp}");
    st0 = rdlt_stats(b.c);
    run_all(&b, 0);
    assert_all(&b, 1);
    /* Two batches, and the handshake of the connection to the slot's
     * master (opened on first use); unbatched it would be N. */
    if (rdlt_stats(b.c).commands - st0.commands > N / 4)
        fail_msg("%llu commands for %d acquisitions of one slot",
                 (unsigned long long)(rdlt_stats(b.c).commands - st0.commands),
                 N);
    assert_held(&b, 1);
    run_all(&b, 1);
    assert_all(&b, 1);
    assert_held(&b, 0);
    finish(&b);

    setup(&b, rdlt_cluster_url(cl), "spread");
    run_all(&b, 0);
    assert_all(&b, 1);
    assert_held(&b, 1);
    run_all(&b, 1);
    assert_all(&b, 1);
    assert_held(&b, 0);
    finish(&b);
}

/* Reads a whole file, NUL-terminated; free() it. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (f == NULL)
        fail_msg("cannot open %s", path);
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL) {
        if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        } else {
            buf[n] = '\0';
        }
    }
    fclose(f);
    if (buf == NULL)
        fail_msg("cannot read %s", path);
    return buf;
}

/* One element of a reply, as {1, token, count}: a grant. */
static void assert_grant(const redisReply *e, const char *what)
{
    if (e->type != REDIS_REPLY_ARRAY || e->elements != 3 ||
        e->element[0]->type != REDIS_REPLY_INTEGER ||
        e->element[0]->integer != 1 ||
        e->element[1]->type != REDIS_REPLY_INTEGER ||
        e->element[1]->integer <= 0)
        fail_msg("%s: not a grant (reply type %d)", what, e->type);
}

/* The generated batch script itself, run with EVAL: a test batch of the
 * plain lock's scripts and two test scripts (tests/CMakeLists.txt), so
 * that one call can return nil, which no real script does yet. That call
 * gets a nil reply of its own, as it would alone, and the calls around it
 * theirs: a Lua array ends at its first nil, so the reply used to stop
 * there, and every call of the batch failed with RDL_EPROTO, the grants
 * after it too, held for their lease with nobody told. Each call sees its
 * own keys and arguments whatever its offset. */
static void test_batch_script_nil_stays_with_its_call(void **state)
{
    rdlt_server *s = rdlt_server_start();
    char *body = slurp(RDL_TEST_BATCH_FIXTURE);
    redisReply *r, *e, *h;
    size_t i;
    (void)state;

    /* ARGV: the number of calls; per call its script (0 lock_acquire,
     * 1 lock_release, 2 maybe_nil, 3 echo: the order of the test batch's
     * scripts), its numbers of keys and of arguments, its arguments. */
    r = rdlt_cmd(s,
                 "EVAL %s 5 %s %s %s %s %s 4 "
                 "0 1 7 %s %s %s %s %s %s %s "
                 "2 1 1 %s "
                 "3 2 2 %s %s "
                 "0 1 7 %s %s %s %s %s %s %s",
                 body, "rdl:lock:{n1}", "k", "ka", "kb", "rdl:lock:{n2}", "c:1",
                 "10000", "r1", "", "publish", "ch", "86400000", "nil", "x",
                 "y", "c:1", "10000", "r2", "", "publish", "ch", "86400000");
    free(body);
    assert_non_null(r);
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 4) {
        char what[256];
        if (r->type == REDIS_REPLY_ERROR)
            snprintf(what, sizeof(what), "error %s", r->str);
        else
            snprintf(what, sizeof(what), "type %d, %zu elements", r->type,
                     r->type == REDIS_REPLY_ARRAY ? r->elements : 0);
        freeReplyObject(r);
        fail_msg("a batch of 4 calls replied %s", what);
    }
    assert_grant(r->element[0], "call 1 (lock_acquire)");
    assert_int_equal(r->element[1]->type, REDIS_REPLY_NIL);
    e = r->element[2];
    assert_int_equal(e->type, REDIS_REPLY_ARRAY);
    assert_int_equal(e->elements, 5);
    for (i = 0; i < 4; i++) {
        const char *want[] = {"ka", "kb", "x", "y"};
        assert_int_equal(e->element[i]->type, REDIS_REPLY_STRING);
        assert_string_equal(e->element[i]->str, want[i]);
    }
    assert_int_equal(e->element[4]->integer, 1);
    assert_grant(r->element[3], "call 4 (lock_acquire)");
    freeReplyObject(r);
    /* Both grants happened, each to its own key. */
    h = rdlt_cmd(s, "HGET rdl:lock:{n1} o");
    assert_string_equal(h->str, "c:1");
    freeReplyObject(h);
    h = rdlt_cmd(s, "HGET rdl:lock:{n2} o");
    assert_string_equal(h->str, "c:1");
    freeReplyObject(h);
}

/* What the fake node of test_batch_reply_elements_per_call answers, and
 * what each call should then get (its lock's number: the key's last
 * component). Written on the fake's thread, read after the calls. */
typedef struct elems {
    int batches;
    int want[N]; /* 0: sent alone (forwarded); 1 done; else the error */
} elems;

static int elems_rule(rdlt_fake *f, void *data, int argc, char **argv,
                      size_t *lens, unsigned n, char *out, size_t outlen)
{
    elems *x = data;
    int nk, calls, m, i, gap;
    size_t len;
    (void)f;
    (void)n;
    if (lens[0] != 7 || strncasecmp(argv[0], "EVALSHA", 7) != 0 || argc < 4)
        return RDLT_FAKE_FORWARD;
    nk = atoi(argv[2]);
    /* A batch of acquisitions (its first call's script is 0). */
    if (nk < 2 || argc < 5 + nk || strcmp(argv[4 + nk], "0") != 0)
        return RDLT_FAKE_FORWARD;
    calls = atoi(argv[3 + nk]);
    if (calls != nk)
        return RDLT_FAKE_FORWARD;
    /* The first batch: a reply cut short after half its calls, as Lua
     * cut the batch script's reply at a nil. Later ones: every call's
     * reply, one of them nil. */
    gap = calls / 2 > 12 ? 12 : calls / 2;
    m = x->batches++ == 0 ? gap : calls;
    len = (size_t)snprintf(out, outlen, "*%d\r\n", m);
    for (i = 0; i < m && len < outlen; i++)
        len += (size_t)snprintf(
            out + len, outlen - len,
            i == gap ? "$-1\r\n" : "*3\r\n:1\r\n:%d\r\n:1\r\n", i + 1);
    if (len >= outlen)
        return RDLT_FAKE_DROP; /* the test then fails: no outcome */
    for (i = 0; i < nk; i++) {
        const char *colon = strrchr(argv[3 + i], ':');
        int lock = colon != NULL ? atoi(colon + 1) : -1;
        if (lock >= 0 && lock < N)
            x->want[lock] = i < m && i != gap ? 1 : RDL_EPROTO;
    }
    return RDLT_FAKE_REPLY;
}

/* batch.c hands each call its own element of the batch's reply: a call
 * whose element is nil fails alone (RDL_EPROTO), and a reply shorter than
 * the batch still answers the calls it covers; only the calls past its end
 * get RDL_EPROTO. Before, any reply of the wrong length failed every call,
 * grants included. The replies come from a fake node (tests/support/
 * fake.c) in front of a real server, which runs the calls sent alone. */
static void test_batch_reply_elements_per_call(void **state)
{
    rdlt_server *backend = rdlt_server_start();
    static elems x;
    rdlt_fake *f;
    char url[64];
    bctx b;
    int i, covered = 0, cut = 0;
    (void)state;

    memset(&x, 0, sizeof(x));
    f = rdlt_fake_start(backend, elems_rule, &x);
    snprintf(url, sizeof(url), "redis+cluster://127.0.0.1:%d",
             rdlt_fake_port(f));
    setup(&b, url, "{elems}");
    run_all(&b, 0);
    /* 40 calls: a full batch of 32 (cut short), then 8 (one nil). */
    assert_true(x.batches >= 2);
    for (i = 0; i < N; i++) {
        int want = x.want[i] == 0 ? 1 : x.want[i];
        if (b.status[i] != want)
            fail_msg("call %d: %s, expected %s", i,
                     b.status[i] == 1 ? "done" : rdl_err_name(b.status[i]),
                     want == 1 ? "done" : rdl_err_name(want));
        covered += x.want[i] == 1;
        cut += x.want[i] == RDL_EPROTO;
    }
    assert_true(covered > 0);
    assert_true(cut > 0);
    finish(&b);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_batch_calls_share_commands),
    RDLT_TEST(test_batch_outcomes_are_per_call),
    RDLT_TEST(test_batch_error_stays_with_its_call),
    RDLT_TEST(test_batch_lost_reply_counts_once),
    RDLT_TEST(test_batch_after_script_flush),
    RDLT_TEST(test_batch_on_replica_fails_each_call),
    RDLT_TEST(test_batch_close_before_it_leaves),
    RDLT_TEST(test_batch_close_in_first_callback),
    RDLT_TEST(test_batch_close_in_first_callback_durable),
    RDLT_TEST(test_batch_chains),
#ifdef RDL_WITH_TLS
    RDLT_TEST(test_batch_chains_over_tls),
#endif
    RDLT_TEST(test_batch_cluster_slots),
    RDLT_TEST(test_batch_script_nil_stays_with_its_call),
    RDLT_TEST(test_batch_reply_elements_per_call),
};

RDLT_MAIN(tests)
