/* A libuv loop run by a thread of its own, standing in for an application
 * that runs rdl on its loop (rdl_client_set_loop): the main thread of the
 * test hands work to the loop thread with rdlt_loop_call(), as an
 * application would with uv_async_send(), and remains free to make blocking
 * calls and assertions. */
#include <stdio.h>
#include <stdlib.h>

#include <uv.h>

#include "rdlt.h"

struct rdlt_loop {
    uv_loop_t loop;
    uv_async_t async;
    uv_thread_t thread;
    uv_thread_t loop_tid;
    uv_mutex_t mu;
    uv_cond_t cond;
    uv_mutex_t call_mu; /* one rdlt_loop_call() at a time */
    void (*fn)(void *);
    void *arg;
    int done;
    int stop;
    int running;
    int stopped;
};

static void on_async(uv_async_t *a)
{
    rdlt_loop *lp = a->data;
    void (*fn)(void *);
    void *arg;
    int stop;

    uv_mutex_lock(&lp->mu);
    fn = lp->fn;
    arg = lp->arg;
    lp->fn = NULL;
    stop = lp->stop;
    uv_mutex_unlock(&lp->mu);

    if (fn != NULL) {
        fn(arg);
        uv_mutex_lock(&lp->mu);
        lp->done = 1;
        uv_cond_broadcast(&lp->cond);
        uv_mutex_unlock(&lp->mu);
    }
    if (stop && !uv_is_closing((uv_handle_t *)&lp->async)) {
        uv_close((uv_handle_t *)&lp->async, NULL);
        /* Handles someone left open would keep uv_run() going forever;
         * stop, and let uv_loop_close() report them. */
        uv_stop(&lp->loop);
    }
}

static void run(void *arg)
{
    rdlt_loop *lp = arg;
    int i;
    lp->loop_tid = uv_thread_self();
    uv_mutex_lock(&lp->mu);
    lp->running = 1;
    uv_cond_broadcast(&lp->cond);
    uv_mutex_unlock(&lp->mu);

    uv_run(&lp->loop, UV_RUN_DEFAULT);
    /* Close callbacks of handles closed in the last iteration. */
    for (i = 0; i < 16 && uv_loop_alive(&lp->loop); i++)
        uv_run(&lp->loop, UV_RUN_NOWAIT);
}

static int stop(rdlt_loop *lp)
{
    int rc;
    if (lp->stopped)
        return 0;
    uv_mutex_lock(&lp->mu);
    lp->stop = 1;
    uv_mutex_unlock(&lp->mu);
    uv_async_send(&lp->async);
    uv_thread_join(&lp->thread);
    lp->stopped = 1;
    rc = uv_loop_close(&lp->loop);
    if (rc != 0)
        uv_print_all_handles(&lp->loop, stderr);
    return rc;
}

static void destroy(void *p)
{
    rdlt_loop *lp = p;
    /* A loop with handles still open cannot be freed: leak it rather
     * than corrupt memory (the test fails anyway). */
    if (stop(lp) != 0)
        return;
    uv_mutex_destroy(&lp->mu);
    uv_mutex_destroy(&lp->call_mu);
    uv_cond_destroy(&lp->cond);
    free(lp);
}

rdlt_loop *rdlt_loop_start(void)
{
    rdlt_loop *lp = calloc(1, sizeof(*lp));
    assert_non_null(lp);
    assert_int_equal(uv_loop_init(&lp->loop), 0);
    assert_int_equal(uv_mutex_init(&lp->mu), 0);
    assert_int_equal(uv_mutex_init(&lp->call_mu), 0);
    assert_int_equal(uv_cond_init(&lp->cond), 0);
    assert_int_equal(uv_async_init(&lp->loop, &lp->async, on_async), 0);
    lp->async.data = lp;
    assert_int_equal(uv_thread_create(&lp->thread, run, lp), 0);
    uv_mutex_lock(&lp->mu);
    while (!lp->running)
        uv_cond_wait(&lp->cond, &lp->mu);
    uv_mutex_unlock(&lp->mu);
    rdlt_defer(destroy, lp);
    return lp;
}

uv_loop_t *rdlt_loop_uv(rdlt_loop *lp)
{
    return &lp->loop;
}

int rdlt_loop_on_thread(rdlt_loop *lp)
{
    uv_thread_t self = uv_thread_self();
    return uv_thread_equal(&self, &lp->loop_tid);
}

void rdlt_loop_call(rdlt_loop *lp, void (*fn)(void *arg), void *arg)
{
    if (rdlt_loop_on_thread(lp)) {
        fn(arg);
        return;
    }
    if (lp->stopped)
        fail_msg("rdlt: loop already stopped");
    uv_mutex_lock(&lp->call_mu);
    uv_mutex_lock(&lp->mu);
    lp->fn = fn;
    lp->arg = arg;
    lp->done = 0;
    uv_mutex_unlock(&lp->mu);
    uv_async_send(&lp->async);
    uv_mutex_lock(&lp->mu);
    while (!lp->done)
        uv_cond_wait(&lp->cond, &lp->mu);
    uv_mutex_unlock(&lp->mu);
    uv_mutex_unlock(&lp->call_mu);
}

int rdlt_loop_stop(rdlt_loop *lp)
{
    int rc = stop(lp);
    if (rc == 0)
        rdlt_release(lp);
    return rc;
}

/* ---- work of the async API on the loop ------------------------------------ */

static void connect_here(void *c)
{
    rdlt_assert_ok(rdl_client_connect(c));
}

void rdlt_loop_connect(rdlt_loop *lp, rdl_client_t *c)
{
    rdlt_loop_call(lp, connect_here, c);
}

static void acquired(rdl_req_t *req, int status)
{
    rdlt_async_acquire *a = req->data;
    __atomic_store_n(&a->status, status == 0 ? 1 : status, __ATOMIC_RELEASE);
}

static void start_here(void *arg)
{
    rdlt_async_acquire *a = arg;
    a->req.data = a;
    rdlt_assert_ok(rdl_lock_acquire_async(&a->req, a->lock, a->owner,
                                          a->wait_ms, a->lease_ms, acquired));
}

static void cancel_here(void *arg)
{
    rdlt_async_acquire *a = arg;
    rdlt_assert_ok(rdl_req_cancel(&a->req));
}

void rdlt_async_acquire_start(rdlt_loop *lp, rdlt_async_acquire *a)
{
    a->status = 0;
    rdlt_loop_call(lp, start_here, a);
}

void rdlt_async_acquire_cancel(rdlt_loop *lp, rdlt_async_acquire *a)
{
    rdlt_loop_call(lp, cancel_here, a);
}
