/* A scripted fake Redis Cluster node: a small RESP server on a thread of
 * its own that answers CLUSTER SLOTS with a table of the test's choosing,
 * lets a rule function answer, refuse or drop any command, and forwards
 * the rest to a real (standalone) redis-server, so lock scripts really
 * run. Tests use it for what a real cluster cannot do on cue: MOVED, ASK,
 * TRYAGAIN, CLUSTERDOWN, NOSCRIPT and connections dropped at an exact
 * command. It plays a node without functions (FUNCTION is an unknown
 * command), so the client's script calls are EVALSHAs. */
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
#include <unistd.h>

#include "rdlt.h"

#define MAX_CLIENTS 16
/* Arguments of one command: rdl's batches send up to about 1000. */
#define MAX_ARGS 1100
/* Room for a rule's raw reply: enough for a bulk string of a megabyte,
 * as a hostile server might send instead of a script's answer. */
#define REPLY_MAX ((size_t)2 << 20)

typedef struct fclient {
    int fd; /* -1: free */
    redisReader *reader;
    redisContext *backend; /* opened on the first forwarded command */
} fclient;

struct rdlt_fake {
    rdlt_server *backend;
    rdlt_fake_rule rule;
    void *data;
    int lfd;
    int port;
    int owner_port; /* CLUSTER SLOTS names it for every slot */
    int wake[2];    /* a byte here stops the thread */
    pthread_t thread;
    rdlt_cmdlog cmds;
    fclient cl[MAX_CLIENTS];
    char *reply; /* REPLY_MAX bytes: a rule's answer (the thread's only) */
};

/* ---- output ------------------------------------------------------------- */

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static void put(buf *b, const char *s, size_t n)
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

