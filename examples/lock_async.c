/* The async API on the application's own libuv loop: two owners contend for
 * one lock from callbacks, with no thread of rdl's own.
 *
 *   RDL_URL=redis://127.0.0.1:6379 ./lock_async
 *
 * Owner 1 acquires; owner 2 waits (woken by pub/sub, not polling); a timer
 * releases owner 1's hold after 100 ms, owner 2 gets the lock with a larger
 * fencing token, releases, and the program closes the client from its loop. */
#include <stdio.h>
#include <stdlib.h>

#include <rdl.h>

#include "example_server.h"
#include <uv.h>

static rdl_client_t *client;
static rdl_lock_t *lock;
static rdl_req_t acq1, acq2, rel1, rel2;
static uv_timer_t hold_timer;
static int failed;

static void check(const char *what, int status)
{
    if (status != 0) {
        fprintf(stderr, "%s: %s (%s)\n", what, rdl_strerror(status),
                rdl_client_errmsg(client));
        failed = 1;
    }
}

static void on_released2(rdl_req_t *req, int status)
{
    (void)req;
    check("owner 2 release", status);
    printf("owner 2 released; closing\n");
    /* On the caller's loop the client may be closed from a callback. */
    check("close", rdl_client_close(client));
}

static void on_acquired2(rdl_req_t *req, int status)
{
    check("owner 2 acquire", status);
    if (status != 0)
        return;
    printf("owner 2 acquired, fencing token %llu\n",
           (unsigned long long)req->fencing_token);
    check("owner 2 release",
          rdl_lock_release_async(&rel2, lock, 2, on_released2));
}

static void on_released1(rdl_req_t *req, int status)
{
    (void)req;
    check("owner 1 release", status);
    printf("owner 1 released\n");
}

static void on_hold_over(uv_timer_t *t)
{
    uv_close((uv_handle_t *)t, NULL);
    check("owner 1 release",
          rdl_lock_release_async(&rel1, lock, 1, on_released1));
}

static void on_acquired1(rdl_req_t *req, int status)
{
    check("owner 1 acquire", status);
    if (status != 0)
        return;
    printf("owner 1 acquired, fencing token %llu\n",
           (unsigned long long)req->fencing_token);
    /* Owner 2 waits up to 5 s for the lock, with a 10 s lease. */
    check("owner 2 acquire",
          rdl_lock_acquire_async(&acq2, lock, 2, 5000, 10000, on_acquired2));
    uv_timer_init(uv_default_loop(), &hold_timer);
    uv_timer_start(&hold_timer, on_hold_over, 100, 0);
}

int main(void)
{
    uv_loop_t *loop = uv_default_loop();
    const char *url = getenv("RDL_URL");

    if (rdl_client_new(&client) != 0)
        return 1;
    if (url != NULL && example_set_server(client, url) != 0) {
        fprintf(stderr, "bad RDL_URL: %s\n", rdl_client_errmsg(client));
        return 1;
    }
    if (rdl_client_set_loop(client, loop) != 0 ||
        rdl_client_connect(client) != 0 ||
        rdl_lock_new(client, "example:async", &lock) != 0) {
        fprintf(stderr, "setup: %s\n", rdl_client_errmsg(client));
        return 1;
    }
    /* Commands wait for the connection, so we can start right away. */
    check("owner 1 acquire",
          rdl_lock_acquire_async(&acq1, lock, 1, 0, 10000, on_acquired1));
    uv_run(loop, UV_RUN_DEFAULT);
    rdl_lock_free(lock);
    rdl_client_free(client);
    uv_loop_close(loop);
    return failed;
}
