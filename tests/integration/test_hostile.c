/* A server that answers what no rdl script returns: a proxy, a wrong
 * server on the port, a hostile one. A scripted fake node
 * (tests/support/fake.c) stands in front of a real redis-server and
 * answers the lock scripts with junk on cue, everything else going to the
 * server; a plain TCP listener of this file plays the wrong server. Each
 * call must fail with a clear code (RDL_EPROTO for a reply of the wrong
 * shape; the documented code for an error reply) and a message, return
 * within the command timeout, and leave nothing believed held that the
 * server does not hold: the server's keys are checked against what the
 * client believes. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <uv.h>

#include "rdlt.h"

#define A ((rdl_owner_t)1)
#define CMD_MS 1000
/* What a call may take beyond the command timeout: scheduling, a slow
 * machine. A hang takes far longer. */
#define MARGIN_MS 1500

/* ---- the fake node: junk on cue ------------------------------------------ */

typedef struct scene {
    rdlt_server *backend;
    rdlt_fake *fake;
    const char *junk; /* atomic: the answer to every script call, or NULL */
    size_t junk_len;
} scene;

static int is_cmd(char **argv, size_t *lens, const char *name)
{
    return lens[0] == strlen(name) && strncasecmp(argv[0], name, lens[0]) == 0;
}

static int rule(rdlt_fake *f, void *data, int argc, char **argv, size_t *lens,
                unsigned n, char *out, size_t outlen)
{
    scene *s = data;
    const char *junk = __atomic_load_n(&s->junk, __ATOMIC_SEQ_CST);
    (void)f;
    (void)argc;
    (void)n;
    if (junk == NULL ||
        (!is_cmd(argv, lens, "EVALSHA") && !is_cmd(argv, lens, "EVAL")))
        return RDLT_FAKE_FORWARD;
    if (s->junk_len + 1 > outlen)
        return RDLT_FAKE_DROP;
    memcpy(out, junk, s->junk_len + 1);
    return RDLT_FAKE_REPLY;
}

static scene *scene_start(void)
{
    static scene s;
    memset(&s, 0, sizeof(s));
    s.backend = rdlt_server_start();
    s.fake = rdlt_fake_start(s.backend, rule, &s);
    return &s;
}

/* From now on every script call is answered with `junk` (NULL: the
 * server answers again). */
static void junk(scene *s, const char *text)
{
    s->junk_len = text != NULL ? strlen(text) : 0;
    __atomic_store_n(&s->junk, text, __ATOMIC_SEQ_CST);
}

static const char *fake_url(scene *s)
{
    static char url[64];
    snprintf(url, sizeof(url), "redis://127.0.0.1:%d", rdlt_fake_port(s->fake));
    return url;
}

/* A plain (redis://) client of the fake node. */
static rdl_client_t *client_for(scene *s)
{
    rdl_client_t *c = rdlt_client_new(fake_url(s));
    int rc;
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, CMD_MS));
    rc = rdl_client_connect(c);
    if (rc != 0)
        fail_msg("connect: %s: %s", rdl_err_name(rc), rdl_client_errmsg(c));
    return c;
}

/* ---- the junk ---------------------------------------------------------------- */

typedef struct junk_case {
    const char *name;
    const char *text; /* NULL: the huge bulk string */
    int want;         /* the code every call gets */
    int release_ok;   /* also the shape of a release's answer ({1, n}) */
} junk_case;

