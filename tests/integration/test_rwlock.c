/* The read-write lock (src/rwlock, scripts/rwlock_*.lua): shared readers, an
 * exclusive writer, writers first, downgrade, no upgrade, per-reader
 * expiry, watchdog on both sides. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdlt.h"

#define A ((rdl_owner_t)1)
#define B ((rdl_owner_t)2)
#define C ((rdl_owner_t)3)

static void free_rw(void *rw)
{
    rdl_rwlock_free(rw);
}

static rdl_rwlock_t *rwlock(rdl_client_t *c, const char *name, unsigned flags)
{
    rdl_rwlock_t *rw = NULL;
    rdlt_assert_ok(rdl_rwlock_new_ex(c, name, flags, &rw));
    rdlt_defer(free_rw, rw);
    return rw;
}

static void test_rwlock_readers_share_writer_excludes(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_rwlock_t *rw = rwlock(c, "share", 0);
    rdl_lock_t *r = rdl_rwlock_read(rw), *w = rdl_rwlock_write(rw);
    rdl_owner_t o;
    (void)state;

    for (o = 10; o < 15; o++)
        rdlt_assert_ok(rdl_lock_acquire_as(r, o, 0, 5000));
    assert_int_equal(rdlt_info(r, 10).holders, 5);
    assert_true(rdl_lock_fencing_token(r, 14) > rdl_lock_fencing_token(r, 10));
    rdlt_assert_rc(rdl_lock_acquire_as(w, A, 0, 5000), RDL_EBUSY);
    for (o = 10; o < 15; o++)
        rdlt_assert_ok(rdl_lock_release_as(r, o));

    rdlt_assert_ok(rdl_lock_acquire_as(w, A, 0, 5000));
    rdlt_assert_rc(rdl_lock_acquire_as(r, B, 0, 5000), RDL_EBUSY);
    rdlt_assert_rc(rdl_lock_acquire_as(w, B, 0, 5000), RDL_EBUSY);
    rdlt_assert_rc(rdl_lock_acquire_as(w, B, 200, 5000), RDL_ETIMEDOUT);
    assert_int_equal(rdlt_info(w, A).hold_count, 1);
    rdlt_assert_ok(rdl_lock_release_as(w, A));
    rdlt_assert_ok(rdl_lock_acquire_as(r, B, 0, 5000));
    rdlt_assert_ok(rdl_lock_release_as(r, B));
    assert_int_equal(rdlt_count_keys(s, "rdl:rw:*"), 0);
    assert_int_equal(rdlt_count_keys(s, "rdl:rw.ww:*"), 0);
}

static void test_rwlock_reentrancy_both_sides(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_rwlock_t *rw = rwlock(c, "reenter", 0);
    rdl_lock_t *r = rdl_rwlock_read(rw), *w = rdl_rwlock_write(rw);
    uint64_t t;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(r, A, 0, 5000));
    t = rdl_lock_fencing_token(r, A);
    rdlt_assert_ok(rdl_lock_acquire_as(r, A, 0, 5000));
    assert_int_equal(rdlt_info(r, A).hold_count, 2);
    assert_int_equal(rdl_lock_fencing_token(r, A), t);
    rdlt_assert_ok(rdl_lock_release_as(r, A));
    rdlt_assert_ok(rdl_lock_release_as(r, A));
    rdlt_assert_rc(rdl_lock_release_as(r, A), RDL_ENOTHELD);

    rdlt_assert_ok(rdl_lock_acquire_as(w, A, 0, 5000));
    rdlt_assert_ok(rdl_lock_acquire_as(w, A, 0, 5000));
    assert_int_equal(rdlt_info(w, A).hold_count, 2);
    assert_int_equal(rdlt_info(r, B).holder_count, 2);
    assert_true(rdl_lock_fencing_token(w, A) > t);
    rdlt_assert_ok(rdl_lock_release_as(w, A));
    rdlt_assert_rc(rdl_lock_acquire_as(r, B, 0, 5000), RDL_EBUSY);
    rdlt_assert_ok(rdl_lock_release_as(w, A));
    rdlt_assert_ok(rdl_lock_acquire_as(r, B, 0, 5000));
    rdlt_assert_ok(rdl_lock_release_as(r, B));
}

/* The writer takes the read side, then lets go of the write side. */
static void test_rwlock_downgrade(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_rwlock_t *rw = rwlock(c, "down", 0);
    rdl_lock_t *r = rdl_rwlock_read(rw), *w = rdl_rwlock_write(rw);
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(w, A, 0, 5000));
    rdlt_assert_ok(rdl_lock_acquire_as(r, A, 0, 5000));
    rdlt_assert_rc(rdl_lock_acquire_as(r, B, 0, 5000), RDL_EBUSY);
    rdlt_assert_ok(rdl_lock_release_as(w, A));
    rdlt_assert_ok(rdl_lock_acquire_as(r, B, 0, 5000));
    rdlt_assert_rc(rdl_lock_acquire_as(w, C, 0, 5000), RDL_EBUSY);
    rdlt_assert_ok(rdl_lock_release_as(r, A));
    rdlt_assert_ok(rdl_lock_release_as(r, B));
    rdlt_assert_ok(rdl_lock_acquire_as(w, C, 0, 5000));
    rdlt_assert_ok(rdl_lock_release_as(w, C));
}

