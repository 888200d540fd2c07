/* The client floor: the client object and its settings (client.c), its
 * loop, posted tasks, the active work a close must end and the shutdown
 * (loop.c), and what the layers above ask of the deployment through
 * router.h (route.c).
 *
 * Threads: the loop thread unless a comment says "any thread". The client
 * owns its router and ends it, and everything active, in one shutdown path
 * (docs/lifetimes.md); tasks and active entries are owned by whoever
 * posted or added them. */
#ifndef RDL_CORE_CLIENT_H
#define RDL_CORE_CLIENT_H

#include <stdint.h>

#include <uv.h>

#include "clock.h"
#include "conn.h"
#include "net.h"
#include "queue.h"
#include "rdl.h"
#include "url.h"

typedef struct rdl__batch rdl__batch;   /* batch.h */
typedef struct rdl__hub rdl__hub;       /* hub.h */
typedef struct rdl__router rdl__router; /* router.h */

/* Work posted to the loop thread. run() gets 0, or RDL_ECLOSED when the
 * client shuts down before the task could run (then it must not start any
 * I/O). */
typedef struct rdl__task {
    rdl__queue node;
    void (*run)(struct rdl__task *t, int status);
} rdl__task;

/* Something in progress that must be ended when the client closes: an
 * operation, or a service of the layers above (the batch, the hub, the
 * watchdog), which register themselves here when they start, so that the
 * client needs to know none of them. The shutdown ends them by stage,
 * lowest first, whatever order they were added in (docs/design-notes.md
 * "Teardown order"): work that never left before the router closes, then
 * operations before the services they use. */
enum rdl__stage {
    RDL__STAGE_UNSENT = 0,    /* calls not sent yet (the batch): they never
                                 ran; ended before the router closes */
    RDL__STAGE_OPERATION = 1, /* acquisitions: may still use the watchdog */
    RDL__STAGE_SERVICE = 2,   /* the watchdog */
    RDL__STAGE_HUB = 3,       /* the notification hub: every waiter left */
    RDL__STAGES
};
typedef struct rdl__active {
    rdl__queue node;
    void (*abort)(struct rdl__active *a); /* complete with RDL_ECLOSED */
    /* Optional: the deployment's slot owners may have changed (the
     * router's topology_changed event). */
    void (*moved)(struct rdl__active *a);
    int stage;          /* enum rdl__stage */
    unsigned moved_gen; /* client.c: the last event it was told of */
} rdl__active;

/* What the blocking facade (sync.c) has learnt of this client's calls, to
 * decide how long a caller spins before it sleeps. Any thread (atomic). */
typedef struct rdl__spin_stats {
    uint64_t typical_ns; /* running average of call times */
    unsigned misses;     /* spins in a row that missed the result */
    unsigned calls;      /* calls made while spins missed */
} rdl__spin_stats;

enum rdl__client_state {
    RDL__CLIENT_NEW,
    RDL__CLIENT_RUNNING,
    RDL__CLIENT_CLOSING,
    RDL__CLIENT_CLOSED
};

struct rdl_client_s {
    /* Configuration, fixed once connected. */
    rdl__net net; /* what the connections and the deployment share: the
                     URL, TLS, timeouts, durability, id, loop, stats */
    char *prefix;
    int64_t watchdog_ms;
    uv_loop_t *user_loop;

    /* Runtime. */
    int state; /* enum rdl__client_state; written under mu */
    uv_loop_t own_loop;
    uv_thread_t thread;    /* own-loop mode */
    uv_thread_t loop_tid;  /* the thread that runs the loop */
    uv_async_t wake;       /* runs posted tasks */
    uv_mutex_t mu;         /* guards state and tasks */
    rdl__queue tasks;      /* rdl__task, posted from any thread */
    rdl__queue active;     /* rdl__active, loop thread only */
    uv_sem_t closed_sem;   /* posted when every handle is closed */
    int closer_waiting;    /* a thread waits on closed_sem */
    int free_pending;      /* free when the last handle is closed */
    uv_sem_t ready_sem;    /* posted when the first connect settles */
    int connect_status;    /* 1 while the first connect is pending */
    char connect_msg[256]; /* why the first connect failed */
    rdl__router *router;   /* the deployment: router.h; NULL unless running */
    rdl__hub *hub;         /* hub.c: made by the first waiter */
    rdl__batch *batch;     /* batch.c: made by the first batched call */
    struct rdl__watchdog *wd; /* src/watchdog; created by the first hold */
    uint64_t seq;             /* request ids; loop thread only */
    unsigned moved_gen;       /* topology_changed events so far */
    rdl__spin_stats spin;     /* sync.c */
    rdl_event_cb event_cb;    /* events.c; loop thread once running */
    void *event_data;
};

/* What every named object's constructor checks first (any thread): out
 * (the address of the caller's object pointer) not NULL, then set to
 * NULL; a client; a valid name (keys.h; `what` names the object in the
 * message: "lock", "latch"); a client not closed. 0, RDL_EINVAL or
 * RDL_ECLOSED, with the message set where there is a client. */
int rdl__client_check_new(rdl_client_t *c, const char *name, const char *what,
                          void *out);
/* A durability timeout that fits the command timeout (a WAIT blocks its
 * connection for up to its timeout; a shorter command timeout would reset
 * the connection under it): 1, else 0 with the message set. */
int rdl__client_durable_ok(rdl_client_t *c, int64_t timeout_ms);
/* Frees the client and what its settings hold (loop.c, once nothing of it
 * runs any more). */
