/* One TCP connection to one Redis node, on libuv, with hiredis as the codec
 * only (docs/design.md#connections).
 *
 * Commands wait in `unsent` until the connection is ready, then move to
 * `sent`, whose order is the order of the replies. Everything written in one
 * loop iteration leaves in one uv_write (the flusher is a uv_prepare_t that
 * runs just before the loop polls): pipelining without a round trip of
 * latency. One timer watches the oldest command: a written command without a
 * reply after the command timeout fails with RDL_ECMDTIMEOUT, and the
 * connection is re-established, because later replies on it could no longer
 * be matched. A command that was never written and times out fails with
 * RDL_ECONNREFUSED: its outcome is known.
 *
 * A drop fails every written command with RDL_ECONNLOST (outcome unknown)
 * and reconnects with exponential backoff and jitter: connect.c makes the
 * new attempt, and runs the handshake (AUTH, SELECT, CLIENT SETNAME)
 * before any queued command.
 *
 * Over TLS (rediss URLs) a session (tls.h) sits between the socket and the
 * codec: what the socket reads is fed to it and decrypted before hiredis
 * sees it, and a flush encrypts the buffered commands and writes the
 * ciphertext. Its handshake comes first and, like the Redis handshake
 * after it, is bounded by the connect timeout; the Redis handshake's
 * replies also prove that the server accepted the client's certificate
 * (TLS 1.3 tells a refusal only after the client's handshake is done). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "alloc.h"
#include "clock.h"
#include "net.h"
#include "conn.h"
#include "errmsg.h"
#include "queue.h"
#include "reply.h"
#include "tls.h"

#define BACKOFF_BASE_MS 25
#define BACKOFF_MAX_MS 1000

typedef struct wreq {
    uv_write_t req;
    char *buf;
} wreq;

static void io_failed(rdl__conn *cn, int n);

/* ---- handles ---------------------------------------------------------- */

/* One of the connection's handles is closed; the last one frees it. */
static void handle_gone(rdl__conn *cn)
{
    rdl__net *net = cn->net;
    if (--cn->handles == 0 && cn->state == RDL__CN_CLOSED) {
        rdl__free(cn->host);
        rdl__free(cn->rbuf);
        rdl__free(cn);
    }
    rdl__net_handle_closed(net);
}

static void on_handle_closed(uv_handle_t *h)
{
    handle_gone(h->data);
}

static void on_sock_closed(uv_handle_t *h)
{
    rdl__sock *sk = h->data;
    rdl__conn *cn = sk->cn;
    rdl__free(sk);
    handle_gone(cn);
}

static void close_sock(rdl__conn *cn)
{
    rdl__sock *sk = cn->sk;
    if (sk == NULL)
        return;
    cn->sk = NULL;
    rdl__tls_free(cn->tls);
    cn->tls = NULL;
    uv_read_stop((uv_stream_t *)&sk->tcp);
    uv_close((uv_handle_t *)&sk->tcp, on_sock_closed);
}

/* ---- command queue ------------------------------------------------------ */

static rdl__cmd *pop(rdl__queue *q)
{
    rdl__queue *n;
    if (rdl__queue_empty(q))
        return NULL;
    n = rdl__queue_head(q);
    rdl__queue_remove(n);
    return RDL_CONTAINER_OF(n, rdl__cmd, node);
}

/* Runs a command's callback, with when the command was written. */
static void finish(rdl__cmd *k, int status, const redisReply *r)
{
    if (k->fn != NULL)
        k->fn(k->data, status, r, k->written);
    rdl__free(k->buf);
    rdl__free(k);
}

static void fail_queue(rdl__queue *q, int status)
{
    rdl__cmd *k;
    while ((k = pop(q)) != NULL) {
        if (k->handshake)
            k->fn = NULL;
        finish(k, status, NULL);
    }
}

/* Fails the commands of `sent` at a close: those written may have run, so
 * their outcome is unknown (RDL_ECONNLOST); the last ones, still in the
 * write buffer, never left, and fail with RDL_ECLOSED. */
static void fail_sent(rdl__conn *cn)
{
    rdl__queue *q;
    unsigned n = 0, written;
    rdl__cmd *k;
    for (q = cn->sent.next; q != &cn->sent; q = q->next)
        n++;
    written = n - (cn->buffered < n ? cn->buffered : n);
    cn->buffered = 0;
    while ((k = pop(&cn->sent)) != NULL) {
        if (k->handshake)
            k->fn = NULL;
        finish(k, written > 0 ? RDL_ECONNLOST : RDL_ECLOSED, NULL);
        if (written > 0)
            written--;
    }
}