/* A reader asking for the write side fails at once, and nothing changes. */
static void test_rwlock_upgrade_is_edeadlk(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_rwlock_t *rw = rwlock(c, "up", 0);
    rdl_lock_t *r = rdl_rwlock_read(rw), *w = rdl_rwlock_write(rw);
    int64_t t0;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(r, A, 0, 5000));
    t0 = rdlt_now_ms();
    rdlt_assert_rc(rdl_lock_acquire_as(w, A, 5000, 5000), RDL_EDEADLK);
    rdlt_assert_between(rdlt_now_ms() - t0, 0, 1000);
    assert_int_equal(rdlt_info(r, A).hold_count, 1);
    assert_int_equal(rdlt_info(w, A).waiters, 0);
    rdlt_assert_ok(rdl_lock_release_as(r, A));
}

/* Releases that do not match a hold change nothing. */
static void test_rwlock_bad_sequences(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_rwlock_t *rw = rwlock(c, "bad", 0), *out = NULL;
    rdl_lock_t *r = rdl_rwlock_read(rw), *w = rdl_rwlock_write(rw);
    (void)state;

    rdlt_assert_rc(rdl_lock_release_as(r, A), RDL_ENOTHELD);
    rdlt_assert_rc(rdl_lock_release_as(w, A), RDL_ENOTHELD);
    rdlt_assert_ok(rdl_lock_acquire_as(r, A, 0, 5000));
    rdlt_assert_rc(rdl_lock_release_as(w, A), RDL_ENOTHELD);
    rdlt_assert_rc(rdl_lock_release_as(r, B), RDL_ENOTHELD);
    assert_int_equal(rdlt_info(r, A).hold_count, 1);
    rdlt_assert_ok(rdl_lock_release_as(r, A));
    rdlt_assert_ok(rdl_lock_acquire_as(w, A, 0, 5000));
    rdlt_assert_rc(rdl_lock_release_as(r, A), RDL_ENOTHELD);
    rdlt_assert_rc(rdl_lock_release_as(w, B), RDL_ENOTHELD);
    assert_int_equal(rdlt_info(w, A).hold_count, 1);
    rdlt_assert_ok(rdl_lock_release_as(w, A));

    rdlt_assert_rc(rdl_rwlock_new_ex(c, "bad", 0x80, &out), RDL_EINVAL);
    assert_null(out);
    rdlt_assert_rc(rdl_rwlock_new(c, "", &out), RDL_EINVAL);
    assert_null(rdl_rwlock_read(NULL));
    rdl_rwlock_free(NULL);
}

/* 20 reader threads re-acquiring in a loop do not starve a writer. */
typedef struct churn {
    rdl_lock_t *r;
    int stop, errors;
} churn;

