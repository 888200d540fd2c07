/* Getting a connection connected (see conn.h): resolving the
 * host, the TCP connect, the TLS handshake, the Redis handshake (AUTH,
 * SELECT, CLIENT SETNAME, and the checks of the durable level) before any
 * queued command, and moving to another address. conn.c starts a new attempt
 * after a backoff, and hands TLS handshake bytes over, through the steps table
 * at the end.
 *
 * Over TLS (rediss URLs) a session (tls.h) sits between the socket and the
 * codec. Its handshake comes first and, like the Redis handshake after it,
 * is bounded by the connect timeout; the Redis handshake's replies also
 * prove that the server accepted the client's certificate (TLS 1.3 tells a
 * refusal only after the client's handshake is done). */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "conn.h"
#include "errmsg.h"
#include "reply.h"
#include "rdl_library.h"

static void start_connect(rdl__conn *cn);
static void start_handshake(rdl__conn *cn);
static const rdl__conn_steps steps;

/* Advances the TLS handshake; once it is done the Redis handshake starts. */
static void tls_step(rdl__conn *cn)
{
    char why[256];
    int rc = rdl__tls_handshake(cn->tls, why, sizeof(why));
    if (rdl__conn_write_cipher(cn) != 0)
        return;
    if (rc < 0)
        rdl__conn_drop(cn, RDL_ETLS, why);
    else if (rc == 1)
        start_handshake(cn);
}

/* ---- connecting --------------------------------------------------------- */

static void on_ready(rdl__conn *cn)
{
    uv_timer_stop(&cn->timer);
    cn->state = RDL__CN_READY;
    cn->attempt = 0;
    cn->gen++;
    RDL__STAT_INC(cn->net, connects);
    rdl__conn_write_unsent(cn);
    if (cn->ev->ready != NULL)
        cn->ev->ready(cn, cn->data);
}

static const char *level_name(int level)
{
    return level == RDL_DURABLE_FSYNCED ? "RDL_DURABLE_FSYNCED"
                                        : "RDL_DURABLE_FSYNCED_MASTER";
}

/* Every handshake reply is in: the connection is ready, unless the checks
 * of the durable level found a server that cannot confirm it. That is
 * RDL_ENOTSUP, as a failed attempt: the first connect fails with it, and
 * a later connection (a failover, another master) is retried with
 * backoff, its commands failing as with an unreachable server. */
static void handshake_done(rdl__conn *cn)
{
    char why[300];
    if (cn->no_waitaof) {
        snprintf(why, sizeof(why),
                 "the server has no WAITAOF, which the durable level %s "
                 "needs: Redis 7.2+ or Valkey 8+ has it",
                 level_name(cn->net->durable_level));
        rdl__conn_drop(cn, RDL_ENOTSUP, why);
        return;
    }
    if (cn->aof_off && !cn->replica) {
        snprintf(why, sizeof(why),
                 "the master has appendonly no: the durable level %s needs "
                 "its append-only file",
                 level_name(cn->net->durable_level));
        rdl__conn_drop(cn, RDL_ENOTSUP, why);
        return;
    }
    on_ready(cn);
}

static void on_handshake_reply(void *data, int status, const redisReply *r,
                               uint64_t written_ms)
{
    rdl__conn *cn = data;
    (void)written_ms;
    if (status != 0) {
        char why[200];
        snprintf(why, sizeof(why), "handshake refused: %.150s",
                 r != NULL && r->type == REDIS_REPLY_ERROR ? r->str : "?");
        rdl__conn_drop(cn, status, why);
        return;
    }
    if (--cn->handshakes == 0)
        handshake_done(cn);
}

/* The checks of the durable level. A server that refuses the command
 * (renamed, NOPERM from an ACL, a proxy's error) cannot be checked here;
 * the confirmation then fails with WAITAOF's own refusal (durable.c). A
 * refused login has failed the handshake already, at CLIENT SETNAME. */
static void on_check_reply(void *data, int status, const redisReply *r,
                           uint64_t written_ms)
{
    if (r != NULL && r->type == REDIS_REPLY_ERROR)
        status = 0;
    on_handshake_reply(data, status, r, written_ms);
}

static void on_waitaof_info(void *data, int status, const redisReply *r,
                            uint64_t written_ms)
{
    rdl__conn *cn = data;
    /* [nil] when the command does not exist (Redis 7.0 and older). */
    if (status == 0 && r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
        r->element[0]->type == REDIS_REPLY_NIL)
        cn->no_waitaof = 1;
    on_check_reply(data, status, r, written_ms);
}

