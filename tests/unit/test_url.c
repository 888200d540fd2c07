/* URL parsing (src/core/url.c): the forms of client.h, and a message that
 * says what is wrong with every rejected one. */
#include <string.h>

#include "rdlt.h"
#include "internal.h"

static void expect_ok(const char *text, const char *host, int port,
                      const char *user, const char *pass, int db)
{
    rdl__url u;
    char err[256] = "";
    int rc = rdl__url_parse(text, &u, err, sizeof(err));
    if (rc != 0)
        fail_msg("\"%s\": %s (%s)", text, rdl_err_name(rc), err);
    assert_non_null(u.host);
    assert_string_equal(u.host, host);
    assert_int_equal(u.port, port);
    if (user == NULL)
        assert_null(u.user);
    else
        assert_string_equal(u.user, user);
    if (pass == NULL)
        assert_null(u.pass);
    else
        assert_string_equal(u.pass, pass);
    assert_int_equal(u.db, db);
    rdl__url_clear(&u);
    assert_null(u.host);
    assert_null(u.user);
    assert_null(u.pass);
}

static void expect_bad(const char *text, int want)
{
    /* On failure `out` must be untouched. */
    char marker[] = "untouched";
    rdl__url u = {
        .host = marker, .port = 4242, .user = marker, .pass = marker, .db = 42};
    char err[256] = "";
    int rc = rdl__url_parse(text, &u, err, sizeof(err));
    if (rc != want)
        fail_msg("\"%s\": got %s, expected %s", text ? text : "(null)",
                 rdl_err_name(rc), rdl_err_name(want));
    if (err[0] == '\0')
        fail_msg("\"%s\": rejected without a message", text ? text : "(null)");
    assert_ptr_equal(u.host, marker);
    assert_ptr_equal(u.user, marker);
    assert_ptr_equal(u.pass, marker);
    assert_int_equal(u.port, 4242);
    assert_int_equal(u.db, 42);
}

static void test_url_host_port_db(void **state)
{
    (void)state;
    expect_ok("redis://localhost", "localhost", 6379, NULL, NULL, 0);
    expect_ok("redis://127.0.0.1:6380", "127.0.0.1", 6380, NULL, NULL, 0);
    expect_ok("redis://127.0.0.1:6380/2", "127.0.0.1", 6380, NULL, NULL, 2);
    expect_ok("redis://h/15", "h", 6379, NULL, NULL, 15);
    expect_ok("redis://h/", "h", 6379, NULL, NULL, 0);
    expect_ok("redis://h:1", "h", 1, NULL, NULL, 0);
    expect_ok("redis://h:65535", "h", 65535, NULL, NULL, 0);
    expect_ok("redis://redis.example.com:7000/0", "redis.example.com", 7000,
              NULL, NULL, 0);
}

static void test_url_credentials(void **state)
{
    (void)state;
    expect_ok("redis://alice:secret@h:6380/1", "h", 6380, "alice", "secret", 1);
    expect_ok("redis://:secret@h", "h", 6379, NULL, "secret", 0);
    /* Percent-encoding in user and password. */
    expect_ok("redis://al%69ce:p%40ss%3Aw%2Fd@h", "h", 6379, "alice",
              "p@ss:w/d", 0);
    expect_ok("redis://:%25%7b%7D@h", "h", 6379, NULL, "%{}", 0);
    /* A raw '@' in a password: the user information ends at the last. */
    expect_ok("redis://:p@ss@h", "h", 6379, NULL, "p@ss", 0);
}

static void test_url_ipv6(void **state)
{
    (void)state;
    expect_ok("redis://[::1]:6380", "::1", 6380, NULL, NULL, 0);
    expect_ok("redis://[::1]", "::1", 6379, NULL, NULL, 0);
    expect_ok("redis://u:p@[fe80::1:2]:7/3", "fe80::1:2", 7, "u", "p", 3);
}

