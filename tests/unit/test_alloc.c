/* Allocation failures (docs/design.md#memory): every allocation goes through
 * rdl__malloc, so a test can make the n-th one fail. Each call must then
 * return RDL_ENOMEM (or succeed, if it can do without), leave no
 * half-built object behind, and leak nothing (checked by LeakSanitizer in
 * the sanitizer build). */
#include <string.h>

#include "rdlt.h"
#include "internal.h"

static void test_alloc_client_new_fails_cleanly(void **state)
{
    rdl_client_t *c = (rdl_client_t *)&c;
    (void)state;
    rdl__alloc_fail_at(1);
    rdlt_assert_rc(rdl_client_new(&c), RDL_ENOMEM);
    rdl__alloc_fail_at(0);
    assert_null(c);
}

static void test_alloc_rdl_client_new_null_out(void **state)
{
    (void)state;
    rdlt_assert_rc(rdl_client_new(NULL), RDL_EINVAL);
}

/* Builds an unconnected client with a URL, a prefix and a lock, with the
 * n-th allocation failing. Returns 1 if every call succeeded. */
static int build(long n)
{
    rdl_client_t *c = NULL;
    rdl_lock_t *l = NULL;
    int rc, ok = 1;

    rdl__alloc_fail_at(n);
    rc = rdl_client_new(&c);
    if (rc != 0) {
        rdl__alloc_fail_at(0);
        if (rc != RDL_ENOMEM || c != NULL)
            fail_msg("n=%ld: rdl_client_new: %s", n, rdl_err_name(rc));
        return 0;
    }
    rc = rdl_client_set_url(c, "redis://user:pass@127.0.0.1:1/3");
    if (rc != 0) {
        ok = 0;
        if (rc != RDL_ENOMEM)
            goto bad;
    }
    rc = rdl_client_set_prefix(c, "myapp");
    if (rc != 0) {
        ok = 0;
        if (rc != RDL_ENOMEM)
            goto bad;
    }
    rc = rdl_lock_new(c, "{order:42}:stock", &l);
    if (rc != 0) {
        ok = 0;
        if (rc != RDL_ENOMEM || l != NULL)
            goto bad;
    } else {
        assert_string_equal(rdl_lock_name(l), "{order:42}:stock");
    }
    rdl__alloc_fail_at(0);
    rdl_lock_free(l);
    rdl_client_free(c);
    return ok;
bad:
    rdl__alloc_fail_at(0);
    rdl_lock_free(l);
    rdl_client_free(c);
    fail_msg("n=%ld: got %s where only RDL_ENOMEM is acceptable", n,
             rdl_err_name(rc));
    return 0;
}

static void test_alloc_every_allocation_of_setup_may_fail(void **state)
{
    long n;
    (void)state;
    /* Fail the 1st, 2nd, ... allocation until a run gets through whole:
     * then the countdown outlived every allocation the calls make. */
    for (n = 1; n <= 200; n++)
        if (build(n))
            break;
    if (n > 200)
        fail_msg("still failing after 200 allocations");
    /* A failure left earlier must not affect later calls. */
    assert_true(build(0));
}

/* A setter that fails for memory leaves the client usable. */
static void test_alloc_failed_setter_leaves_client_usable(void **state)
{
    rdl_client_t *c = NULL;
    rdl_lock_t *l = NULL;
    (void)state;
    rdlt_assert_ok(rdl_client_new(&c));
    rdl__alloc_fail_at(1);
    rdlt_assert_rc(rdl_client_set_prefix(c, "other"), RDL_ENOMEM);
    rdl__alloc_fail_at(1);
    rdlt_assert_rc(rdl_client_set_url(c, "redis://h:1"), RDL_ENOMEM);
    rdl__alloc_fail_at(0);
    rdlt_assert_ok(rdl_lock_new(c, "x", &l));
    rdl_lock_free(l);
    rdl_client_free(c);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_alloc_client_new_fails_cleanly),
    RDLT_TEST(test_alloc_rdl_client_new_null_out),
    RDLT_TEST(test_alloc_every_allocation_of_setup_may_fail),
    RDLT_TEST(test_alloc_failed_setter_leaves_client_usable),
};

RDLT_MAIN(tests)