static const junk_case cases[] = {
    {"string", "$5\r\nhello\r\n", RDL_EPROTO, 0},
    {"status", "+OK\r\n", RDL_EPROTO, 0},
    {"integer", ":1\r\n", RDL_EPROTO, 0},
    {"nil", "$-1\r\n", RDL_EPROTO, 0},
    {"nil array", "*-1\r\n", RDL_EPROTO, 0},
    {"empty array", "*0\r\n", RDL_EPROTO, 0},
    {"grant too short", "*2\r\n:1\r\n:7\r\n", RDL_EPROTO, 1},
    {"flag alone", "*1\r\n:1\r\n", RDL_EPROTO, 0},
    {"grant too long", "*4\r\n:1\r\n:7\r\n:1\r\n:1\r\n", RDL_EPROTO, 0},
    {"busy too long", "*4\r\n:0\r\n:50\r\n:0\r\n:0\r\n", RDL_EPROTO, 0},
    {"flag as string", "*3\r\n$1\r\n1\r\n:7\r\n:1\r\n", RDL_EPROTO, 0},
    {"token as string", "*3\r\n:1\r\n$1\r\n7\r\n:1\r\n", RDL_EPROTO, 0},
    {"count as nil", "*3\r\n:1\r\n:7\r\n$-1\r\n", RDL_EPROTO, 0},
    {"unknown flag", "*3\r\n:2\r\n:7\r\n:1\r\n", RDL_EPROTO, 0},
    {"negative token", "*3\r\n:1\r\n:-7\r\n:1\r\n", RDL_EPROTO, 0},
    {"zero token", "*3\r\n:1\r\n:0\r\n:1\r\n", RDL_EPROTO, 0},
    /* Not RESP at all to hiredis (an integer out of range): the stream
     * cannot be read past it, the connection is reset and what was in
     * flight has an unknown outcome, as after any lost connection. */
    {"token 2^63", "*3\r\n:1\r\n:9223372036854775808\r\n:1\r\n", RDL_ECONNLOST,
     0},
    {"negative count", "*3\r\n:1\r\n:7\r\n:-1\r\n", RDL_EPROTO, 0},
    {"count 2^32", "*3\r\n:1\r\n:7\r\n:4294967296\r\n", RDL_EPROTO, 0},
    /* A count the client cannot have: more than a few levels it does not
     * know of (stale levels it would give back one by one). */
    {"count 2^31", "*3\r\n:1\r\n:7\r\n:2147483648\r\n", RDL_EPROTO, 0},
    {"count 2^63-1", "*3\r\n:1\r\n:7\r\n:9223372036854775807\r\n", RDL_EPROTO,
     0},
    {"nested", "*3\r\n*3\r\n:1\r\n:7\r\n:1\r\n:7\r\n:1\r\n", RDL_EPROTO, 0},
    {"nested deep", "*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", RDL_EPROTO, 0},
    {"unknown error", "-WHATEVER this is no code\r\n", RDL_ESERVER, 0},
    {"plain error", "-ERR proxy says no\r\n", RDL_ESERVER, 0},
    {"huge string", NULL, RDL_EPROTO, 0},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* The text of a case: the huge bulk string is made once. */
static const char *case_text(const junk_case *jc)
{
    static char *huge;
    if (jc->text != NULL)
        return jc->text;
    if (huge == NULL) {
        size_t n = (size_t)1 << 20;
        int head;
        huge = malloc(n + 32);
        assert_non_null(huge);
        head = sprintf(huge, "$%zu\r\n", n);
        memset(huge + head, 'x', n);
        memcpy(huge + (size_t)head + n, "\r\n", 3);
    }
    return huge;
}

/* ---- checks ------------------------------------------------------------------ */

/* rc is the case's code and came with a message, within the command
 * timeout. */
static void check_failed(const char *what, const junk_case *jc, rdl_client_t *c,
                         int rc, int64_t took)
{
    const char *msg = rdl_client_errmsg(c);
    if (rc != jc->want)
        fail_msg("%s, %s: %s (%s), expected %s", what, jc->name,
                 rdl_err_name(rc), msg, rdl_err_name(jc->want));
    if (msg == NULL || msg[0] == '\0')
        fail_msg("%s, %s: %s without a message", what, jc->name,
                 rdl_err_name(rc));
    if (took > CMD_MS + MARGIN_MS)
        fail_msg("%s, %s: took %lld ms", what, jc->name, (long long)took);
}

/* Nothing held in the client's eyes nor on the server. */
static void check_nothing_held(scene *s, rdl_lock_t *l, const char *what,
                               const junk_case *jc)
{
    int rc;
    if (rdl_lock_fencing_token(l, A) != 0 || rdl_lock_valid_ms(l, A) != 0)
        fail_msg("%s, %s: the client believes it holds the lock", what,
                 jc->name);
    junk(s, NULL);
    rc = rdl_lock_release_as(l, A);
    if (rc != RDL_ENOTHELD)
        fail_msg("%s, %s: release after the junk: %s", what, jc->name,
                 rdl_err_name(rc));
    if (rdlt_count_held(s->backend, "*") != 0)
        fail_msg("%s, %s: the server holds something", what, jc->name);
}

/* ---- acquisitions, one kind at a time -------------------------------------- */

enum { PLAIN, FAIR, READ, WRITE, SEMAPHORE };
static const char *const kind_names[] = {"lock", "fair lock", "read lock",
                                         "write lock", "semaphore"};

static void free_lock(void *p)
{
    rdl_lock_free(p);
}

static void free_rwlock(void *p)
{
    rdl_rwlock_free(p);
}

static void free_latch(void *p)
{
    rdl_latch_free(p);
}

static rdl_lock_t *lock_of(rdl_client_t *c, int kind, const char *name)
{
    rdl_lock_t *l = NULL;
    rdl_rwlock_t *rw = NULL;
    switch (kind) {
    case PLAIN:
        return rdlt_lock(c, name);
    case FAIR:
        rdlt_assert_ok(rdl_fairlock_new(c, name, &l));
        break;
    case SEMAPHORE:
        rdlt_assert_ok(rdl_semaphore_new(c, name, 3, &l));
        break;
    default:
        /* The read-write object is freed with the client (it is small);
         * its views live as long. */
        rdlt_assert_ok(rdl_rwlock_new(c, name, &rw));
        rdlt_defer(free_rwlock, rw);
        return kind == READ ? rdl_rwlock_read(rw) : rdl_rwlock_write(rw);
    }
    rdlt_defer(free_lock, l);
    return l;
}

/* Every junk reply to every acquisition: one try, then a wait. */
static void acquire_all(int kind)
{
    scene *s = scene_start();
    rdl_client_t *c = client_for(s);
    size_t i;
    int wait;
    for (i = 0; i < NCASES; i++) {
        for (wait = 0; wait <= 1; wait++) {
            const junk_case *jc = &cases[i];
            char name[64];
            rdl_lock_t *l;
            int64_t t0;
            int rc;
            snprintf(name, sizeof(name), "h%zu:%d", i, wait);
            l = lock_of(c, kind, name);
            junk(s, case_text(jc));
            t0 = rdlt_now_ms();
            rc = rdl_lock_acquire_as(l, A, wait ? 2000 : 0, 30000);
            check_failed(kind_names[kind], jc, c, rc, rdlt_now_ms() - t0);
            check_nothing_held(s, l, kind_names[kind], jc);
        }
    }
}

static void test_hostile_lock_acquire(void **state)
{
    (void)state;
    acquire_all(PLAIN);
}

static void test_hostile_fair_acquire(void **state)
{
    (void)state;
    acquire_all(FAIR);
}

static void test_hostile_read_acquire(void **state)
{
    (void)state;
    acquire_all(READ);
}

static void test_hostile_write_acquire(void **state)
{
    (void)state;
    acquire_all(WRITE);
}

static void test_hostile_semaphore_acquire(void **state)
{
    (void)state;
    acquire_all(SEMAPHORE);
}

/* A redirect, a migration or a load in progress, from a server the URL
 * names as standalone: no code the library keeps to itself reaches the
 * caller, and nothing is held. */
static void test_hostile_stray_cluster_errors(void **state)
{
    static const junk_case stray[] = {
        {"MOVED", "-MOVED 3999 127.0.0.1:1\r\n", RDL_EREDIRECT, 0},
        {"ASK", "-ASK 3999 127.0.0.1:1\r\n", RDL_EREDIRECT, 0},
        {"TRYAGAIN", "-TRYAGAIN Multiple keys request\r\n", RDL_EREDIRECT, 0},
        {"LOADING", "-LOADING Redis is loading the dataset\r\n",
         RDL_ECONNREFUSED, 0},
    };
    scene *s = scene_start();
    rdl_client_t *c = client_for(s);
    size_t i;
    (void)state;
    for (i = 0; i < sizeof(stray) / sizeof(stray[0]); i++) {
        char name[32];
        rdl_lock_t *l;
        int64_t t0;
        int rc;
        snprintf(name, sizeof(name), "stray%zu", i);
        l = rdlt_lock(c, name);
        junk(s, stray[i].text);
        t0 = rdlt_now_ms();
        rc = rdl_lock_acquire_as(l, A, 0, 30000);
        check_failed("lock", &stray[i], c, rc, rdlt_now_ms() - t0);
        check_nothing_held(s, l, "lock", &stray[i]);
    }
}

/* The latch: counting down and waiting, answered with junk, fail; the
 * count on the server is untouched. */
static void test_hostile_latch(void **state)
{
    scene *s = scene_start();
    rdl_client_t *c = client_for(s);
    rdl_latch_t *l = NULL;
    uint64_t count = 0;
    size_t i;
    (void)state;
    rdlt_assert_ok(rdl_latch_new(c, "gate", &l));
    rdlt_defer(free_latch, l);
    rdlt_assert_ok(rdl_latch_set(l, 2, 60000));
    for (i = 0; i < NCASES; i++) {
        const junk_case *jc = &cases[i];
        int64_t t0;
        int rc;
        junk(s, case_text(jc));
        t0 = rdlt_now_ms();
        rc = rdl_latch_count_down(l);
        check_failed("count down", jc, c, rc, rdlt_now_ms() - t0);
        t0 = rdlt_now_ms();
        rc = rdl_latch_await(l, 500);
        check_failed("await", jc, c, rc, rdlt_now_ms() - t0);
        junk(s, NULL);
        rdlt_assert_ok(rdl_latch_count(l, &count));
        assert_int_equal(count, 2);
    }
}

/* ---- release and renewal ---------------------------------------------------- */

/* A release answered with junk fails with a message. A reply of the
 * wrong shape may stand for a release that ran (a proxy that mangled its
 * answer), so the client no longer counts on the hold; an error reply
 * says it did not run, and the hold stands. Here it never ran: the next
 * release, answered by the server, frees the lock. */
static void test_hostile_release(void **state)
{
    scene *s = scene_start();
    rdl_client_t *c = client_for(s);
    size_t i;
    (void)state;
    for (i = 0; i < NCASES; i++) {
        const junk_case *jc = &cases[i];
        char name[32];
        rdl_lock_t *l;
        int64_t t0;
        int rc;
        if (jc->release_ok)
            continue;
        snprintf(name, sizeof(name), "rel%zu", i);
        l = rdlt_lock(c, name);
        rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
        junk(s, case_text(jc));
        t0 = rdlt_now_ms();
        rc = rdl_lock_release_as(l, A);
        check_failed("release", jc, c, rc, rdlt_now_ms() - t0);
        junk(s, NULL);
        if (jc->want == RDL_ESERVER)
            assert_true(rdl_lock_fencing_token(l, A) != 0);
        else if (rdl_lock_fencing_token(l, A) != 0 ||
                 rdl_lock_valid_ms(l, A) != 0)
            fail_msg("release, %s: still believed held", jc->name);
        assert_int_equal(rdlt_count_held(s->backend, "*"), 1);
        rdlt_assert_ok(rdl_lock_release_as(l, A));
        assert_int_equal(rdlt_count_held(s->backend, "*"), 0);
    }
}

typedef struct lost_rec {
    int calls;  /* atomic */
    int reason; /* atomic */
} lost_rec;

static void on_lost(rdl_lock_t *lock, rdl_owner_t owner, int reason, void *data)
{
    lost_rec *lr = data;
    (void)lock;
    (void)owner;
    __atomic_store_n(&lr->reason, reason, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&lr->calls, 1, __ATOMIC_SEQ_CST);
}

/* Renewals answered with junk never extend the hold the client believes
 * in past the lease the server really gives it: the key's remaining time
 * always covers rdl_lock_valid_ms(), and once the lease runs out the hold
 * is reported lost (with the junk's code) and its release says so. */
static void renewal_case(const char *text, int want_reason)
{
    scene *s = scene_start();
    rdl_client_t *c = rdlt_client_new(fake_url(s));
    lost_rec lr = {0, 0};
    rdl_lock_t *l;
    redisReply *r;
    int64_t end, valid, pttl;
    int rc;

    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, CMD_MS));
    rdlt_assert_ok(rdl_client_set_watchdog_ms(c, 900));
    rdlt_assert_ok(rdl_client_connect(c));
    l = rdlt_lock(c, "renewed");
    rdlt_assert_ok(rdl_lock_set_lost_cb(l, on_lost, &lr));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, RDL_LEASE_AUTO));
    junk(s, text);
    end = rdlt_now_ms() + 5000;
    while (__atomic_load_n(&lr.calls, __ATOMIC_SEQ_CST) == 0 &&
           rdlt_now_ms() < end) {
        /* The server's view first: the client's, read after, is older. */
        r = rdlt_cmd(s->backend, "PTTL rdl:lock:{renewed}");
        pttl = r->type == REDIS_REPLY_INTEGER ? r->integer : -9;
        freeReplyObject(r);
        valid = rdl_lock_valid_ms(l, A);
        if (valid > 0 && valid > pttl + 5)
            fail_msg("the client counts on %lld ms, the server gives %lld",
                     (long long)valid, (long long)pttl);
        rdlt_sleep_ms(20);
    }
    assert_int_equal(__atomic_load_n(&lr.calls, __ATOMIC_SEQ_CST), 1);
    rc = __atomic_load_n(&lr.reason, __ATOMIC_SEQ_CST);
    if (rc != want_reason)
        fail_msg("lost with %s, expected %s", rdl_err_name(rc),
                 rdl_err_name(want_reason));
    assert_int_equal(rdl_lock_valid_ms(l, A), 0);
    junk(s, NULL);
    rdlt_assert_rc(rdl_lock_release_as(l, A), RDL_ELOST);
    /* Not renewed since: it expires on the server. */
    end = rdlt_now_ms() + 3000;
    while (rdlt_count_held(s->backend, "*") != 0 && rdlt_now_ms() < end)
        rdlt_sleep_ms(20);
    assert_int_equal(rdlt_count_held(s->backend, "*"), 0);
}

