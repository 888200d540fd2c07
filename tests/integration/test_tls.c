/* TLS (rediss://, rdl_client_set_tls): a throwaway CA and certificates
 * from the fixture, redis-server with --tls-port on loopback. Every
 * verification failure must fail the connect with RDL_ETLS and say what
 * failed; nothing may be sent before the server is verified. */
#include <pthread.h>
#include <string.h>

#include "rdlt.h"

#define A ((rdl_owner_t)1)
#define B ((rdl_owner_t)2)

/* A client for the server's TLS port with these options, not connected. */
static rdl_client_t *tls_client(rdlt_server *s, const rdl_tls_options_t *o)
{
    rdl_client_t *c = rdlt_client_new(rdlt_tls_url(s));
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 2000));
    if (o != NULL)
        rdlt_assert_ok(rdl_client_set_tls(c, o));
    return c;
}

/* Connects and expects `want`, with `says` in the message if it failed. */
static void expect_connect(rdl_client_t *c, int want, const char *says)
{
    int rc = rdl_client_connect(c);
    if (rc != want)
        fail_msg("connect: got %s (%s), expected %s", rdl_err_name(rc),
                 rdl_client_errmsg(c), rdl_err_name(want));
    if (says != NULL && strstr(rdl_client_errmsg(c), says) == NULL)
        fail_msg("connect: message \"%s\" does not say \"%s\"",
                 rdl_client_errmsg(c), says);
}

/* A lock taken and released over TLS: the whole protocol runs through the
 * session (scripts loaded, replies decoded). */
static void test_tls_connect_and_lock(void **state)
{
    const rdlt_pki *k = rdlt_pki_make();
    rdlt_server *s = rdlt_tls_server_start(k, k->server, 0, NULL);
    rdl_tls_options_t o = {.ca_file = k->ca};
    rdl_client_t *c = tls_client(s, &o);
    rdl_lock_t *l;
    uint64_t t1, t2;
    (void)state;

    expect_connect(c, 0, NULL);
    l = rdlt_lock(c, "tls");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000));
    t1 = rdl_lock_fencing_token(l, A);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000));
    t2 = rdl_lock_fencing_token(l, A);
    assert_true(t2 > t1);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    assert_int_equal(rdlt_count_held(s, "rdl:lock:*"), 0);
}

typedef struct waiter {
    rdl_lock_t *lock;
    int rc;
    int64_t waited;
} waiter;

static void *wait_for_lock(void *arg)
{
    waiter *w = arg;
    int64_t t0 = rdlt_now_ms();
    w->rc = rdl_lock_acquire_as(w->lock, B, 20000, 10000);
    w->waited = rdlt_now_ms() - t0;
    if (w->rc == 0)
        w->rc = rdl_lock_release_as(w->lock, B);
    return NULL;
}

static int subscribed(rdlt_server *s)
{
    redisReply *r = rdlt_cmd(s, "PUBSUB CHANNELS *");
    int n = r->type == REDIS_REPLY_ARRAY ? (int)r->elements : 0;
    freeReplyObject(r);
    return n > 0;
}

/* A waiter on a second TLS client is woken by the release's message over
 * its TLS subscriber connection, long before the holder's lease ends. */
static void test_tls_wakeup(void **state)
{
    const rdlt_pki *k = rdlt_pki_make();
    rdlt_server *s = rdlt_tls_server_start(k, k->server, 0, NULL);
    rdl_tls_options_t o = {.ca_file = k->ca};
    rdl_client_t *c1 = tls_client(s, &o), *c2 = tls_client(s, &o);
    rdl_lock_t *l1, *l2;
    rdl_client_stats_t st;
    waiter w = {0};
    rdlt_thread *t;
    (void)state;

    expect_connect(c1, 0, NULL);
    expect_connect(c2, 0, NULL);
    l1 = rdlt_lock(c1, "wake");
    l2 = rdlt_lock(c2, "wake");
    rdlt_assert_ok(rdl_lock_acquire_as(l1, A, 0, 60000));
    w.lock = l2;
    t = rdlt_thread_start(wait_for_lock, &w);
    /* Released once the waiter is registered and subscribed, so the
     * release's message goes out over its TLS subscriber connection. */
    while (rdlt_info(l1, A).waiters < 1 || !subscribed(s))
        rdlt_sleep_ms(5);
    rdlt_assert_ok(rdl_lock_release_as(l1, A));
    rdlt_thread_join(t);
    rdlt_assert_ok(w.rc);
    /* Woken by the message, not by the end of the 60 s lease. */
    assert_true(w.waited < 20000);
    rdlt_assert_ok(rdl_client_stats(c2, &st));
    assert_true(st.messages >= 1);
}

/* Zero-initialised options (and no options at all) verify against the
 * system's CAs, which do not know the test CA. */
