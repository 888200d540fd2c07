/* Redis Cluster support (docs/design.md#redis-cluster): the nodes and slot
 * table (topology.c) and commands routed by slot with redirects and retries
 * (router.c), behind core's deployment interface (core/router.h; the ops table
 * is at the end of topology.c). Nothing here calls into the client or the hub:
 * the first connect and new slot tables are reported through the router's
 * events. Loop thread only. */
#ifndef RDL_CLUSTER_INT_H
#define RDL_CLUSTER_INT_H

#include "core/alloc.h"
#include "core/clock.h"
#include "core/queue.h"
#include "core/conn.h"
#include "core/durable.h"
#include "core/errmsg.h"
#include "core/reply.h"
#include "core/slot.h"
#include "core/router.h"

/* The number of MOVED/ASK redirects one command may follow. */
#define RDL__REDIRECT_BUDGET 16

typedef struct rdl__cluster rdl__cluster;

/* One node the client knows of. Nodes are never freed before the client
 * closes: hub entries and commands in flight keep pointers to their
 * connections, and a node that left the table may come back. */
typedef struct rdl__node {
    rdl__queue qnode; /* in cl->nodes */
    rdl__cluster *cl;
    char *host;
    int port;
    rdl__conn *cmd;     /* opened on first use */
    rdl__conn *dur;     /* the durable line (router.h), opened on first use */
    rdl__conn *sub;     /* opened on first use, by the hub */
    int down;           /* the command connection failed and is not back */
    int probed;         /* asked for the slot table in this round */
    long long replicas; /* as a master, in the last slot table */
} rdl__node;

/* A command routed by slot (router.c). */
typedef struct rdl__rcmd rdl__rcmd;

struct rdl__cluster {
    rdl__router base; /* first: the router is the cluster */
    rdl__net *net;
    rdl__queue nodes;
    rdl__node *slots[RDL__SLOTS]; /* NULL: no master known */
    int sharded;                  /* servers have SSUBSCRIBE/SPUBLISH */
    int closing;
    unsigned handles; /* open timers; the last closed frees cl */

    /* Slot table refreshes (topology.c). */
    int started;           /* the first table arrived (or connect failed) */
    int refreshing;        /* a CLUSTER SLOTS is in flight */
    int want_refresh;      /* another refresh was asked for meanwhile */
    uint64_t next_refresh; /* monotonic ms before which none starts */
    unsigned probe_gen;    /* tells a stale reply from the current one */
    rdl__node *probe;      /* the node asked */
    unsigned probes;       /* nodes asked in this round */
    uv_timer_t refresh_timer;

    /* Commands waiting for a retry (router.c), and their timer. */
    rdl__queue delayed;
    uv_timer_t retry_timer;
};

/* topology.c */
/* Shutdown: fails every command (RDL_ECLOSED, or RDL_ECONNLOST once
 * written), closes every connection and frees the cluster once its handles
 * are closed. */
void rdl__cluster_close(rdl__cluster *cl);
/* Asks for a new slot table soon (throttled; at most one in flight). */
void rdl__cluster_refresh(rdl__cluster *cl);
rdl__node *rdl__node_get(rdl__cluster *cl, const char *host, int port);
rdl__conn *rdl__node_cmd(rdl__node *n);
/* The node's connection of `line`, opened on first use; NULL when out of
 * memory. */
rdl__conn *rdl__node_line(rdl__node *n, rdl__line line);
/* The slot's master, else any node (its MOVED will tell the owner). */
rdl__node *rdl__cluster_owner(rdl__cluster *cl, unsigned slot);
/* A CLUSTER SLOTS reply r from node `asked`: replaces the table with its
 * masters. The node asked stands in for a master that does not know its
 * own address ("" or "?"). Returns 0, RDL_EPROTO (nothing changed) or
 * RDL_ENOMEM. */
int rdl__cluster_apply(rdl__cluster *cl, rdl__node *asked, const redisReply *r);

/* router.c */
/* The router's send: see rdl__client_send(). */
int rdl__cluster_send(rdl__cluster *cl, unsigned slot, rdl__line line,
                      const char *cmd, size_t len, rdl__reply_fn fn,
                      void *data);
/* Shutdown: fails the commands waiting for a retry with RDL_ECLOSED. */
void rdl__cluster_fail_delayed(rdl__cluster *cl);
/* The retry timer: sends the delayed commands that are due. */
void rdl__cluster_retry_timer(uv_timer_t *t);

#endif