static void putf(buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void putf(buf *b, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    put(b, tmp, (size_t)n);
}

/* A hiredis reply back into RESP2. */
static void encode(buf *b, const redisReply *r)
{
    size_t i;
    switch (r->type) {
    case REDIS_REPLY_STATUS:
        putf(b, "+%s\r\n", r->str);
        break;
    case REDIS_REPLY_ERROR:
        putf(b, "-");
        put(b, r->str, r->len);
        put(b, "\r\n", 2);
        break;
    case REDIS_REPLY_INTEGER:
        putf(b, ":%lld\r\n", r->integer);
        break;
    case REDIS_REPLY_NIL:
        putf(b, "$-1\r\n");
        break;
    case REDIS_REPLY_STRING:
        putf(b, "$%zu\r\n", r->len);
        put(b, r->str, r->len);
        put(b, "\r\n", 2);
        break;
    case REDIS_REPLY_ARRAY:
        putf(b, "*%zu\r\n", r->elements);
        for (i = 0; i < r->elements; i++)
            encode(b, r->element[i]);
        break;
    default:
        putf(b, "-ERR fake: reply type %d\r\n", r->type);
    }
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* ---- bookkeeping ---------------------------------------------------------- */

/* Logs the command's name ("CLUSTER", "EVALSHA") and returns how many
 * commands of that name this node has now received. */
static unsigned record(rdlt_fake *f, const char *name, size_t len)
{
    return rdlt_cmdlog_add(&f->cmds, name, len);
}

/* ---- commands ------------------------------------------------------------ */

static void drop_client(fclient *k)
{
    if (k->fd >= 0)
        close(k->fd);
    if (k->reader != NULL)
        redisReaderFree(k->reader);
    if (k->backend != NULL)
        redisFree(k->backend);
    k->fd = -1;
    k->reader = NULL;
    k->backend = NULL;
}

static int is(const redisReply *a, const char *s)
{
    return a->type == REDIS_REPLY_STRING && strlen(s) == a->len &&
           strncasecmp(a->str, s, a->len) == 0;
}

/* What a cluster node answers by itself. Returns 1 if it answered. */
static int builtin(rdlt_fake *f, const redisReply *cmd, buf *out)
{
    const redisReply *a0 = cmd->element[0];
    if (is(a0, "CLUSTER") && cmd->elements == 2 &&
        is(cmd->element[1], "SLOTS")) {
        int port = __atomic_load_n(&f->owner_port, __ATOMIC_SEQ_CST);
        putf(out,
             "*1\r\n*3\r\n:0\r\n:16383\r\n*3\r\n$9\r\n127.0.0.1\r\n"
             ":%d\r\n$4\r\nfake\r\n",
             port);
        return 1;
    }
    if (is(a0, "ASKING") || is(a0, "CLIENT") || is(a0, "AUTH")) {
        putf(out, "+OK\r\n");
        return 1;
    }
    /* A node without functions (as before Redis 7.0): the client's script
     * calls stay EVALSHAs, which the rules know how to answer. */
    if (is(a0, "FUNCTION")) {
        putf(out, "-ERR unknown command 'FUNCTION'\r\n");
        return 1;
    }
    /* Subscriptions are confirmed but nothing is ever published here:
     * waiters wake by their capped sleeps. */
    if ((is(a0, "SSUBSCRIBE") || is(a0, "SUNSUBSCRIBE")) &&
        cmd->elements == 2) {
        const redisReply *ch = cmd->element[1];
        int sub = is(a0, "SSUBSCRIBE");
        putf(out, "*3\r\n$%d\r\n%s\r\n$%zu\r\n", sub ? 10 : 12,
             sub ? "ssubscribe" : "sunsubscribe", ch->len);
        put(out, ch->str, ch->len);
        putf(out, "\r\n:%d\r\n", sub);
        return 1;
    }
    return 0;
}

static int forward(rdlt_fake *f, fclient *k, const redisReply *cmd, buf *out)
{
    const char *argv[MAX_ARGS];
    size_t lens[MAX_ARGS], i;
    redisReply *r;
    if (cmd->elements > MAX_ARGS)
        return -1;
    if (k->backend == NULL) {
        k->backend = redisConnect("127.0.0.1", rdlt_server_port(f->backend));
        if (k->backend == NULL || k->backend->err)
            return -1;
    }
    for (i = 0; i < cmd->elements; i++) {
        argv[i] = cmd->element[i]->str;
        lens[i] = cmd->element[i]->len;
    }
    r = redisCommandArgv(k->backend, (int)cmd->elements, argv, lens);
    if (r == NULL)
        return -1;
    encode(out, r);
    freeReplyObject(r);
    return 0;
}

/* Handles one command; returns -1 when the connection must close. */
static int handle(rdlt_fake *f, fclient *k, const redisReply *cmd)
{
    char *argv[MAX_ARGS], *reply = f->reply;
    size_t lens[MAX_ARGS], i;
    unsigned n;
    int action = RDLT_FAKE_FORWARD, rc = 0;
    buf out = {NULL, 0, 0};

    if (cmd->type != REDIS_REPLY_ARRAY || cmd->elements == 0 ||
        cmd->elements > MAX_ARGS)
        return -1;
    for (i = 0; i < cmd->elements; i++) {
        if (cmd->element[i]->type != REDIS_REPLY_STRING)
            return -1;
        argv[i] = cmd->element[i]->str;
        lens[i] = cmd->element[i]->len;
    }
    n = record(f, argv[0], lens[0]);
    reply[0] = '\0';
    if (f->rule != NULL)
        action = f->rule(f, f->data, (int)cmd->elements, argv, lens, n, reply,
                         REPLY_MAX);
    switch (action) {
    case RDLT_FAKE_REPLY:
        put(&out, reply, strlen(reply));
        break;
    case RDLT_FAKE_DROP:
        rc = -1;
        break;
    case RDLT_FAKE_FORWARD_DROP:
        (void)forward(f, k, cmd, &out);
        rc = -1;
        out.len = 0;
        break;
    default:
        if (!builtin(f, cmd, &out) && forward(f, k, cmd, &out) != 0)
            rc = -1;
    }
    if (rc == 0 && write_all(k->fd, out.p, out.len) != 0)
        rc = -1;
    free(out.p);
    return rc;
}

/* ---- the thread ----------------------------------------------------------- */

static void on_readable(rdlt_fake *f, fclient *k)
{
    char in[16384];
    ssize_t n = read(k->fd, in, sizeof(in));
    void *reply;
    if (n <= 0 || redisReaderFeed(k->reader, in, (size_t)n) != REDIS_OK) {
        drop_client(k);
        return;
    }
    for (;;) {
        if (redisReaderGetReply(k->reader, &reply) != REDIS_OK) {
            drop_client(k);
            return;
        }
        if (reply == NULL)
            return;
        if (handle(f, k, reply) != 0) {
            freeReplyObject(reply);
            drop_client(k);
            return;
        }
        freeReplyObject(reply);
    }
}

static void *run(void *arg)
{
    rdlt_fake *f = arg;
    struct pollfd p[MAX_CLIENTS + 2];
    int i, n;
    for (;;) {
        p[0].fd = f->wake[0];
        p[0].events = POLLIN;
        p[1].fd = f->lfd;
        p[1].events = POLLIN;
        for (i = 0; i < MAX_CLIENTS; i++) {
            p[i + 2].fd = f->cl[i].fd;
            p[i + 2].events = POLLIN;
        }
        n = poll(p, MAX_CLIENTS + 2, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || (p[0].revents & POLLIN))
            break;
        if (p[1].revents & POLLIN) {
            int fd = accept4(f->lfd, NULL, NULL, SOCK_CLOEXEC);
            for (i = 0; fd >= 0 && i < MAX_CLIENTS; i++)
                if (f->cl[i].fd < 0) {
                    f->cl[i].fd = fd;
                    f->cl[i].reader = redisReaderCreate();
                    fd = -1;
                }
            if (fd >= 0)
                close(fd); /* full */
        }
        for (i = 0; i < MAX_CLIENTS; i++)
            if (f->cl[i].fd >= 0 && (p[i + 2].revents & (POLLIN | POLLHUP)))
                on_readable(f, &f->cl[i]);
    }
    for (i = 0; i < MAX_CLIENTS; i++)
        drop_client(&f->cl[i]);
    return NULL;
}

/* ---- API -------------------------------------------------------------------- */

static void destroy(void *p)
{
    rdlt_fake *f = p;
    char b = 0;
    if (write(f->wake[1], &b, 1) != 1)
        abort();
    pthread_join(f->thread, NULL);
    close(f->wake[0]);
    close(f->wake[1]);
    close(f->lfd);
    rdlt_cmdlog_free(&f->cmds);
    free(f->reply);
    free(f);
}

rdlt_fake *rdlt_fake_start(rdlt_server *backend, rdlt_fake_rule rule,
                           void *data)
{
    rdlt_fake *f = calloc(1, sizeof(*f));
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    int i;

    assert_non_null(f);
    f->reply = malloc(REPLY_MAX);
    assert_non_null(f->reply);
    f->backend = backend;
    f->rule = rule;
    f->data = data;
    for (i = 0; i < MAX_CLIENTS; i++)
        f->cl[i].fd = -1;
    rdlt_cmdlog_init(&f->cmds);
    f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(f->lfd >= 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(f->lfd, 16), 0);
    assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&a, &alen), 0);
    f->port = ntohs(a.sin_port);
    f->owner_port = f->port;
    assert_int_equal(pipe2(f->wake, O_CLOEXEC), 0);
    assert_int_equal(pthread_create(&f->thread, NULL, run, f), 0);
    rdlt_defer(destroy, f);
    return f;
}

int rdlt_fake_port(const rdlt_fake *f)
{
    return f->port;
}

void rdlt_fake_set_owner(rdlt_fake *f, int port)
{
    __atomic_store_n(&f->owner_port, port, __ATOMIC_SEQ_CST);
}

char *rdlt_fake_log(rdlt_fake *f)
{
    return rdlt_cmdlog_text(&f->cmds);
}

unsigned rdlt_fake_count(rdlt_fake *f, const char *name)
{
    return rdlt_cmdlog_count(&f->cmds, name);
}
