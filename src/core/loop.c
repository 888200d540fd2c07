/* The client's loop (a thread of its own or the caller's), tasks posted
 * to it from other threads, the active work a close must end, connecting
 * and an orderly shutdown that completes everything pending with
 * RDL_ECLOSED. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "errmsg.h"
#include "router.h"
#include "tls.h"

void rdl__client_active_add(rdl_client_t *c, rdl__active *a)
{
    rdl__queue_insert_tail(&c->active, &a->node);
}

void rdl__client_active_remove(rdl__active *a)
{
    if (rdl__queue_linked(&a->node))
        rdl__queue_remove(&a->node);
}

/* ---- tasks -------------------------------------------------------------- */

int rdl__client_post(rdl_client_t *c, rdl__task *t)
{
    int rc = 0;
    uv_mutex_lock(&c->mu);
    if (c->state != RDL__CLIENT_RUNNING) {
        rc = RDL_ECLOSED;
    } else {
        rdl__queue_insert_tail(&c->tasks, &t->node);
        /* Sent under the lock, so shutdown cannot close the handle between
         * the insertion and the send. */
        uv_async_send(&c->wake);
    }
    uv_mutex_unlock(&c->mu);
    return rc;
}

static void run_tasks(rdl_client_t *c, int status)
{
    rdl__queue q;
    rdl__task *t;
    rdl__queue_init(&q);
    uv_mutex_lock(&c->mu);
    rdl__queue_move(&c->tasks, &q);
    uv_mutex_unlock(&c->mu);
    while (!rdl__queue_empty(&q)) {
        t = RDL_CONTAINER_OF(rdl__queue_head(&q), rdl__task, node);
        rdl__queue_remove(&t->node);
        t->run(t, status);
    }
}

/* ---- connect and shutdown ------------------------------------------------- */

/* The client's last libuv handle closed (net.h). */
static void on_all_closed(rdl__net *n)
{
    rdl_client_t *c = RDL_CONTAINER_OF(n, rdl_client_t, net);
    if (c->free_pending)
        rdl__client_destroy(
            c); /* rdl_client_free() ran before the loop caught up */
    else if (c->closer_waiting)
        uv_sem_post(&c->closed_sem);
}

static void on_wake_closed(uv_handle_t *h)
{
    rdl_client_t *c = h->data;
    rdl__net_handle_closed(&c->net);
}

/* Ends the active entries of one stage. */
static void end_stage(rdl_client_t *c, int stage)
{
    rdl__queue *n = c->active.next;
    while (n != &c->active) {
        rdl__active *a = RDL_CONTAINER_OF(n, rdl__active, node);
        if (a->stage != stage) {
            n = n->next;
            continue;
        }
        /* abort() may end others (never one of an earlier stage): start
         * over from the head after each. */
        rdl__queue_remove(&a->node);
        a->abort(a);
        n = c->active.next;
    }
}

/* Loop thread: ends everything, in an order that lets each layer see its
 * commands fail before it is torn down. */
static void shutdown_loop(rdl_client_t *c)
{
    int stage;
    run_tasks(c, RDL_ECLOSED);
    end_stage(c, RDL__STAGE_UNSENT);
    /* Commands and subscriptions fail next; the router stays reachable
     * (c->router) while their callbacks run inside its close. */
    if (c->router != NULL)
        c->router->ops->close(c->router);
    c->router = NULL;
    for (stage = RDL__STAGE_UNSENT + 1; stage < RDL__STAGES; stage++)
        end_stage(c, stage);
    uv_close((uv_handle_t *)&c->wake, on_wake_closed);
}

static void on_wake(uv_async_t *h)
{
    rdl_client_t *c = h->data;
    if (c->state == RDL__CLIENT_CLOSING)
        shutdown_loop(c);
    else
        run_tasks(c, 0);
}

/* Router event: the first connect is done (status 0), or an attempt
 * failed (status < 0). Settles rdl_client_connect(). */
static void on_settled(void *data, int status)
{
    rdl_client_t *c = data;
    if (c->connect_status != 1)
        return;
    if (status == 0) {
        c->connect_status = 0;
        if (c->user_loop == NULL)
            uv_sem_post(&c->ready_sem);
    } else if (c->user_loop == NULL) {
        /* The first attempt failed: rdl_client_connect() reports it. */
        c->connect_status = status;
        snprintf(c->connect_msg, sizeof(c->connect_msg), "%s",
                 rdl__errmsg_get(c));
        uv_sem_post(&c->ready_sem);
    }
}

/* Router event: slot owners may have changed. */
static void on_topology_changed(void *data)
{
    rdl_client_t *c = data;
    rdl__queue *n;
    unsigned gen = ++c->moved_gen;
    /* moved() may end other entries: start over after each, skipping
     * those told already. */
    for (n = c->active.next; n != &c->active; n = n->next) {
        rdl__active *a = RDL_CONTAINER_OF(n, rdl__active, node);
        if (a->moved == NULL || a->moved_gen == gen)
            continue;
        a->moved_gen = gen;
        a->moved(a);
        n = &c->active;
    }
}

static const rdl__router_events router_events = {on_settled,
                                                 on_topology_changed};

/* The loop thread takes no asynchronous signals: they belong to the
 * application's threads (a SIGINT handler, sigwait). With SIGPIPE blocked,
 * a write to a connection the server closed fails with EPIPE and the
 * connection is reset, instead of killing the process: libuv does not
 * prevent SIGPIPE on Linux. On a loop of the caller's the caller decides
 * (docs/client.md, "Threads and signals"). */
