/* A fault proxy: a TCP relay on a thread of its own between rdl clients and
 * a real redis-server, which can lose a reply after the server applied the
 * command, lose a command before it got there, delay the bytes of one
 * connection kind, swallow everything, or cut every connection, on cue. The
 * fake node (fake.c) answers for the server; the proxy never does, so what
 * the server applied is exactly what the tests see on it.
 *
 * Both directions are parsed with a hiredis reader, but the bytes relayed
 * are the ones received, never re-encoded: a reader's unread bytes are
 * always the tail of what was fed to it, so the bytes of one complete
 * command or reply are what was fed since the previous one, minus that
 * tail. The Nth reply on a connection answers the Nth command relayed on
 * it, until the client subscribes: from then on replies are pushes that
 * answer nothing, so a subscriber connection's replies are never matched
 * (only those of commands sent before it subscribed).
 *
 * Server to client, bytes wait in a queue of chunks, each with the time it
 * may leave; the queue leaves in order, so a delay holds back everything
 * behind it and never reorders. A connection to be closed gets a marker in
 * that queue, so the replies before it still arrive first. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "rdlt.h"

#define MAX_CONNS 32
#define MAX_RULES 16
#define MAX_ARGS 64

enum { PASS, DROP_REPLY, DROP_REQUEST, DELAY_REPLY };

typedef struct rule {
    int kind; /* 0: a free slot */
    char cmd[32];
    char arg[128]; /* "": any arguments */
    int times;     /* < 0: every matching command */
    int64_t ms;
} rule;

typedef struct chunk {
    struct chunk *next;
    int64_t due; /* monotonic ms */
    int close;   /* a marker: close the connection here */
    size_t len;
    char data[];
} chunk;

typedef struct pending {
    int action;
    int64_t ms;
} pending;

typedef struct bytes {
    char *p;
    size_t len, cap;
} bytes;

typedef struct pconn {
    int cfd;     /* -1: a free slot */
    int ufd;     /* -1: not connected upstream (yet) */
    int sub;     /* the client has subscribed */
    int doomed;  /* a drop was decided: nothing more is relayed to the server */
    int closing; /* the close marker is queued: nothing more is read */
    int tainted; /* bytes were swallowed by a blackhole */
    redisReader *creader, *ureader;
    bytes craw, uraw; /* bytes fed to each reader, not yet parsed whole */
    pending *fifo;    /* commands relayed, oldest first, from `head` */
    size_t head, n, cap;
    chunk *out, *out_tail;
} pconn;

struct rdlt_proxy {
    int running; /* the thread was started (rdlt_proxy_run) */
    rdlt_server *upstream;
    int lfd;
    int port;
    char url[64];
    int wake[2];
    pthread_t thread;
    pthread_mutex_t mu;          /* guards everything below */
    pthread_cond_t cv;           /* the thread finished a round */
    unsigned long started, done; /* rounds of the thread's loop */
    int stopping;
    int blackhole;
    int hold_new;
    unsigned long reset_asked, reset_done;
    int reset_rst;
    int64_t delay_ms[2]; /* [0] subscriber, [1] command connections */
    rule rules[MAX_RULES];
    int open; /* client connections open */
    rdlt_cmdlog cmds;
    pconn cn[MAX_CONNS]; /* the thread's own */
};

/* ---- buffers ------------------------------------------------------------ */

