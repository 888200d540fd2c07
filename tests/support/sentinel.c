/* A throwaway Sentinel deployment for the sentinel tests: a master, two
 * replicas and three sentinels, all from rdlt_server_start_*() (so they die
 * with the test process), on free loopback ports (rdlt.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdlt.h"

struct rdlt_sentinel {
    const rdlt_pki *pki; /* over TLS, else NULL */
    rdlt_server *data[RDLT_SENTINEL_DATA];
    rdlt_server *sentinel[RDLT_SENTINELS];
    char url[256];
};

/* SENTINEL MASTER's reply is a flat field/value list: the value of one. */
static long long master_field(rdlt_server *s, const char *field)
{
    redisReply *r = rdlt_cmd(s, "SENTINEL MASTER " RDLT_SENTINEL_NAME);
    long long v = -1;
    size_t i;
    for (i = 0; r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2)
        if (strcmp(r->element[i]->str, field) == 0)
            v = strtoll(r->element[i + 1]->str, NULL, 10);
    freeReplyObject(r);
    return v;
}

/* The port a sentinel names as the master, or -1. */
static int reported_port(rdlt_server *s)
{
    redisReply *r =
        rdlt_cmd(s, "SENTINEL GET-MASTER-ADDR-BY-NAME " RDLT_SENTINEL_NAME);
    int port = -1;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2)
        port = atoi(r->element[1]->str);
    freeReplyObject(r);
    return port;
}

/* ROLE says master? On a connection of its own: a failover closes the
 * clients of the nodes whose role changes, rdlt_cmd()'s among them. */
static int is_master(rdlt_server *s)
{
    struct timeval tv = {2, 0};
    redisContext *ctx =
        redisConnectWithTimeout("127.0.0.1", rdlt_server_port(s), tv);
    redisReply *r = NULL;
    int yes = 0;
    if (ctx != NULL && !ctx->err) {
        const char *pw = rdlt_server_password(s);
        if (pw != NULL)
            freeReplyObject(redisCommand(ctx, "AUTH %s", pw));
        r = redisCommand(ctx, "ROLE");
    }
    yes = r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
          strcmp(r->element[0]->str, "master") == 0;
    if (r != NULL)
        freeReplyObject(r);
    if (ctx != NULL)
        redisFree(ctx);
    return yes;
}

/* The port clients (and the sentinels) use for a node. */
static int port_of(const rdlt_sentinel *sn, rdlt_server *s)
{
    return sn->pki != NULL ? rdlt_server_tls_port(s) : rdlt_server_port(s);
}

static rdlt_server *start_data(const rdlt_sentinel *sn, const char *const *args)
{
    return sn->pki != NULL
               ? rdlt_tls_server_start(sn->pki, sn->pki->server, 0, args)
               : rdlt_server_start_args(args);
}

static rdlt_sentinel *start(const char *password, const rdlt_pki *pki,
                            const char *const *data_args);

rdlt_sentinel *rdlt_sentinel_start(const char *password)
{
    return start(password, NULL, NULL);
}

rdlt_sentinel *rdlt_sentinel_start_args(const char *password,
                                        const char *const *data_args)
{
    return start(password, NULL, data_args);
}

rdlt_sentinel *rdlt_sentinel_start_tls(const char *password,
                                       const rdlt_pki *pki)
{
    return start(password, pki, NULL);
}