void rdl__client_destroy(rdl_client_t *c);
/* Posts a task to the loop thread. Any thread. RDL_ECLOSED if the client is
 * not running (the task will not run). */
int rdl__client_post(rdl_client_t *c, rdl__task *t);
/* 1 on the thread that runs the client's loop. Any thread. */
int rdl__client_on_loop(const rdl_client_t *c);
/* 0 if the client is running, else RDL_ENOTCONN (never connected, or its
 * connect failed) or RDL_ECLOSED, with the message set. Any thread. */
int rdl__client_check_running(const rdl_client_t *c);
/* 0 if async calls may start now (loop thread, client running), else
 * rdl__client_check_running()'s code or RDL_EINVAL. */
int rdl__client_check_async(const rdl_client_t *c);
/* A request id unique across all clients: "<client-id>:<hex seq>". */
void rdl__client_reqid(rdl_client_t *c, char out[64]);
/* The same in two steps, for a request that keeps only the number: a new
 * number, and the id it stands for. */
uint64_t rdl__client_reqseq(rdl_client_t *c);
void rdl__client_reqid_of(const rdl_client_t *c, uint64_t seq, char out[64]);
/* "<client-id>:<owner>": 32 hex digits, ':', at most 20 digits and the NUL
 * (54 bytes), in RDL__OWNER_STR_SIZE (a multiple of 8: it is in every
 * waiting acquisition, src/lock/lock_int.h). */
#define RDL__OWNER_STR_SIZE 56
void rdl__client_owner(const rdl_client_t *c, rdl_owner_t owner,
                       char out[RDL__OWNER_STR_SIZE]);
/* The next calls ask the deployment's router (router.h).
 *
 * The command connection of the node that serves `key` now: the one
 * server, or on a cluster the master that owns the key's slot in the
 * client's slot table (a connection of some node if no master is known
 * for it). Commands sent on it directly get no redirect handling: use
 * rdl__client_send() or rdl__script_run() for that. Never NULL while the
 * client runs. Together with rdl__slot() this is how work is grouped per
 * node and slot (the watchdog's batches). */
rdl__conn *rdl__client_route(rdl_client_t *c, const char *key);
/* The same for a line (rdl__line, router.h): the durable line's
 * connection, on which durable writes are confirmed (rdl__durable_confirm).
 * NULL when out of memory. */
rdl__conn *rdl__client_route_line(rdl_client_t *c, const char *key, int line);
/* Sends a formatted command for `key` (copied) to the node that serves
 * it. On a cluster, MOVED and ASK redirects are followed (RDL_EREDIRECT
 * once the redirect budget is spent), TRYAGAIN, CLUSTERDOWN, LOADING and a
 * node that cannot be reached are retried with backoff within the command
 * timeout, and the slot table is refreshed when it proved stale. fn as
 * rdl__reply_fn; other error replies (NOSCRIPT included) reach fn. Returns
 * 0, RDL_ENOMEM or RDL_ECLOSED (then fn is never called). */
int rdl__client_send(rdl_client_t *c, const char *key, const char *cmd,
                     size_t len, rdl__reply_fn fn, void *data);
/* The same for a slot rather than a key (rdl__client_masters() names the
 * slots), for commands that are about a node rather than a key (SCAN,
 * TIME): they reach the master that serves `slot`, with the same retries. */
int rdl__client_send_slot(rdl_client_t *c, unsigned slot, const char *cmd,
                          size_t len, rdl__reply_fn fn, void *data);
/* The masters of the deployment, one slot each: see the router's masters
 * op (router.h). 0, RDL_ECLUSTERDOWN, RDL_ECONNREFUSED or RDL_ECLOSED (no
 * router), with the message set; *n is 0 on failure. */
int rdl__client_masters(rdl_client_t *c, unsigned *slots, size_t cap,
                        size_t *n);
/* The line acquisition scripts go on: the durable one when durability is
 * on (rdl_client_set_durability), so their WAIT blocks only them. */
int rdl__client_acquire_line(const rdl_client_t *c);
/* The same on a line (rdl__line, router.h). */
int rdl__client_send_line(rdl_client_t *c, const char *key, int line,
                          const char *cmd, size_t len, rdl__reply_fn fn,
                          void *data);
/* The group of `key` for calls with several keys: its cluster slot on a
 * cluster (keys of one script call must share a slot there, or the call
 * fails with CROSSSLOT), 0 on one server, where any keys may share a call.
 * Work batched per (rdl__client_route(), rdl__client_slot()) is valid on
 * both. */
unsigned rdl__client_slot(const rdl_client_t *c, const char *key);
/* The command release scripts publish with: "spublish" on a cluster whose
 * servers have sharded pub/sub (Redis 7.0+), else "publish". Matches what
 * the hub subscribes with. */
const char *rdl__client_publish_cmd(const rdl_client_t *c);
/* Makes a an entry that the shutdown ends at `stage` with abort(), and
 * that hears of topology changes with moved() (NULL: it need not); not
 * yet added. */
static inline void rdl__active_init(rdl__active *a, int stage,
                                    void (*abort)(rdl__active *a),
                                    void (*moved)(rdl__active *a))
{
    rdl__queue_init(&a->node);
    a->abort = abort;
    a->moved = moved;
    a->stage = stage;
    a->moved_gen = 0;
}
void rdl__client_active_add(rdl_client_t *c, rdl__active *a);
void rdl__client_active_remove(rdl__active *a);
/* events.c: hands ev to the event callback, if one is set (loop thread).
 * Callers test c->event_cb first, so that building the event costs
 * nothing when nobody listens. */
void rdl__client_event(rdl_client_t *c, const rdl_event_t *ev);

#endif