static void on_flush(uv_prepare_t *p);

static void on_kick(uv_idle_t *h)
{
    uv_idle_stop(h);
}

/* Flushers run in the loop's prepare phase, just before it polls. One
 * started during that phase (by what another connection's flush set off:
 * a batch's callbacks, a Sentinel round that a parked call began) runs
 * only in the next iteration, after a poll that would wait for the next
 * timer or I/O: seconds. An active idle handle makes that poll return at
 * once. */
static void start_flusher(rdl__conn *cn)
{
    if (cn->state == RDL__CN_CLOSED ||
        uv_is_active((uv_handle_t *)&cn->flusher))
        return;
    uv_prepare_start(&cn->flusher, on_flush);
    if (cn->net->flushing > 0 && !cn->in_flush)
        uv_idle_start(&cn->kick, on_kick);
}

static int append(rdl__conn *cn, const char *buf, size_t len)
{
    if (cn->wlen + len > cn->wcap) {
        size_t cap = cn->wcap ? cn->wcap : 4096;
        char *nb;
        while (cap < cn->wlen + len)
            cap *= 2;
        nb = rdl__realloc(cn->wbuf, cap);
        if (nb == NULL)
            return RDL_ENOMEM;
        cn->wbuf = nb;
        cn->wcap = cap;
    }
    memcpy(cn->wbuf + cn->wlen, buf, len);
    cn->wlen += len;
    start_flusher(cn);
    return 0;
}

static void on_cmd_timer(uv_timer_t *t);

static void arm_cmd_timer(rdl__conn *cn)
{
    uint64_t at = UINT64_MAX, now;
    if (uv_is_active((uv_handle_t *)&cn->cmd_timer))
        return;
    if (!rdl__queue_empty(&cn->sent))
        at = RDL_CONTAINER_OF(rdl__queue_head(&cn->sent), rdl__cmd, node)
                 ->deadline;
    if (!rdl__queue_empty(&cn->unsent)) {
        uint64_t u =
            RDL_CONTAINER_OF(rdl__queue_head(&cn->unsent), rdl__cmd, node)
                ->deadline;
        at = u < at ? u : at;
    }
    if (at == UINT64_MAX)
        return;
    now = rdl__now_ms();
    uv_timer_start(&cn->cmd_timer, on_cmd_timer, at > now ? at - now : 0, 0);
}

/* ---- writing ------------------------------------------------------------ */

static void on_written(uv_write_t *req, int status)
{
    wreq *w = RDL_CONTAINER_OF(req, wreq, req);
    rdl__free(w->buf);
    rdl__free(w);
    (void)status; /* a failed write shows up as a read error too */
}

/* Buffers above this size are freed after a flush instead of kept. */
#define WBUF_KEEP (64 * 1024)

/* Most flushes fit in the socket's send buffer, so they are written with
 * uv_try_write(): no write request, no completion callback in the next
 * iteration, no epoll_ctl() to stop watching for POLLOUT again (libuv's
 * uv_write() pays both even when the write completes at once). Only what
 * the kernel did not take goes through uv_write(), which then owns the
 * buffer; uv_try_write() refuses while such a write is queued, so the
 * order of bytes is kept.
 *
 * Writes len bytes of buf, which is cn->wbuf (own 0: kept for the next
 * flush if the kernel takes it all) or a buffer of the caller's that the
 * write frees (own 1). Returns 1 if everything was written at once, 0 if
 * uv_write() took the buffer over, -1 if the connection was dropped. */
static int write_bytes(rdl__conn *cn, char *buf, size_t len, int own)
{
    uv_stream_t *stream = (uv_stream_t *)&cn->sk->tcp;
    uv_buf_t b = uv_buf_init(buf, (unsigned)len);
    size_t done;
    wreq *w;
    int rc = uv_try_write(stream, &b, 1);

    if (rc < 0 && rc != UV_EAGAIN) {
        if (own)
            rdl__free(buf);
        io_failed(cn, rc);
        return -1;
    }
    done = rc > 0 ? (size_t)rc : 0;
    if (done == len) {
        if (own)
            rdl__free(buf);
        return 1;
    }
    w = rdl__malloc(sizeof(*w));
    if (w == NULL) {
        if (own)
            rdl__free(buf);
        rdl__conn_drop(cn, RDL_ECONNLOST, "out of memory while writing");
        return -1;
    }
    w->buf = buf;
    if (!own) {
        cn->wbuf = NULL;
        cn->wlen = cn->wcap = 0;
        cn->buffered = 0;
    }
    b = uv_buf_init(buf + done, (unsigned)(len - done));
    rc = uv_write(&w->req, stream, &b, 1, on_written);
    if (rc != 0) {
        rdl__free(w->buf);
        rdl__free(w);
        rdl__conn_drop(cn, RDL_ECONNLOST, uv_strerror(rc));
        return -1;
    }
    return 0;
}