static void put(bytes *b, const char *s, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (b->p == NULL)
            abort();
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void consume(bytes *b, size_t n)
{
    memmove(b->p, b->p + n, b->len - n);
    b->len -= n;
}

/* Writes everything; the sockets are blocking with a send timeout, so a
 * peer that stops reading fails the connection instead of the thread.
 * MSG_NOSIGNAL: test processes keep SIGPIPE's default action. */
static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void enqueue(pconn *k, const char *p, size_t n, int64_t due, int close)
{
    chunk *c = malloc(sizeof(*c) + n);
    if (c == NULL)
        abort();
    c->next = NULL;
    c->due = due;
    c->close = close;
    c->len = n;
    if (n > 0) /* a close marker has no bytes, and p may be NULL */
        memcpy(c->data, p, n);
    if (k->out_tail != NULL)
        k->out_tail->next = c;
    else
        k->out = c;
    k->out_tail = c;
}

/* ---- connections ---------------------------------------------------------- */

static void set_open(rdlt_proxy *p, int delta)
{
    pthread_mutex_lock(&p->mu);
    p->open += delta;
    pthread_mutex_unlock(&p->mu);
}

/* Closes both sides; with rst the client gets a reset instead of a FIN. */
static void drop_conn(rdlt_proxy *p, pconn *k, int rst)
{
    chunk *c, *next;
    if (k->cfd < 0)
        return;
    if (rst) {
        struct linger lg = {1, 0};
        (void)setsockopt(k->cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        if (k->ufd >= 0)
            (void)setsockopt(k->ufd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    }
    close(k->cfd);
    if (k->ufd >= 0)
        close(k->ufd);
    redisReaderFree(k->creader);
    redisReaderFree(k->ureader);
    free(k->craw.p);
    free(k->uraw.p);
    free(k->fifo);
    for (c = k->out; c != NULL; c = next) {
        next = c->next;
        free(c);
    }
    memset(k, 0, sizeof(*k));
    k->cfd = -1;
    k->ufd = -1;
    set_open(p, -1);
}

static void set_timeout(int fd)
{
    struct timeval tv = {5, 0};
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int connect_upstream(rdlt_proxy *p, pconn *k)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)rdlt_server_port(p->upstream));
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    set_timeout(fd);
    k->ufd = fd;
    return 0;
}

static void accept_conn(rdlt_proxy *p)
{
    int fd = accept4(p->lfd, NULL, NULL, SOCK_CLOEXEC), i;
    if (fd < 0)
        return;
    for (i = 0; i < MAX_CONNS; i++) {
        pconn *k = &p->cn[i];
        if (k->cfd >= 0)
            continue;
        k->cfd = fd;
        k->ufd = -1;
        k->creader = redisReaderCreate();
        k->ureader = redisReaderCreate();
        if (k->creader == NULL || k->ureader == NULL)
            abort();
        set_timeout(fd);
        set_open(p, 1);
        return;
    }
    close(fd); /* full */
}

/* ---- commands --------------------------------------------------------------- */

/* Counts and logs one command name (upper-case). */
static void record(rdlt_proxy *p, const char *name, size_t n)
{
    (void)rdlt_cmdlog_add(&p->cmds, name, n);
}

/* name (NUL-terminated) names the command a0 (len bytes): itself, or
 * "EVALSHA" for every script call, an FCALL included (rdlt.h). */
static int names(const char *name, const char *a0, size_t len)
{
    if (strlen(name) == len && strncasecmp(name, a0, len) == 0)
        return 1;
    return strcasecmp(name, "EVALSHA") == 0 && len == 5 &&
           strncasecmp(a0, "FCALL", 5) == 0;
}

static int matches(const rule *r, const redisReply *cmd)
{
    size_t i, alen = strlen(r->arg);
    const redisReply *a0 = cmd->element[0];
    if (!names(r->cmd, a0->str, a0->len))
        return 0;
    if (alen == 0)
        return 1;
    for (i = 1; i < cmd->elements; i++)
        if (memmem(cmd->element[i]->str, cmd->element[i]->len, r->arg, alen) !=
            NULL)
            return 1;
    return 0;
}

/* The first rule that matches cmd decides, and is used up by it. */
static pending decide(rdlt_proxy *p, const redisReply *cmd)
{
    pending d = {PASS, 0};
    int i;
    pthread_mutex_lock(&p->mu);
    for (i = 0; i < MAX_RULES; i++) {
        rule *r = &p->rules[i];
        if (r->kind == 0 || !matches(r, cmd))
            continue;
        d.action = r->kind;
        d.ms = r->ms;
        if (r->times > 0 && --r->times == 0)
            r->kind = 0;
        break;
    }
    pthread_mutex_unlock(&p->mu);
    return d;
}

static int is_subscribe(const redisReply *a0)
{
    static const char *const names[] = {"SUBSCRIBE", "SSUBSCRIBE",
                                        "PSUBSCRIBE"};
    size_t i;
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i]) == a0->len &&
            strncasecmp(names[i], a0->str, a0->len) == 0)
            return 1;
    return 0;
}

