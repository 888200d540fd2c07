/* A count-down latch: wait until N pieces of work are done, wherever they
 * run.
 *
 *   RDL_URL=redis://127.0.0.1:6379 ./latch
 *
 * The coordinator sets the latch to 3 and starts three workers; each counts
 * it down when its part is done, and the coordinator waits until it reaches
 * 0. The workers here are threads of one process; they could be processes
 * on other machines, each with a client of its own: the count lives in
 * Redis, and the count down that reaches 0 wakes every waiter, on every
 * client, at once. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <rdl.h>

#include "example_server.h"
#include <uv.h>

#define WORKERS 3

static rdl_latch_t *done;

static void worker(void *arg)
{
    int id = (int)(intptr_t)arg, rc;
    uv_sleep(50 + 50 * (unsigned)id); /* the work */
    if ((rc = rdl_latch_count_down(done)) != 0) {
        fprintf(stderr, "worker %d: %s\n", id, rdl_strerror(rc));
        return;
    }
    printf("worker %d: done\n", id);
    fflush(stdout);
}

int main(void)
{
    const char *url = getenv("RDL_URL");
    rdl_client_t *client;
    uv_thread_t workers[WORKERS];
    uint64_t left = 0;
    uint64_t t0;
    int i, rc;

    if ((rc = rdl_client_new(&client)) != 0)
        return 1;
    if ((url != NULL && (rc = example_set_server(client, url)) != 0) ||
        (rc = rdl_client_connect(client)) != 0 ||
        (rc = rdl_latch_new(client, "example:batch", &done)) != 0) {
        fprintf(stderr, "set-up: %s (%s)\n", rdl_strerror(rc),
                rdl_client_errmsg(client));
        rdl_client_free(client);
        return 1;
    }
    /* The latch disappears after a minute if this process dies. */
    if ((rc = rdl_latch_set(done, WORKERS, 60000)) != 0) {
        fprintf(stderr, "set: %s (%s)\n", rdl_strerror(rc),
                rdl_client_errmsg(client));
        rdl_latch_free(done);
        rdl_client_free(client);
        return 1;
    }
    t0 = uv_hrtime();
    for (i = 0; i < WORKERS; i++)
        uv_thread_create(&workers[i], worker, (void *)(intptr_t)i);
    rc = rdl_latch_await(done, 10000);
    if (rc == 0 && rdl_latch_count(done, &left) == 0)
        printf("coordinator: all %d done after %.1f ms (count %llu)\n", WORKERS,
               (double)(uv_hrtime() - t0) / 1e6, (unsigned long long)left);
    else
        fprintf(stderr, "coordinator: %s (%s)\n", rdl_strerror(rc),
                rdl_client_errmsg(client));
    for (i = 0; i < WORKERS; i++)
        uv_thread_join(&workers[i]);
    rdl_latch_free(done);
    rdl_client_free(client);
    return rc == 0 ? 0 : 1;
}
