/* Reply mapping (src/core/reply.c): the one place that reads server reply
 * strings. Replies are built by hand, as hiredis's reader would build them
 * from the error texts Redis 7.0 sends. */
#include <string.h>

#include "rdlt.h"
#include "internal.h"

static redisReply reply(int type, const char *str)
{
    redisReply r;
    memset(&r, 0, sizeof(r));
    r.type = type;
    r.str = (char *)str;
    r.len = str != NULL ? strlen(str) : 0;
    return r;
}

static void expect_code(const char *err, int want)
{
    redisReply r = reply(REDIS_REPLY_ERROR, err);
    int got = rdl__reply_code(&r);
    if (got != want)
        fail_msg("\"%s\" -> %d (%s), expected %d (%s)", err, got,
                 rdl_err_name(got), want, rdl_err_name(want));
}

static void test_reply_error_words(void **state)
{
    (void)state;
    expect_code("NOSCRIPT No matching script. Please use EVAL.",
                RDL__ENOSCRIPT);
    expect_code("MOVED 3999 127.0.0.1:6381", RDL__EMOVED);
    expect_code("ASK 3999 127.0.0.1:6381", RDL__EASK);
    expect_code("TRYAGAIN Multiple keys request during rehashing of slot",
                RDL__ETRYAGAIN);
    expect_code("CLUSTERDOWN The cluster is down", RDL_ECLUSTERDOWN);
    expect_code("CLUSTERDOWN Hash slot not served", RDL_ECLUSTERDOWN);
    expect_code("READONLY You can't write against a read only replica.",
                RDL_EREADONLY);
    expect_code("NOAUTH Authentication required.", RDL_EAUTH);
    expect_code("WRONGPASS invalid username-password pair or user is "
                "disabled.",
                RDL_EAUTH);
    expect_code("OOM command not allowed when used memory > 'maxmemory'.",
                RDL_EOOM);
    expect_code("CROSSSLOT Keys in request don't hash to the same slot",
                RDL_ECROSSSLOT);
    expect_code("LOADING Redis is loading the dataset in memory",
                RDL__ELOADING);
}

static void test_reply_word_alone(void **state)
{
    (void)state;
    expect_code("NOSCRIPT", RDL__ENOSCRIPT);
    expect_code("MOVED", RDL__EMOVED);
    expect_code("READONLY", RDL_EREADONLY);
}

/* A word is matched whole: a longer word is something else. */
static void test_reply_word_boundaries(void **state)
{
    (void)state;
    expect_code("ASKING is not an error", RDL_ESERVER);
    expect_code("MOVEDX 1 h:1", RDL_ESERVER);
    expect_code("OOMPH", RDL_ESERVER);
    expect_code("ERR MOVED somewhere", RDL_ESERVER);
    expect_code("noauth lower case", RDL_ESERVER);
}

static void test_reply_other_errors(void **state)
{
    (void)state;
    expect_code("ERR unknown command 'FOO', with args beginning with: ",
                RDL_ESERVER);
    expect_code("ERR DB index is out of range", RDL_ESERVER);
    expect_code("WRONGTYPE Operation against a key holding the wrong kind "
                "of value",
                RDL_ESERVER);
    expect_code("ERR", RDL_ESERVER);
    expect_code("", RDL_ESERVER);
    /* Script failures as Redis 7.0 reports them. */
    expect_code("ERR user_script:12: Script attempted to access nonexistent "
                "global variable 'x' script: "
                "2f405679f0e2b8bd2bbbd06ba2bb2d5ab7a5b23a, on "
                "@user_script:12.",
                RDL_ESCRIPT);
    expect_code("ERR Error running script (call to "
                "f_2f405679f0e2b8bd2bbbd06ba2bb2d5ab7a5b23a): "
                "@user_script:1: oops",
                RDL_ESCRIPT);
    /* Redis < 6 had no WRONGPASS. */
    expect_code("ERR invalid password", RDL_EAUTH);
}