static void push(pconn *k, pending d)
{
    if (k->head + k->n == k->cap) {
        if (k->head > 0) {
            memmove(k->fifo, k->fifo + k->head, k->n * sizeof(*k->fifo));
            k->head = 0;
        } else {
            k->cap = k->cap * 2 + 8;
            k->fifo = realloc(k->fifo, k->cap * sizeof(*k->fifo));
            if (k->fifo == NULL)
                abort();
        }
    }
    k->fifo[k->head + k->n++] = d;
}

/* Queues the close once every reply before a dropped command has gone. */
static void close_when_due(pconn *k)
{
    if (!k->closing && k->n > 0 && k->fifo[k->head].action == DROP_REQUEST) {
        enqueue(k, NULL, 0, 0, 1);
        k->closing = 1;
    }
}

/* One complete command from the client, raw[0..len). Returns -1 when the
 * connection must close now. */
static int on_command(rdlt_proxy *p, pconn *k, const redisReply *cmd,
                      const char *raw, size_t len)
{
    pending d;
    size_t i;
    if (cmd->type != REDIS_REPLY_ARRAY || cmd->elements == 0)
        return -1;
    for (i = 0; i < cmd->elements; i++)
        if (cmd->element[i]->type != REDIS_REPLY_STRING)
            return -1;
    record(p, cmd->element[0]->str, cmd->element[0]->len);
    if (k->doomed)
        return 0; /* the client sees the connection close instead */
    d = decide(p, cmd);
    if (d.action == DROP_REQUEST) {
        push(k, d);
        k->doomed = 1;
        close_when_due(k);
        return 0;
    }
    if (send_all(k->ufd, raw, len) != 0)
        return -1;
    if (is_subscribe(cmd->element[0]))
        k->sub = 1;
    if (d.action == DROP_REPLY) {
        k->doomed = 1;
        /* No reply of a subscriber connection can be matched: close right
         * after the command, which the server still reads before the FIN. */
        if (k->sub) {
            enqueue(k, NULL, 0, 0, 1);
            k->closing = 1;
            return 0;
        }
    }
    if (!k->sub)
        push(k, d);
    return 0;
}

/* One complete reply from the server, raw[0..len). */
static void on_reply(rdlt_proxy *p, pconn *k, const char *raw, size_t len)
{
    pending d = {PASS, 0};
    int64_t now = rdlt_now_ms(), ms;
    if (k->n > 0) {
        d = k->fifo[k->head++];
        k->n--;
    }
    pthread_mutex_lock(&p->mu);
    ms = p->delay_ms[k->sub ? 0 : 1];
    pthread_mutex_unlock(&p->mu);
    if (d.action == DROP_REPLY) {
        enqueue(k, NULL, 0, 0, 1);
        k->closing = 1;
        return;
    }
    if (d.action == DELAY_REPLY && d.ms > ms)
        ms = d.ms;
    enqueue(k, raw, len, now + ms, 0);
    close_when_due(k);
}