int rdl__conn_write_cipher(rdl__conn *cn)
{
    char *buf;
    size_t len;
    if (rdl__tls_take(cn->tls, &buf, &len) != 0) {
        rdl__conn_drop(cn, RDL_ECONNLOST, "out of memory while writing");
        return -1;
    }
    if (len == 0)
        return 0;
    return write_bytes(cn, buf, len, 1) < 0 ? -1 : 0;
}

void rdl__conn_flush_soon(rdl__conn *cn)
{
    if (cn->state != RDL__CN_CLOSED &&
        uv_is_active((uv_handle_t *)&cn->flusher))
        cn->flush_soon = 1;
}

static void flush(rdl__conn *cn)
{
    char why[256];

    uv_prepare_stop(&cn->flusher);
    cn->flush_soon = 0;
    if (cn->wlen == 0 || cn->sk == NULL)
        return;
    if (cn->tls != NULL) {
        int rc = rdl__tls_write(cn->tls, cn->wbuf, cn->wlen, why, sizeof(why));
        cn->wlen = 0;
        cn->buffered = 0;
        if (rc != 0) {
            rdl__conn_drop(cn, rc == RDL_ETLS ? RDL_ETLS : RDL_ECONNLOST, why);
            return;
        }
        (void)rdl__conn_write_cipher(cn);
    } else if (write_bytes(cn, cn->wbuf, cn->wlen, 0) == 1) {
        cn->wlen = 0;
        cn->buffered = 0;
    }
    if (cn->wlen == 0 && cn->wcap > WBUF_KEEP) {
        rdl__free(cn->wbuf);
        cn->wbuf = NULL;
        cn->wcap = 0;
    }
}

static void on_flush(uv_prepare_t *p)
{
    rdl__conn *cn = p->data;
    rdl__net *net = cn->net; /* cn may be closed by what the flush runs */
    net->flushing++;
    cn->in_flush = 1;
    flush(cn);
    cn->in_flush = 0;
    net->flushing--;
}

/* A command whose bytes were just appended to the write buffer: they leave
 * in this loop iteration's flush, so from now on the server may run it. */
static void to_sent(rdl__conn *cn, rdl__cmd *k)
{
    k->written = rdl__now_ms();
    rdl__queue_insert_tail(&cn->sent, &k->node);
    cn->buffered++;
}

void rdl__conn_write_unsent(rdl__conn *cn)
{
    rdl__cmd *k;
    while (!rdl__queue_empty(&cn->unsent)) {
        k = RDL_CONTAINER_OF(rdl__queue_head(&cn->unsent), rdl__cmd, node);
        if (append(cn, k->buf, k->len) != 0) {
            rdl__conn_drop(cn, RDL_ECONNLOST, "out of memory while writing");
            return;
        }
        rdl__free(k->buf);
        k->buf = NULL;
        rdl__queue_remove(&k->node);
        to_sent(cn, k);
        RDL__STAT_INC(cn->net, commands);
    }
}

int rdl__conn_send_first(rdl__conn *cn, int argc, const char **argv,
                         rdl__reply_fn fn, void *data)
{
    return rdl__conn_send_firstv(cn, argc, argv, NULL, fn, data);
}

int rdl__conn_send_firstv(rdl__conn *cn, int argc, const char **argv,
                          const size_t *lens, rdl__reply_fn fn, void *data)
{
    char *buf = NULL;
    int len = redisFormatCommandArgv(&buf, argc, argv, lens), rc;
    rdl__cmd *k;
    if (len < 0)
        return RDL_ENOMEM;
    k = rdl__calloc(1, sizeof(*k));
    rc = k != NULL ? append(cn, buf, (size_t)len) : RDL_ENOMEM;
    redisFreeCommand(buf);
    if (rc != 0) {
        rdl__free(k);
        return rc;
    }
    rdl__queue_init(&k->node);
    k->fn = fn;
    k->data = data;
    k->handshake = 1;
    k->deadline = UINT64_MAX; /* the connect timer bounds the handshake */
    to_sent(cn, k);
    return 0;
}

