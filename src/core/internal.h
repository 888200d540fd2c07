/* Internal interfaces of src/core, shared by the lock kinds. Nothing here is
 * installed. Everything in this header runs on the client's loop thread
 * unless its comment says otherwise. */
#ifndef RDL_CORE_INTERNAL_H
#define RDL_CORE_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>

#include <hiredis/hiredis.h>
#include <uv.h>

#include "alloc.h"
#include "queue.h"
#include "rdl.h"

/* ---- reply.c: the one place that reads server reply strings ------------ */

/* Codes the mapping gives for replies the library handles itself; they never
 * reach a caller. */
#define RDL__ERRNO_INTERNAL_MAP(XX)                                            \
    XX(ENOSCRIPT, -1001, "script not in the server's cache")                   \
    XX(EMOVED, -1002, "slot moved to another node")                            \
    XX(EASK, -1003, "slot is migrating; ask another node")                     \
    XX(ETRYAGAIN, -1004, "slot is migrating; try again")                       \
    XX(ELOADING, -1005, "server is loading its dataset")

enum {
#define RDL__ERRNO_ENUM_(name, value, msg) RDL__##name = value,
    RDL__ERRNO_INTERNAL_MAP(RDL__ERRNO_ENUM_)
#undef RDL__ERRNO_ENUM_
};

/* Positive results of rdl__reply_code(): a pub/sub message push, and a
 * "sunsubscribe" confirmation, which a cluster node also sends unasked
 * when the slot of a sharded channel leaves it. */
#define RDL__REPLY_MESSAGE 1
#define RDL__REPLY_SUNSUBSCRIBE 2

/* The one function that reads the strings of server replies. Maps a reply
 * to 0 (an ordinary reply), RDL__REPLY_MESSAGE (a "message" or "smessage"
 * push), RDL__REPLY_SUNSUBSCRIBE, or the RDL_E* / RDL__E* code of an error
 * reply. */
int rdl__reply_code(const redisReply *r);

/* If r is a MOVED or ASK error ("MOVED 3999 127.0.0.1:6381"), stores the
 * slot and the address (host "" if the node did not know its own, port) and
 * returns 1; else returns 0. */
int rdl__reply_redirect(const redisReply *r, unsigned *slot, char *host,
                        size_t hostlen, int *port);

/* If rdl__reply_code(r) says `r` is a message push, stores its channel and
 * payload and returns 1; else returns 0. */
int rdl__reply_message(const redisReply *r, const char **chan, size_t *chanlen,
                       const char **msg, size_t *msglen);
/* If r is a "sunsubscribe" reply or push, stores its channel and returns 1;
 * else returns 0. */
int rdl__reply_sunsubscribe(const redisReply *r, const char **chan,
                            size_t *chanlen);

/* ---- url.c -------------------------------------------------------------- */

typedef struct rdl__addr {
    char *host; /* without brackets for IPv6 */
    int port;
} rdl__addr;

#define RDL__URL_SEEDS_MAX 64

typedef struct rdl__url {
    char *host; /* without brackets for IPv6; a cluster's first seed */
    int port;
    char *user; /* NULL if absent */
    char *pass; /* NULL if absent */
    int db;
    int cluster;      /* redis+cluster:// */
    size_t nseeds;    /* cluster: the seed nodes, in the URL's order */
    rdl__addr *seeds; /* NULL unless cluster */
} rdl__url;

/* Parses redis://[user[:password]@]host[:port][/db] and
 * redis+cluster://[user[:password]@]host[:port][,host[:port]...][/0]
 * (port 6379 when left out). On failure returns RDL_EINVAL (RDL_ENOTSUP
 * for rediss://, or RDL_ENOMEM) and writes a sentence saying what is wrong
 * to err; `out` is then untouched. */
int rdl__url_parse(const char *text, rdl__url *out, char *err, size_t errlen);
void rdl__url_clear(rdl__url *u);

/* ---- keys.c: every key and channel name is built here ------------------ */

#define RDL__NAME_MAX 1024
#define RDL__PREFIX_MAX 64

/* 0 if name is a valid lock name (1..RDL__NAME_MAX bytes, and not an
 * untagged name starting with '}', see keys.c), else RDL_EINVAL. */
int rdl__name_check(const char *name);
/* 0 if prefix is valid, else RDL_EINVAL. */
int rdl__prefix_check(const char *prefix);
/* If s[0..len) holds a Redis Cluster hash tag (first '{', first '}' after
 * it, non-empty between), stores its offset and length and returns 1. */
int rdl__hash_tag(const char *s, size_t len, size_t *off, size_t *taglen);
/* "<prefix>:<kind>[.<suffix>]:<tagged-name>" where tagged-name is name if
 * it holds a hash tag, else "{name}". Returns an rdl__malloc'd string or
 * NULL. */
