/* A semaphore: at most N holders at once, across every process.
 *
 *   RDL_URL=redis://127.0.0.1:6379 ./semaphore
 *
 * Five worker threads share a "licence pool" of two permits: each takes a
 * permit, works a little, and gives it back, three times. At most two
 * work at any moment; the others wait (woken by the release that frees a
 * permit, not by polling). Every permit is leased to its holder, so a
 * worker that crashed would give its permit back when its lease ended. */
#include <stdio.h>
#include <stdlib.h>

#include <rdl.h>

#include "example_server.h"
#include <uv.h>

#define PERMITS 2
#define WORKERS 5

static rdl_lock_t *pool;
static int working, most;

static void worker(void *arg)
{
    int id = (int)(intptr_t)arg, i, rc;
    rdl_owner_t me = rdl_owner_self();
    for (i = 0; i < 3; i++) {
        int now, seen;
        if ((rc = rdl_lock_acquire(pool, 10000, RDL_LEASE_AUTO)) != 0) {
            fprintf(stderr, "worker %d: %s\n", id, rdl_strerror(rc));
            return;
        }
        now = __atomic_add_fetch(&working, 1, __ATOMIC_SEQ_CST);
        while ((seen = __atomic_load_n(&most, __ATOMIC_SEQ_CST)) < now &&
               !__atomic_compare_exchange_n(&most, &seen, now, 0,
                                            __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            ;
        printf("worker %d: got a permit (token %llu), %d at work\n", id,
               (unsigned long long)rdl_lock_fencing_token(pool, me), now);
        fflush(stdout);
        uv_sleep(20); /* the work */
        __atomic_sub_fetch(&working, 1, __ATOMIC_SEQ_CST);
        if ((rc = rdl_lock_release(pool)) != 0)
            fprintf(stderr, "worker %d: release: %s\n", id, rdl_strerror(rc));
    }
}

int main(void)
{
    const char *url = getenv("RDL_URL");
    rdl_client_t *client;
    rdl_lock_info_t info;
    uv_thread_t t[WORKERS];
    int i, rc;

    if ((rc = rdl_client_new(&client)) != 0)
        return 1;
    if ((url != NULL && (rc = example_set_server(client, url)) != 0) ||
        (rc = rdl_client_connect(client)) != 0 ||
        (rc = rdl_semaphore_new(client, "example:licences", PERMITS, &pool)) !=
            0) {
        fprintf(stderr, "set-up: %s (%s)\n", rdl_strerror(rc),
                rdl_client_errmsg(client));
        rdl_client_free(client);
        return 1;
    }
    for (i = 0; i < WORKERS; i++)
        uv_thread_create(&t[i], worker, (void *)(intptr_t)i);
    for (i = 0; i < WORKERS; i++)
        uv_thread_join(&t[i]);
    if (rdl_lock_info(pool, rdl_owner_self(), &info) == 0)
        printf("done: at most %d at work at once; %u of %u permits in use "
               "now\n",
               most, info.holders, info.permits);
    rdl_lock_free(pool);
    rdl_client_free(client);
    return most <= PERMITS ? 0 : 1;
}