/* Reads what one side sent and relays it. Returns -1 to close now. */
static int on_readable(rdlt_proxy *p, pconn *k, int from_client, int swallow)
{
    char in[16384];
    int fd = from_client ? k->cfd : k->ufd;
    redisReader *r = from_client ? k->creader : k->ureader;
    bytes *raw = from_client ? &k->craw : &k->uraw;
    ssize_t n = read(fd, in, sizeof(in));
    void *obj;

    if (n <= 0) {
        if (from_client)
            return -1;
        /* The server closed: what it sent before still reaches the
         * client, then the client's side closes. */
        enqueue(k, NULL, 0, 0, 1);
        k->closing = 1;
        return 0;
    }
    if (swallow) {
        k->tainted = 1;
        return 0;
    }
    if (redisReaderFeed(r, in, (size_t)n) != REDIS_OK)
        return -1;
    put(raw, in, (size_t)n);
    while (!k->closing) {
        size_t whole;
        if (redisReaderGetReply(r, &obj) != REDIS_OK)
            return -1;
        if (obj == NULL)
            break;
        whole = raw->len - (r->len - r->pos);
        if (from_client) {
            if (on_command(p, k, obj, raw->p, whole) != 0) {
                freeReplyObject(obj);
                return -1;
            }
        } else {
            on_reply(p, k, raw->p, whole);
        }
        freeReplyObject(obj);
        consume(raw, whole);
    }
    return 0;
}

/* Sends the queued chunks that are due; returns -1 to close now. */
static int flush(pconn *k, int64_t now)
{
    while (k->out != NULL && k->out->due <= now) {
        chunk *c = k->out;
        if (c->close)
            return -1;
        if (send_all(k->cfd, c->data, c->len) != 0)
            return -1;
        k->out = c->next;
        if (k->out == NULL)
            k->out_tail = NULL;
        free(c);
    }
    return 0;
}

/* ---- the thread ----------------------------------------------------------- */