static void test_url_bad_scheme_or_host(void **state)
{
    (void)state;
    expect_bad(NULL, RDL_EINVAL);
    expect_bad("", RDL_EINVAL);
    expect_bad("localhost:6379", RDL_EINVAL);
    expect_bad("http://localhost", RDL_EINVAL);
    expect_bad("redis:/localhost", RDL_EINVAL);
    expect_bad("redis://", RDL_EINVAL);
    expect_bad("redis://:6379", RDL_EINVAL);
    expect_bad("redis:///0", RDL_EINVAL);
    expect_bad("redis://u:p@", RDL_EINVAL);
    expect_bad("redis://[]:6379", RDL_EINVAL);
    expect_bad("redis://[::1:6379", RDL_EINVAL);
    expect_bad("redis://[::1]x", RDL_EINVAL);
    expect_bad("redis://lo calhost", RDL_EINVAL);
}

static void test_url_bad_port(void **state)
{
    (void)state;
    expect_bad("redis://h:0", RDL_EINVAL);
    expect_bad("redis://h:65536", RDL_EINVAL);
    expect_bad("redis://h:99999999999999999999", RDL_EINVAL);
    expect_bad("redis://h:abc", RDL_EINVAL);
    expect_bad("redis://h:-1", RDL_EINVAL);
    expect_bad("redis://h:+1", RDL_EINVAL);
    expect_bad("redis://h:", RDL_EINVAL);
    expect_bad("redis://h:6379x", RDL_EINVAL);
    expect_bad("redis://h: 6379", RDL_EINVAL);
    expect_bad("redis://[::1]:", RDL_EINVAL);
}

static void test_url_bad_db(void **state)
{
    (void)state;
    expect_bad("redis://h/-1", RDL_EINVAL);
    expect_bad("redis://h/abc", RDL_EINVAL);
    expect_bad("redis://h/1x", RDL_EINVAL);
    expect_bad("redis://h/1/2", RDL_EINVAL);
    expect_bad("redis://h:6379/0 ", RDL_EINVAL);
    expect_bad("redis://h/2147483648", RDL_EINVAL);
    expect_bad("redis://h/99999999999999999999", RDL_EINVAL);
}

static void test_url_bad_credentials(void **state)
{
    (void)state;
    expect_bad("redis://:@h", RDL_EINVAL);
    expect_bad("redis://u:p%4@h", RDL_EINVAL);
    expect_bad("redis://u:p%zz@h", RDL_EINVAL);
    expect_bad("redis://u%:p@h", RDL_EINVAL);
}

/* Parses a cluster URL and checks its seeds against "host:port,...". */
static void expect_seeds(const char *text, const char *want, const char *user,
                         const char *pass)
{
    rdl__url u;
    char err[256] = "", got[512] = "";
    size_t i, n = 0;
    int rc = rdl__url_parse(text, &u, err, sizeof(err));
    if (rc != 0)
        fail_msg("\"%s\": %s (%s)", text, rdl_err_name(rc), err);
    assert_true(u.cluster);
    for (i = 0; i < u.nseeds; i++)
        n += (size_t)snprintf(got + n, sizeof(got) - n, "%s%s:%d", i ? "," : "",
                              u.seeds[i].host, u.seeds[i].port);
    if (strcmp(got, want) != 0)
        fail_msg("\"%s\": seeds \"%s\", expected \"%s\"", text, got, want);
    /* The first seed is also the URL's host:port. */
    assert_string_equal(u.host, u.seeds[0].host);
    assert_int_equal(u.port, u.seeds[0].port);
    if (user == NULL)
        assert_null(u.user);
    else
        assert_string_equal(u.user, user);
    if (pass == NULL)
        assert_null(u.pass);
    else
        assert_string_equal(u.pass, pass);
    assert_int_equal(u.db, 0);
    rdl__url_clear(&u);
    assert_null(u.seeds);
    assert_int_equal(u.nseeds, 0);
    assert_false(u.cluster);
}

