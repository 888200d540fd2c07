/* rdl clients and locks for tests, freed by the teardown. Public API only,
 * so the integration tests can link the shipped library. */
#include <stdio.h>

#include "rdlt.h"

static void free_client(void *p)
{
    rdl_client_free(p);
}

static void free_lock(void *p)
{
    rdl_lock_free(p);
}

rdl_client_t *rdlt_client_new(const char *url)
{
    rdl_client_t *c = NULL;
    rdlt_assert_ok(rdl_client_new(&c));
    assert_non_null(c);
    rdlt_defer(free_client, c);
    if (url != NULL) {
        int rc = rdl_client_set_url(c, url);
        if (rc != 0)
            fail_msg("rdl_client_set_url(%s): %s: %s", url, rdl_err_name(rc),
                     rdl_client_errmsg(c));
    }
    return c;
}

rdl_client_t *rdlt_client(rdlt_server *s)
{
    rdl_client_t *c = rdlt_client_new(rdlt_server_url(s));
    int rc;
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 1000));
    rc = rdl_client_connect(c);
    if (rc != 0)
        fail_msg("rdl_client_connect(%s): %s: %s", rdlt_server_url(s),
                 rdl_err_name(rc), rdl_client_errmsg(c));
    return c;
}

rdl_lock_t *rdlt_lock(rdl_client_t *c, const char *name)
{
    rdl_lock_t *l = NULL;
    rdlt_assert_ok(rdl_lock_new(c, name, &l));
    assert_non_null(l);
    rdlt_defer(free_lock, l);
    return l;
}

void rdlt_lock_free(rdl_lock_t *l)
{
    if (!rdlt_release(l))
        rdl_lock_free(l);
}

void rdlt_client_free(rdl_client_t *c)
{
    if (!rdlt_release(c))
        rdl_client_free(c);
}

rdl_client_stats_t rdlt_stats(rdl_client_t *c)
{
    rdl_client_stats_t st;
    rdlt_assert_ok(rdl_client_stats(c, &st));
    return st;
}

rdl_lock_info_t rdlt_info(rdl_lock_t *l, rdl_owner_t owner)
{
    rdl_lock_info_t info;
    int rc = rdl_lock_info(l, owner, &info);
    if (rc != 0)
        fail_msg("rdl_lock_info(%s): %s", rdl_lock_name(l), rdl_err_name(rc));
    return info;
}
