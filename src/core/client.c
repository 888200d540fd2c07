/* The client: configuration, the loop (a thread of its own or the
 * caller's), tasks posted to the loop from other threads, and an orderly
 * shutdown that completes everything pending with RDL_ECLOSED. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "alloc.h"
#include "client.h"
#include "conn.h"
#include "errmsg.h"
#include "keys.h"
#include "queue.h"
#include "reply.h"
#include "tls.h"
#include "url.h"
#include "router.h"

#define DEFAULT_CONNECT_MS 5000
#define DEFAULT_COMMAND_MS 3000
#define DEFAULT_WATCHDOG_MS 30000

static void destroy(rdl_client_t *c);

/* The client's last libuv handle closed (net.h). */
static void on_all_closed(rdl__net *n)
{
    rdl_client_t *c = RDL_CONTAINER_OF(n, rdl_client_t, net);
    if (c->free_pending)
        destroy(c); /* rdl_client_free() ran before the loop caught up */
    else if (c->closer_waiting)
        uv_sem_post(&c->closed_sem);
}

int rdl_client_new(rdl_client_t **out)
{
    rdl_client_t *c;
    unsigned char raw[16];
    int have_mu = 0, have_ready = 0;

    if (out == NULL)
        return RDL_EINVAL;
    *out = NULL;
    if (sodium_init() < 0)
        return RDL_ENOMEM;
    c = rdl__calloc(1, sizeof(*c));
    if (c == NULL)
        return RDL_ENOMEM;
    c->net.url.host = rdl__strdup("127.0.0.1");
    c->net.url.port = 6379;
    c->prefix = rdl__strdup("rdl");
    if (c->net.url.host != NULL && c->prefix != NULL &&
        (have_mu = uv_mutex_init(&c->mu) == 0) &&
        (have_ready = uv_sem_init(&c->ready_sem, 0) == 0) &&
        uv_sem_init(&c->closed_sem, 0) == 0) {
        c->net.owner = c;
        c->net.all_closed = on_all_closed;
        c->net.connect_ms = DEFAULT_CONNECT_MS;
        c->net.command_ms = DEFAULT_COMMAND_MS;
        c->watchdog_ms = DEFAULT_WATCHDOG_MS;
        randombytes_buf(raw, sizeof(raw));
        sodium_bin2hex(c->net.id, sizeof(c->net.id), raw, sizeof(raw));
        rdl__queue_init(&c->tasks);
        rdl__queue_init(&c->active);
        c->state = RDL__CLIENT_NEW;
        *out = c;
        return 0;
    }
    if (have_ready)
        uv_sem_destroy(&c->ready_sem);
    if (have_mu)
        uv_mutex_destroy(&c->mu);
    rdl__url_clear(&c->net.url);
    rdl__free(c->prefix);
    rdl__free(c);
    return RDL_ENOMEM;
}

/* Configuration may change only before connect. */
static int configurable(rdl_client_t *c)
{
    if (c == NULL)
        return RDL_EINVAL;
    if (c->state != RDL__CLIENT_NEW) {
        rdl__errmsg_set(c, "the client is already connected");
        return RDL_EINVAL;
    }
    return 0;
}

int rdl_client_set_url(rdl_client_t *c, const char *url)
{
    char err[200];
    rdl__url u;
    int rc = configurable(c);
    if (rc != 0)
        return rc;
    rc = rdl__url_parse(url, &u, err, sizeof(err));
    if (rc != 0) {
        rdl__errmsg_set(c, "%s", err);
        return rc;
    }
    rdl__url_clear(&c->net.url);
    c->net.url = u;
    return 0;
}

int rdl_client_set_tls(rdl_client_t *c, const rdl_tls_options_t *opts)
{
    char err[300];
    rdl__tls_ctx *x = NULL;
    int rc = configurable(c);
    if (rc != 0)
        return rc;
    if (opts != NULL && (rc = rdl__tls_ctx_new(opts, &x, err, sizeof(err)))) {
        rdl__errmsg_set(c, "%s", err);
        return rc;
    }
    rdl__tls_ctx_free(c->net.tls);
    c->net.tls = x;
    return 0;
}

int rdl_client_set_prefix(rdl_client_t *c, const char *prefix)
{
    char *p;
    int rc = configurable(c);
    if (rc != 0)
        return rc;
    if (rdl__prefix_check(prefix) != 0) {
        rdl__errmsg_set(c,
                        "a prefix is 1..%d bytes without braces or "
                        "whitespace",
                        RDL__PREFIX_MAX);
        return RDL_EINVAL;
    }
    p = rdl__strdup(prefix);
    if (p == NULL)
        return RDL_ENOMEM;
    rdl__free(c->prefix);
    c->prefix = p;
    return 0;
}

static int in_range(rdl_client_t *c, const char *what, int64_t v, int64_t lo,
                    int64_t hi)
{
    if (v >= lo && v <= hi)
        return 1;
    rdl__errmsg_set(c, "%s of %lld ms is outside %lld..%lld", what,
                    (long long)v, (long long)lo, (long long)hi);
    return 0;
}