static rdlt_sentinel *start(const char *password, const rdlt_pki *pki,
                            const char *const *data_args)
{
    rdlt_sentinel *sn = calloc(1, sizeof(*sn));
    /* No 5 s wait for more replicas before a full sync (7.0's default). */
    const char *data[17] = {"--repl-diskless-sync-delay",
                            "0",
                            "--requirepass",
                            password,
                            "--masterauth",
                            password,
                            NULL};
    const char *replica[22];
    static const char *const mode[2] = {"--sentinel", NULL};
    static const char *const tls_mode[4] = {"--sentinel", "--tls-port", "auto",
                                            NULL};
    char port[16], conf[1600];
    int i, n;
    int64_t deadline;

    assert_non_null(sn);
    rdlt_defer(free, sn);
    sn->pki = pki;
    n = password != NULL ? 6 : 2;
    if (pki != NULL) {
        data[n++] = "--tls-replication";
        data[n++] = "yes";
    }
    for (i = 0; data_args != NULL && data_args[i] != NULL; i++) {
        if (i == 8)
            fail_msg("rdlt: too many data node arguments");
        data[n++] = data_args[i];
    }
    data[n] = NULL;
    sn->data[0] = start_data(sn, data);
    snprintf(port, sizeof(port), "%d", port_of(sn, sn->data[0]));
    n = 0;
    replica[n++] = "--replicaof";
    replica[n++] = "127.0.0.1";
    replica[n++] = port;
    for (i = 0; data[i] != NULL; i++)
        replica[n++] = data[i];
    replica[n] = NULL;
    for (i = 1; i < RDLT_SENTINEL_DATA; i++)
        sn->data[i] = start_data(sn, replica);
    /* A short down-after keeps failover tests to a few seconds. */
    n = snprintf(conf, sizeof(conf),
                 "sentinel monitor " RDLT_SENTINEL_NAME " 127.0.0.1 %s 2\n"
                 "sentinel down-after-milliseconds " RDLT_SENTINEL_NAME
                 " 1000\n"
                 "sentinel failover-timeout " RDLT_SENTINEL_NAME " 5000\n",
                 port);
    if (password != NULL)
        n += snprintf(conf + n, sizeof(conf) - (size_t)n,
                      "sentinel auth-pass " RDLT_SENTINEL_NAME " %s\n",
                      password);
    if (pki != NULL) /* TLS towards the data nodes, and for clients */
        snprintf(conf + n, sizeof(conf) - (size_t)n,
                 "tls-replication yes\ntls-cert-file %s\ntls-key-file %s\n"
                 "tls-ca-cert-file %s\ntls-auth-clients no\n",
                 pki->server, pki->server_key, pki->ca);
    for (i = 0; i < RDLT_SENTINELS; i++)
        sn->sentinel[i] =
            rdlt_server_start_conf(conf, pki != NULL ? tls_mode : mode);
    snprintf(
        sn->url, sizeof(sn->url),
        "%s://%s%s%s127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d/" RDLT_SENTINEL_NAME,
        pki != NULL ? "rediss+sentinel" : "redis+sentinel",
        password != NULL ? ":" : "", password != NULL ? password : "",
        password != NULL ? "@" : "", port_of(sn, sn->sentinel[0]),
        port_of(sn, sn->sentinel[1]), port_of(sn, sn->sentinel[2]));
    /* Ready when both replicas are in sync, and every sentinel knows both
     * replicas and the others. */
    deadline = rdlt_now_ms() + 30000;
    for (i = 1; i < RDLT_SENTINEL_DATA;) {
        redisReply *r = rdlt_cmd(sn->data[i], "INFO replication");
        int up = strstr(r->str, "master_link_status:up") != NULL;
        freeReplyObject(r);
        if (up) {
            i++;
            continue;
        }
        if (rdlt_now_ms() > deadline)
            fail_msg("rdlt: the replicas did not sync in 30 s");
        rdlt_sleep_ms(20);
    }
    for (i = 0; i < RDLT_SENTINELS;) {
        if (master_field(sn->sentinel[i], "num-slaves") == 2 &&
            master_field(sn->sentinel[i], "num-other-sentinels") == 2) {
            i++;
            continue;
        }
        if (rdlt_now_ms() > deadline)
            fail_msg("rdlt: the sentinels did not see the deployment in 30 s");
        rdlt_sleep_ms(50);
    }
    return sn;
}

const char *rdlt_sentinel_url(const rdlt_sentinel *sn)
{
    return sn->url;
}

rdlt_server *rdlt_sentinel_data(rdlt_sentinel *sn, int i)
{
    assert_true(i >= 0 && i < RDLT_SENTINEL_DATA);
    return sn->data[i];
}

rdlt_server *rdlt_sentinel_node(rdlt_sentinel *sn, int i)
{
    assert_true(i >= 0 && i < RDLT_SENTINELS);
    return sn->sentinel[i];
}

rdlt_server *rdlt_sentinel_master(rdlt_sentinel *sn)
{
    int i, j, port;
    for (i = 0; i < RDLT_SENTINELS; i++) {
        if (!rdlt_server_running(sn->sentinel[i]))
            continue;
        port = reported_port(sn->sentinel[i]);
        for (j = 0; j < RDLT_SENTINEL_DATA; j++)
            if (port_of(sn, sn->data[j]) == port)
                return sn->data[j];
    }
    fail_msg("rdlt: no sentinel names a master of the deployment");
    return NULL;
}