static void test_hostile_renewal_shape(void **state)
{
    (void)state;
    renewal_case("+OK\r\n", RDL_EPROTO);
}

static void test_hostile_renewal_too_long(void **state)
{
    (void)state;
    renewal_case("*2\r\n:1\r\n:1\r\n", RDL_EPROTO);
}

static void test_hostile_renewal_element(void **state)
{
    (void)state;
    /* A renewal whose answer is not "renewed" is not one: Redis did not
     * say the hold is still its owner's. */
    renewal_case("*1\r\n*1\r\n:1\r\n", RDL_ELOST);
}

static void test_hostile_renewal_error(void **state)
{
    (void)state;
    renewal_case("-WHATEVER no\r\n", RDL_ESERVER);
}

/* ---- async and batched calls -------------------------------------------------- */

#define NA 8

typedef struct actx {
    rdlt_loop *lp;
    rdl_client_t *c;
    rdl_lock_t *l[NA];
    rdl_req_t req[NA];
    int calls[NA];  /* loop thread */
    int status[NA]; /* loop thread */
    char msg[NA][128];
    int done; /* loop thread */
    int all;  /* atomic */
    int rc;
} actx;

static void on_async(rdl_req_t *req, int status)
{
    actx *a = req->data;
    int i = (int)(req - a->req);
    a->calls[i]++;
    a->status[i] = status;
    snprintf(a->msg[i], sizeof(a->msg[i]), "%s", rdl_client_errmsg(a->c));
    if (++a->done == NA)
        __atomic_store_n(&a->all, 1, __ATOMIC_RELEASE);
}

