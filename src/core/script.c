/* Script calls: EVALSHA, sent through rdl__client_send() so a cluster's
 * redirects are followed. On NOSCRIPT (a restarted server, a failover to a
 * replica that never saw the script, SCRIPT FLUSH, an ASK to a node that
 * never ran it) the same call is sent once more as EVAL with the script's
 * body, which runs it and caches it on whichever node finally serves the
 * slot: one round trip, like SCRIPT LOAD + EVALSHA pipelined, but without
 * assuming the retry reaches the node that said NOSCRIPT. A script that did
 * not run is safe to run again, so the retry never counts twice. */
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
    rdl__reply_fn fn;
    void *data;
    char *key;     /* keys[0], for routing the retry */
    size_t len;    /* of the encoded EVALSHA */
    size_t rest;   /* offset of the numkeys argument in it */
    unsigned argc; /* of the encoded command */
    char cmd[];    /* the encoded EVALSHA, then the key */
} call;

static void on_reply(void *data, int status, const redisReply *r,
                     uint64_t written_ms);

/* The address of the node that serves k's key, for messages. */
static const char *addr_of(const call *k)
{
    rdl__conn *cn = rdl__client_route(k->c, k->key);
    return cn != NULL ? rdl__conn_addr(cn) : "(closed)";
}

/* The EVALSHA of k re-encoded as EVAL <body> with the same arguments. */
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

static void on_reply(void *data, int status, const redisReply *r,
                     uint64_t written_ms)
{
    call *k = data;
    const rdl__script *s = &rdl__scripts[k->id];
    (void)written_ms;
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

    if (nkeys < 1 || nkeys + nargs > RDL__SCRIPT_MAX_ARGS)
        return RDL_EINVAL;
    snprintf(nk, sizeof(nk), "%d", nkeys);
    argv[argc++] = "EVALSHA";
    argv[argc++] = rdl__scripts[id].sha;
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
    k->fn = fn;
    k->data = data;
    k->len = (size_t)len;
    k->argc = (unsigned)argc;
    /* "*<argc>\r\n$7\r\nEVALSHA\r\n$40\r\n<sha>\r\n" comes first. */
    k->rest = (size_t)snprintf(nk, sizeof(nk), "*%d\r\n", argc) + 13 + 5 + 42;
    memcpy(k->cmd, buf, (size_t)len);
    k->key = k->cmd + len;
    memcpy(k->key, keys[0], keylen + 1);
    redisFreeCommand(buf);
    rc = rdl__client_send_line(c, k->key, line, k->cmd, k->len, on_reply, k);
    if (rc != 0)
        rdl__free(k);
    return rc;
}
