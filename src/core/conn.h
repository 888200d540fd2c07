/* conn.c: one TCP connection to one node (docs/design.md#connections): our own
 * libuv socket, hiredis as the codec, a FIFO of pending replies, a timeout per
 * command, coalesced writes, reconnection with backoff.
 *
 * Loop thread only. A connection is owned by whoever created it (a
 * deployment: router.h) and freed by rdl__conn_close() once libuv closed
 * its handles; its events never outlive that call. */
#ifndef RDL_CORE_CONN_H
#define RDL_CORE_CONN_H

#include <stddef.h>

#include <hiredis/hiredis.h>

#include "net.h"
#include "rdl.h"

typedef struct rdl__conn rdl__conn;

/* Reply callback. status is 0 with `reply` the server's reply (an error
 * reply has already been mapped to status and `reply` still shows it), or a
 * failure without reply (reply NULL): RDL_ECONNLOST (written, no reply:
 * outcome unknown), RDL_ECMDTIMEOUT (outcome unknown), RDL_ECONNREFUSED
 * (never written: not connected within the command timeout), RDL_ECLOSED.
 * The reply is valid only during the call. written_ms: when the command
 * answered was written (monotonic ms, as rdl__now_ms()), the earliest the
 * server can have run it; 0 if it never left (it failed waiting for a
 * connection, or the client closed first). A command that waited for a
 * connection (a reconnect, a failover) is stamped when it left, not when
 * it was made; one that a router sent again is stamped by the send that
 * was answered. Called exactly once per successful rdl__conn_send(), never
 * from inside it. */
typedef void (*rdl__reply_fn)(void *data, int status, const redisReply *r,
                              uint64_t written_ms);

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

rdl__conn *rdl__conn_new(rdl__net *net, rdl__conn_role role, const char *host,
                         int port, const rdl__conn_events *ev, void *data);
/* This connection logs in with these credentials and database instead of
 * the client's URL's (user and pass NULL: no AUTH; db 0: no SELECT). The
 * strings must outlive the connection. Before the first start. */
void rdl__conn_set_login(rdl__conn *cn, const char *user, const char *pass,
                         int db);
/* Points the connection at another address: if it is connected or
 * connecting it is dropped (written commands fail with RDL_ECONNLOST) and
 * a new attempt starts at once; unsent commands wait for it. A no-op for
 * the same address. Returns 0, RDL_ENOMEM or RDL_ECLOSED. */
int rdl__conn_retarget(rdl__conn *cn, const char *host, int port);
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
/* Writes what waits for the flush as soon as the reply this connection is
 * handling now is done with (between two replies of one read), instead of
 * at the end of the loop iteration; no-op when nothing waits. */
void rdl__conn_flush_soon(rdl__conn *cn);

/* An attachment of a layer above (durability, durable.h): data lives as
 * long as the connection; free_fn(data) runs at rdl__conn_close(), after
 * every command failed. One per connection. 0, or RDL_ECLOSED once the
 * connection is closed (then nothing is attached). */
int rdl__conn_attach(rdl__conn *cn, void *data, void (*free_fn)(void *data));
void *rdl__conn_attached(const rdl__conn *cn);
/* Connections established so far: commands written under one generation
 * went out on one TCP connection. */
unsigned rdl__conn_gen(const rdl__conn *cn);
/* What the connection was made with. */
const rdl__net *rdl__conn_net(const rdl__conn *cn);
/* Fails every queued command with RDL_ECLOSED, closes the connection and
 * frees it once libuv has closed its handles. */
void rdl__conn_close(rdl__conn *cn);
int rdl__conn_is_ready(const rdl__conn *cn);
/* 1 once rdl__conn_close() ran. */
int rdl__conn_is_closed(const rdl__conn *cn);
/* "host:port", for messages. */
const char *rdl__conn_addr(const rdl__conn *cn);

#endif
