/* rdl_client_list_locks() on one server: every lock kind listed once with
 * its kind, free locks while their keys last, nothing else (latches,
 * auxiliary keys, other prefixes, keys of other layouts); names that open
 * their locks again; the pattern, the early stop, the argument and state
 * errors, the server clock, and a listing of several SCAN pages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uv.h>

#include "rdlt.h"

#define A ((rdl_owner_t)1)

/* What the callback saw, copied. */
typedef struct listing {
    size_t n, cap;
    char **names;
    char **kinds;
    int64_t *server_us;
    size_t stop_after; /* 0: never stop */
} listing;

static void listing_free(void *p)
{
    listing *l = p;
    size_t i;
    for (i = 0; i < l->n; i++) {
        free(l->names[i]);
        free(l->kinds[i]);
    }
    free(l->names);
    free(l->kinds);
    free(l->server_us);
    free(l);
}

static listing *listing_new(void)
{
    listing *l = calloc(1, sizeof(*l));
    assert_non_null(l);
    rdlt_defer(listing_free, l);
    return l;
}

/* No cmocka here: a failure to copy shows as a short listing. */
static int on_lock(const rdl_lock_entry_t *e, void *data)
{
    listing *l = data;
    if (l->n == l->cap) {
        size_t cap = l->cap > 0 ? 2 * l->cap : 16;
        char **names = realloc(l->names, cap * sizeof(*names));
        char **kinds = names ? realloc(l->kinds, cap * sizeof(*kinds)) : NULL;
        int64_t *us = kinds ? realloc(l->server_us, cap * sizeof(*us)) : NULL;
        if (names != NULL)
            l->names = names;
        if (kinds != NULL)
            l->kinds = kinds;
        if (us == NULL)
            return 1;
        l->server_us = us;
        l->cap = cap;
    }
    l->names[l->n] = strdup(e->name);
    l->kinds[l->n] = strdup(e->kind);
    l->server_us[l->n] = e->server_us;
    l->n++;
    return l->stop_after != 0 && l->n >= l->stop_after;
}

static listing *list(rdl_client_t *c, const char *pattern)
{
    listing *l = listing_new();
    rdlt_assert_ok(rdl_client_list_locks(c, pattern, on_lock, l));
    return l;
}

/* The listing as "name/kind name/kind ...", to compare in one go. */
static char *text(const listing *l)
{
    size_t i, len = 1;
    char *t, *p;
    for (i = 0; i < l->n; i++)
        len += strlen(l->names[i]) + strlen(l->kinds[i]) + 2;
    p = t = malloc(len);
    assert_non_null(t);
    *p = '\0';
    for (i = 0; i < l->n; i++)
        p += sprintf(p, "%s%s/%s", i > 0 ? " " : "", l->names[i], l->kinds[i]);
    return t;
}

static void expect_listing(const listing *l, const char *want)
{
    char *got = text(l);
    if (strcmp(got, want) != 0) {
        print_error("listed: %s\nwanted: %s\n", got, want);
        free(got);
        fail_msg("the listing differs");
    }
    free(got);
}

static void free_lock(void *l)
{
    rdl_lock_free(l);
}

static void free_rwlock(void *rw)
{
    rdl_rwlock_free(rw);
}

static void free_latch(void *l)
{
    rdl_latch_free(l);
}

static int64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void test_list_empty_server(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    size_t masters = 9;
    (void)state;

    expect_listing(list(c, NULL), "");
    rdlt_assert_ok(rdl_client_master_count(c, &masters));
    assert_int_equal(masters, 1);
}

/* Held and free locks of every kind, once each, sorted by name; a
 * read-write lock held by a reader shows by its hold key and its fence,
 * a free one by its fence only. Latches, auxiliary keys, keys of another
 * prefix and keys the library does not make are left out. */