/* All in one loop turn: they leave as one batch. */
static void start_all(void *arg)
{
    actx *a = arg;
    int i, rc;
    for (i = 0; i < NA; i++) {
        memset(&a->req[i], 0, sizeof(a->req[i]));
        a->req[i].data = a;
        rc = rdl_lock_acquire_async(&a->req[i], a->l[i], A, 0, 30000, on_async);
        if (rc != 0)
            on_async(&a->req[i], rc);
    }
}

static void do_connect(void *arg)
{
    actx *a = arg;
    a->rc = rdl_client_connect(a->c);
}

/* Batched async acquisitions answered with junk (the batch's own reply,
 * or junk elements in it): each call fails once, with the code and a
 * message, and nothing is held. */
static void batch_case(const char *text, int want, int nwant)
{
    scene *s = scene_start();
    actx *a = calloc(1, sizeof(*a)); /* the loop may outlive a failure */
    char name[32];
    int i, failed = 0;
    assert_non_null(a);
    rdlt_defer(free, a);
    a->lp = rdlt_loop_start();
    a->c = rdlt_client_new(fake_url(s));
    rdlt_assert_ok(rdl_client_set_timeouts_ms(a->c, 2000, CMD_MS));
    rdlt_assert_ok(rdl_client_set_loop(a->c, rdlt_loop_uv(a->lp)));
    rdlt_loop_call(a->lp, do_connect, a);
    rdlt_assert_ok(a->rc);
    for (i = 0; i < NA; i++) {
        snprintf(name, sizeof(name), "b%d", i);
        a->l[i] = rdlt_lock(a->c, name);
    }
    junk(s, text);
    rdlt_loop_call(a->lp, start_all, a);
    if (!rdlt_wait_flag(&a->all, CMD_MS + MARGIN_MS))
        fail_msg("only %d of %d callbacks ran", a->done, NA);
    /* Any second call would come within the wait below. */
    junk(s, NULL);
    rdlt_sleep_ms(100);
    for (i = 0; i < NA; i++) {
        if (a->calls[i] != 1)
            fail_msg("call %d: %d callbacks", i, a->calls[i]);
        if (a->status[i] == want)
            failed++;
        else if (a->status[i] != RDL_EPROTO)
            fail_msg("call %d: %s (%s)", i, rdl_err_name(a->status[i]),
                     a->msg[i]);
        if (a->msg[i][0] == '\0')
            fail_msg("call %d: %s without a message", i,
                     rdl_err_name(a->status[i]));
        if (rdl_lock_fencing_token(a->l[i], A) != 0)
            fail_msg("call %d: believed held", i);
    }
    assert_int_equal(failed, nwant);
    assert_int_equal(rdlt_count_held(s->backend, "*"), 0);
}