long long rdlt_sentinel_config_epoch(rdlt_sentinel *sn)
{
    int i;
    for (i = 0; i < RDLT_SENTINELS; i++) {
        redisReply *r;
        long long e = -1;
        size_t k;
        if (!rdlt_server_running(sn->sentinel[i]))
            continue;
        rdlt_server_reconnect(sn->sentinel[i]);
        r = rdlt_cmd(sn->sentinel[i], "SENTINEL MASTER " RDLT_SENTINEL_NAME);
        for (k = 0; r->type == REDIS_REPLY_ARRAY && k + 1 < r->elements; k += 2)
            if (strcmp(r->element[k]->str, "config-epoch") == 0)
                e = atoll(r->element[k + 1]->str);
        freeReplyObject(r);
        return e;
    }
    fail_msg("rdlt: no sentinel runs");
    return -1;
}

rdlt_server *rdlt_sentinel_wait_switch(rdlt_sentinel *sn, rdlt_server *old,
                                       int64_t timeout_ms)
{
    int64_t deadline = rdlt_now_ms() + timeout_ms;
    for (;;) {
        rdlt_server *m = NULL;
        int i, agree = 1, port = -1;
        for (i = 0; i < RDLT_SENTINELS && agree; i++) {
            int p;
            if (!rdlt_server_running(sn->sentinel[i]))
                continue;
            p = reported_port(sn->sentinel[i]);
            agree = port < 0 || p == port;
            port = p;
        }
        for (i = 0; agree && i < RDLT_SENTINEL_DATA; i++)
            if (port_of(sn, sn->data[i]) == port)
                m = sn->data[i];
        if (m != NULL && m != old && rdlt_server_running(m) && is_master(m)) {
            /* The switch closed the clients of the nodes that changed
             * role, rdlt_cmd()'s included. */
            for (i = 0; i < RDLT_SENTINEL_DATA; i++)
                rdlt_server_reconnect(sn->data[i]);
            return m;
        }
        if (rdlt_now_ms() > deadline)
            fail_msg("rdlt: no new master within %lld ms",
                     (long long)timeout_ms);
        rdlt_sleep_ms(50);
    }
}

/* 1 if every data node but m says its link to m is up, with no sync in
 * progress and no data set loading: a replica still loading the RDB of
 * its sync is online for the master but can be slow to answer, and
 * Sentinel may take it for down if it is promoted then. */
static int replicas_settled(rdlt_sentinel *sn, rdlt_server *m)
{
    int i, ok = 1;
    for (i = 0; i < RDLT_SENTINEL_DATA && ok; i++) {
        rdlt_server *d = sn->data[i];
        redisReply *r;
        if (d == m)
            continue;
        if (!rdlt_server_running(d))
            return 0;
        rdlt_server_reconnect(d);
        r = rdlt_cmd(d, "INFO");
        ok = r->type == REDIS_REPLY_STRING &&
             strstr(r->str, "master_link_status:up") != NULL &&
             strstr(r->str, "master_sync_in_progress:0") != NULL &&
             strstr(r->str, "loading:0") != NULL;
        freeReplyObject(r);
    }
    return ok;
}

void rdlt_sentinel_wait_synced(rdlt_sentinel *sn, int64_t timeout_ms)
{
    int64_t deadline = rdlt_now_ms() + timeout_ms;
    for (;;) {
        rdlt_server *m = rdlt_sentinel_master(sn);
        redisReply *r = rdlt_cmd(m, "INFO replication");
        int online = 0;
        const char *p = r->str;
        while (p != NULL && (p = strstr(p, "state=online")) != NULL) {
            online++;
            p++;
        }
        freeReplyObject(r);
        if (online == RDLT_SENTINEL_DATA - 1 && replicas_settled(sn, m))
            return;
        if (rdlt_now_ms() > deadline)
            fail_msg("rdlt: the replicas did not sync within %lld ms",
                     (long long)timeout_ms);
        rdlt_sleep_ms(50);
    }
}

rdlt_server *rdlt_sentinel_failover(rdlt_sentinel *sn)
{
    rdlt_server *old = rdlt_sentinel_master(sn);
    int i;
    for (i = 0; i < RDLT_SENTINELS; i++) {
        redisReply *r;
        if (!rdlt_server_running(sn->sentinel[i]))
            continue;
        r = rdlt_cmd(sn->sentinel[i], "SENTINEL FAILOVER " RDLT_SENTINEL_NAME);
        if (r->type == REDIS_REPLY_ERROR)
            fail_msg("rdlt: SENTINEL FAILOVER: %s", r->str);
        freeReplyObject(r);
        break;
    }
    return rdlt_sentinel_wait_switch(sn, old, 20000);
}
