/* The deployment interface ("router", docs/design.md#deployments): how core
 * reaches the servers of one deployment, whatever its shape. src/core calls it
 * and never names an implementation; src/standalone (one server) and
 * src/cluster (Redis Cluster) implement it, and src/deploy picks one by
 * the client's URL (rdl__router_open). Loop thread only.
 *
 * Keys and slots. Core asks the router for a key's slot (0 when the
 * deployment is not sharded) and passes that slot to send, conn and sub:
 * work grouped per (conn, slot) is valid everywhere, and keys of one
 * script call must share a slot.
 *
 * Upward, the router reports through the events its owner (the client)
 * gives at creation, never by calling into the client or the hub:
 *   settled           the first connect is done (status 0) or an attempt
 *                     failed (status < 0); the owner decides what that
 *                     means for rdl_client_connect() (the first success
 *                     or, on its own loop, the first failure settles it);
 *   topology_changed  the slot owners may have changed (a new slot table):
 *                     subscriptions on a node that no longer serves their
 *                     channel's slot must move (the hub rehomes them).
 * Events come from the router's own I/O callbacks (and from inside start
 * when it fails at once), never from inside the other ops, so the owner
 * may call ops from them.
 *
 * A router knows nothing of the client above it: it is opened with the
 * client's rdl__net (net.h: the URL, timeouts, loop, stats, the handle
 * count) and uses only what lies below it in core: connections
 * (conn.h), durability (durable.h), reply parsing, slots, allocation,
 * errmsg and the clock. What it must tell the client goes through its
 * events. */
#ifndef RDL_CORE_ROUTER_H
#define RDL_CORE_ROUTER_H

#include "conn.h"
#include "net.h"
#include "url.h"

typedef struct rdl__router rdl__router;

/* The command connections of a node. Durable writes (acquisitions that
 * must be confirmed by replicas, docs/design.md#durability) go on a line of
 * their own, followed by WAIT (rdl__durable_confirm), which blocks the
 * connection it is sent on: unrelated commands on the main line are not held
 * up. */
typedef enum { RDL__LINE_MAIN = 0, RDL__LINE_DURABLE = 1 } rdl__line;

typedef struct rdl__router_events {
    void (*settled)(void *data, int status);
    void (*topology_changed)(void *data);
} rdl__router_events;

typedef struct rdl__router_ops {
    /* Starts connecting (the seeds, the server). settled follows. */
    void (*start)(rdl__router *r);
    /* Shutdown: fails every command with RDL_ECLOSED, except commands
     * already written and not answered, which fail with RDL_ECONNLOST
     * (their outcome is unknown, as rdl__conn_close() says); closes every
     * connection, the subscriber connections included, and frees r once
     * its handles are closed. Failed commands' callbacks run inside
     * close and may call the other ops: send then returns RDL_ECLOSED,
     * sub returns NULL. No event is reported after close. */
    void (*close)(rdl__router *r);
    /* Sends a formatted command (copied) for a key of `slot` to the node
     * that serves it, on `line`. See rdl__client_send() for what happens
     * on the way. Returns 0, RDL_ENOMEM or RDL_ECLOSED (then fn is never
     * called). On the durable line a command is only ever answered by the
     * slot's master itself (an ASK is waited out, not followed), so that
     * a WAIT on that master's durable connection covers it. */
    int (*send)(rdl__router *r, unsigned slot, rdl__line line, const char *cmd,
                size_t len, rdl__reply_fn fn, void *data);
    /* The connection of `line` to the node that serves `slot` now (see
     * rdl__client_route()); never NULL before close (NULL when out of
     * memory for the durable line, which is opened on first use). */
    rdl__conn *(*conn)(rdl__router *r, unsigned slot, rdl__line line);
    /* The slot of key[0..len): its cluster slot when sharded, else 0. */
    unsigned (*slot)(const rdl__router *r, const char *key, size_t len);
    /* The subscriber connection for channels of `slot`, opened on first
     * use with ev and data (the hub's); NULL when out of memory or
     * closing. */
    rdl__conn *(*sub)(rdl__router *r, unsigned slot, const rdl__conn_events *ev,
                      void *data);
    /* The topology may have changed (a subscription failed or was
     * dropped, a subscriber connection went down): look again, soon and
     * throttled; topology_changed follows each new look (whether or not
     * anything moved). May be a no-op (one server). */
    void (*refresh)(rdl__router *r);
    /* 1 if channels are sharded (SSUBSCRIBE/SPUBLISH). Known once
     * settled reported success, and fixed from then on. */
    int (*sharded)(const rdl__router *r);
    /* The master nodes the deployment knows now, for work that must reach
     * every key (the listing of locks): stores one slot served by each
     * (send to that slot reaches that master) in slots[0..cap), at most
     * cap of them, and their count in *n, which may exceed cap (ask again
     * with room for all). Returns 0 when every key has a master known;
     * else an error, with the message set and *n 0:
     * RDL_ECLUSTERDOWN when some slot has no master known (its keys would
     * be missed; a refresh is asked for), RDL_ECONNREFUSED when no master
     * is known yet. Sends nothing and reports no event. */
    int (*masters)(rdl__router *r, unsigned *slots, size_t cap, size_t *n);
} rdl__router_ops;

/* The part every implementation starts with. */
struct rdl__router {
    const rdl__router_ops *ops;
    const rdl__router_events *ev;
    void *ev_data; /* given to the events */
};

/* One implementation, as src/deploy lists them. */
typedef struct rdl__router_impl {
    const char *name;
    /* 1 if this implementation serves the URL. */
    int (*accepts)(const rdl__url *u);
    /* Creates the router for c (not started); NULL when out of memory. */
    rdl__router *(*open)(rdl__net *net, const rdl__router_events *ev,
                         void *data);
} rdl__router_impl;

/* src/deploy: the router of the implementation that serves net->url; NULL
 * when out of memory. */
rdl__router *rdl__router_open(rdl__net *net, const rdl__router_events *ev,
                              void *data);

/* Calls for core, safe on NULL (no router: not connected, or closed). */
static inline unsigned rdl__router_slot(const rdl__router *r, const char *key,
                                        size_t len)
{
    return r != NULL ? r->ops->slot(r, key, len) : 0;
}

static inline int rdl__router_send(rdl__router *r, unsigned slot,
                                   rdl__line line, const char *cmd, size_t len,
                                   rdl__reply_fn fn, void *data)
{
    return r != NULL ? r->ops->send(r, slot, line, cmd, len, fn, data)
                     : RDL_ECLOSED;
}

static inline rdl__conn *rdl__router_conn(rdl__router *r, unsigned slot,
                                          rdl__line line)
{
    return r != NULL ? r->ops->conn(r, slot, line) : NULL;
}

static inline rdl__conn *rdl__router_sub(rdl__router *r, unsigned slot,
                                         const rdl__conn_events *ev, void *data)
{
    return r != NULL ? r->ops->sub(r, slot, ev, data) : NULL;
}

static inline void rdl__router_refresh(rdl__router *r)
{
    if (r != NULL)
        r->ops->refresh(r);
}

static inline int rdl__router_sharded(const rdl__router *r)
{
    return r != NULL && r->ops->sharded(r);
}

static inline int rdl__router_masters(rdl__router *r, unsigned *slots,
                                      size_t cap, size_t *n)
{
    *n = 0;
    return r != NULL ? r->ops->masters(r, slots, cap, n) : RDL_ECLOSED;
}

#endif