static void test_hostile_batch_not_array(void **state)
{
    (void)state;
    batch_case("+OK\r\n", RDL_EPROTO, NA);
}

static void test_hostile_batch_too_long(void **state)
{
    static char text[512];
    int i, n;
    (void)state;
    n = sprintf(text, "*%d\r\n", NA + 1);
    for (i = 0; i <= NA; i++)
        n += sprintf(text + n, "*3\r\n:1\r\n:7\r\n:1\r\n");
    batch_case(text, RDL_EPROTO, NA);
}

static void test_hostile_batch_elements(void **state)
{
    static const char *const el[NA] = {
        "+OK\r\n",          ":1\r\n",       "$-1\r\n",
        "*0\r\n",           "*1\r\n*0\r\n", "*4\r\n:1\r\n:7\r\n:1\r\n:1\r\n",
        "-WHATEVER no\r\n", "$2\r\nno\r\n",
    };
    static char text[512];
    int i, n;
    (void)state;
    n = sprintf(text, "*%d\r\n", NA);
    for (i = 0; i < NA; i++)
        n += sprintf(text + n, "%s", el[i]);
    /* One error element: RDL_ESERVER; the rest RDL_EPROTO. */
    batch_case(text, RDL_ESERVER, 1);
}

static void test_hostile_batch_short(void **state)
{
    (void)state;
    batch_case("*1\r\n+OK\r\n", RDL_EPROTO, NA);
}