static void test_url_cluster_seeds(void **state)
{
    (void)state;
    expect_seeds("redis+cluster://127.0.0.1:7000", "127.0.0.1:7000", NULL,
                 NULL);
    expect_seeds("redis+cluster://a:7000,b:7001,c", "a:7000,b:7001,c:6379",
                 NULL, NULL);
    expect_seeds("redis+cluster://u:p%40w@a:1,[::1]:2/", "a:1,::1:2", "u",
                 "p@w");
    expect_seeds("redis+cluster://:pw@h/0", "h:6379", NULL, "pw");
    expect_bad("redis+cluster://", RDL_EINVAL);
    expect_bad("redis+cluster://a:1,", RDL_EINVAL);
    expect_bad("redis+cluster://a:1,,b:2", RDL_EINVAL);
    expect_bad("redis+cluster://a:1,b:0", RDL_EINVAL);
    expect_bad("redis+cluster://a:1,b:x", RDL_EINVAL);
    expect_bad("redis+cluster://a:1/1", RDL_EINVAL);
    expect_bad("redis+cluster://a:1,[::1", RDL_EINVAL);
    expect_bad("redis+cluster://a:1,b:2,", RDL_EINVAL);
    /* A comma is a cluster URL's separator only. */
    expect_bad("redis://a:1,b:2", RDL_EINVAL);
    {
        char many[1024] = "redis+cluster://h";
        int i;
        for (i = 0; i < RDL__URL_SEEDS_MAX; i++)
            strcat(many, ",h");
        expect_bad(many, RDL_EINVAL);
    }
}

/* The same rules through the public call, which must leave the client
 * usable and explain the rejection. */
static void test_url_client_set_url(void **state)
{
    rdl_client_t *c = NULL;
    (void)state;
    rdlt_assert_ok(rdl_client_new(&c));
    assert_non_null(c);
    rdlt_assert_rc(rdl_client_set_url(c, "redis://h:0"), RDL_EINVAL);
    assert_true(strlen(rdl_client_errmsg(c)) > 0);
    rdlt_assert_rc(rdl_client_set_url(c, NULL), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_url(c, "redis+tls://h:1"), RDL_EINVAL);
    assert_true(strlen(rdl_client_errmsg(c)) > 0);
#ifdef RDL_WITH_TLS
    rdlt_assert_ok(rdl_client_set_url(c, "rediss://h:1"));
#else
    rdlt_assert_rc(rdl_client_set_url(c, "rediss://h:1"), RDL_ENOTSUP);
#endif
    rdlt_assert_ok(rdl_client_set_url(c, "redis+cluster://h:1,h:2"));
    rdlt_assert_ok(rdl_client_set_url(c, "redis://u:p@h:7/1"));
    rdlt_assert_ok(rdl_client_set_url(c, "redis://[::1]:6380"));
    rdlt_assert_rc(rdl_client_set_url(NULL, "redis://h"), RDL_EINVAL);
    rdl_client_free(c);
}

#ifdef RDL_WITH_TLS
/* rediss:// and rediss+cluster:// are the plain forms over TLS. */
static void test_url_tls(void **state)
{
    char err[256] = "";
    rdl__url u;
    (void)state;
    assert_int_equal(
        rdl__url_parse("rediss://u:p@h:6380/3", &u, err, sizeof(err)), 0);
    assert_true(u.tls);
    assert_false(u.cluster);
    assert_string_equal(u.host, "h");
    assert_int_equal(u.port, 6380);
    assert_int_equal(u.db, 3);
    rdl__url_clear(&u);
    assert_false(u.tls);
    assert_int_equal(
        rdl__url_parse("rediss+cluster://a:1,b:2", &u, err, sizeof(err)), 0);
    assert_true(u.tls);
    assert_true(u.cluster);
    assert_int_equal(u.nseeds, 2);
    rdl__url_clear(&u);
    assert_int_equal(rdl__url_parse("redis://h", &u, err, sizeof(err)), 0);
    assert_false(u.tls);
    rdl__url_clear(&u);
    expect_bad("rediss:/h", RDL_EINVAL);
    expect_bad("rediss+cluster://a:1/2", RDL_EINVAL);
    expect_bad("rediss+cluster://a:1,", RDL_EINVAL);
}
#else
/* A build without TLS refuses rediss URLs and says why. */
static void test_url_tls(void **state)
{
    (void)state;
    expect_bad("rediss://h", RDL_ENOTSUP);
    expect_bad("rediss+cluster://a:1", RDL_ENOTSUP);
}
#endif