static void *run(void *arg)
{
    rdlt_proxy *p = arg;
    struct pollfd pf[2 + 2 * MAX_CONNS];
    pconn *who[2 + 2 * MAX_CONNS];
    int i, n, blackhole, hold_new, rst;
    unsigned long reset, round;

    for (;;) {
        int64_t now = rdlt_now_ms(), next = -1;
        int timeout = -1;

        pthread_mutex_lock(&p->mu);
        if (p->stopping) {
            pthread_mutex_unlock(&p->mu);
            break;
        }
        round = ++p->started;
        blackhole = p->blackhole;
        hold_new = p->hold_new;
        reset = p->reset_asked;
        rst = p->reset_rst;
        pthread_mutex_unlock(&p->mu);

        for (i = 0; i < MAX_CONNS; i++) {
            pconn *k = &p->cn[i];
            if (k->cfd < 0)
                continue;
            if (reset != p->reset_done || (!blackhole && k->tainted)) {
                drop_conn(p, k, reset != p->reset_done && rst);
                continue;
            }
            if (blackhole)
                continue;
            if (k->ufd < 0 && !hold_new && connect_upstream(p, k) != 0) {
                drop_conn(p, k, 0);
                continue;
            }
            if (flush(k, now) != 0) {
                drop_conn(p, k, 0);
                continue;
            }
            if (k->out != NULL && (next < 0 || k->out->due < next))
                next = k->out->due;
        }

        /* Told only now, so a caller that waits sees this round's work. */
        pthread_mutex_lock(&p->mu);
        p->reset_done = reset;
        p->done = round;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);

        n = 0;
        pf[n].fd = p->wake[0];
        pf[n++].events = POLLIN;
        pf[n].fd = p->lfd;
        pf[n++].events = POLLIN;
        for (i = 0; i < MAX_CONNS; i++) {
            pconn *k = &p->cn[i];
            if (k->cfd < 0)
                continue;
            /* A held connection is not read until it is connected; a
             * blackhole reads everything, to swallow it. */
            if (blackhole || (k->ufd >= 0 && !k->doomed)) {
                who[n] = k;
                pf[n].fd = k->cfd;
                pf[n++].events = POLLIN;
            }
            if (k->ufd >= 0 && !k->closing) {
                who[n] = k;
                pf[n].fd = k->ufd;
                pf[n++].events = POLLIN;
            }
        }
        if (next >= 0)
            timeout = next > now ? (int)(next - now) : 0;
        if (poll(pf, (nfds_t)n, timeout) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (pf[0].revents & POLLIN) {
            char b[64];
            ssize_t r = read(p->wake[0], b, sizeof(b));
            (void)r; /* only wakes the loop */
        }
        if (pf[1].revents & POLLIN)
            accept_conn(p);
        for (i = 2; i < n; i++) {
            pconn *k = who[i];
            /* k->cfd < 0: its other socket closed it this round. */
            if (k->cfd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (on_readable(p, k, pf[i].fd == k->cfd, blackhole) != 0)
                drop_conn(p, k, 0);
        }
    }
    for (i = 0; i < MAX_CONNS; i++)
        drop_conn(p, &p->cn[i], 0);
    return NULL;
}

/* ---- API -------------------------------------------------------------------- */

/* Wakes the thread. The pipe does not block: when it is full, the thread
 * has wake-ups enough. */
static void poke(rdlt_proxy *p)
{
    char b = 0;
    if (write(p->wake[1], &b, 1) != 1 && errno != EAGAIN)
        abort();
}

/* Waits until the thread has done a round that started after the caller
 * changed the settings (under p->mu, which the caller holds), so the change
 * has been acted on: connections reset, or relaying resumed. */
static void wait_round(rdlt_proxy *p)
{
    unsigned long want = p->started + 1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 10;
    poke(p);
    while (p->done < want && !p->stopping)
        if (pthread_cond_timedwait(&p->cv, &p->mu, &ts) != 0) {
            pthread_mutex_unlock(&p->mu);
            fail_msg("rdlt_proxy: the proxy thread does not answer");
        }
}

static void destroy(void *ptr)
{
    rdlt_proxy *p = ptr;
    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    pthread_mutex_unlock(&p->mu);
    poke(p);
    if (p->running)
        pthread_join(p->thread, NULL);
    close(p->wake[0]);
    close(p->wake[1]);
    close(p->lfd);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    rdlt_cmdlog_free(&p->cmds);
    free(p);
}

rdlt_proxy *rdlt_proxy_new(rdlt_server *upstream)
{
    rdlt_proxy *p = calloc(1, sizeof(*p));
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    int i;

    assert_non_null(p);
    p->upstream = upstream;
    for (i = 0; i < MAX_CONNS; i++) {
        p->cn[i].cfd = -1;
        p->cn[i].ufd = -1;
    }
    pthread_mutex_init(&p->mu, NULL);
    rdlt_cmdlog_init(&p->cmds);
    pthread_cond_init(&p->cv, NULL);
    p->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(p->lfd >= 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(p->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(p->lfd, 16), 0);
    assert_int_equal(getsockname(p->lfd, (struct sockaddr *)&a, &alen), 0);
    p->port = ntohs(a.sin_port);
    snprintf(p->url, sizeof(p->url), "redis://127.0.0.1:%d", p->port);
    assert_int_equal(pipe2(p->wake, O_CLOEXEC | O_NONBLOCK), 0);
    rdlt_defer(destroy, p);
    return p;
}

void rdlt_proxy_run(rdlt_proxy *p)
{
    assert_false(p->running);
    assert_int_equal(pthread_create(&p->thread, NULL, run, p), 0);
    p->running = 1;
}

rdlt_proxy *rdlt_proxy_start(rdlt_server *upstream)
{
    rdlt_proxy *p = rdlt_proxy_new(upstream);
    rdlt_proxy_run(p);
    return p;
}

int rdlt_proxy_port(const rdlt_proxy *p)
{
    return p->port;
}

const char *rdlt_proxy_url(const rdlt_proxy *p)
{
    return p->url;
}

rdl_client_t *rdlt_proxy_client(rdlt_proxy *p)
{
    rdl_client_t *c = rdlt_client_new(p->url);
    int rc;
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 1000));
    rc = rdl_client_connect(c);
    if (rc != 0)
        fail_msg("rdl_client_connect(%s): %s: %s", p->url, rdl_err_name(rc),
                 rdl_client_errmsg(c));
    return c;
}