static void on_appendonly(void *data, int status, const redisReply *r,
                          uint64_t written_ms)
{
    rdl__conn *cn = data;
    /* [appendonly, yes|no]; empty when the server has no such setting. */
    if (status == 0 && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[1]->type == REDIS_REPLY_STRING &&
        strcmp(r->element[1]->str, "no") == 0)
        cn->aof_off = 1;
    on_check_reply(data, status, r, written_ms);
}

/* A replica's own appendonly says nothing of its master's (a cluster's
 * seed may be a replica): only a master's is held against it. */
static void on_role(void *data, int status, const redisReply *r,
                    uint64_t written_ms)
{
    rdl__conn *cn = data;
    if (status == 0 && rdl__reply_role_master(r) == 0)
        cn->replica = 1;
    on_check_reply(data, status, r, written_ms);
}

/* The scripts' function library (Redis 7.0 and later): FUNCTION LOAD
 * once per server, then FCALL, which runs each script without making its
 * libraries' functions anew on every call (docs/design-notes.md "Script
 * cost"). Any error (a server before 7.0, an ACL without FUNCTION, a
 * proxy) leaves the connection on EVALSHA: never a reason to fail. */
static void on_function_load(void *data, int status, const redisReply *r,
                             uint64_t written_ms)
{
    rdl__conn *cn = data;
    cn->fcall = status == 0 && r != NULL && r->type != REDIS_REPLY_ERROR;
    on_check_reply(data, status, r, written_ms);
}

void rdl__conn_function_load_argv(const char **argv, size_t *lens)
{
    static const char *const head[3] = {"FUNCTION", "LOAD", "REPLACE"};
    int i;
    for (i = 0; i < 3; i++) {
        argv[i] = head[i];
        lens[i] = strlen(head[i]);
    }
    argv[3] = rdl__library_body;
    lens[3] = rdl__library_len;
}

static void on_function_list(void *data, int status, const redisReply *r,
                             uint64_t written_ms)
{
    rdl__conn *cn = data;
    if (status == 0 && r != NULL && r->type == REDIS_REPLY_ARRAY) {
        if (r->elements > 0) {
            cn->fcall = 1;
        } else {
            const char *argv[RDL__FUNCTION_LOAD_ARGC];
            size_t lens[RDL__FUNCTION_LOAD_ARGC];
            rdl__conn_function_load_argv(argv, lens);
            if (rdl__conn_send_firstv(cn, RDL__FUNCTION_LOAD_ARGC, argv, lens,
                                      on_function_load, cn) == 0)
                cn->handshakes++;
        }
    }
    on_check_reply(data, status, r, written_ms);
}

/* CLIENT SETNAME only names the connection for operators: a server or
 * proxy that does not know the command (a plain error) is no reason to
 * fail; NOAUTH still is (it is how a server that wants a password says
 * so when none was sent). */
static void on_name_reply(void *data, int status, const redisReply *r,
                          uint64_t written_ms)
{
    on_handshake_reply(data, status == RDL_ESERVER ? 0 : status, r, written_ms);
}

static int handshake_cmd(rdl__conn *cn, int argc, const char **argv,
                         rdl__reply_fn fn)
{
    int rc = rdl__conn_send_first(cn, argc, argv, fn, cn);
    if (rc == 0)
        cn->handshakes++;
    return rc;
}

static void start_handshake(rdl__conn *cn)
{
    const rdl__net *net = cn->net;
    char db[16], name[64];
    const char *argv[3];
    int rc = 0;

    const char *user = cn->login_set ? cn->login_user : net->url.user;
    const char *pass = cn->login_set ? cn->login_pass : net->url.pass;
    int dbn = cn->login_set ? cn->login_db : net->url.db;

    cn->state = RDL__CN_HANDSHAKE;
    cn->handshakes = 0;
    if (pass != NULL) {
        argv[0] = "AUTH";
        argv[1] = user != NULL ? user : pass;
        argv[2] = pass;
        rc = handshake_cmd(cn, user != NULL ? 3 : 2, argv, on_handshake_reply);
    }
    if (rc == 0 && dbn != 0 && cn->role == RDL__CONN_CMD) {
        snprintf(db, sizeof(db), "%d", dbn);
        argv[0] = "SELECT";
        argv[1] = db;
        rc = handshake_cmd(cn, 2, argv, on_handshake_reply);
    }
    if (rc == 0) {
        snprintf(name, sizeof(name), "rdl:%s:%s", net->id,
                 cn->role == RDL__CONN_CMD ? "cmd" : "sub");
        argv[0] = "CLIENT";
        argv[1] = "SETNAME";
        argv[2] = name;
        rc = handshake_cmd(cn, 3, argv, on_name_reply);
    }
    cn->no_waitaof = cn->aof_off = cn->replica = cn->fcall = 0;
    if (rc == 0 && cn->role == RDL__CONN_CMD && !cn->aux) {
        const char *fl[4] = {"FUNCTION", "LIST", "LIBRARYNAME",
                             rdl__library_name};
        rc = handshake_cmd(cn, 4, fl, on_function_list);
    }
    /* The durable level's checks, on command connections to data nodes:
     * a server without WAITAOF, or a master without the append-only file
     * FSYNCED_MASTER needs, would refuse every confirmation. */
    if (rc == 0 && net->durable_replicas != 0 &&
        net->durable_level != RDL_DURABLE_RECEIVED &&
        cn->role == RDL__CONN_CMD && !cn->aux) {
        argv[0] = "COMMAND";
        argv[1] = "INFO";
        argv[2] = "WAITAOF";
        rc = handshake_cmd(cn, 3, argv, on_waitaof_info);
        if (rc == 0 && net->durable_level == RDL_DURABLE_FSYNCED_MASTER) {
            argv[0] = "CONFIG";
            argv[1] = "GET";
            argv[2] = "appendonly";
            rc = handshake_cmd(cn, 3, argv, on_appendonly);
            argv[0] = "ROLE";
            if (rc == 0)
                rc = handshake_cmd(cn, 1, argv, on_role);
        }
    }
    if (rc != 0)
        rdl__conn_drop(cn, RDL_ENOMEM, "out of memory");
}