char *rdl__key(const char *prefix, const char *kind, const char *name,
               const char *suffix);

/* ---- slot.c: Redis Cluster key slots ------------------------------------ */

#define RDL__SLOTS 16384

/* CRC16 (XMODEM) of buf[0..len), as Redis Cluster uses it. */
unsigned rdl__crc16(const void *buf, size_t len);
/* The cluster slot of key[0..len): CRC16 of its hash tag if it has one
 * (rdl__hash_tag), else of the whole key, mod 16384. Every key and channel
 * of one lock has the slot of the lock name's tag. */
unsigned rdl__slot(const char *key, size_t len);

/* ---- scripts (generated from scripts/<kind>_<op>.lua at build time) ----- */

typedef struct rdl__script {
    const char *name; /* file name without .lua */
    const char *sha;  /* 40 hex chars */
    const char *body;
    size_t len;
} rdl__script;

#include "rdl_scripts.h" /* enum RDL__SCRIPT_*, rdl__scripts[] */

/* ---- client.c ----------------------------------------------------------- */

typedef struct rdl__conn rdl__conn;
typedef struct rdl__hub rdl__hub;
typedef struct rdl__router rdl__router; /* router.h */
/* A command's reply callback; its contract is in the conn.c section. */
typedef void (*rdl__reply_fn)(void *data, int status, const redisReply *r);

/* Work posted to the loop thread. run() gets 0, or RDL_ECLOSED when the
 * client shuts down before the task could run (then it must not start any
 * I/O). */
typedef struct rdl__task {
    rdl__queue node;
    void (*run)(struct rdl__task *t, int status);
} rdl__task;

/* Something in progress that must be ended when the client closes. The
 * shutdown ends them by stage, lowest first, whatever order they were
 * created in (docs/design-notes.md "Teardown order"): operations before
 * the services they use. */
enum rdl__stage {
    RDL__STAGE_OPERATION = 0, /* acquisitions: may still use the watchdog */
    RDL__STAGE_SERVICE = 1,   /* the watchdog */
    RDL__STAGES
};
typedef struct rdl__active {
    rdl__queue node;
    void (*abort)(struct rdl__active *a); /* complete with RDL_ECLOSED */
    int stage;                            /* enum rdl__stage */
} rdl__active;

enum rdl__client_state {
    RDL__CLIENT_NEW,
    RDL__CLIENT_RUNNING,
    RDL__CLIENT_CLOSING,
    RDL__CLIENT_CLOSED
};

struct rdl_client_s {
    /* Configuration, fixed once connected. */
    rdl__url url;
    char *prefix;
    int64_t connect_ms;
    int64_t command_ms;
    int64_t watchdog_ms;
    uv_loop_t *user_loop;
    char id[33];

    /* Runtime. */
    int state; /* enum rdl__client_state; written under mu */
    uv_loop_t own_loop;
    uv_loop_t *loop;
    uv_thread_t thread;    /* own-loop mode */
    uv_thread_t loop_tid;  /* the thread that runs the loop */
    uv_async_t wake;       /* runs posted tasks */
    uv_mutex_t mu;         /* guards state and tasks */
    rdl__queue tasks;      /* rdl__task, posted from any thread */
    rdl__queue active;     /* rdl__active, loop thread only */
    unsigned open_handles; /* loop thread only */
    uv_sem_t closed_sem;   /* posted when every handle is closed */
    int closer_waiting;    /* a thread waits on closed_sem */
    int free_pending;      /* free when the last handle is closed */
    uv_sem_t ready_sem;    /* posted when the first connect settles */
    int connect_status;    /* 1 while the first connect is pending */
    char connect_msg[256]; /* why the first connect failed */
    rdl__router *router;   /* the deployment: router.h; NULL unless running */
    rdl__hub *hub;
    struct rdl__watchdog *wd; /* src/watchdog; created by the first hold */
    uint64_t seq;             /* request ids; loop thread only */
    rdl_client_stats_t stats;
};

/* Bumps a counter of rdl_client_stats(). */
#define RDL__STAT_ADD(c, field, n)                                             \
    __atomic_fetch_add(&(c)->stats.field, (uint64_t)(n), __ATOMIC_RELAXED)
#define RDL__STAT_INC(c, field) RDL__STAT_ADD(c, field, 1)

/* Posts a task to the loop thread. Any thread. RDL_ECLOSED if the client is
 * not running (the task will not run). */
