/* net.h: what the connections and the deployment of one client share: the
 * loop, the server's address and login (the URL), TLS, the timeouts, the
 * durability setting, the counters of rdl_client_stats() and the count of
 * open libuv handles. The client embeds one (rdl_client_s.net), fills it
 * before connecting and hands it down, so that the transport (conn.c,
 * connect.c), durability (durable.c) and the deployments (router.h) need
 * nothing of the client above them.
 *
 * Loop thread only, but for the counters (any thread) and the settings,
 * which are fixed once the client connects. */
#ifndef RDL_CORE_NET_H
#define RDL_CORE_NET_H

#include <stdint.h>

#include <uv.h>

#include "rdl.h"
#include "url.h"

struct rdl__tls_ctx; /* tls.h */

typedef struct rdl__net {
    /* Settings: written before connect, fixed from then on. */
    rdl__url url;
    struct rdl__tls_ctx *tls; /* tls.h: set by rdl_client_set_tls(), or
                                 made with the defaults by a rediss
                                 connect; used only if url.tls */
    int64_t connect_ms;
    int64_t command_ms;
    int durable_replicas;       /* 0: off; RDL_REPLICAS_ALL; or a count */
    int64_t durable_timeout_ms; /* for WAIT */
    int durable_level;          /* RDL_DURABLE_*: WAIT or WAITAOF */
    char id[33];                /* the client's id: connection names,
                                   owners and request ids */
    /* The key of error messages (errmsg.h): the client, opaque here. */
    const rdl_client_t *owner;

    /* Runtime. */
    uv_loop_t *loop;  /* NULL unless the client runs */
    unsigned handles; /* open libuv handles (rdl__net_handle_opened) */
    /* Called when `handles` drops to 0. */
    void (*all_closed)(struct rdl__net *n);
    int flushing; /* conn.c: connection flushes running now */
    rdl_client_stats_t stats;
} rdl__net;

/* Bumps a counter of rdl_client_stats(). Any thread. */
#define RDL__STAT_ADD(net, field, n)                                           \
    __atomic_fetch_add(&(net)->stats.field, (uint64_t)(n), __ATOMIC_RELAXED)
#define RDL__STAT_INC(net, field) RDL__STAT_ADD(net, field, 1)

/* Handle accounting, so close knows when everything is closed: every
 * libuv handle of the client's is counted from its init to its close
 * callback. */
static inline void rdl__net_handle_opened(rdl__net *n)
{
    n->handles++;
}
static inline void rdl__net_handle_closed(rdl__net *n)
{
    if (--n->handles == 0 && n->all_closed != NULL)
        n->all_closed(n);
}

#endif