int rdl__conn_send(rdl__conn *cn, const char *buf, size_t len, rdl__reply_fn fn,
                   void *data)
{
    rdl__cmd *k;
    if (cn->state == RDL__CN_CLOSED)
        return RDL_ECLOSED;
    k = rdl__calloc(1, sizeof(*k));
    if (k == NULL)
        return RDL_ENOMEM;
    rdl__queue_init(&k->node);
    k->fn = fn;
    k->data = data;
    k->deadline = rdl__now_ms() + (uint64_t)cn->net->command_ms;
    if (cn->state == RDL__CN_READY) {
        if (append(cn, buf, len) != 0) {
            rdl__free(k);
            return RDL_ENOMEM;
        }
        to_sent(cn, k);
        RDL__STAT_INC(cn->net, commands);
    } else {
        k->buf = rdl__malloc(len);
        if (k->buf == NULL) {
            rdl__free(k);
            return RDL_ENOMEM;
        }
        memcpy(k->buf, buf, len);
        k->len = len;
        rdl__queue_insert_tail(&cn->unsent, &k->node);
        if (cn->state == RDL__CN_IDLE)
            cn->steps->connect(cn); /* connect.c */
    }
    arm_cmd_timer(cn);
    return 0;
}

int rdl__conn_sendv(rdl__conn *cn, int argc, const char **argv,
                    const size_t *argvlen, rdl__reply_fn fn, void *data)
{
    char *buf = NULL;
    int len = redisFormatCommandArgv(&buf, argc, argv, argvlen), rc;
    if (len < 0)
        return RDL_ENOMEM;
    rc = rdl__conn_send(cn, buf, (size_t)len, fn, data);
    redisFreeCommand(buf);
    return rc;
}

/* ---- failure and reconnection ------------------------------------------ */

static void on_backoff(uv_timer_t *t)
{
    rdl__conn *cn = t->data;
    cn->steps->connect(cn);
}

void rdl__conn_drop(rdl__conn *cn, int status, const char *why)
{
    unsigned delay, shift;
    int was_ready = cn->state == RDL__CN_READY;

    if (cn->state == RDL__CN_CLOSED || cn->state == RDL__CN_BACKOFF)
        return;
    close_sock(cn);
    if (cn->res != NULL) {
        cn->res->cn = NULL; /* its callback frees it */
        cn->res = NULL;
    }
    uv_timer_stop(&cn->timer);
    if (cn->reader != NULL)
        redisReaderFree(cn->reader);
    cn->reader = NULL;
    rdl__free(cn->wbuf);
    cn->wbuf = NULL;
    cn->wlen = cn->wcap = 0;
    cn->buffered = 0; /* failed below as written: conservative */
    cn->state = RDL__CN_BACKOFF;
    cn->attempt++;
    shift = cn->attempt - 1 < 6 ? cn->attempt - 1 : 6;
    delay = BACKOFF_BASE_MS << shift;
    delay = delay < BACKOFF_MAX_MS ? delay : BACKOFF_MAX_MS;
    delay = delay / 2 + randombytes_uniform(delay / 2 + 1);
    uv_timer_start(&cn->timer, on_backoff, delay, 0);

    rdl__errmsg_set(cn->net->owner, "%s %s: %s",
                    was_ready ? "connection to" : "connect", cn->addr, why);
    /* Written commands may or may not have run. */
    fail_queue(&cn->sent, RDL_ECONNLOST);
    uv_timer_stop(&cn->cmd_timer);
    arm_cmd_timer(cn);
    if (cn->ev->down != NULL)
        cn->ev->down(cn, status, cn->data);
}

