/* Allocation failures with a server (docs/design.md#memory): the n-th
 * allocation fails somewhere in a whole session -- connect, lock, acquire,
 * wait, release, info, close -- on the caller's thread or on the loop thread.
 * Every call must return (0 or a code), within its timeouts; nothing may crash,
 * hang or leak (LeakSanitizer in the sanitizer build). Linked with rdl_internal
 * for rdl__alloc_fail_at(). */
#include <stdio.h>
#include <string.h>

#include "rdlt.h"
#include "internal.h"

#define A ((rdl_owner_t)1)
#define B ((rdl_owner_t)2)

/* One session with the n-th allocation failing. Results are not checked
 * beyond "returns": which call meets the failure depends on thread timing.
 * Stores how long it took; returns 1 if every call succeeded. */
static int session(rdlt_server *s, long n, int64_t *took)
{
    int64_t t0 = rdlt_now_ms();
    rdl_client_t *c = NULL;
    rdl_lock_t *l = NULL;
    rdl_lock_info_t info;
    int ok = 0;

    rdl__alloc_fail_at(n);
    if (rdl_client_new(&c) != 0)
        goto out;
    if (rdl_client_set_url(c, rdlt_server_url(s)) != 0 ||
        rdl_client_set_timeouts_ms(c, 500, 500) != 0 ||
        rdl_client_connect(c) != 0)
        goto out;
    if (rdl_lock_new(c, "oom", &l) != 0)
        goto out;
    if (rdl_lock_acquire_as(l, A, 0, 2000) == 0) {
        /* A short wait: subscription, timer, wake-up. */
        int rc = rdl_lock_acquire_as(l, B, 50, 2000);
        ok = rc == RDL_ETIMEDOUT && rdl_lock_release_as(l, A) == 0;
    }
    ok = rdl_lock_info(l, A, &info) == 0 && ok;
out:
    rdl__alloc_fail_at(0);
    rdl_lock_free(l);
    rdl_client_free(c);
    *took = rdlt_now_ms() - t0;
    return ok;
}

static void test_oom_every_allocation_of_a_session(void **state)
{
    rdlt_server *s = rdlt_server_start();
    long n;
    int clean = 0;
    (void)state;

    /* Until three sessions in a row get through whole: the countdown then
     * outlives every allocation of a session. */
    for (n = 1; n <= 1000 && clean < 3; n++) {
        int64_t took;
        clean = session(s, n, &took) ? clean + 1 : 0;
        if (took > 5000)
            fail_msg("with allocation %ld failing, the session took %lld ms", n,
                     (long long)took);
        /* Leave the server clean for the next round. */
        freeReplyObject(rdlt_cmd(s, "FLUSHALL"));
    }
    if (clean < 3)
        fail_msg("sessions still fail after 1000 allocations");
    print_message("a session makes about %ld allocations\n", n - 4);
    /* And a session without failures still works. */
    {
        rdl_client_t *c = rdlt_client(s);
        rdl_lock_t *l = rdlt_lock(c, "oom");
        rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 1000));
        rdlt_assert_ok(rdl_lock_release_as(l, A));
    }
}

static int count_lock(const rdl_lock_entry_t *e, void *data)
{
    (void)e;
    (*(int *)data)++;
    return 0;
}

/* A listing with the n-th allocation failing, on either thread: it
 * returns RDL_ENOMEM, or 0 with every lock listed (never a short list). */
static void test_oom_list_locks(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    long n;
    int clean = 0, i, failed = 0;
    char name[16];
    (void)state;

    for (i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "oom-%d", i);
        rdlt_assert_ok(rdl_lock_acquire_as(rdlt_lock(c, name), A, 0, 60000));
    }
    for (n = 1; n <= 1000 && clean < 3; n++) {
        int seen = 0, rc;
        rdl__alloc_fail_at(n);
        rc = rdl_client_list_locks(c, NULL, count_lock, &seen);
        rdl__alloc_fail_at(0);
        if (rc == 0) {
            assert_int_equal(seen, 40);
            clean++;
        } else {
            rdlt_assert_rc(rc, RDL_ENOMEM);
            assert_int_equal(seen, 0);
            failed++;
            clean = 0;
        }
    }
    if (clean < 3)
        fail_msg("listings still fail after 1000 allocations");
    assert_true(failed > 0);
    print_message("%d of the listing's allocations failed it\n", failed);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_oom_every_allocation_of_a_session),
    RDLT_TEST(test_oom_list_locks),
};

RDLT_MAIN(tests)
