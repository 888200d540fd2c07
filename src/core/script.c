/* Script calls, sent through rdl__client_send() so a cluster's redirects
 * are followed: FCALL of the script's function where the connection's
 * handshake found or loaded the function library (Redis 7.0 and later,
 * connect.c), else EVALSHA. On NOSCRIPT (a restarted server, a failover to
 * a replica that never saw the script, SCRIPT FLUSH, an ASK to a node
 * that never ran it), and on an FCALL that did not run (FUNCTION FLUSH,
 * FUNCTION DELETE, an ACL or a proxy that refuses FCALL) the same call is
 * sent once more as EVAL with the script's body, which runs it and caches
 * it on whichever node finally serves the slot: one round trip, like
 * SCRIPT LOAD + EVALSHA pipelined, but without assuming the retry reaches
 * the node that refused. A script that did not run is safe to run again,
 * so the retry never counts twice. A library gone from a server is loaded
 * again (one FUNCTION LOAD per connection), and the connection's calls
 * are EVALSHAs until it is there. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "client.h"
#include "conn.h"
#include "errmsg.h"
#include "reply.h"
#include "router.h"
#include "script.h"

typedef struct call {
    rdl_client_t *c;
    int id;
    int line; /* rdl__line (router.h) */
    int retried;
    int fcall; /* sent as FCALL */
    rdl__reply_fn fn;
    void *data;
    char *key;     /* keys[0], for routing the retry */
    size_t len;    /* of the encoded EVALSHA or FCALL */
    size_t rest;   /* offset of the numkeys argument in it */
    unsigned argc; /* of the encoded command */
    char cmd[];    /* the encoded EVALSHA or FCALL, then the key */
} call;

static void on_reply(void *data, int status, const redisReply *r,
                     uint64_t written_ms);

/* The address of the node that serves k's key, for messages. */
static const char *addr_of(const call *k)
{
    rdl__conn *cn = rdl__client_route(k->c, k->key);
    return cn != NULL ? rdl__conn_addr(cn) : "(closed)";
}

/* The call k re-encoded as EVAL <body> with the same arguments. */
static int send_eval(call *k)
{
    const rdl__script *s = &rdl__scripts[k->id];
    char head[64];
    int n = snprintf(head, sizeof(head), "*%u\r\n$4\r\nEVAL\r\n$%zu\r\n",
                     k->argc, s->len);
    size_t total = (size_t)n + s->len + 2 + (k->len - k->rest);
    char *buf = rdl__malloc(total), *p = buf;
    int rc;
    if (buf == NULL)
        return RDL_ENOMEM;
    memcpy(p, head, (size_t)n);
    p += n;
    memcpy(p, s->body, s->len);
    p += s->len;
    memcpy(p, "\r\n", 2);
    p += 2;
    memcpy(p, k->cmd + k->rest, k->len - k->rest);
    rc = rdl__client_send_line(k->c, k->key, k->line, buf, total, on_reply, k);
    rdl__free(buf);
    return rc;
}

/* A FUNCTION LOAD sent because a server lost the library: the calls to
 * the node that serves `key` are FCALLs again once it is there. */
typedef struct load {
    rdl_client_t *c;
    int line;
    char key[];
} load;

static void on_load(void *data, int status, const redisReply *r,
                    uint64_t written_ms)
{
    load *l = data;
    (void)written_ms;
    if (status == 0 && r != NULL && r->type != REDIS_REPLY_ERROR) {
        rdl__conn *cn = rdl__client_route_line(l->c, l->key, l->line);
        if (cn != NULL)
            cn->fcall = 1;
    }
    rdl__free(l);
}

/* The FCALL of k did not run: the node has no such function (its library
 * is gone), or refuses the command. Its connection sends EVALSHA from
 * now; a lost library is loaded again, once. */
static void fcall_refused(call *k, const char *err)
{
    rdl__conn *cn = rdl__client_route_line(k->c, k->key, k->line);
    const char *argv[RDL__FUNCTION_LOAD_ARGC];
    size_t lens[RDL__FUNCTION_LOAD_ARGC];
    size_t keylen = strlen(k->key);
    char *buf = NULL;
    int len;
    load *l;
    if (cn == NULL || !cn->fcall)
        return;
    cn->fcall = 0;
    if (strncmp(err, "ERR Function not found", 22) != 0)
        return;
    rdl__conn_function_load_argv(argv, lens);
    len = redisFormatCommandArgv(&buf, RDL__FUNCTION_LOAD_ARGC, argv, lens);
    l = len < 0 ? NULL : rdl__malloc(sizeof(*l) + keylen + 1);
    if (l != NULL) {
        l->c = k->c;
        l->line = k->line;
        memcpy(l->key, k->key, keylen + 1);
        RDL__STAT_INC(&k->c->net, script_loads);
        if (rdl__client_send_line(k->c, k->key, k->line, buf, (size_t)len,
                                  on_load, l) != 0)
            rdl__free(l);
    }
    if (len >= 0)
        redisFreeCommand(buf);
}