int rdl_client_set_timeouts_ms(rdl_client_t *c, int64_t connect_ms,
                               int64_t command_ms)
{
    int rc = configurable(c);
    if (rc != 0)
        return rc;
    if (!in_range(c, "connect timeout", connect_ms, 1, 3600000) ||
        !in_range(c, "command timeout", command_ms, 1, 3600000))
        return RDL_EINVAL;
    c->net.connect_ms = connect_ms;
    c->net.command_ms = command_ms;
    return 0;
}

/* A WAIT blocks its connection for up to its timeout; a shorter command
 * timeout would reset the connection under it. */
static int durable_timeout_ok(rdl_client_t *c, int64_t timeout_ms)
{
    if (timeout_ms >= 1 && timeout_ms < c->net.command_ms)
        return 1;
    rdl__errmsg_set(c,
                    "durability timeout %lld ms: must be 1.. and below the "
                    "command timeout (%lld ms)",
                    (long long)timeout_ms, (long long)c->net.command_ms);
    return 0;
}

int rdl__client_check_new(rdl_client_t *c, const char *name, const char *what)
{
    if (rdl__name_check(name) != 0) {
        if (name != NULL && name[0] == '}' &&
            strnlen(name, RDL__NAME_MAX + 1) <= RDL__NAME_MAX)
            rdl__errmsg_set(c,
                            "a %s name that starts with '}' must hold a "
                            "hash tag, e.g. \"{x}}...\"",
                            what);
        else
            rdl__errmsg_set(c, "a %s name is 1..%d bytes", what, RDL__NAME_MAX);
        return RDL_EINVAL;
    }
    if (c->state == RDL__CLIENT_CLOSING || c->state == RDL__CLIENT_CLOSED) {
        rdl__errmsg_set(c, "the client is closed");
        return RDL_ECLOSED;
    }
    return 0;
}

int rdl_client_set_watchdog_ms(rdl_client_t *c, int64_t lease_ms)
{
    int rc = configurable(c);
    if (rc != 0)
        return rc;
    if (!in_range(c, "watchdog lease", lease_ms, 100, 86400000))
        return RDL_EINVAL;
    c->watchdog_ms = lease_ms;
    return 0;
}

int rdl_client_set_durability(rdl_client_t *c, int replicas, int64_t timeout_ms)
{
    int rc = configurable(c);
    if (rc != 0)
        return rc;
    if (replicas != RDL_REPLICAS_ALL && (replicas < 0 || replicas > 1000)) {
        rdl__errmsg_set(c, "replicas %d: 0..1000 or RDL_REPLICAS_ALL",
                        replicas);
        return RDL_EINVAL;
    }
    if (replicas != 0 && !durable_timeout_ok(c, timeout_ms))
        return RDL_EINVAL;
    c->net.durable_replicas = replicas;
    c->net.durable_timeout_ms = timeout_ms;
    return 0;
}

int rdl_client_set_loop(rdl_client_t *c, struct uv_loop_s *loop)
{
    int rc = configurable(c);
    if (rc != 0)
        return rc;
    if (loop == NULL)
        return RDL_EINVAL;
    c->user_loop = loop;
    return 0;
}

const char *rdl_client_id(const rdl_client_t *c)
{
    return c != NULL ? c->net.id : "";
}

