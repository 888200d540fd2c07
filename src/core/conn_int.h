/* conn_int.h: the inside of a connection, shared by the two files that
 * make it: conn.c (the socket, the command queue, writing, reading and
 * dispatching replies, the command timer, dropping and the backoff) and
 * connect.c above it (resolving, connecting, the TLS and Redis
 * handshakes, moving to another address). conn.c reaches connect.c only
 * through the steps table (rdl__conn_steps). Nothing else includes this
 * header. Loop thread only. */
#ifndef RDL_CORE_CONN_INT_H
#define RDL_CORE_CONN_INT_H

#include <hiredis/hiredis.h>
#include <uv.h>

#include "conn.h"
#include "net.h"
#include "queue.h"
#include "tls.h"

#define RDL__CONN_READ_BUF (64 * 1024)

enum rdl__conn_state {
    IDLE,
    RESOLVING,
    CONNECTING,
    TLS_HANDSHAKE,
    HANDSHAKE,
    READY,
    BACKOFF,
    CLOSED
};

typedef struct cmd {
    rdl__queue node;
    rdl__reply_fn fn;
    void *data;
    int handshake;     /* dropped silently when the attempt fails */
    uint64_t deadline; /* monotonic ms */
    uint64_t written;  /* when it went to the write buffer; 0: not yet */
    char *buf;         /* the encoded command while unsent */
    size_t len;
} cmd;

/* A socket lives for one connection attempt; it is freed when libuv has
 * closed it, which may be after the connection moved on. */
typedef struct sock {
    uv_tcp_t tcp;
    uv_connect_t creq;
    rdl__conn *cn;
} sock;

typedef struct resolve {
    uv_getaddrinfo_t req;
    rdl__conn *cn; /* NULL once the connection no longer waits for it */
} resolve;

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
    const rdl__conn_events *ev;
    void *data;
    int state;
    sock *sk;
    rdl__tls *tls; /* the socket's TLS session; NULL without TLS */
    resolve *res;
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