static void on_connect(uv_connect_t *req, int status)
{
    rdl__sock *sk = req->data;
    rdl__conn *cn = sk->cn;
    if (cn->sk != sk)
        return; /* abandoned attempt: it is being closed */
    if (status != 0) {
        rdl__conn_drop(cn, RDL_ECONNREFUSED, uv_strerror(status));
        return;
    }
    cn->reader = redisReaderCreate();
    if (cn->reader == NULL) {
        rdl__conn_drop(cn, RDL_ENOMEM, "out of memory");
        return;
    }
    uv_read_start((uv_stream_t *)&sk->tcp, rdl__conn_on_alloc,
                  rdl__conn_on_read);
    if (cn->net->url.tls) {
        char why[256];
        int rc =
            rdl__tls_new(cn->net->tls, cn->host, &cn->tls, why, sizeof(why));
        if (rc != 0) {
            rdl__conn_drop(cn, rc, why);
            return;
        }
        cn->state = RDL__CN_TLS_HANDSHAKE;
        tls_step(cn);
        return;
    }
    start_handshake(cn);
}

static void connect_to(rdl__conn *cn, const struct sockaddr *sa)
{
    rdl__sock *sk = rdl__calloc(1, sizeof(*sk));
    int rc;
    if (sk == NULL) {
        rdl__conn_drop(cn, RDL_ENOMEM, "out of memory");
        return;
    }
    sk->cn = cn;
    uv_tcp_init(cn->net->loop, &sk->tcp);
    sk->tcp.data = sk;
    sk->creq.data = sk;
    cn->sk = sk;
    cn->handles++;
    rdl__net_handle_opened(cn->net);
    uv_tcp_nodelay(&sk->tcp, 1);
    cn->state = RDL__CN_CONNECTING;
    rc = uv_tcp_connect(&sk->creq, &sk->tcp, sa, on_connect);
    if (rc != 0)
        rdl__conn_drop(cn, RDL_ECONNREFUSED, uv_strerror(rc));
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *ai)
{
    rdl__resolve *res = RDL_CONTAINER_OF(req, rdl__resolve, req);
    rdl__conn *cn = res->cn;
    rdl__free(res);
    if (cn == NULL) {
        uv_freeaddrinfo(ai);
        return;
    }
    cn->res = NULL;
    if (status != 0 || ai == NULL) {
        rdl__conn_drop(cn, RDL_ECONNREFUSED,
                       status ? uv_strerror(status) : "no address");
        uv_freeaddrinfo(ai);
        return;
    }
    connect_to(cn, ai->ai_addr);
    uv_freeaddrinfo(ai);
}

static void on_connect_timeout(uv_timer_t *t)
{
    rdl__conn *cn = t->data;
    char why[128];
    if (cn->state == RDL__CN_TLS_HANDSHAKE) {
        snprintf(why, sizeof(why),
                 "TLS: no handshake within %lld ms (is this a TLS port?)",
                 (long long)cn->net->connect_ms);
        rdl__conn_drop(cn, RDL_ETLS, why);
        return;
    }
    snprintf(why, sizeof(why), "timed out after %lld ms",
             (long long)cn->net->connect_ms);
    rdl__conn_drop(cn, RDL_ECONNREFUSED, why);
}