static void *reader_loop(void *arg)
{
    churn *ch = arg;
    while (!__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE)) {
        int rc = rdl_lock_acquire(ch->r, 10000, 5000);
        if (rc != 0) {
            __atomic_add_fetch(&ch->errors, 1, __ATOMIC_RELAXED);
            continue;
        }
        rdlt_sleep_ms(2);
        if (rdl_lock_release(ch->r) != 0)
            __atomic_add_fetch(&ch->errors, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void test_rwlock_writer_not_starved(void **state)
{
    enum { READERS = 20 };
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s), *cw = rdlt_client(s);
    rdl_rwlock_t *rw = rwlock(c, "starve", 0), *rw2 = rwlock(cw, "starve", 0);
    churn ch = {rdl_rwlock_read(rw), 0, 0};
    rdlt_thread *t[READERS];
    int64_t t0, took;
    int i, k;
    (void)state;

    for (i = 0; i < READERS; i++)
        t[i] = rdlt_thread_start(reader_loop, &ch);
    rdlt_sleep_ms(300);
    for (k = 0; k < 3; k++) {
        t0 = rdlt_now_ms();
        rdlt_assert_ok(
            rdl_lock_acquire_as(rdl_rwlock_write(rw2), A, 5000, 5000));
        took = rdlt_now_ms() - t0;
        print_message("writer got in after %lld ms\n", (long long)took);
        rdlt_sleep_ms(5);
        rdlt_assert_ok(rdl_lock_release_as(rdl_rwlock_write(rw2), A));
        rdlt_sleep_ms(50);
    }
    __atomic_store_n(&ch.stop, 1, __ATOMIC_RELEASE);
    for (i = 0; i < READERS; i++)
        rdlt_thread_join(t[i]);
    assert_int_equal(ch.errors, 0);
}

/* With RDL_RW_READERS_FIRST a new reader does not wait for a waiting
 * writer; by default it does. */
typedef struct pending_writer {
    rdl_lock_t *w;
    int rc;
} pending_writer;

static void *write_once(void *arg)
{
    pending_writer *p = arg;
    p->rc = rdl_lock_acquire_as(p->w, C, 3000, 5000);
    if (p->rc == 0)
        p->rc = rdl_lock_release_as(p->w, C);
    return NULL;
}

static void writer_waits(int readers_first)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_rwlock_t *rw =
        rwlock(c, "pref", readers_first ? RDL_RW_READERS_FIRST : 0);
    rdl_lock_t *r = rdl_rwlock_read(rw);
    pending_writer p = {rdl_rwlock_write(rw), -999};
    rdlt_thread *t;
    int64_t deadline;

    rdlt_assert_ok(rdl_lock_acquire_as(r, A, 0, 5000));
    t = rdlt_thread_start(write_once, &p);
    deadline = rdlt_now_ms() + 3000;
    while (rdlt_info(r, A).waiters == 0 && rdlt_now_ms() < deadline)
        rdlt_sleep_ms(5);
    assert_int_equal(rdlt_info(r, A).waiters, 1);
    if (readers_first) {
        rdlt_assert_ok(rdl_lock_acquire_as(r, B, 0, 5000));
        rdlt_assert_ok(rdl_lock_release_as(r, B));
    } else {
        rdlt_assert_rc(rdl_lock_acquire_as(r, B, 0, 5000), RDL_EBUSY);
        /* A reader that holds may still re-enter. */
        rdlt_assert_ok(rdl_lock_acquire_as(r, A, 0, 5000));
        rdlt_assert_ok(rdl_lock_release_as(r, A));
    }
    rdlt_assert_ok(rdl_lock_release_as(r, A));
    rdlt_thread_join(t);
    rdlt_assert_ok(p.rc);
    assert_int_equal(rdlt_count_keys(s, "rdl:rw.ww:*"), 0);
}

static void test_rwlock_writers_first(void **state)
{
    (void)state;
    writer_waits(0);
}

static void test_rwlock_readers_first_option(void **state)
{
    (void)state;
    writer_waits(1);
}

