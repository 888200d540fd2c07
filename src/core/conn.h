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
#include <uv.h>

#include "net.h"
#include "tls.h"
#include "queue.h"
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
/* This connection is to a server that holds no data of the client's (a
 * sentinel): its handshake checks nothing the client's settings ask of a
 * data node (the durable level's WAITAOF). Before the first start. */
void rdl__conn_set_aux(rdl__conn *cn);
/* Fills argv and lens with FUNCTION LOAD REPLACE of the scripts' function
 * library (RDL__FUNCTION_LOAD_ARGC arguments): what the handshake sends
 * where the library is missing, and what script.c sends where a server
 * lost it. */
#define RDL__FUNCTION_LOAD_ARGC 4
void rdl__conn_function_load_argv(const char **argv, size_t *lens);
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

/* ---- the inside of a connection ------------------------------------------
 *
 * For conn.c and connect.c only, the two files that make a connection:
 * conn.c (the socket, the command queue, writing, reading and dispatching
 * replies, the command timer, dropping and the backoff) and connect.c
 * (resolving, connecting, the TLS and Redis handshakes, moving to another
 * address). conn.c reaches connect.c only through the steps table
 * (rdl__conn_steps). No other file reads these fields or calls these
 * functions. */

#define RDL__CONN_READ_BUF (64 * 1024)

enum rdl__conn_state {
    RDL__CN_IDLE,
    RDL__CN_RESOLVING,
    RDL__CN_CONNECTING,
    RDL__CN_TLS_HANDSHAKE,
    RDL__CN_HANDSHAKE,
    RDL__CN_READY,
    RDL__CN_BACKOFF,
    RDL__CN_CLOSED
};

typedef struct rdl__cmd {
    rdl__queue node;
    rdl__reply_fn fn;
    void *data;
    int handshake;     /* dropped silently when the attempt fails */
    uint64_t deadline; /* monotonic ms */
    uint64_t written;  /* when it went to the write buffer; 0: not yet */
    char *buf;         /* the encoded command while unsent */
    size_t len;
} rdl__cmd;

/* A socket lives for one connection attempt; it is freed when libuv has
 * closed it, which may be after the connection moved on. */
typedef struct rdl__sock {
    uv_tcp_t tcp;
    uv_connect_t creq;
    rdl__conn *cn;
} rdl__sock;

typedef struct rdl__resolve {
    uv_getaddrinfo_t req;
    rdl__conn *cn; /* NULL once the connection no longer waits for it */
} rdl__resolve;

/* The steps of connecting (connect.c) that conn.c starts without naming
 * them. */
typedef struct rdl__conn_steps {
    void (*connect)(rdl__conn *cn);  /* a new attempt, after a backoff */
    void (*tls_step)(rdl__conn *cn); /* TLS handshake bytes arrived */
} rdl__conn_steps;

struct rdl__conn {
    const rdl__conn_steps *steps;
    rdl__net *net;
    rdl__conn_role role;
    char *host;
    int port;
    char addr[300];
    int login_set;          /* rdl__conn_set_login(): not the client's */
    const char *login_user; /* NULL: none */
    const char *login_pass; /* NULL: no AUTH */
    int login_db;
    int aux; /* rdl__conn_set_aux() */
    /* What the handshake learnt for the durable level (connect.c). */
    int no_waitaof; /* COMMAND INFO WAITAOF: no such command */
    int aof_off;    /* CONFIG GET appendonly: no */
    int replica;    /* ROLE: not a master */
    /* FUNCTION LIST/LOAD: the scripts' function library is loaded there
     * (script.c sends FCALL), else EVALSHA (connect.c, script.c). */
    int fcall;
    const rdl__conn_events *ev;
    void *data;
    int state;
    rdl__sock *sk;
    rdl__tls *tls; /* the socket's TLS session; NULL without TLS */
    rdl__resolve *res;
    uv_timer_t timer;     /* connect timeout, then reconnect backoff */
    uv_timer_t cmd_timer; /* deadline of the oldest command */
    uv_prepare_t flusher;
    uv_idle_t kick; /* start_flusher(): the next poll must not wait */
    int flush_soon; /* rdl__conn_flush_soon() */
    int in_flush;   /* its flush runs: what it appends leaves with it */
    redisReader *reader;
    char *rbuf;
    rdl__queue unsent;
    rdl__queue sent;
    unsigned buffered; /* the last of `sent` still in wbuf, not written */
    char *wbuf;
    size_t wlen, wcap;
    void *ext; /* rdl__conn_attach() */
    void (*ext_free)(void *data);
    unsigned gen;        /* connections established so far */
    unsigned attempt;    /* failed attempts in a row, for backoff */
    unsigned handshakes; /* handshake replies still expected */
    unsigned handles;    /* open libuv handles */
};

/* conn.c, for connect.c. */
/* Ends the current attempt or connection: written commands fail with
 * `status`, unsent ones keep waiting (bounded by their deadlines), and a
 * new attempt (steps->connect) follows after a backoff. */
void rdl__conn_drop(rdl__conn *cn, int status, const char *why);
/* Queues a handshake command ahead of everything unsent: written at
 * once, answered before any other, dropped silently (fn not called) when
 * the attempt fails. 0 or RDL_ENOMEM. */
int rdl__conn_send_first(rdl__conn *cn, int argc, const char **argv,
                         rdl__reply_fn fn, void *data);
/* The same with each argument's length (lens[i]; NULL: strlen). */
int rdl__conn_send_firstv(rdl__conn *cn, int argc, const char **argv,
                          const size_t *lens, rdl__reply_fn fn, void *data);
/* Writes every unsent command (the connection just became ready). */
void rdl__conn_write_unsent(rdl__conn *cn);
/* Writes the ciphertext the TLS session has produced. 0, or -1 if the
 * connection was dropped. */
int rdl__conn_write_cipher(rdl__conn *cn);
/* The socket's read callbacks. */
void rdl__conn_on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b);
void rdl__conn_on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b);
/* Counts a handle of cn's (closed by rdl__conn_close()). */
void rdl__conn_init_handle(rdl__conn *cn, uv_handle_t *h);

#endif
