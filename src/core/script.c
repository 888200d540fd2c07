/* Script calls: EVALSHA; on NOSCRIPT (a restarted server, a failover, SCRIPT
 * FLUSH), SCRIPT LOAD on the same node, pipelined with one retry of the same
 * EVALSHA. A script that did not run is safe to run again, so the retry
 * never counts twice. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define MAX_ARGS 512 /* the watchdog renews up to 200 holds per call */

typedef struct call {
    rdl_client_t *c;
    rdl__conn *cn;
    int id;
    int retried;
    rdl__reply_fn fn;
    void *data;
    size_t len;
    char cmd[]; /* the encoded EVALSHA, kept for the retry */
} call;

static void on_loaded(void *data, int status, const redisReply *r)
{
    (void)data;
    (void)status;
    (void)r; /* a failed load shows as a second NOSCRIPT */
}

static void on_reply(void *data, int status, const redisReply *r)
{
    call *k = data;
    const rdl__script *s = &rdl__scripts[k->id];
    if (status == RDL__ENOSCRIPT && !k->retried) {
        const char *argv[3] = {"SCRIPT", "LOAD", s->body};
        size_t lens[3] = {6, 4, s->len};
        k->retried = 1;
        RDL__STAT_INC(k->c, script_loads);
        if (rdl__conn_sendv(k->cn, 3, argv, lens, on_loaded, NULL) == 0 &&
            rdl__conn_send(k->cn, k->cmd, k->len, on_reply, k) == 0)
            return;
        status = RDL_ENOMEM;
    }
    if (status == RDL__ENOSCRIPT) {
        rdl__errmsg_set(k->c, "script %s could not be loaded on %s", s->name,
                        rdl__conn_addr(k->cn));
        status = RDL_ESCRIPT;
    } else if (status < 0 && r != NULL && r->type == REDIS_REPLY_ERROR) {
        rdl__errmsg_set(k->c, "%s on %s: %.200s", s->name,
                        rdl__conn_addr(k->cn), r->str);
    }
    k->fn(k->data, status, r);
    rdl__free(k);
}

int rdl__script_run(rdl_client_t *c, int id, int nkeys, const char **keys,
                    int nargs, const char **args, rdl__reply_fn fn, void *data)
{
    const char *argv[3 + MAX_ARGS];
    char nk[12];
    char *buf = NULL;
    int argc = 0, i, len, rc;
    call *k;

    if (nkeys < 1 || nkeys + nargs > MAX_ARGS)
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
    k = rdl__malloc(sizeof(*k) + (size_t)len);
    if (k == NULL) {
        redisFreeCommand(buf);
        return RDL_ENOMEM;
    }
    k->c = c;
    k->cn = rdl__client_route(c, keys[0]);
    k->id = id;
    k->retried = 0;
    k->fn = fn;
    k->data = data;
    k->len = (size_t)len;
    memcpy(k->cmd, buf, (size_t)len);
    redisFreeCommand(buf);
    rc = rdl__conn_send(k->cn, k->cmd, k->len, on_reply, k);
    if (rc != 0) {
        rdl__free(k);
        return rc;
    }
    RDL__STAT_INC(c, scripts);
    return 0;
}