/* Before 7.0 an error raised by a command inside a script comes wrapped in
 * the script's own ERR: its code word is still the error's (a demoted
 * master's READONLY must send the Sentinel client looking for the new
 * one, not fail the call as a broken script). Texts of Redis 6.2.16. */
static void test_reply_script_wrapped_errors(void **state)
{
    (void)state;
    expect_code("ERR Error running script (call to "
                "f_ff967d0ae0e68b4f9e360fa91c54598bc25ad9b6): @user_script:1: "
                "@user_script: 1: -READONLY You can't write against a read "
                "only replica.",
                RDL_EREADONLY);
    expect_code("ERR Error running script (call to "
                "f_ff967d0ae0e68b4f9e360fa91c54598bc25ad9b6): @user_script:1: "
                "@user_script: 1: -OOM command not allowed when used memory "
                "> 'maxmemory'.",
                RDL_EOOM);
    /* A word that is no code of ours stays a script failure. */
    expect_code("ERR Error running script (call to f_1): @user_script:1: "
                "@user_script: 1: -WRONGTYPE Operation against a key",
                RDL_ESCRIPT);
    expect_code("ERR Error running script (call to f_1): @user_script:3: "
                "bad value -READONLY",
                RDL_ESCRIPT);
}

static void test_reply_non_errors(void **state)
{
    redisReply r;
    (void)state;
    r = reply(REDIS_REPLY_STATUS, "OK");
    assert_int_equal(rdl__reply_code(&r), 0);
    r = reply(REDIS_REPLY_STRING, "NOSCRIPT in a string is data");
    assert_int_equal(rdl__reply_code(&r), 0);
    r = reply(REDIS_REPLY_STATUS, "MOVED 1 h:1");
    assert_int_equal(rdl__reply_code(&r), 0);
    r = reply(REDIS_REPLY_NIL, NULL);
    assert_int_equal(rdl__reply_code(&r), 0);
    r = reply(REDIS_REPLY_INTEGER, NULL);
    r.integer = -1;
    assert_int_equal(rdl__reply_code(&r), 0);
    r = reply(REDIS_REPLY_ARRAY, NULL);
    assert_int_equal(rdl__reply_code(&r), 0);
}

static redisReply *push3(redisReply *el, redisReply **ptrs, redisReply *arr,
                         const char *kind, const char *chan, const char *msg)
{
    int i;
    el[0] = reply(REDIS_REPLY_STRING, kind);
    el[1] = reply(REDIS_REPLY_STRING, chan);
    el[2] = reply(REDIS_REPLY_STRING, msg);
    for (i = 0; i < 3; i++)
        ptrs[i] = &el[i];
    *arr = reply(REDIS_REPLY_ARRAY, NULL);
    arr->elements = 3;
    arr->element = ptrs;
    return arr;
}