int rdl__client_post(rdl_client_t *c, rdl__task *t);
/* 1 on the thread that runs the client's loop. Any thread. */
int rdl__client_on_loop(const rdl_client_t *c);
/* 0 if async calls may start now (loop thread, client running), else
 * RDL_ECLOSED or RDL_EINVAL. */
int rdl__client_check_async(const rdl_client_t *c);
/* A request id unique across all clients: "<client-id>:<hex seq>". */
void rdl__client_reqid(rdl_client_t *c, char out[64]);
/* "<client-id>:<owner>". */
void rdl__client_owner(const rdl_client_t *c, rdl_owner_t owner, char out[64]);
/* The next four ask the deployment's router (router.h).
 *
 * The command connection of the node that serves `key` now: the one
 * server, or on a cluster the master that owns the key's slot in the
 * client's slot table (a connection of some node if no master is known
 * for it). Commands sent on it directly get no redirect handling: use
 * rdl__client_send() or rdl__script_run() for that. Never NULL while the
 * client runs. Together with rdl__slot() this is how work is grouped per
 * node and slot (the watchdog's batches). */
rdl__conn *rdl__client_route(rdl_client_t *c, const char *key);
/* Sends a formatted command for `key` (copied) to the node that serves
 * it. On a cluster, MOVED and ASK redirects are followed (RDL_EREDIRECT
 * once the redirect budget is spent), TRYAGAIN, CLUSTERDOWN, LOADING and a
 * node that cannot be reached are retried with backoff within the command
 * timeout, and the slot table is refreshed when it proved stale. fn as
 * rdl__reply_fn; other error replies (NOSCRIPT included) reach fn. Returns
 * 0, RDL_ENOMEM or RDL_ECLOSED (then fn is never called). */
int rdl__client_send(rdl_client_t *c, const char *key, const char *cmd,
                     size_t len, rdl__reply_fn fn, void *data);
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
/* Handle accounting, so close knows when everything is closed. */
void rdl__client_handle_opened(rdl_client_t *c);
void rdl__client_handle_closed(rdl_client_t *c);
void rdl__client_active_add(rdl_client_t *c, rdl__active *a);
void rdl__client_active_remove(rdl__active *a);
/* Monotonic milliseconds. Any thread. */
uint64_t rdl__now_ms(void);

/* ---- errmsg.c: rdl_client_errmsg() detail, per thread -------------------- */