static void block_signals(void)
{
    sigset_t set;
    sigfillset(&set);
    sigdelset(&set, SIGSEGV);
    sigdelset(&set, SIGBUS);
    sigdelset(&set, SIGFPE);
    sigdelset(&set, SIGILL);
    sigdelset(&set, SIGABRT);
    sigdelset(&set, SIGTRAP);
    (void)pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static void loop_main(void *arg)
{
    rdl_client_t *c = arg;
    block_signals();
    c->loop_tid = uv_thread_self();
    uv_run(c->net.loop, UV_RUN_DEFAULT);
}

/* Any thread but the loop's: stops the loop side and waits for it. The
 * state is CLOSING when this is called. */
static void stop(rdl_client_t *c)
{
    c->closer_waiting = c->user_loop != NULL;
    uv_mutex_lock(&c->mu);
    uv_async_send(&c->wake);
    uv_mutex_unlock(&c->mu);
    if (c->user_loop == NULL) {
        uv_thread_join(&c->thread);
        uv_loop_close(&c->own_loop);
    } else {
        uv_sem_wait(&c->closed_sem);
    }
    c->closer_waiting = 0;
    c->net.loop = NULL;
}

static void set_state(rdl_client_t *c, int state)
{
    uv_mutex_lock(&c->mu);
    c->state = state;
    uv_mutex_unlock(&c->mu);
}

/* What must hold before a connect: a new client whose previous
 * connection finished closing, a valid durability timeout, and a TLS
 * context for a rediss URL (the defaults, unless one was set). */
static int connectable(rdl_client_t *c)
{
    int rc;
    if (c->state != RDL__CLIENT_NEW) {
        rdl__errmsg_set(c, c->state == RDL__CLIENT_RUNNING
                               ? "the client is already connected"
                               : "the client is closed");
        return c->state == RDL__CLIENT_RUNNING ? RDL_EINVAL : RDL_ECLOSED;
    }
    if (c->net.handles != 0) {
        rdl__errmsg_set(c, "the previous connection is still closing");
        return RDL_EINVAL;
    }
    if (c->net.durable_replicas != 0 &&
        !rdl__client_durable_ok(c, c->net.durable_timeout_ms))
        return RDL_EINVAL;
    if (c->net.url.tls && c->net.tls == NULL) {
        char err[300];
        if ((rc = rdl__tls_ctx_new(NULL, &c->net.tls, err, sizeof(err))) != 0) {
            rdl__errmsg_set(c, "%s", err);
            return rc;
        }
    }
    return 0;
}

/* A connect that failed before its loop thread ran: ends, on this thread,
 * what it started. On a loop of the caller's, the caller's loop closes
 * the handles afterwards; the client's own loop is run here until they
 * are closed. */
static void undo_start(rdl_client_t *c)
{
    set_state(c, RDL__CLIENT_CLOSING);
    shutdown_loop(c);
    if (c->user_loop == NULL) {
        uv_run(c->net.loop, UV_RUN_DEFAULT);
        uv_loop_close(&c->own_loop);
        c->net.loop = NULL;
    }
    set_state(c, RDL__CLIENT_NEW);
}

int rdl_client_connect(rdl_client_t *c)
{
    int rc;
    if (c == NULL)
        return RDL_EINVAL;
    if ((rc = connectable(c)) != 0)
        return rc;
    if (c->user_loop != NULL) {
        c->net.loop = c->user_loop;
        c->loop_tid = uv_thread_self();
    } else {
        if (uv_loop_init(&c->own_loop) != 0)
            return RDL_ENOMEM;
        c->net.loop = &c->own_loop;
    }
    c->net.handles = 0;
    c->net.all_closed = on_all_closed;
    uv_async_init(c->net.loop, &c->wake, on_wake);
    c->wake.data = c;
    rdl__net_handle_opened(&c->net);
    c->router = rdl__router_open(&c->net, &router_events, c);
    c->connect_status = 1; /* pending */
    set_state(c, RDL__CLIENT_RUNNING);
    if (c->router == NULL) {
        undo_start(c);
        return RDL_ENOMEM;
    }
    c->router->ops->start(c->router);
    if (c->user_loop != NULL)
        return 0;
    if (uv_thread_create(&c->thread, loop_main, c) != 0) {
        undo_start(c);
        return RDL_ENOMEM;
    }
    uv_sem_wait(&c->ready_sem);
    if (c->connect_status == 0)
        return 0;
    /* The first attempt failed: rdl_client_connect() reports it. */
    rc = c->connect_status;
    set_state(c, RDL__CLIENT_CLOSING);
    stop(c);
    rdl__errmsg_set(c, "%s", c->connect_msg);
    set_state(c, RDL__CLIENT_NEW);
    return rc;
}

int rdl_client_close(rdl_client_t *c)
{
    if (c == NULL)
        return RDL_EINVAL;
    if (c->state != RDL__CLIENT_RUNNING)
        return 0;
    if (rdl__client_on_loop(c)) {
        /* A thread cannot join itself; on the caller's loop the shutdown
         * runs inline and the loop closes the handles afterwards. */
        if (c->user_loop == NULL) {
            rdl__errmsg_set(c, "rdl_client_close() on the client's own "
                               "loop thread");
            return RDL_EDEADLK;
        }
        set_state(c, RDL__CLIENT_CLOSING);
        shutdown_loop(c);
        set_state(c, RDL__CLIENT_CLOSED);
        return 0;
    }
    set_state(c, RDL__CLIENT_CLOSING);
    stop(c);
    set_state(c, RDL__CLIENT_CLOSED);
    return 0;
}

void rdl_client_free(rdl_client_t *c)
{
    if (c == NULL)
        return;
    if (rdl_client_close(c) != 0)
        return; /* own loop thread: cannot free itself; see the header */
    if (c->net.handles != 0)
        c->free_pending = 1; /* the caller's loop finishes the close */
    else
        rdl__client_destroy(c);
}