static void test_reply_messages(void **state)
{
    redisReply el[4], *ptrs[4], arr;
    const char *chan = NULL, *msg = NULL;
    size_t chanlen = 0, msglen = 0;
    (void)state;

    push3(el, ptrs, &arr, "message", "rdl:lock.ch:{a}", "0");
    assert_int_equal(rdl__reply_message(&arr, &chan, &chanlen, &msg, &msglen),
                     1);
    assert_int_equal(chanlen, strlen("rdl:lock.ch:{a}"));
    assert_memory_equal(chan, "rdl:lock.ch:{a}", chanlen);
    assert_int_equal(msglen, 1);
    assert_memory_equal(msg, "0", 1);

    push3(el, ptrs, &arr, "smessage", "c", "1");
    assert_int_equal(rdl__reply_message(&arr, &chan, &chanlen, &msg, &msglen),
                     1);
    assert_memory_equal(chan, "c", 1);
    assert_memory_equal(msg, "1", 1);

    /* Subscription confirmations are not messages. */
    push3(el, ptrs, &arr, "subscribe", "c", NULL);
    el[2] = reply(REDIS_REPLY_INTEGER, NULL);
    el[2].integer = 1;
    assert_int_equal(rdl__reply_message(&arr, &chan, &chanlen, &msg, &msglen),
                     0);
    push3(el, ptrs, &arr, "ssubscribe", "c", NULL);
    el[2] = reply(REDIS_REPLY_INTEGER, NULL);
    assert_int_equal(rdl__reply_message(&arr, &chan, &chanlen, &msg, &msglen),
                     0);

    /* Pattern messages have four elements; rdl does not use them. */
    push3(el, ptrs, &arr, "pmessage", "p*", "c");
    el[3] = reply(REDIS_REPLY_STRING, "0");
    ptrs[3] = &el[3];
    arr.elements = 4;
    assert_int_equal(rdl__reply_message(&arr, &chan, &chanlen, &msg, &msglen),
                     0);

    /* Not arrays. */
    arr = reply(REDIS_REPLY_STRING, "message");
    assert_int_equal(rdl__reply_message(&arr, &chan, &chanlen, &msg, &msglen),
                     0);
    arr = reply(REDIS_REPLY_ERROR, "ERR message");
    assert_int_equal(rdl__reply_message(&arr, &chan, &chanlen, &msg, &msglen),
                     0);
    assert_int_equal(rdl__reply_message(NULL, &chan, &chanlen, &msg, &msglen),
                     0);
}

/* Payloads may hold any byte; lengths, not NUL, delimit them. */
static void test_reply_binary_payload(void **state)
{
    static const char payload[] = {'a', '\0', 'b'};
    redisReply el[3], *ptrs[3], arr;
    const char *chan, *msg;
    size_t chanlen, msglen;
    (void)state;
    push3(el, ptrs, &arr, "message", "c", "x");
    el[2].str = (char *)payload;
    el[2].len = sizeof(payload);
    assert_int_equal(rdl__reply_message(&arr, &chan, &chanlen, &msg, &msglen),
                     1);
    assert_int_equal(msglen, 3);
    assert_memory_equal(msg, payload, 3);
}

/* MOVED and ASK: slot and address, the port after the last ':'. */
static void expect_redirect(const char *err, unsigned slot, const char *host,
                            int port)
{
    redisReply r = reply(REDIS_REPLY_ERROR, err);
    char h[64] = "unset";
    unsigned s = 99999;
    int p = -1;
    if (!rdl__reply_redirect(&r, &s, h, sizeof(h), &p))
        fail_msg("\"%s\" not read as a redirect", err);
    assert_int_equal(s, slot);
    assert_string_equal(h, host);
    assert_int_equal(p, port);
}

static void expect_no_redirect(int type, const char *text)
{
    redisReply r = reply(type, text);
    char h[64];
    unsigned s;
    int p;
    if (rdl__reply_redirect(&r, &s, h, sizeof(h), &p))
        fail_msg("\"%s\" read as a redirect", text);
}

