/* The client object: making it, its settings (fixed once it connects),
 * its id, request ids and owners, and freeing what it holds. Its loop,
 * tasks and shutdown are loop.c's; reaching the deployment is route.c's. */
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "alloc.h"
#include "client.h"
#include "errmsg.h"
#include "keys.h"
#include "tls.h"
#include "url.h"

#define DEFAULT_CONNECT_MS 5000
#define DEFAULT_COMMAND_MS 3000
#define DEFAULT_WATCHDOG_MS 30000

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

int rdl__client_durable_ok(rdl_client_t *c, int64_t timeout_ms)
{
    if (timeout_ms >= 1 && timeout_ms < c->net.command_ms)
        return 1;
    rdl__errmsg_set(c,
                    "durability timeout %lld ms: must be 1.. and below the "
                    "command timeout (%lld ms)",
                    (long long)timeout_ms, (long long)c->net.command_ms);
    return 0;
}

int rdl__client_check_new(rdl_client_t *c, const char *name, const char *what,
                          void *out)
{
    if (out == NULL)
        return RDL_EINVAL;
    *(void **)out = NULL;
    if (c == NULL)
        return RDL_EINVAL;
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
    if (replicas != 0 && !rdl__client_durable_ok(c, timeout_ms))
        return RDL_EINVAL;
    c->net.durable_replicas = replicas;
    c->net.durable_timeout_ms = timeout_ms;
    return 0;
}

int rdl_client_set_durable_level(rdl_client_t *c, int level)
{
    int rc = configurable(c);
    if (rc != 0)
        return rc;
    if (level < RDL_DURABLE_RECEIVED || level > RDL_DURABLE_FSYNCED_MASTER) {
        rdl__errmsg_set(c,
                        "durable level %d: RDL_DURABLE_RECEIVED, _FSYNCED or "
                        "_FSYNCED_MASTER",
                        level);
        return RDL_EINVAL;
    }
    c->net.durable_level = level;
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

int rdl__client_check_running(const rdl_client_t *c)
{
    switch (c->state) {
    case RDL__CLIENT_RUNNING:
        return 0;
    case RDL__CLIENT_NEW:
        /* Lock calls do not connect on first use: docs/api-changes.md. */
        rdl__errmsg_set(c, "the client is not connected: call "
                           "rdl_client_connect() first");
        return RDL_ENOTCONN;
    default:
        rdl__errmsg_set(c, "the client is closed");
        return RDL_ECLOSED;
    }
}

int rdl__client_check_async(const rdl_client_t *c)
{
    int rc = rdl__client_check_running(c);
    if (rc != 0)
        return rc;
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

void rdl__client_owner(const rdl_client_t *c, rdl_owner_t owner,
                       char out[RDL__OWNER_STR_SIZE])
{
    snprintf(out, RDL__OWNER_STR_SIZE, "%s:%llu", c->net.id,
             (unsigned long long)owner);
}

void rdl__client_destroy(rdl_client_t *c)
{
    uv_sem_destroy(&c->ready_sem);
    uv_sem_destroy(&c->closed_sem);
    uv_mutex_destroy(&c->mu);
    rdl__url_clear(&c->net.url);
    rdl__tls_ctx_free(c->net.tls);
    rdl__free(c->prefix);
    rdl__free(c);
}