static void test_tls_verifies_by_default(void **state)
{
    const rdlt_pki *k = rdlt_pki_make();
    rdlt_server *s = rdlt_tls_server_start(k, k->server, 0, NULL);
    rdl_tls_options_t zero = {0};
    (void)state;
    expect_connect(tls_client(s, NULL), RDL_ETLS, "trusted CA");
    expect_connect(tls_client(s, &zero), RDL_ETLS, "trusted CA");
}

static void test_tls_unknown_ca(void **state)
{
    const rdlt_pki *k = rdlt_pki_make();
    rdlt_server *s = rdlt_tls_server_start(k, k->untrusted, 0, NULL);
    rdl_tls_options_t o = {.ca_file = k->ca};
    (void)state;
    expect_connect(tls_client(s, &o), RDL_ETLS, "trusted CA");
}

/* The certificate names another host: refused, unless server_name says
 * which name to expect. */
static void test_tls_name_mismatch(void **state)
{
    const rdlt_pki *k = rdlt_pki_make();
    rdlt_server *s = rdlt_tls_server_start(k, k->wrong_name, 0, NULL);
    rdl_tls_options_t o = {.ca_file = k->ca};
    rdl_tls_options_t named = {.ca_file = k->ca,
                               .server_name = "elsewhere.example"};
    (void)state;
    expect_connect(tls_client(s, &o), RDL_ETLS, "does not match");
    expect_connect(tls_client(s, &named), 0, NULL);
}

/* 127.0.0.1 is matched against the certificate's IP entry; a host name
 * given as server_name against its DNS entry. */
static void test_tls_address_and_name(void **state)
{
    const rdlt_pki *k = rdlt_pki_make();
    rdlt_server *s = rdlt_tls_server_start(k, k->server, 0, NULL);
    rdl_tls_options_t by_name = {.ca_file = k->ca, .server_name = "localhost"};
    rdl_tls_options_t other = {.ca_file = k->ca, .server_name = "other.host"};
    (void)state;
    expect_connect(tls_client(s, &by_name), 0, NULL);
    expect_connect(tls_client(s, &other), RDL_ETLS, "does not match");
}

static void test_tls_expired(void **state)
{
    const rdlt_pki *k = rdlt_pki_make();
    rdlt_server *s = rdlt_tls_server_start(k, k->expired, 0, NULL);
    rdl_tls_options_t o = {.ca_file = k->ca};
    (void)state;
    expect_connect(tls_client(s, &o), RDL_ETLS, "expired");
}

/* insecure skips every check (testing only). */
static void test_tls_insecure(void **state)
{
    const rdlt_pki *k = rdlt_pki_make();
    rdlt_server *s = rdlt_tls_server_start(k, k->untrusted, 0, NULL);
    rdl_tls_options_t o = {.insecure = 1};
    rdl_client_t *c = tls_client(s, &o);
    rdl_lock_t *l;
    (void)state;
    expect_connect(c, 0, NULL);
    l = rdlt_lock(c, "insecure");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
}

/* Mutual TLS: no certificate, a certificate the server's CA did not sign,
 * and the right one. With TLS 1.3 the refusal comes after the client's
 * handshake, so only a connect that waits for a reply can report it. */
static void test_tls_client_certificate(void **state)
{
    const rdlt_pki *k = rdlt_pki_make();
    rdlt_server *s = rdlt_tls_server_start(k, k->server, 1, NULL);
    rdl_tls_options_t none = {.ca_file = k->ca};
    rdl_tls_options_t stranger = {.ca_file = k->ca,
                                  .cert_file = k->stranger,
                                  .key_file = k->stranger_key};
    rdl_tls_options_t good = {
        .ca_file = k->ca, .cert_file = k->client, .key_file = k->client_key};
    rdl_client_t *c;
    rdl_lock_t *l;
    (void)state;

    expect_connect(tls_client(s, &none), RDL_ETLS, "client certificate");
    expect_connect(tls_client(s, &stranger), RDL_ETLS, "client certificate");
    c = tls_client(s, &good);
    expect_connect(c, 0, NULL);
    l = rdlt_lock(c, "mtls");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
}

/* A TLS hello to a plaintext port gets no answer: the connect timeout
 * bounds the handshake, and the message suggests the cause. A plaintext
 * client on the TLS port is closed by the server. */
