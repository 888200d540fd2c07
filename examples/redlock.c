/* A RedLock over three Redis deployments.
 *
 *   RDL_REDLOCK_URLS="redis://h1:6379 redis://h2:6379 redis://h3:6379" \
 *       ./redlock
 *
 * Without RDL_REDLOCK_URLS it uses databases 1, 2 and 3 of the server in
 * RDL_URL (default redis://127.0.0.1:6379): enough to see the algorithm
 * run, though three databases of one server are not independent.
 *
 * Read include/rdl/multilock.h before choosing RedLock: its safety is
 * disputed, and fencing tokens are the stronger tool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdl.h>

#include "example_server.h"

#define N 3

int main(void)
{
    const char *base = getenv("RDL_URL"), *list = getenv("RDL_REDLOCK_URLS");
    char urls[N][256], *copy = NULL, *tok, *save = NULL;
    rdl_client_t *clients[N] = {NULL};
    rdl_lock_t *parts[N] = {NULL}, *red = NULL;
    int i, rc = 0, n = 0;

    if (base == NULL)
        base = "redis://127.0.0.1:6379";
    if (list != NULL && (copy = strdup(list)) != NULL) {
        for (tok = strtok_r(copy, " ,", &save); tok != NULL && n < N;
             tok = strtok_r(NULL, " ,", &save))
            snprintf(urls[n++], sizeof(urls[0]), "%s", tok);
        free(copy);
    } else {
        for (n = 0; n < N; n++)
            snprintf(urls[n], sizeof(urls[0]), "%s/%d", base, n + 1);
    }
    if (n != N) {
        fprintf(stderr, "RDL_REDLOCK_URLS must list %d URLs\n", N);
        return 64;
    }
    for (i = 0; i < N; i++) {
        if ((rc = rdl_client_new(&clients[i])) != 0 ||
            (rc = example_set_server(clients[i], urls[i])) != 0 ||
            (rc = rdl_client_connect(clients[i])) != 0 ||
            (rc = rdl_lock_new(clients[i], "example:redlock", &parts[i])) !=
                0) {
            fprintf(stderr, "%s: %s (%s)\n", urls[i], rdl_strerror(rc),
                    clients[i] ? rdl_client_errmsg(clients[i]) : "");
            goto out;
        }
    }
    if ((rc = rdl_redlock_new(parts, N, &red)) != 0)
        goto out;

    rc = rdl_lock_acquire(red, 2000, 10000);
    if (rc != 0) {
        fprintf(stderr, "redlock: %s (%s)\n", rdl_strerror(rc),
                rdl_client_errmsg(clients[0]));
        goto out;
    }
    printf("holding the redlock on %d deployments; valid for %lld ms\n", N,
           (long long)rdl_lock_valid_ms(red, rdl_owner_self()));
    rc = rdl_lock_release(red);
    printf("released: %s\n", rc == 0 ? "ok" : rdl_strerror(rc));
out:
    rdl_lock_free(red);
    for (i = 0; i < N; i++) {
        rdl_lock_free(parts[i]);
        rdl_client_free(clients[i]);
    }
    return rc == 0 ? 0 : 1;
}