static void test_reply_redirects(void **state)
{
    (void)state;
    expect_redirect("MOVED 3999 127.0.0.1:6381", 3999, "127.0.0.1", 6381);
    expect_redirect("ASK 0 10.0.0.2:7000", 0, "10.0.0.2", 7000);
    expect_redirect("MOVED 16383 ::1:7001", 16383, "::1", 7001);
    expect_redirect("MOVED 12 node-a.example:6379", 12, "node-a.example", 6379);
    /* A node that does not know its address sends an empty host. */
    expect_redirect("MOVED 5 :7002", 5, "", 7002);
    expect_no_redirect(REDIS_REPLY_ERROR, "MOVED 16384 h:1");
    expect_no_redirect(REDIS_REPLY_ERROR, "MOVED x h:1");
    expect_no_redirect(REDIS_REPLY_ERROR, "MOVED 1 h");
    expect_no_redirect(REDIS_REPLY_ERROR, "MOVED 1 h:");
    expect_no_redirect(REDIS_REPLY_ERROR, "MOVED 1 h:0");
    expect_no_redirect(REDIS_REPLY_ERROR, "MOVED 1 h:65536");
    expect_no_redirect(REDIS_REPLY_ERROR, "MOVED 1 h:7x");
    expect_no_redirect(REDIS_REPLY_ERROR, "MOVED");
    expect_no_redirect(REDIS_REPLY_ERROR, "TRYAGAIN 1 h:1");
    expect_no_redirect(REDIS_REPLY_STATUS, "MOVED 1 h:1");
    /* A host longer than the caller's buffer is refused, not cut. */
    expect_no_redirect(REDIS_REPLY_ERROR,
                       "MOVED 1 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                       "aaaaaaaaaaaaaaaaaaaaaaaaaaaa:1");
}

/* A sharded unsubscribe, asked or pushed, has its own code. */
static void test_reply_sunsubscribe(void **state)
{
    redisReply el[3], *ptrs[3], arr;
    const char *chan = NULL;
    size_t chanlen = 0;
    (void)state;
    push3(el, ptrs, &arr, "sunsubscribe", "rdl:lock.ch:{a}", NULL);
    el[2] = reply(REDIS_REPLY_INTEGER, NULL);
    assert_int_equal(rdl__reply_code(&arr), RDL__REPLY_SUNSUBSCRIBE);
    assert_int_equal(rdl__reply_sunsubscribe(&arr, &chan, &chanlen), 1);
    assert_int_equal(chanlen, strlen("rdl:lock.ch:{a}"));
    assert_memory_equal(chan, "rdl:lock.ch:{a}", chanlen);
    push3(el, ptrs, &arr, "unsubscribe", "c", NULL);
    el[2] = reply(REDIS_REPLY_INTEGER, NULL);
    assert_int_equal(rdl__reply_code(&arr), 0);
    assert_int_equal(rdl__reply_sunsubscribe(&arr, &chan, &chanlen), 0);
    assert_int_equal(rdl__reply_sunsubscribe(NULL, &chan, &chanlen), 0);
}

/* An array reply of two strings, as Sentinel and ROLE send. */
static redisReply *pair(redisReply *el, redisReply **ptrs, redisReply *arr,
                        const char *a, const char *b)
{
    el[0] = reply(REDIS_REPLY_STRING, a);
    el[1] = reply(REDIS_REPLY_STRING, b);
    ptrs[0] = &el[0];
    ptrs[1] = &el[1];
    *arr = reply(REDIS_REPLY_ARRAY, NULL);
    arr->elements = 2;
    arr->element = ptrs;
    return arr;
}

/* TIME: [seconds, microseconds] as strings; anything else is -1. */
static void test_reply_time(void **state)
{
    redisReply el[2], *ptrs[2], arr, s = reply(REDIS_REPLY_STRING, "1");
    (void)state;
    assert_int_equal(
        rdl__reply_time_us(pair(el, ptrs, &arr, "1795562136", "226112")),
        1795562136226112LL);
    assert_int_equal(rdl__reply_time_us(pair(el, ptrs, &arr, "0", "0")), 0);
    assert_int_equal(
        rdl__reply_time_us(pair(el, ptrs, &arr, "17955", "1000000")), -1);
    assert_int_equal(rdl__reply_time_us(pair(el, ptrs, &arr, "-1", "5")), -1);
    assert_int_equal(rdl__reply_time_us(pair(el, ptrs, &arr, "12x", "5")), -1);
    assert_int_equal(rdl__reply_time_us(pair(el, ptrs, &arr, "", "5")), -1);
    assert_int_equal(rdl__reply_time_us(&s), -1);
    assert_int_equal(rdl__reply_time_us(NULL), -1);
}

static void test_reply_sentinel(void **state)
{
    redisReply el[2], *ptrs[2], arr, nil = reply(REDIS_REPLY_NIL, NULL);
    char host[64];
    int port = 0;
    (void)state;

    assert_int_equal(
        rdl__reply_master_addr(pair(el, ptrs, &arr, "10.0.0.5", "6380"), host,
                               sizeof(host), &port),
        1);
    assert_string_equal(host, "10.0.0.5");
    assert_int_equal(port, 6380);
    assert_int_equal(rdl__reply_master_addr(&nil, host, sizeof(host), &port),
                     0);
    assert_int_equal(rdl__reply_master_addr(pair(el, ptrs, &arr, "h", "0"),
                                            host, sizeof(host), &port),
                     -1);
    assert_int_equal(rdl__reply_master_addr(pair(el, ptrs, &arr, "h", "7x"),
                                            host, sizeof(host), &port),
                     -1);
    assert_int_equal(
        rdl__reply_role_master(pair(el, ptrs, &arr, "master", "1")), 1);
    assert_int_equal(rdl__reply_role_master(pair(el, ptrs, &arr, "slave", "h")),
                     0);
    assert_int_equal(rdl__reply_role_master(&nil), -1);

#define EVENT(ch, msg)                                                         \
    rdl__reply_sentinel_event(ch, strlen(ch), msg, strlen(msg), "mm", host,    \
                              sizeof(host), &port)
    assert_int_equal(EVENT("+switch-master", "mm 1.1.1.1 1 2.2.2.2 7002"), 1);
    assert_string_equal(host, "2.2.2.2");
    assert_int_equal(port, 7002);
    assert_int_equal(EVENT("+promoted-slave",
                           "slave 3.3.3.3:7003 3.3.3.3 7003 @ mm 1.1.1.1 1"),
                     1);
    assert_string_equal(host, "3.3.3.3");
    assert_int_equal(port, 7003);
    /* Another master's events, other channels, malformed payloads. */
    assert_int_equal(EVENT("+switch-master", "mmm 1.1.1.1 1 2.2.2.2 7002"), 0);
    assert_int_equal(EVENT("+promoted-slave",
                           "slave 3.3.3.3:7003 3.3.3.3 7003 @ other 1.1.1.1 1"),
                     0);
    assert_int_equal(EVENT("+sdown", "mm 1.1.1.1 1 2.2.2.2 7002"), 0);
    assert_int_equal(EVENT("+switch-master", "mm 1.1.1.1 1 2.2.2.2"), 0);
    assert_int_equal(EVENT("+switch-master", "mm 1.1.1.1 1 2.2.2.2 70000"), 0);
    assert_int_equal(EVENT("+switch-master", "mm 1 1 2.2.2.2 7 extra"), 0);
#undef EVENT
}

/* SENTINEL MASTER's config epoch and SENTINEL REPLICAS' count of replicas
 * up: flat [field, value, ...] arrays of strings. */
static void test_reply_sentinel_fields(void **state)
{
    redisReply f[6], *fp[6], m, rf[2][4], *rp[2][4], rep[2], *reps[2], all;
    const char *mf[6] = {"name", "mm", "config-epoch", "7", "flags", "master"};
    const char *flags[2] = {"slave", "s_down,slave,disconnected"};
    int i, j;
    (void)state;

    for (i = 0; i < 6; i++) {
        f[i] = reply(REDIS_REPLY_STRING, mf[i]);
        fp[i] = &f[i];
    }
    m = reply(REDIS_REPLY_ARRAY, NULL);
    m.element = fp;
    m.elements = 6;
    assert_int_equal(rdl__reply_sentinel_epoch(&m), 7);
    f[3] = reply(REDIS_REPLY_STRING, "7x");
    assert_int_equal(rdl__reply_sentinel_epoch(&m), -1);
    m.elements = 2; /* no config-epoch field */
    assert_int_equal(rdl__reply_sentinel_epoch(&m), -1);

    for (i = 0; i < 2; i++) {
        const char *v[4] = {"ip", "1.1.1.1", "flags", flags[i]};
        for (j = 0; j < 4; j++) {
            rf[i][j] = reply(REDIS_REPLY_STRING, v[j]);
            rp[i][j] = &rf[i][j];
        }
        rep[i] = reply(REDIS_REPLY_ARRAY, NULL);
        rep[i].element = rp[i];
        rep[i].elements = 4;
        reps[i] = &rep[i];
    }
    all = reply(REDIS_REPLY_ARRAY, NULL);
    all.element = reps;
    all.elements = 2;
    assert_int_equal(rdl__reply_sentinel_replicas_up(&all), 1);
    rf[1][3] = reply(REDIS_REPLY_STRING, "slave");
    assert_int_equal(rdl__reply_sentinel_replicas_up(&all), 2);
    rep[1].elements = 2; /* no flags */
    assert_int_equal(rdl__reply_sentinel_replicas_up(&all), -1);
}

/* Whether SENTINEL REPLICAS lists a replica at an address: the client's
 * own master among them means the answer is about another master. */
static void test_reply_sentinel_lists(void **state)
{
    redisReply rf[2][6], *rp[2][6], rep[2], *reps[2], all, nil;
    const char *ips[2] = {"1.1.1.1", "2.2.2.2"}, *ports[2] = {"7001", "7002"};
    int i, j;
    (void)state;

    for (i = 0; i < 2; i++) {
        const char *v[6] = {"ip", ips[i], "port", ports[i], "flags", "slave"};
        for (j = 0; j < 6; j++) {
            rf[i][j] = reply(REDIS_REPLY_STRING, v[j]);
            rp[i][j] = &rf[i][j];
        }
        rep[i] = reply(REDIS_REPLY_ARRAY, NULL);
        rep[i].element = rp[i];
        rep[i].elements = 6;
        reps[i] = &rep[i];
    }
    all = reply(REDIS_REPLY_ARRAY, NULL);
    all.element = reps;
    all.elements = 2;
    assert_int_equal(rdl__reply_sentinel_lists(&all, "2.2.2.2", 7002), 1);
    assert_int_equal(rdl__reply_sentinel_lists(&all, "1.1.1.1", 7001), 1);
    assert_int_equal(rdl__reply_sentinel_lists(&all, "1.1.1.1", 7002), 0);
    assert_int_equal(rdl__reply_sentinel_lists(&all, "1.1.1.10", 7001), 0);
    assert_int_equal(rdl__reply_sentinel_lists(&all, "1.1.1.", 7001), 0);
    rf[1][3] = reply(REDIS_REPLY_STRING, "7002x");
    assert_int_equal(rdl__reply_sentinel_lists(&all, "2.2.2.2", 7002), 0);
    all.elements = 0;
    assert_int_equal(rdl__reply_sentinel_lists(&all, "1.1.1.1", 7001), 0);
    nil = reply(REDIS_REPLY_NIL, NULL);
    assert_int_equal(rdl__reply_sentinel_lists(&nil, "1.1.1.1", 7001), 0);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_reply_sentinel_fields),
    RDLT_TEST(test_reply_sentinel),
    RDLT_TEST(test_reply_redirects),
    RDLT_TEST(test_reply_sunsubscribe),
    RDLT_TEST(test_reply_error_words),
    RDLT_TEST(test_reply_word_alone),
    RDLT_TEST(test_reply_word_boundaries),
    RDLT_TEST(test_reply_other_errors),
    RDLT_TEST(test_reply_non_errors),
    RDLT_TEST(test_reply_messages),
    RDLT_TEST(test_reply_binary_payload),
    RDLT_TEST(test_reply_time),
    RDLT_TEST(test_reply_sentinel_lists),
    RDLT_TEST(test_reply_script_wrapped_errors),
};

RDLT_MAIN(tests)