static void test_tls_wrong_port(void **state)
{
    const rdlt_pki *k = rdlt_pki_make();
    rdlt_server *s = rdlt_tls_server_start(k, k->server, 0, NULL);
    rdl_tls_options_t o = {.ca_file = k->ca};
    char url[64];
    rdl_client_t *c;
    int64_t t0;
    int rc;
    (void)state;

    snprintf(url, sizeof(url), "rediss://127.0.0.1:%d", rdlt_server_port(s));
    c = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_set_tls(c, &o));
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 300, 300));
    t0 = rdlt_now_ms();
    expect_connect(c, RDL_ETLS, "TLS port");
    assert_true(rdlt_now_ms() - t0 < 5000);

    snprintf(url, sizeof(url), "redis://127.0.0.1:%d", rdlt_server_tls_port(s));
    c = rdlt_client_new(url);
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 1000, 1000));
    rc = rdl_client_connect(c);
    assert_true(rc == RDL_ECONNLOST || rc == RDL_ECONNREFUSED);
    assert_non_null(strstr(rdl_client_errmsg(c), "rediss://"));
}

/* After a restart of the server every connection makes a new handshake,
 * and locking goes on. */
static void test_tls_server_restart(void **state)
{
    const rdlt_pki *k = rdlt_pki_make();
    rdlt_server *s = rdlt_tls_server_start(k, k->server, 1, NULL);
    rdl_tls_options_t o = {
        .ca_file = k->ca, .cert_file = k->client, .key_file = k->client_key};
    rdl_client_t *c = tls_client(s, &o);
    rdl_lock_t *l;
    rdl_client_stats_t st;
    int rc = -1, i;
    (void)state;

    expect_connect(c, 0, NULL);
    l = rdlt_lock(c, "restart");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    rdlt_server_stop(s);
    rdlt_server_restart(s);
    for (i = 0; i < 50 && rc != 0; i++) {
        rc = rdl_lock_acquire_as(l, A, 0, 10000);
        if (rc != 0)
            rdlt_sleep_ms(50);
    }
    rdlt_assert_ok(rc);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    rdlt_assert_ok(rdl_client_stats(c, &st));
    assert_true(st.connects >= 2);
}

/* Bad options are reported by rdl_client_set_tls() itself, and leave the
 * client as it was. */
static void test_tls_bad_options(void **state)
{
    const rdlt_pki *k = rdlt_pki_make();
    rdl_client_t *c = rdlt_client_new("rediss://127.0.0.1:1");
    rdl_tls_options_t missing = {.ca_file = "/nonexistent/ca.pem"};
    rdl_tls_options_t no_dir = {.ca_dir = "/nonexistent/dir"};
    rdl_tls_options_t wrong_key = {.cert_file = k->client,
                                   .key_file = k->server_key};
    rdl_tls_options_t key_only = {.key_file = k->client_key};
    rdl_tls_options_t no_cert = {.cert_file = "/nonexistent/c.pem"};
    (void)state;

    rdlt_assert_rc(rdl_client_set_tls(c, &missing), RDL_ETLS);
    assert_non_null(strstr(rdl_client_errmsg(c), "/nonexistent/ca.pem"));
    rdlt_assert_rc(rdl_client_set_tls(c, &wrong_key), RDL_ETLS);
    assert_non_null(strstr(rdl_client_errmsg(c), k->server_key));
    rdlt_assert_rc(rdl_client_set_tls(c, &key_only), RDL_ETLS);
    rdlt_assert_rc(rdl_client_set_tls(c, &no_cert), RDL_ETLS);
    assert_non_null(strstr(rdl_client_errmsg(c), "/nonexistent/c.pem"));
    /* A CA directory is looked into only when a certificate is checked. */
    rdlt_assert_ok(rdl_client_set_tls(c, &no_dir));
    rdlt_assert_ok(rdl_client_set_tls(c, NULL));
    rdlt_assert_rc(rdl_client_set_tls(NULL, &missing), RDL_EINVAL);
}

/* Options are configuration: refused once connected. */
static void test_tls_options_after_connect(void **state)
{
    const rdlt_pki *k = rdlt_pki_make();
    rdlt_server *s = rdlt_tls_server_start(k, k->server, 0, NULL);
    rdl_tls_options_t o = {.ca_file = k->ca};
    rdl_client_t *c = tls_client(s, &o);
    (void)state;
    expect_connect(c, 0, NULL);
    rdlt_assert_rc(rdl_client_set_tls(c, &o), RDL_EINVAL);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_tls_connect_and_lock),
    RDLT_TEST(test_tls_wakeup),
    RDLT_TEST(test_tls_verifies_by_default),
    RDLT_TEST(test_tls_unknown_ca),
    RDLT_TEST(test_tls_name_mismatch),
    RDLT_TEST(test_tls_address_and_name),
    RDLT_TEST(test_tls_expired),
    RDLT_TEST(test_tls_insecure),
    RDLT_TEST(test_tls_client_certificate),
    RDLT_TEST(test_tls_wrong_port),
    RDLT_TEST(test_tls_server_restart),
    RDLT_TEST(test_tls_bad_options),
    RDLT_TEST(test_tls_options_after_connect),
};

RDLT_MAIN(tests)
