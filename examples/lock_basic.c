/* Two threads contend for one lock; each prints the fencing token it got.
 *
 *   RDL_URL=redis://127.0.0.1:6379 ./lock_basic
 *
 * The tokens increase strictly from one hold to the next, whichever thread
 * holds: a resource that remembers the largest token it has seen can refuse
 * a late write from a holder whose lease ran out. */
#include <stdio.h>
#include <stdlib.h>

#include <rdl.h>

#include "example_server.h"
#include <uv.h>

#define ROUNDS 3

static rdl_lock_t *lock;

static void worker(void *arg)
{
    const char *who = arg;
    int i, rc;

    for (i = 0; i < ROUNDS; i++) {
        /* Wait up to 5 s; the hold expires after 10 s if we never release. */
        rc = rdl_lock_acquire(lock, 5000, 10000);
        if (rc != 0) {
            fprintf(stderr, "%s: acquire: %s\n", who, rdl_strerror(rc));
            return;
        }
        printf(
            "%s holds \"%s\" with fencing token %llu\n", who,
            rdl_lock_name(lock),
            (unsigned long long)rdl_lock_fencing_token(lock, rdl_owner_self()));
        fflush(stdout);
        uv_sleep(50); /* the critical section */
        rc = rdl_lock_release(lock);
        if (rc != 0)
            fprintf(stderr, "%s: release: %s\n", who, rdl_strerror(rc));
    }
}

int main(void)
{
    const char *url = getenv("RDL_URL");
    rdl_client_t *client;
    uv_thread_t a, b;
    int rc;

    if ((rc = rdl_client_new(&client)) != 0) {
        fprintf(stderr, "rdl_client_new: %s\n", rdl_strerror(rc));
        return 1;
    }
    if (url != NULL && (rc = example_set_server(client, url)) != 0) {
        fprintf(stderr, "bad RDL_URL: %s\n", rdl_client_errmsg(client));
        rdl_client_free(client);
        return 1;
    }
    if ((rc = rdl_client_connect(client)) != 0) {
        fprintf(stderr, "connect: %s (%s)\n", rdl_strerror(rc),
                rdl_client_errmsg(client));
        rdl_client_free(client);
        return 1;
    }
    if ((rc = rdl_lock_new(client, "example:basic", &lock)) != 0) {
        fprintf(stderr, "rdl_lock_new: %s\n", rdl_strerror(rc));
        rdl_client_free(client);
        return 1;
    }
    uv_thread_create(&a, worker, "thread A");
    uv_thread_create(&b, worker, "thread B");
    uv_thread_join(&a);
    uv_thread_join(&b);
    rdl_lock_free(lock);
    rdl_client_free(client);
    return 0;
}