static void on_cmd_timer(uv_timer_t *t)
{
    rdl__conn *cn = t->data;
    uint64_t now = rdl__now_ms();
    rdl__cmd *k;

    if (!rdl__queue_empty(&cn->sent)) {
        k = RDL_CONTAINER_OF(rdl__queue_head(&cn->sent), rdl__cmd, node);
        if (k->deadline <= now) {
            rdl__queue_remove(&k->node);
            RDL__STAT_INC(cn->net, cmd_timeouts);
            /* Later replies can no longer be matched to their commands, so
             * the connection is reset first; commands that the callback
             * sends then wait for the new connection. */
            cn->attempt = 0;
            rdl__conn_drop(cn, RDL_ECONNLOST, "reset after a command timeout");
            rdl__errmsg_set(cn->net->owner, "%s: no reply within %lld ms",
                            cn->addr, (long long)cn->net->command_ms);
            finish(k, RDL_ECMDTIMEOUT, NULL);
        }
    }
    while (!rdl__queue_empty(&cn->unsent)) {
        k = RDL_CONTAINER_OF(rdl__queue_head(&cn->unsent), rdl__cmd, node);
        if (k->deadline > now)
            break;
        rdl__queue_remove(&k->node);
        rdl__errmsg_set(cn->net->owner, "not connected to %s within %lld ms",
                        cn->addr, (long long)cn->net->command_ms);
        finish(k, RDL_ECONNREFUSED, NULL);
    }
    arm_cmd_timer(cn);
}

/* ---- reading ------------------------------------------------------------ */

void rdl__conn_on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
    rdl__sock *sk = h->data;
    (void)hint;
    *b = uv_buf_init(sk->cn->rbuf, RDL__CONN_READ_BUF);
}

static void dispatch(rdl__conn *cn, const redisReply *r)
{
    int code = rdl__reply_code(r);
    rdl__cmd *k;
    if (code == RDL__REPLY_MESSAGE && cn->ev->message != NULL) {
        cn->ev->message(cn, r, cn->data);
        return;
    }
    /* A cluster node unsubscribes sharded channels unasked when their slot
     * leaves it; such a push answers no command. */
    if (code == RDL__REPLY_SUNSUBSCRIBE && cn->ev->unsubscribed != NULL &&
        cn->ev->unsubscribed(cn, r, cn->data))
        return;
    k = pop(&cn->sent);
    if (k == NULL) {
        rdl__conn_drop(cn, RDL_EPROTO, "reply without a command");
        return;
    }
    finish(k, code > 0 ? 0 : code, r);
}

/* Decodes and dispatches what the reader holds. */
static void read_replies(rdl__conn *cn, const rdl__sock *sk, const char *buf,
                         size_t n)
{
    void *reply;
    if (redisReaderFeed(cn->reader, buf, n) != REDIS_OK) {
        rdl__conn_drop(cn, RDL_EPROTO, "protocol error");
        return;
    }
    while (cn->sk == sk) {
        if (redisReaderGetReply(cn->reader, &reply) != REDIS_OK) {
            rdl__conn_drop(cn, RDL_EPROTO, "protocol error");
            return;
        }
        if (reply == NULL)
            break;
        dispatch(cn, reply);
        freeReplyObject(reply);
        /* Between two replies nothing but this loop is on the stack: a
         * safe place to write (a failed write drops the connection, and
         * the loop ends). */
        if (cn->sk == sk && cn->flush_soon)
            on_flush(&cn->flusher);
    }
}

/* Ciphertext from the socket: decrypted record by record. A TLS failure
 * before the connection is ready (a refused client certificate, with TLS
 * 1.3) fails the attempt with RDL_ETLS; later it is a lost connection. */
static void read_tls(rdl__conn *cn, const rdl__sock *sk, const char *buf,
                     size_t n)
{
    char plain[16 * 1024], why[256];
    int got;
    if (rdl__tls_feed(cn->tls, buf, n) != 0) {
        rdl__conn_drop(cn, RDL_ECONNLOST, "out of memory while reading");
        return;
    }
    if (cn->state == RDL__CN_TLS_HANDSHAKE) {
        cn->steps->tls_step(cn);
        if (cn->sk != sk || cn->state == RDL__CN_TLS_HANDSHAKE)
            return;
    }
    while (cn->sk == sk && cn->tls != NULL) {
        got = rdl__tls_read(cn->tls, plain, sizeof(plain), why, sizeof(why));
        if (got == 0)
            break;
        if (got < 0) {
            rdl__conn_drop(cn,
                           got == RDL_ETLS && cn->state != RDL__CN_READY
                               ? RDL_ETLS
                               : RDL_ECONNLOST,
                           why);
            return;
        }
        read_replies(cn, sk, plain, (size_t)got);
    }
    if (cn->sk == sk && cn->tls != NULL)
        (void)rdl__conn_write_cipher(cn); /* e.g. an answer to a key update */
}