static void start_connect(rdl__conn *cn)
{
    struct sockaddr_storage ss;
    struct addrinfo hints;
    rdl__resolve *res;
    int rc;

    uv_timer_start(&cn->timer, on_connect_timeout,
                   (uint64_t)cn->net->connect_ms, 0);
    if (uv_ip4_addr(cn->host, cn->port, (struct sockaddr_in *)&ss) == 0 ||
        uv_ip6_addr(cn->host, cn->port, (struct sockaddr_in6 *)&ss) == 0) {
        connect_to(cn, (struct sockaddr *)&ss);
        return;
    }
    res = rdl__calloc(1, sizeof(*res));
    if (res == NULL) {
        rdl__conn_drop(cn, RDL_ENOMEM, "out of memory");
        return;
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    res->cn = cn;
    cn->res = res;
    cn->state = RDL__CN_RESOLVING;
    {
        char port[8];
        snprintf(port, sizeof(port), "%d", cn->port);
        rc = uv_getaddrinfo(cn->net->loop, &res->req, on_resolved, cn->host,
                            port, &hints);
    }
    if (rc != 0) {
        cn->res = NULL;
        rdl__free(res);
        rdl__conn_drop(cn, RDL_ECONNREFUSED, uv_strerror(rc));
    }
}

void rdl__conn_set_login(rdl__conn *cn, const char *user, const char *pass,
                         int db)
{
    cn->login_set = 1;
    cn->login_user = user;
    cn->login_pass = pass;
    cn->login_db = db;
}

void rdl__conn_set_aux(rdl__conn *cn)
{
    cn->aux = 1;
}

static void set_addr(rdl__conn *cn)
{
    snprintf(cn->addr, sizeof(cn->addr),
             strchr(cn->host, ':') != NULL ? "[%s]:%d" : "%s:%d", cn->host,
             cn->port);
}

static void on_retry(uv_timer_t *t)
{
    start_connect(t->data);
}

int rdl__conn_retarget(rdl__conn *cn, const char *host, int port)
{
    char *h;
    char why[400];
    if (cn->state == RDL__CN_CLOSED)
        return RDL_ECLOSED;
    if (strcmp(cn->host, host) == 0 && cn->port == port)
        return 0;
    h = rdl__strdup(host);
    if (h == NULL)
        return RDL_ENOMEM;
    snprintf(why, sizeof(why), "moved to %s:%d", host, port);
    rdl__free(cn->host);
    cn->host = h;
    cn->port = port;
    if (cn->state == RDL__CN_IDLE) {
        set_addr(cn);
        return 0;
    }
    /* Written commands fail as with any drop (their outcome is unknown);
     * unsent ones wait and go to the new address, which is tried at
     * once instead of after a backoff. */
    rdl__conn_drop(cn, RDL_ECONNLOST, why);
    set_addr(cn);
    cn->attempt = 0;
    uv_timer_start(&cn->timer, on_retry, 0, 0);
    return 0;
}

void rdl__conn_start(rdl__conn *cn)
{
    if (cn->state == RDL__CN_IDLE)
        start_connect(cn);
}

rdl__conn *rdl__conn_new(rdl__net *net, rdl__conn_role role, const char *host,
                         int port, const rdl__conn_events *ev, void *data)
{
    rdl__conn *cn = rdl__calloc(1, sizeof(*cn));
    if (cn == NULL)
        return NULL;
    cn->host = rdl__strdup(host);
    cn->rbuf = rdl__malloc(RDL__CONN_READ_BUF);
    if (cn->host == NULL || cn->rbuf == NULL) {
        rdl__free(cn->host);
        rdl__free(cn->rbuf);
        rdl__free(cn);
        return NULL;
    }
    cn->steps = &steps;
    cn->net = net;
    cn->role = role;
    cn->port = port;
    cn->ev = ev;
    cn->data = data;
    cn->state = RDL__CN_IDLE;
    set_addr(cn);
    rdl__queue_init(&cn->unsent);
    rdl__queue_init(&cn->sent);
    uv_timer_init(net->loop, &cn->timer);
    rdl__conn_init_handle(cn, (uv_handle_t *)&cn->timer);
    uv_timer_init(net->loop, &cn->cmd_timer);
    rdl__conn_init_handle(cn, (uv_handle_t *)&cn->cmd_timer);
    uv_prepare_init(net->loop, &cn->flusher);
    rdl__conn_init_handle(cn, (uv_handle_t *)&cn->flusher);
    uv_idle_init(net->loop, &cn->kick);
    rdl__conn_init_handle(cn, (uv_handle_t *)&cn->kick);
    return cn;
}

static const rdl__conn_steps steps = {start_connect, tls_step};