static void test_hostile_batch_redirect(void **state)
{
    static char text[512];
    int i, n;
    (void)state;
    n = sprintf(text, "*%d\r\n", NA);
    for (i = 0; i < NA; i++)
        n += sprintf(text + n, "-MOVED 1 127.0.0.1:1\r\n");
    batch_case(text, RDL_EREDIRECT, NA);
}

/* ---- a wrong server on the port ------------------------------------------- */

enum { HTTP, NOISE, SILENT };

typedef struct wrong {
    int mode;
    int lfd, port;
    int wake[2];
    int fds[32];
    int nfds;
    pthread_t thread;
} wrong;

static void *wrong_run(void *arg)
{
    wrong *w = arg;
    unsigned seed = 12345;
    for (;;) {
        struct pollfd p[2] = {{w->wake[0], POLLIN, 0}, {w->lfd, POLLIN, 0}};
        char buf[600];
        int fd, i;
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        if (p[0].revents & POLLIN)
            break;
        if (!(p[1].revents & POLLIN))
            continue;
        fd = accept4(w->lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        switch (w->mode) {
        case HTTP:
            /* What a web server says to a request it cannot read. */
            (void)!read(fd, buf, sizeof(buf));
            (void)!write(fd, "HTTP/1.1 400 Bad Request\r\n\r\n", 28);
            close(fd);
            break;
        case NOISE:
            /* Bytes that are no RESP: none is a type byte. */
            for (i = 0; i < (int)sizeof(buf); i++) {
                seed = seed * 1103515245u + 12345u;
                buf[i] = (char)(0x80 | ((seed >> 16) & 0x7f));
            }
            (void)!write(fd, buf, sizeof(buf));
            if (w->nfds < 32)
                w->fds[w->nfds++] = fd;
            else
                close(fd);
            break;
        default: /* SILENT: accepted, never answered */
            if (w->nfds < 32)
                w->fds[w->nfds++] = fd;
            else
                close(fd);
        }
    }
    return NULL;
}

static void wrong_stop(void *p)
{
    wrong *w = p;
    int i;
    (void)!write(w->wake[1], "x", 1);
    pthread_join(w->thread, NULL);
    for (i = 0; i < w->nfds; i++)
        close(w->fds[i]);
    close(w->lfd);
    close(w->wake[0]);
    close(w->wake[1]);
    free(w);
}

static wrong *wrong_start(int mode)
{
    wrong *w = calloc(1, sizeof(*w));
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    assert_non_null(w);
    w->mode = mode;
    w->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(w->lfd >= 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(w->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(w->lfd, 16), 0);
    assert_int_equal(getsockname(w->lfd, (struct sockaddr *)&a, &alen), 0);
    w->port = ntohs(a.sin_port);
    assert_int_equal(pipe2(w->wake, O_CLOEXEC), 0);
    assert_int_equal(pthread_create(&w->thread, NULL, wrong_run, w), 0);
    rdlt_defer(wrong_stop, w);
    return w;
}

/* Connecting to a wrong server fails within the connect timeout with
 * `want` and a message; so does a lock call made anyway. */
static void wrong_case(int mode, int want)
{
    wrong *w = wrong_start(mode);
    char url[64];
    rdl_client_t *c;
    rdl_lock_t *l;
    int64_t t0, took;
    int rc;
    snprintf(url, sizeof(url), "redis://127.0.0.1:%d", w->port);
    c = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 700, CMD_MS));
    t0 = rdlt_now_ms();
    rc = rdl_client_connect(c);
    took = rdlt_now_ms() - t0;
    if (rc != want)
        fail_msg("connect: %s (%s), expected %s", rdl_err_name(rc),
                 rdl_client_errmsg(c), rdl_err_name(want));
    if (rdl_client_errmsg(c)[0] == '\0')
        fail_msg("connect: %s without a message", rdl_err_name(rc));
    rdlt_assert_between(took, 0, 700 + MARGIN_MS);
    /* A call on a client whose connect failed is refused at once. */
    l = rdlt_lock(c, "w");
    t0 = rdlt_now_ms();
    rc = rdl_lock_acquire_as(l, A, 0, 30000);
    took = rdlt_now_ms() - t0;
    assert_true(rc < 0);
    assert_true(rdl_client_errmsg(c)[0] != '\0');
    rdlt_assert_between(took, 0, CMD_MS + MARGIN_MS);
    assert_int_equal(rdl_lock_fencing_token(l, A), 0);
}