/* A read or write failed with libuv's error n: the connection is dropped,
 * with a hint at the likely cause while connecting. A TLS port spoken to in
 * plain text closes or resets the connection at once; a TLS server that
 * refuses the client's certificate (TLS 1.3) closes it right after the
 * handshake, and the reset its close causes can discard its alert. */
static void io_failed(rdl__conn *cn, int n)
{
    char why[256];
    int gone = n == UV_EOF || n == UV_ECONNRESET || n == UV_EPIPE;
    if (gone && cn->state == RDL__CN_TLS_HANDSHAKE) {
        rdl__conn_drop(
            cn, RDL_ETLS,
            "TLS: the server closed the connection during the handshake");
    } else if (gone && cn->state == RDL__CN_HANDSHAKE && cn->tls != NULL) {
        rdl__tls_closed_early(cn->tls, why, sizeof(why));
        rdl__conn_drop(cn, RDL_ETLS, why);
    } else if (gone && cn->state == RDL__CN_HANDSHAKE) {
        rdl__conn_drop(cn, RDL_ECONNLOST,
                       "closed by the server before answering (a TLS port? use "
                       "rediss://)");
    } else {
        rdl__conn_drop(cn, RDL_ECONNLOST,
                       n == UV_EOF ? "closed by the server" : uv_strerror(n));
    }
}

void rdl__conn_on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    rdl__sock *sk = s->data;
    rdl__conn *cn = sk->cn;

    if (n == 0 || cn->sk != sk)
        return;
    if (n < 0) {
        io_failed(cn, (int)n);
        return;
    }
    if (cn->tls != NULL)
        read_tls(cn, sk, b->base, (size_t)n);
    else
        read_replies(cn, sk, b->base, (size_t)n);
}

/* ---- lifecycle ---------------------------------------------------------- */

void rdl__conn_init_handle(rdl__conn *cn, uv_handle_t *h)
{
    h->data = cn;
    cn->handles++;
    rdl__net_handle_opened(cn->net);
}

void rdl__conn_close(rdl__conn *cn)
{
    if (cn == NULL || cn->state == RDL__CN_CLOSED)
        return;
    close_sock(cn);
    if (cn->res != NULL) {
        cn->res->cn = NULL;
        uv_cancel((uv_req_t *)&cn->res->req);
        cn->res = NULL;
    }
    cn->state = RDL__CN_CLOSED;
    uv_close((uv_handle_t *)&cn->timer, on_handle_closed);
    uv_close((uv_handle_t *)&cn->cmd_timer, on_handle_closed);
    uv_close((uv_handle_t *)&cn->flusher, on_handle_closed);
    uv_close((uv_handle_t *)&cn->kick, on_handle_closed);
    if (cn->reader != NULL)
        redisReaderFree(cn->reader);
    cn->reader = NULL;
    rdl__free(cn->wbuf);
    cn->wbuf = NULL;
    /* Written and unanswered: the server may have run them, so their
     * outcome is unknown (the client closing is no excuse to call it a
     * caller error). Never written: they did not run. */
    fail_sent(cn);
    fail_queue(&cn->unsent, RDL_ECLOSED);
    if (cn->ext_free != NULL) {
        void (*free_fn)(void *data) = cn->ext_free;
        void *ext = cn->ext;
        cn->ext = NULL;
        cn->ext_free = NULL;
        free_fn(ext);
    }
}

/* ---- what others ask of it --------------------------------------------- */

int rdl__conn_attach(rdl__conn *cn, void *data, void (*free_fn)(void *data))
{
    if (cn->state == RDL__CN_CLOSED)
        return RDL_ECLOSED;
    cn->ext = data;
    cn->ext_free = free_fn;
    return 0;
}

void *rdl__conn_attached(const rdl__conn *cn)
{
    return cn->ext;
}

unsigned rdl__conn_gen(const rdl__conn *cn)
{
    return cn->gen;
}

const rdl__net *rdl__conn_net(const rdl__conn *cn)
{
    return cn->net;
}

int rdl__conn_is_closed(const rdl__conn *cn)
{
    return cn->state == RDL__CN_CLOSED;
}

int rdl__conn_is_ready(const rdl__conn *cn)
{
    return cn->state == RDL__CN_READY;
}

const char *rdl__conn_addr(const rdl__conn *cn)
{
    return cn->addr;
}