int rdl_client_stats(const rdl_client_t *c, rdl_client_stats_t *out)
{
    const uint64_t *src;
    uint64_t *dst;
    size_t i;
    if (c == NULL || out == NULL)
        return RDL_EINVAL;
    /* The struct is all uint64_t counters. */
    src = (const uint64_t *)&c->net.stats;
    dst = (uint64_t *)out;
    for (i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
    return 0;
}

/* ---- helpers for the other modules --------------------------------------- */

int rdl__client_on_loop(const rdl_client_t *c)
{
    uv_thread_t self = uv_thread_self();
    return c->net.loop != NULL && uv_thread_equal(&self, &c->loop_tid);
}

int rdl__client_check_async(const rdl_client_t *c)
{
    if (c->state != RDL__CLIENT_RUNNING)
        return RDL_ECLOSED;
    if (!rdl__client_on_loop(c)) {
        rdl__errmsg_set(c, "async calls must be made on the client's loop "
                           "thread");
        return RDL_EINVAL;
    }
    return 0;
}

void rdl__client_reqid(rdl_client_t *c, char out[64])
{
    rdl__client_reqid_of(c, rdl__client_reqseq(c), out);
}

uint64_t rdl__client_reqseq(rdl_client_t *c)
{
    return ++c->seq;
}

void rdl__client_reqid_of(const rdl_client_t *c, uint64_t seq, char out[64])
{
    snprintf(out, 64, "%s:%llx", c->net.id, (unsigned long long)seq);
}

void rdl__client_owner(const rdl_client_t *c, rdl_owner_t owner, char out[64])
{
    snprintf(out, 64, "%s:%llu", c->net.id, (unsigned long long)owner);
}

rdl__conn *rdl__client_route(rdl_client_t *c, const char *key)
{
    return rdl__client_route_line(c, key, RDL__LINE_MAIN);
}

rdl__conn *rdl__client_route_line(rdl_client_t *c, const char *key, int line)
{
    rdl__router *r = c->router;
    return rdl__router_conn(r, rdl__router_slot(r, key, strlen(key)),
                            (rdl__line)line);
}

unsigned rdl__client_slot(const rdl_client_t *c, const char *key)
{
    return rdl__router_slot(c->router, key, strlen(key));
}

int rdl__client_send(rdl_client_t *c, const char *key, const char *cmd,
                     size_t len, rdl__reply_fn fn, void *data)
{
    return rdl__client_send_line(c, key, RDL__LINE_MAIN, cmd, len, fn, data);
}

int rdl__client_send_line(rdl_client_t *c, const char *key, int line,
                          const char *cmd, size_t len, rdl__reply_fn fn,
                          void *data)
{
    rdl__router *r = c->router;
    return rdl__router_send(r, rdl__router_slot(r, key, strlen(key)),
                            (rdl__line)line, cmd, len, fn, data);
}

int rdl__client_send_slot(rdl_client_t *c, unsigned slot, const char *cmd,
                          size_t len, rdl__reply_fn fn, void *data)
{
    return rdl__router_send(c->router, slot, RDL__LINE_MAIN, cmd, len, fn,
                            data);
}

int rdl__client_masters(rdl_client_t *c, unsigned *slots, size_t cap, size_t *n)
{
    int rc = rdl__router_masters(c->router, slots, cap, n);
    if (rc == RDL_ECLOSED)
        rdl__errmsg_set(c, "the client is closed");
    return rc;
}

int rdl__client_acquire_line(const rdl_client_t *c)
{
    return c->net.durable_replicas != 0 ? RDL__LINE_DURABLE : RDL__LINE_MAIN;
}

const char *rdl__client_publish_cmd(const rdl_client_t *c)
{
    return rdl__router_sharded(c->router) ? "spublish" : "publish";
}

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
 * (README "Signals"). */
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

int rdl_client_connect(rdl_client_t *c)
{
    int rc;
    if (c == NULL)
        return RDL_EINVAL;
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
        !durable_timeout_ok(c, c->net.durable_timeout_ms))
        return RDL_EINVAL;
    if (c->net.url.tls && c->net.tls == NULL) {
        char err[300];
        if ((rc = rdl__tls_ctx_new(NULL, &c->net.tls, err, sizeof(err))) != 0) {
            rdl__errmsg_set(c, "%s", err);
            return rc;
        }
    }
    if (c->user_loop != NULL) {
        c->net.loop = c->user_loop;
        c->loop_tid = uv_thread_self();
    } else {
        if (uv_loop_init(&c->own_loop) != 0)
            return RDL_ENOMEM;
        c->net.loop = &c->own_loop;
    }
    c->net.handles = 0;
    uv_async_init(c->net.loop, &c->wake, on_wake);
    c->wake.data = c;
    rdl__net_handle_opened(&c->net);
    c->router = rdl__router_open(&c->net, &router_events, c);
    c->connect_status = 1; /* pending */
    set_state(c, RDL__CLIENT_RUNNING);
    if (c->router == NULL) {
        rc = RDL_ENOMEM;
        goto fail;
    }
    c->router->ops->start(c->router);
    if (c->user_loop != NULL)
        return 0;
    if (uv_thread_create(&c->thread, loop_main, c) != 0) {
        rc = RDL_ENOMEM;
        goto fail_no_thread;
    }
    uv_sem_wait(&c->ready_sem);
    if (c->connect_status == 0)
        return 0;
    rc = c->connect_status;
    set_state(c, RDL__CLIENT_CLOSING);
    stop(c);
    rdl__errmsg_set(c, "%s", c->connect_msg);
    set_state(c, RDL__CLIENT_NEW);
    return rc;

fail_no_thread:
    /* Run the shutdown on this thread: the loop has no other. */
    set_state(c, RDL__CLIENT_CLOSING);
    shutdown_loop(c);
    uv_run(c->net.loop, UV_RUN_DEFAULT);
    uv_loop_close(&c->own_loop);
    c->net.loop = NULL;
    set_state(c, RDL__CLIENT_NEW);
    return rc;
fail:
    set_state(c, RDL__CLIENT_CLOSING);
    if (c->user_loop != NULL) {
        /* The caller's loop finishes closing the handles. */
        shutdown_loop(c);
        set_state(c, RDL__CLIENT_NEW);
        return rc;
    }
    goto fail_no_thread;
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

static void destroy(rdl_client_t *c)
{
    uv_sem_destroy(&c->ready_sem);
    uv_sem_destroy(&c->closed_sem);
    uv_mutex_destroy(&c->mu);
    rdl__url_clear(&c->net.url);
    rdl__tls_ctx_free(c->net.tls);
    rdl__free(c->prefix);
    rdl__free(c);
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
        destroy(c);
}