static void test_hostile_wrong_server_http(void **state)
{
    (void)state;
    wrong_case(HTTP, RDL_EPROTO);
}

static void test_hostile_wrong_server_noise(void **state)
{
    (void)state;
    wrong_case(NOISE, RDL_EPROTO);
}

static void test_hostile_wrong_server_silent(void **state)
{
    (void)state;
    wrong_case(SILENT, RDL_ECONNREFUSED);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_hostile_lock_acquire),
    RDLT_TEST(test_hostile_fair_acquire),
    RDLT_TEST(test_hostile_read_acquire),
    RDLT_TEST(test_hostile_write_acquire),
    RDLT_TEST(test_hostile_semaphore_acquire),
    RDLT_TEST(test_hostile_stray_cluster_errors),
    RDLT_TEST(test_hostile_latch),
    RDLT_TEST(test_hostile_release),
    RDLT_TEST(test_hostile_renewal_shape),
    RDLT_TEST(test_hostile_renewal_too_long),
    RDLT_TEST(test_hostile_renewal_element),
    RDLT_TEST(test_hostile_renewal_error),
    RDLT_TEST(test_hostile_batch_not_array),
    RDLT_TEST(test_hostile_batch_too_long),
    RDLT_TEST(test_hostile_batch_elements),
    RDLT_TEST(test_hostile_batch_short),
    RDLT_TEST(test_hostile_batch_redirect),
    RDLT_TEST(test_hostile_wrong_server_http),
    RDLT_TEST(test_hostile_wrong_server_noise),
    RDLT_TEST(test_hostile_wrong_server_silent),
};

RDLT_MAIN(tests)