static void test_list_every_kind_once(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_client_t *other = rdlt_client_new(rdlt_server_url(s));
    rdl_lock_t *held = rdlt_lock(c, "held"), *freed = rdlt_lock(c, "freed");
    rdl_lock_t *fair = NULL, *sem = NULL, *alien;
    rdl_rwlock_t *rd = NULL, *rwfree = NULL;
    rdl_latch_t *latch = NULL;
    int64_t before = wall_us();
    listing *l;
    size_t i;
    (void)state;

    rdlt_assert_ok(rdl_fairlock_new(c, "fair", &fair));
    rdlt_defer(free_lock, fair);
    rdlt_assert_ok(rdl_semaphore_new(c, "sem", 3, &sem));
    rdlt_defer(free_lock, sem);
    rdlt_assert_ok(rdl_rwlock_new(c, "reading", &rd));
    rdlt_defer(free_rwlock, rd);
    rdlt_assert_ok(rdl_rwlock_new(c, "rwfree", &rwfree));
    rdlt_defer(free_rwlock, rwfree);
    rdlt_assert_ok(rdl_latch_new(c, "latch", &latch));
    rdlt_defer(free_latch, latch);

    rdlt_assert_ok(rdl_lock_acquire_as(held, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_acquire_as(freed, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(freed, A));
    rdlt_assert_ok(rdl_lock_acquire_as(fair, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_acquire_as(sem, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_acquire_as(rdl_rwlock_read(rd), A, 0, 30000));
    rdlt_assert_ok(rdl_lock_acquire_as(rdl_rwlock_write(rwfree), A, 0, 30000));
    rdlt_assert_ok(rdl_lock_release_as(rdl_rwlock_write(rwfree), A));
    rdlt_assert_ok(rdl_latch_set(latch, 2, 30000));
    /* The keys that must not show. */
    rdlt_assert_ok(rdl_client_set_prefix(other, "rdlx"));
    rdlt_assert_ok(rdl_client_connect(other));
    alien = rdlt_lock(other, "alien");
    rdlt_assert_ok(rdl_lock_acquire_as(alien, A, 0, 30000));
    freeReplyObject(rdlt_cmd(s, "SET rdl:lock:untagged x"));
    freeReplyObject(rdlt_cmd(s, "SET rdl:unrelated x"));
    freeReplyObject(rdlt_cmd(s, "SET rdl:lock.x:{held} x"));
    freeReplyObject(rdlt_cmd(s, "SET other:lock:{held} x"));
    assert_true(rdlt_count_keys(s, "rdl:rw:*") == 1);
    assert_true(rdlt_count_keys(s, "rdl:rw.fence:*") == 2);

    l = list(c, NULL);
    expect_listing(l, "fair/fair freed/lock held/lock reading/rwlock "
                      "rwfree/rwlock sem/semaphore");
    for (i = 0; i < l->n; i++)
        rdlt_assert_between(l->server_us[i], before - 5000000,
                            wall_us() + 5000000);
    /* The other prefix sees its own lock only. */
    expect_listing(list(other, NULL), "alien/lock");
}

static void test_list_pattern(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    const char *names[] = {"deploy", "db", "encode", "x*y", "nightly"};
    size_t i;
    (void)state;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        rdl_lock_t *l = rdlt_lock(c, names[i]);
        rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    }
    expect_listing(list(c, "d*"), "db/lock deploy/lock");
    expect_listing(list(c, "*o[dy]*"), "deploy/lock encode/lock");
    expect_listing(list(c, "x\\*y"), "x*y/lock");
    expect_listing(list(c, "zz*"), "");
    expect_listing(list(c, "*"),
                   "db/lock deploy/lock encode/lock nightly/lock x*y/lock");
}

/* A name with a tag of its own keeps it; one that starts with '{' comes
 * back whole; either opens its lock (the same token). */
static void test_list_names_round_trip(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    const char *names[] = {"{order:42}:stock", "{abc", "a}b", "sp ace"};
    uint64_t tokens[4];
    listing *l;
    size_t i, j;
    (void)state;

    for (i = 0; i < 4; i++) {
        rdl_lock_t *lk = rdlt_lock(c, names[i]);
        rdlt_assert_ok(rdl_lock_acquire_as(lk, A, 0, 30000));
        tokens[i] = rdl_lock_fencing_token(lk, A);
    }
    l = list(c, NULL);
    expect_listing(l, "a}b/lock sp ace/lock {abc/lock {order:42}:stock/lock");
    for (i = 0; i < l->n; i++) {
        rdl_lock_t *again = rdlt_lock(c, l->names[i]);
        rdl_lock_info_t info = rdlt_info(again, A);
        for (j = 0; j < 4 && strcmp(names[j], l->names[i]) != 0; j++)
            ;
        assert_true(j < 4);
        assert_true(info.locked);
        assert_true(info.held_by_owner);
        assert_int_equal(info.fencing_token, tokens[j]);
    }
}

/* A nonzero return ends the listing, which still succeeds. */
static void test_list_callback_stops(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    listing *l = listing_new();
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(rdlt_lock(c, "a"), A, 0, 30000));
    rdlt_assert_ok(rdl_lock_acquire_as(rdlt_lock(c, "b"), A, 0, 30000));
    rdlt_assert_ok(rdl_lock_acquire_as(rdlt_lock(c, "c"), A, 0, 30000));
    l->stop_after = 2;
    rdlt_assert_ok(rdl_client_list_locks(c, NULL, on_lock, l));
    expect_listing(l, "a/lock b/lock");
}

static void test_list_bad_arguments_and_states(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_client_t *fresh = rdlt_client_new(rdlt_server_url(s));
    listing *l = listing_new();
    size_t n = 9;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(rdlt_lock(c, "a"), A, 0, 30000));
    rdlt_assert_rc(rdl_client_list_locks(NULL, NULL, on_lock, l), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_list_locks(c, NULL, NULL, l), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_master_count(NULL, &n), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_master_count(c, NULL), RDL_EINVAL);
    /* Not connected yet (RDL_ENOTCONN), then closed (RDL_ECLOSED). */
    rdlt_assert_rc(rdl_client_list_locks(fresh, NULL, on_lock, l),
                   RDL_ENOTCONN);
    rdlt_assert_ok(rdl_client_close(c));
    rdlt_assert_rc(rdl_client_list_locks(c, NULL, on_lock, l), RDL_ECLOSED);
    assert_true(strlen(rdl_client_errmsg(c)) > 0);
    rdlt_assert_rc(rdl_client_master_count(c, &n), RDL_ECLOSED);
    assert_int_equal(n, 0);
    assert_int_equal(l->n, 0);
}

typedef struct loop_ctx {
    rdl_client_t *c;
    listing *l;
    int rc_list, rc_count;
    size_t n;
} loop_ctx;

static void do_list(void *arg)
{
    loop_ctx *x = arg;
    x->rc_list = rdl_client_list_locks(x->c, NULL, on_lock, x->l);
    x->rc_count = rdl_client_master_count(x->c, &x->n);
}

/* It blocks: on the client's loop thread it would wait for itself. */
static void test_list_loop_thread_is_edeadlk(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdlt_loop *lp = rdlt_loop_start();
    loop_ctx x;
    (void)state;

    memset(&x, 0, sizeof(x));
    x.l = listing_new();
    x.c = rdlt_client_new(rdlt_server_url(s));
    rdlt_assert_ok(rdl_client_set_loop(x.c, rdlt_loop_uv(lp)));
    rdlt_loop_connect(lp, x.c);
    rdlt_assert_ok(rdl_lock_acquire_as(rdlt_lock(x.c, "a"), A, 0, 30000));
    rdlt_loop_call(lp, do_list, &x);
    rdlt_assert_rc(x.rc_list, RDL_EDEADLK);
    rdlt_assert_rc(x.rc_count, RDL_EDEADLK);
    assert_int_equal(x.l->n, 0);
    /* From another thread it works. */
    expect_listing(list(x.c, NULL), "a/lock");
}

/* More keys than one SCAN page holds: every lock once, in order. */
static void test_list_several_pages(void **state)
{
    enum { N = 2500 };
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = NULL;
    long long scans;
    listing *got;
    char name[32];
    size_t i;
    (void)state;

    for (i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "page-%05zu", i);
        rdlt_assert_ok(rdl_lock_new(c, name, &l));
        rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 60000));
        rdl_lock_free(l);
    }
    scans = rdlt_cmd_calls(s, "scan");
    got = list(c, "page-*");
    assert_int_equal(got->n, N);
    for (i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "page-%05zu", i);
        assert_string_equal(got->names[i], name);
        assert_string_equal(got->kinds[i], "lock");
    }
    /* 1000 keys a page at most. */
    assert_true(rdlt_cmd_calls(s, "scan") - scans >= 3);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_list_empty_server),
    RDLT_TEST(test_list_every_kind_once),
    RDLT_TEST(test_list_pattern),
    RDLT_TEST(test_list_names_round_trip),
    RDLT_TEST(test_list_callback_stops),
    RDLT_TEST(test_list_bad_arguments_and_states),
    RDLT_TEST(test_list_loop_thread_is_edeadlk),
    RDLT_TEST(test_list_several_pages),
};

RDLT_MAIN(tests)