/* Watchdog renewal of readers and writers over many leases. */
static void test_rwlock_watchdog_both_sides(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client_new(rdlt_server_url(s));
    rdl_rwlock_t *rw1, *rw2;
    rdl_client_stats_t st;
    (void)state;

    rdlt_assert_ok(rdl_client_set_watchdog_ms(c, 300));
    rdlt_assert_ok(rdl_client_connect(c));
    rw1 = rwlock(c, "wd-read", 0);
    rw2 = rwlock(c, "wd-write", 0);
    rdlt_assert_ok(
        rdl_lock_acquire_as(rdl_rwlock_read(rw1), A, 0, RDL_LEASE_AUTO));
    rdlt_assert_ok(
        rdl_lock_acquire_as(rdl_rwlock_read(rw1), B, 0, RDL_LEASE_AUTO));
    rdlt_assert_ok(
        rdl_lock_acquire_as(rdl_rwlock_write(rw2), A, 0, RDL_LEASE_AUTO));
    rdlt_sleep_ms(1500);
    assert_int_equal(rdlt_info(rdl_rwlock_read(rw1), A).holders, 2);
    assert_int_equal(rdlt_info(rdl_rwlock_write(rw2), A).hold_count, 1);
    assert_true(rdl_lock_valid_ms(rdl_rwlock_read(rw1), B) > 0);
    rdlt_assert_ok(rdl_client_stats(c, &st));
    assert_true(st.renewals >= 20);
    assert_int_equal(st.holds_lost, 0);
    rdlt_assert_ok(rdl_lock_release_as(rdl_rwlock_read(rw1), A));
    rdlt_assert_ok(rdl_lock_release_as(rdl_rwlock_read(rw1), B));
    rdlt_assert_ok(rdl_lock_release_as(rdl_rwlock_write(rw2), A));
    assert_int_equal(rdlt_count_keys(s, "rdl:rw:*"), 0);
}

/* A reader killed with SIGKILL: its share ends with its own lease, though
 * another reader's longer lease set the hash's life, and the writer gets
 * in then. */
typedef struct killed_reader {
    char url[64];
} killed_reader;

static int hold_read(void *arg, int fd)
{
    killed_reader *k = arg;
    rdl_client_t *c = NULL;
    rdl_rwlock_t *rw = NULL;
    if (rdl_client_new(&c) != 0 || rdl_client_set_url(c, k->url) != 0 ||
        rdl_client_connect(c) != 0 || rdl_rwlock_new(c, "crash", &rw) != 0 ||
        rdl_lock_acquire(rdl_rwlock_read(rw), 0, 700) != 0)
        return 1;
    rdlt_child_say(fd, "reading");
    for (;;)
        rdlt_sleep_ms(1000);
    return 0;
}

static void test_rwlock_killed_reader(void **state)
{
    rdlt_server *s = rdlt_server_start();
    killed_reader k;
    rdlt_child *ch;
    rdl_client_t *c;
    rdl_rwlock_t *rw;
    char line[64];
    int64_t t0, took;
    (void)state;

    snprintf(k.url, sizeof(k.url), "%s", rdlt_server_url(s));
    ch = rdlt_child_start(hold_read, &k);
    c = rdlt_client(s);
    rw = rwlock(c, "crash", 0);
    /* A reader with a long lease comes and goes first... */
    rdlt_assert_ok(rdl_lock_acquire_as(rdl_rwlock_read(rw), B, 0, 30000));
    if (rdlt_child_hear(ch, line, sizeof(line), 10000) != 0)
        fail_msg("the reader process did not start");
    rdlt_assert_ok(rdl_lock_release_as(rdl_rwlock_read(rw), B));
    /* ...then the 700 ms reader dies. */
    rdlt_child_signal(ch, SIGKILL);
    t0 = rdlt_now_ms();
    rdlt_assert_ok(rdl_lock_acquire_as(rdl_rwlock_write(rw), A, 5000, 5000));
    took = rdlt_now_ms() - t0;
    rdlt_assert_between(took, 0, 700 + 500);
    rdlt_assert_ok(rdl_lock_release_as(rdl_rwlock_write(rw), A));
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_rwlock_readers_share_writer_excludes),
    RDLT_TEST(test_rwlock_reentrancy_both_sides),
    RDLT_TEST(test_rwlock_downgrade),
    RDLT_TEST(test_rwlock_upgrade_is_edeadlk),
    RDLT_TEST(test_rwlock_bad_sequences),
    RDLT_TEST(test_rwlock_writer_not_starved),
    RDLT_TEST(test_rwlock_writers_first),
    RDLT_TEST(test_rwlock_readers_first_option),
    RDLT_TEST(test_rwlock_watchdog_both_sides),
    RDLT_TEST(test_rwlock_killed_reader),
};

RDLT_MAIN(tests)