void rdl__errmsg_set(const rdl_client_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The calling thread's detail for c ("" if none). */
const char *rdl__errmsg_get(const rdl_client_t *c);

/* ---- conn.c: one TCP connection to one node ------------------------------ */

/* Reply callback. status is 0 with `reply` the server's reply (an error
 * reply has already been mapped to status and `reply` still shows it), or a
 * failure without reply (reply NULL): RDL_ECONNLOST (written, no reply:
 * outcome unknown), RDL_ECMDTIMEOUT (outcome unknown), RDL_ECONNREFUSED
 * (never written: not connected within the command timeout), RDL_ECLOSED.
 * The reply is valid only during the call. Called exactly once per
 * successful rdl__conn_send(), never from inside it. */
typedef void (*rdl__reply_fn)(void *data, int status, const redisReply *r);

typedef enum { RDL__CONN_CMD, RDL__CONN_SUB } rdl__conn_role;

typedef struct rdl__conn_events {
    /* The connection is ready (first time or after a reconnect). */
    void (*ready)(rdl__conn *cn, void *data);
    /* A connection attempt failed or an established connection dropped;
     * status says why. Reconnection follows with backoff. */
    void (*down)(rdl__conn *cn, int status, void *data);
    /* SUB role: a pub/sub message (see rdl__reply_message()). */
    void (*message)(rdl__conn *cn, const redisReply *r, void *data);
    /* SUB role, optional: a "sunsubscribe" reply arrived. Returns 1 if it
     * was pushed unasked (the channel's slot left the node), and so
     * answers no command; 0 if it is the reply to the oldest command. */
    int (*unsubscribed)(rdl__conn *cn, const redisReply *r, void *data);
} rdl__conn_events;

rdl__conn *rdl__conn_new(rdl_client_t *c, rdl__conn_role role, const char *host,
                         int port, const rdl__conn_events *ev, void *data);
/* Starts connecting, if not already; reconnects with backoff after that. */
void rdl__conn_start(rdl__conn *cn);
/* Queues a formatted command (copied). Commands queued before the
 * connection is ready wait for it, bounded by the command timeout. Returns
 * 0, RDL_ENOMEM or RDL_ECLOSED (then fn is never called). */
int rdl__conn_send(rdl__conn *cn, const char *cmd, size_t len, rdl__reply_fn fn,
                   void *data);
/* Formats and queues a command from argv. */
int rdl__conn_sendv(rdl__conn *cn, int argc, const char **argv,
                    const size_t *argvlen, rdl__reply_fn fn, void *data);
/* Fails every queued command with RDL_ECLOSED, closes the connection and
 * frees it once libuv has closed its handles. */
void rdl__conn_close(rdl__conn *cn);
int rdl__conn_is_ready(const rdl__conn *cn);
/* "host:port", for messages. */
const char *rdl__conn_addr(const rdl__conn *cn);

/* ---- script.c: EVALSHA with NOSCRIPT recovery ---------------------------- */

/* Runs script `id` with keys and args (NUL-terminated strings) on the node
 * that serves keys[0]: EVALSHA; on NOSCRIPT, SCRIPT LOAD on that node and
 * one retry. fn as rdl__reply_fn (a second NOSCRIPT is RDL_ESCRIPT). */
int rdl__script_run(rdl_client_t *c, int id, int nkeys, const char **keys,
                    int nargs, const char **args, rdl__reply_fn fn, void *data);

/* ---- hub.c: pub/sub subscriptions shared by the client's waiters -------- */

enum {
    RDL__WAKE_MESSAGE = 1,    /* a release message arrived */
    RDL__WAKE_SUBSCRIBED = 2, /* the channel is (re)subscribed: try again */
};

typedef struct rdl__waiter rdl__waiter;
typedef void (*rdl__wake_fn)(rdl__waiter *w, int event);

struct rdl__waiter {
    rdl__queue node;
    struct rdl__hub_entry *entry;
    rdl__wake_fn fn;
    const char *target; /* set before joining: only messages naming this
                           owner string wake the waiter (fair lock) */
    int sleeping;
    int pending;    /* a message named it while it was busy */
    uint64_t since; /* the hub's event count when its last try was sent */
    int fresh;      /* joined after that try was sent: events of the
                       channel since then are checked once, at its sleep */
};

/* Release message payloads. Any other payload is an owner string: it
 * wakes only the waiter whose target it is. */
#define RDL__MSG_WAKE_ONE "0" /* wake one waiter per client */
#define RDL__MSG_WAKE_ALL "1" /* wake every waiter */

rdl__hub *rdl__hub_new(rdl_client_t *c);
/* Shutdown, once the router (which owns the subscriber connections) is
 * closed and the waiters are gone: frees the hub. */
void rdl__hub_free(rdl__hub *h);
/* Adds w to the channel's waiters, subscribing if needed. Returns 1 if the
 * subscription is already confirmed, 0 if RDL__WAKE_SUBSCRIBED will follow,
 * or RDL_ENOMEM. w starts busy (not sleeping); w->since must hold the
 * value rdl__hub_mark() gave when w's last try was sent, so that an event
 * of the channel between that send and the join is not missed (see
 * rdl__hub_sleep). */
int rdl__hub_join(rdl_client_t *c, const char *channel, rdl__waiter *w,
                  rdl__wake_fn fn);
/* Removes w; the subscription lingers briefly for the next waiter. */
void rdl__hub_leave(rdl__waiter *w);
/* Marks w asleep. Returns 1 (and stays busy) if the caller should try
 * again now instead: a message named w while it was busy, a wake-one
 * message arrived while no waiter of the channel slept, or w joined after
 * its try was sent and the channel had an event (a message, a confirmed
 * subscription) since that send. */
int rdl__hub_sleep(rdl__waiter *w);
/* The hub's event count, to be stored in a waiter's `since` right before
 * a try is sent (joined or not). Loop thread. */
uint64_t rdl__hub_mark(rdl_client_t *c);
/* Marks w busy (trying): call with the mark of the try being sent. */
void rdl__hub_busy(rdl__waiter *w, uint64_t mark);
/* The router reported topology_changed: channels whose slot moved to
 * another node are subscribed there (their waiters try again once that is
 * confirmed). */
void rdl__hub_rehome(rdl__hub *h);

/* ---- sync.c: the blocking facade ------------------------------------------ */

typedef struct rdl__sync {
    rdl__task task;
    uv_sem_t sem;
    int state; /* sync.c: waiting, sleeping or done (atomic) */
    int status;
    char msg[256];
    rdl_client_t *client;
    void (*start)(struct rdl__sync *s); /* on the loop thread */
} rdl__sync;

/* Runs s->start on the loop thread and blocks until rdl__sync_done().
 * Returns RDL_EDEADLK on the loop thread, RDL_ECLOSED if the client is not
 * running, else the status given to rdl__sync_done(). */
int rdl__sync_call(rdl_client_t *c, rdl__sync *s);
/* Completes a blocking call (loop thread). */
void rdl__sync_done(rdl__sync *s, int status);

#endif