static void add_rule(rdlt_proxy *p, int kind, const char *cmd,
                     const char *arg_substr, int times, int64_t ms)
{
    int i;
    assert_non_null(cmd);
    assert_true(strlen(cmd) < sizeof(p->rules[0].cmd));
    assert_true(arg_substr == NULL ||
                strlen(arg_substr) < sizeof(p->rules[0].arg));
    assert_true(times != 0);
    pthread_mutex_lock(&p->mu);
    for (i = 0; i < MAX_RULES && p->rules[i].kind != 0; i++)
        ;
    if (i == MAX_RULES) {
        pthread_mutex_unlock(&p->mu);
        fail_msg("rdlt_proxy: more than %d rules", MAX_RULES);
    }
    p->rules[i].kind = kind;
    snprintf(p->rules[i].cmd, sizeof(p->rules[i].cmd), "%s", cmd);
    snprintf(p->rules[i].arg, sizeof(p->rules[i].arg), "%s",
             arg_substr != NULL ? arg_substr : "");
    p->rules[i].times = times;
    p->rules[i].ms = ms;
    pthread_mutex_unlock(&p->mu);
}

void rdlt_proxy_drop_reply(rdlt_proxy *p, const char *cmd,
                           const char *arg_substr, int times)
{
    add_rule(p, DROP_REPLY, cmd, arg_substr, times, 0);
}

void rdlt_proxy_drop_request(rdlt_proxy *p, const char *cmd,
                             const char *arg_substr, int times)
{
    add_rule(p, DROP_REQUEST, cmd, arg_substr, times, 0);
}

void rdlt_proxy_delay_reply(rdlt_proxy *p, const char *cmd,
                            const char *arg_substr, int64_t ms, int times)
{
    add_rule(p, DELAY_REPLY, cmd, arg_substr, times, ms);
}

void rdlt_proxy_clear_rules(rdlt_proxy *p)
{
    pthread_mutex_lock(&p->mu);
    memset(p->rules, 0, sizeof(p->rules));
    pthread_mutex_unlock(&p->mu);
}

void rdlt_proxy_delay(rdlt_proxy *p, int which, int64_t ms)
{
    pthread_mutex_lock(&p->mu);
    if (which & RDLT_PROXY_SUB)
        p->delay_ms[0] = ms;
    if (which & RDLT_PROXY_CMD)
        p->delay_ms[1] = ms;
    pthread_mutex_unlock(&p->mu);
}

void rdlt_proxy_blackhole(rdlt_proxy *p, int on)
{
    pthread_mutex_lock(&p->mu);
    p->blackhole = on;
    wait_round(p);
    pthread_mutex_unlock(&p->mu);
}

void rdlt_proxy_hold_new(rdlt_proxy *p, int on)
{
    pthread_mutex_lock(&p->mu);
    p->hold_new = on;
    wait_round(p);
    pthread_mutex_unlock(&p->mu);
}

void rdlt_proxy_reset(rdlt_proxy *p, int rst)
{
    pthread_mutex_lock(&p->mu);
    p->reset_asked++;
    p->reset_rst = rst;
    wait_round(p);
    pthread_mutex_unlock(&p->mu);
}

unsigned rdlt_proxy_count(rdlt_proxy *p, const char *cmd)
{
    unsigned n = rdlt_cmdlog_count(&p->cmds, cmd);
    if (strcasecmp(cmd, "EVALSHA") == 0)
        n += rdlt_cmdlog_count(&p->cmds, "FCALL");
    return n;
}

int rdlt_proxy_wait_count(rdlt_proxy *p, const char *cmd, unsigned n,
                          int64_t timeout_ms)
{
    int64_t deadline = rdlt_now_ms() + timeout_ms;
    while (rdlt_proxy_count(p, cmd) < n) {
        if (rdlt_now_ms() >= deadline)
            return -1;
        rdlt_sleep_ms(2);
    }
    return 0;
}

int rdlt_proxy_connections(rdlt_proxy *p)
{
    int n;
    pthread_mutex_lock(&p->mu);
    n = p->open;
    pthread_mutex_unlock(&p->mu);
    return n;
}

char *rdlt_proxy_log(rdlt_proxy *p)
{
    return rdlt_cmdlog_text(&p->cmds);
}