/* An error that says the FCALL did not run: the server has no such
 * function or command, or the ACL refuses the command itself (a NOPERM
 * raised by a command inside the function, after what it may have
 * written, names that command instead, and is the call's answer). */
static int fcall_not_run(const redisReply *r)
{
    return r != NULL && r->type == REDIS_REPLY_ERROR &&
           (strncmp(r->str, "ERR Function not found", 22) == 0 ||
            strncmp(r->str, "ERR unknown command", 19) == 0 ||
            (strncmp(r->str, "NOPERM", 6) == 0 &&
             strstr(r->str, "'fcall'") != NULL));
}

static void on_reply(void *data, int status, const redisReply *r,
                     uint64_t written_ms)
{
    call *k = data;
    const rdl__script *s = &rdl__scripts[k->id];
    (void)written_ms;
    if (k->fcall && !k->retried && fcall_not_run(r)) {
        k->retried = 1;
        fcall_refused(k, r->str);
        status = send_eval(k);
        if (status == 0)
            return;
    }
    if (status == RDL__ENOSCRIPT && !k->retried) {
        k->retried = 1;
        RDL__STAT_INC(&k->c->net, script_loads);
        status = send_eval(k);
        if (status == 0)
            return;
    }
    if (status == RDL__ENOSCRIPT) {
        rdl__errmsg_set(k->c, "script %s could not be loaded on %s", s->name,
                        addr_of(k));
        status = RDL_ESCRIPT;
    } else if (status < 0 && r != NULL && r->type == REDIS_REPLY_ERROR) {
        rdl__errmsg_set(k->c, "%s on %s: %.200s", s->name, addr_of(k), r->str);
        /* A redirect or a load in progress that no router followed (a
         * standalone server that says MOVED): its internal code stays
         * here. */
        status = rdl__reply_public(status);
    }
    k->fn(k->data, status, r, written_ms);
    rdl__free(k);
}

/* The size of s as a bulk string: "$<len>\r\n<s>\r\n". */
static size_t bulk_size(const char *s)
{
    char n[24];
    size_t len = strlen(s);
    return (size_t)snprintf(n, sizeof(n), "$%zu\r\n", len) + len + 2;
}

int rdl__script_send(rdl_client_t *c, int line, int id, int nkeys,
                     const char **keys, int nargs, const char **args,
                     rdl__reply_fn fn, void *data)
{
    const char *argv[3 + RDL__SCRIPT_MAX_ARGS];
    char nk[12];
    char *buf = NULL;
    int argc = 0, i, len, rc;
    size_t keylen;
    call *k;
    const rdl__script *s = &rdl__scripts[id];
    rdl__conn *cn;
    int fcall;

    if (nkeys < 1 || nkeys + nargs > RDL__SCRIPT_MAX_ARGS)
        return RDL_EINVAL;
    /* The connection that serves the key says FCALL or EVALSHA; the send
     * below asks the router again, since only its send follows redirects,
     * retries and waits for a master (sending on cn would not). */
    cn = rdl__client_route_line(c, keys[0], line);
    fcall = cn != NULL && cn->fcall;
    snprintf(nk, sizeof(nk), "%d", nkeys);
    argv[argc++] = fcall ? "FCALL" : "EVALSHA";
    argv[argc++] = fcall ? s->fname : s->sha;
    argv[argc++] = nk;
    for (i = 0; i < nkeys; i++)
        argv[argc++] = keys[i];
    for (i = 0; i < nargs; i++)
        argv[argc++] = args[i];
    len = redisFormatCommandArgv(&buf, argc, argv, NULL);
    if (len < 0)
        return RDL_ENOMEM;
    keylen = strlen(keys[0]);
    k = rdl__malloc(sizeof(*k) + (size_t)len + keylen + 1);
    if (k == NULL) {
        redisFreeCommand(buf);
        return RDL_ENOMEM;
    }
    k->c = c;
    k->id = id;
    k->line = line;
    k->retried = 0;
    k->fcall = fcall;
    k->fn = fn;
    k->data = data;
    k->len = (size_t)len;
    k->argc = (unsigned)argc;
    /* "*<argc>\r\n$7\r\nEVALSHA\r\n$40\r\n<sha>\r\n" comes first, or
     * "*<argc>\r\n$5\r\nFCALL\r\n$<n>\r\n<name>\r\n". */
    k->rest = (size_t)snprintf(nk, sizeof(nk), "*%d\r\n", argc) +
              bulk_size(argv[0]) + bulk_size(argv[1]);
    memcpy(k->cmd, buf, (size_t)len);
    k->key = k->cmd + len;
    memcpy(k->key, keys[0], keylen + 1);
    redisFreeCommand(buf);
    rc = rdl__client_send_line(c, k->key, line, k->cmd, k->len, on_reply, k);
    if (rc != 0)
        rdl__free(k);
    return rc;
}