/* redis+sentinel://: the sentinels (port 26379 by default), the master's
 * name, a database, and the sentinels' own credentials in the query. */
static void test_url_sentinel(void **state)
{
    char err[256] = "";
    rdl__url u;
    (void)state;
    assert_int_equal(rdl__url_parse("redis+sentinel://:pw@a,b:5000/mymaster/2"
                                    "?sentinel_user=su&sentinel_password=s%40p",
                                    &u, err, sizeof(err)),
                     0);
    assert_true(u.sentinel);
    assert_false(u.cluster);
    assert_false(u.tls);
    assert_int_equal(u.nseeds, 2);
    assert_string_equal(u.seeds[0].host, "a");
    assert_int_equal(u.seeds[0].port, 26379);
    assert_string_equal(u.seeds[1].host, "b");
    assert_int_equal(u.seeds[1].port, 5000);
    assert_string_equal(u.master, "mymaster");
    assert_int_equal(u.db, 2);
    assert_null(u.user);
    assert_string_equal(u.pass, "pw");
    assert_string_equal(u.sentinel_user, "su");
    assert_string_equal(u.sentinel_pass, "s@p");
    rdl__url_clear(&u);
    assert_null(u.master);
    assert_false(u.sentinel);
    assert_int_equal(
        rdl__url_parse("redis+sentinel://[::1]:1/m", &u, err, sizeof(err)), 0);
    assert_null(u.sentinel_pass);
    assert_int_equal(u.db, 0);
    rdl__url_clear(&u);
    expect_bad("redis+sentinel://a:1", RDL_EINVAL);    /* no master */
    expect_bad("redis+sentinel://a:1/", RDL_EINVAL);   /* empty name */
    expect_bad("redis+sentinel://a:1//0", RDL_EINVAL); /* empty name */
    expect_bad("redis+sentinel://a:1/m/x", RDL_EINVAL);
    expect_bad("redis+sentinel://a:1/m?nope=1", RDL_EINVAL);
    expect_bad("redis+sentinel://a:1/m?sentinel_user=u", RDL_EINVAL);
    expect_bad("redis+sentinel://a:1/m?sentinel_password=%4", RDL_EINVAL);
    expect_bad("redis://a:1/0?sentinel_password=p", RDL_EINVAL);
    expect_bad("redis+sentinel://a:1,/m", RDL_EINVAL);
    expect_bad("redis+sentinel://a:1/m#f", RDL_EINVAL);
#ifdef RDL_WITH_TLS
    assert_int_equal(
        rdl__url_parse("rediss+sentinel://a/m", &u, err, sizeof(err)), 0);
    assert_true(u.tls);
    assert_true(u.sentinel);
    rdl__url_clear(&u);
#else
    expect_bad("rediss+sentinel://a/m", RDL_ENOTSUP);
#endif
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_url_sentinel),
    RDLT_TEST(test_url_tls),
    RDLT_TEST(test_url_host_port_db),
    RDLT_TEST(test_url_credentials),
    RDLT_TEST(test_url_ipv6),
    RDLT_TEST(test_url_bad_scheme_or_host),
    RDLT_TEST(test_url_bad_port),
    RDLT_TEST(test_url_bad_db),
    RDLT_TEST(test_url_bad_credentials),
    RDLT_TEST(test_url_cluster_seeds),
    RDLT_TEST(test_url_client_set_url),
};

RDLT_MAIN(tests)
