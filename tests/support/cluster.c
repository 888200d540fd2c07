/* A throwaway 6-node Redis Cluster for the cluster tests: six servers from
 * rdlt_server_start_args() (so they die with the test process), joined by
 * hand rather than by redis-cli --cluster create, so the layout is fixed
 * (nodes 0..2 masters of three equal ranges, node 3+i replica of node i)
 * and the only waiting is for the nodes to agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdlt.h"

/* A short node timeout keeps failover tests to a few seconds. A replica
 * may always fail over (validity factor 0), and replicas stay where they
 * are put (no migration), so the tests know who replicates whom. */
static const char *const node_args[] = {"--cluster-enabled",
                                        "yes",
                                        "--cluster-node-timeout",
                                        "1000",
                                        "--cluster-replica-validity-factor",
                                        "0",
                                        "--cluster-allow-replica-migration",
                                        "no",
                                        NULL};

/* Over TLS the nodes also speak TLS to each other (bus and replication);
 * each keeps its plain port for the fixture's own commands, and answers a
 * TLS client with the TLS ports of the others. */
static const char *const tls_node_args[] = {"--tls-cluster", "yes",
                                            "--tls-replication", "yes", NULL};

struct rdlt_cluster {
    rdlt_server *node[RDLT_CLUSTER_NODES];
    const rdlt_pki *pki; /* over TLS: RDL_TEST_CLUSTER_TLS; else NULL */
    char id[RDLT_CLUSTER_NODES][48];
    char url[128];
};

static void expect_ok(redisReply *r, const char *what)
{
    if (r->type == REDIS_REPLY_ERROR)
        fail_msg("rdlt: %s: %s", what, r->str);
    freeReplyObject(r);
}

/* Gives node n the slots lo..hi: ADDSLOTSRANGE (Redis 7.0 and later), else
 * one ADDSLOTS per slot. */
static void add_slots(rdlt_server *n, long lo, long hi)
{
    redisReply *r = rdlt_cmd(n, "CLUSTER ADDSLOTSRANGE %ld %ld", lo, hi);
    long slot;
    if (r->type != REDIS_REPLY_ERROR) {
        freeReplyObject(r);
        return;
    }
    freeReplyObject(r);
    for (slot = lo; slot <= hi; slot++)
        expect_ok(rdlt_cmd(n, "CLUSTER ADDSLOTS %ld", slot),
                  "CLUSTER ADDSLOTS");
}

/* Lines of CLUSTER NODES that are settled (no handshake, no address). */
static int known_nodes(rdlt_server *s)
{
    redisReply *r = rdlt_cmd(s, "CLUSTER NODES");
    int n = 0;
    const char *p;
    if (r->type == REDIS_REPLY_STRING)
        for (p = r->str; p != NULL && *p != '\0'; p = strchr(p, '\n')) {
            if (*p == '\n')
                p++;
            if (*p == '\0')
                break;
            if (strstr(p, "handshake") == NULL ||
                strstr(p, "handshake") > strchr(p, '\n'))
                n++;
        }
    freeReplyObject(r);
    return n;
}

static rdlt_server *start_tls_node(const rdlt_pki *pki)
{
    const char *args[32];
    size_t n = 0, i;
    for (i = 0; node_args[i] != NULL; i++)
        args[n++] = node_args[i];
    for (i = 0; tls_node_args[i] != NULL; i++)
        args[n++] = tls_node_args[i];
    args[n] = NULL;
    return rdlt_tls_server_start(pki, pki->server, 0, args);
}

rdlt_cluster *rdlt_cluster_start(void)
{
    static const long ranges[3][2] = {{0, 5460}, {5461, 10922}, {10923, 16383}};
    rdlt_cluster *cl = calloc(1, sizeof(*cl));
    int64_t deadline;
    int i, all;

    assert_non_null(cl);
    rdlt_defer(free, cl);
    if (getenv("RDL_TEST_CLUSTER_TLS") != NULL &&
        getenv("RDL_TEST_CLUSTER_TLS")[0] == '1')
        cl->pki = rdlt_pki_make();
    for (i = 0; i < RDLT_CLUSTER_NODES; i++)
        cl->node[i] = cl->pki != NULL ? start_tls_node(cl->pki)
                                      : rdlt_server_start_args(node_args);
    for (i = 0; i < RDLT_CLUSTER_NODES; i++) {
        redisReply *r;
        /* Distinct epochs up front: no epoch collision to resolve. */
        expect_ok(rdlt_cmd(cl->node[i], "CLUSTER SET-CONFIG-EPOCH %d", i + 1),
                  "CLUSTER SET-CONFIG-EPOCH");
        r = rdlt_cmd(cl->node[i], "CLUSTER MYID");
        assert_int_equal(r->type, REDIS_REPLY_STRING);
        snprintf(cl->id[i], sizeof(cl->id[i]), "%s", r->str);
        freeReplyObject(r);
    }
    for (i = 0; i < 3; i++)
        add_slots(cl->node[i], ranges[i][0], ranges[i][1]);
    for (i = 1; i < RDLT_CLUSTER_NODES; i++)
        expect_ok(rdlt_cmd(cl->node[0], "CLUSTER MEET 127.0.0.1 %d %d",
                           rdlt_server_port(cl->node[i]),
                           rdlt_server_bus_port(cl->node[i])),
                  "CLUSTER MEET");
    deadline = rdlt_now_ms() + 20000;
    do {
        all = 1;
        for (i = 0; i < RDLT_CLUSTER_NODES && all; i++)
            all = known_nodes(cl->node[i]) == RDLT_CLUSTER_NODES;
        if (!all)
            rdlt_sleep_ms(20);
    } while (!all && rdlt_now_ms() < deadline);
    if (!all)
        fail_msg("rdlt: the cluster nodes did not meet within 20 s");
    for (i = 3; i < RDLT_CLUSTER_NODES; i++)
        expect_ok(rdlt_cmd(cl->node[i], "CLUSTER REPLICATE %s", cl->id[i - 3]),
                  "CLUSTER REPLICATE");
    if (cl->pki != NULL)
        snprintf(cl->url, sizeof(cl->url),
                 "rediss+cluster://127.0.0.1:%d,127.0.0.1:%d",
                 rdlt_server_tls_port(cl->node[0]),
                 rdlt_server_tls_port(cl->node[1]));
    else
        snprintf(cl->url, sizeof(cl->url),
                 "redis+cluster://127.0.0.1:%d,127.0.0.1:%d",
                 rdlt_server_port(cl->node[0]), rdlt_server_port(cl->node[1]));
    rdlt_cluster_wait_ok(cl, 30000);
    return cl;
}

const char *rdlt_cluster_url(const rdlt_cluster *cl)
{
    return cl->url;
}

rdlt_server *rdlt_cluster_node(rdlt_cluster *cl, int i)
{
    assert_true(i >= 0 && i < RDLT_CLUSTER_NODES);
    return cl->node[i];
}

const char *rdlt_cluster_node_id(rdlt_cluster *cl, rdlt_server *s)
{
    int i;
    for (i = 0; i < RDLT_CLUSTER_NODES; i++)
        if (cl->node[i] == s)
            return cl->id[i];
    fail_msg("rdlt: not a node of this cluster");
    return NULL;
}

static rdlt_server *by_port(rdlt_cluster *cl, long long port)
{
    int i;
    for (i = 0; i < RDLT_CLUSTER_NODES; i++)
        if (rdlt_server_port(cl->node[i]) == port)
            return cl->node[i];
    return NULL;
}

static rdlt_server *any_running(rdlt_cluster *cl)
{
    int i;
    for (i = 0; i < RDLT_CLUSTER_NODES; i++)
        if (rdlt_server_running(cl->node[i]))
            return cl->node[i];
    fail_msg("rdlt: no cluster node runs");
    return NULL;
}

/* "start-end:port ..." of s's CLUSTER SLOTS, sorted by start; "" and a
 * reason in why if the reply is not a full, running table. */
static void slots_view(rdlt_cluster *cl, rdlt_server *s, char *out, size_t len,
                       char *why, size_t whylen)
{
    redisReply *r = rdlt_cmd(s, "CLUSTER SLOTS");
    long long start[64], end[64], port[64];
    size_t n = 0, i, j, o = 0;
    long long covered = 0;
    out[0] = '\0';
    for (i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements && n < 64;
         i++) {
        redisReply *e = r->element[i];
        if (e->type != REDIS_REPLY_ARRAY || e->elements < 3)
            continue;
        start[n] = e->element[0]->integer;
        end[n] = e->element[1]->integer;
        port[n] = e->element[2]->element[1]->integer;
        n++;
    }
    freeReplyObject(r);
    for (i = 1; i < n; i++) /* insertion sort by start */
        for (j = i; j > 0 && start[j - 1] > start[j]; j--) {
            long long t;
            t = start[j], start[j] = start[j - 1], start[j - 1] = t;
            t = end[j], end[j] = end[j - 1], end[j - 1] = t;
            t = port[j], port[j] = port[j - 1], port[j - 1] = t;
        }
    for (i = 0; i < n; i++) {
        rdlt_server *m = by_port(cl, port[i]);
        if (m == NULL || !rdlt_server_running(m)) {
            snprintf(why, whylen, "slots %lld-%lld: master %lld is down",
                     start[i], end[i], port[i]);
            out[0] = '\0';
            return;
        }
        covered += end[i] - start[i] + 1;
        o += (size_t)snprintf(out + o, len - o, "%lld-%lld:%lld ", start[i],
                              end[i], port[i]);
        if (o >= len)
            fail_msg("rdlt: slot view too long");
    }
    if (covered != 16384) {
        snprintf(why, whylen, "%lld slots covered", covered);
        out[0] = '\0';
    }
}

/* Whether ROLE on a master lists as many replicas as run against it: a
 * replica's own link is up once it loaded the master's snapshot, and the
 * master lists it (and WAIT counts it) only after its first ACK. */
static int replicas_listed(rdlt_cluster *cl, rdlt_server *m)
{
    char want[32];
    redisReply *r = rdlt_cmd(m, "ROLE");
    size_t listed = 0, running = 0;
    int i;
    if (r->type == REDIS_REPLY_ARRAY && r->elements >= 3 &&
        r->element[2]->type == REDIS_REPLY_ARRAY)
        listed = r->element[2]->elements;
    freeReplyObject(r);
    snprintf(want, sizeof(want), "master_port:%d\r",
             cl->pki != NULL ? rdlt_server_tls_port(m) : rdlt_server_port(m));
    for (i = 0; i < RDLT_CLUSTER_NODES; i++) {
        rdlt_server *s = cl->node[i];
        if (s == m || !rdlt_server_running(s))
            continue;
        r = rdlt_cmd(s, "INFO replication");
        running += r->type == REDIS_REPLY_STRING &&
                   strstr(r->str, "role:slave") != NULL &&
                   strstr(r->str, want) != NULL;
        freeReplyObject(r);
    }
    return listed >= running;
}

void rdlt_cluster_wait_ok(rdlt_cluster *cl, int64_t timeout_ms)
{
    int64_t deadline = rdlt_now_ms() + timeout_ms;
    char ref[1024], view[1024], why[256] = "";
    int i, ok;

    for (;;) {
        ok = 1;
        ref[0] = '\0';
        for (i = 0; i < RDLT_CLUSTER_NODES && ok; i++) {
            rdlt_server *s = cl->node[i];
            redisReply *r;
            if (!rdlt_server_running(s))
                continue;
            r = rdlt_cmd(s, "CLUSTER INFO");
            ok = r->type == REDIS_REPLY_STRING &&
                 strstr(r->str, "cluster_state:ok") != NULL;
            freeReplyObject(r);
            if (!ok) {
                snprintf(why, sizeof(why), "node %d: cluster_state not ok", i);
                break;
            }
            slots_view(cl, s, view, sizeof(view), why, sizeof(why));
            if (view[0] == '\0') {
                ok = 0;
                break;
            }
            if (ref[0] == '\0') {
                snprintf(ref, sizeof(ref), "%s", view);
            } else if (strcmp(ref, view) != 0) {
                snprintf(why, sizeof(why),
                         "node %d sees \"%.100s\", not "
                         "\"%.100s\"",
                         i, view, ref);
                ok = 0;
                break;
            }
            r = rdlt_cmd(s, "INFO replication");
            if (r->type == REDIS_REPLY_STRING &&
                strstr(r->str, "role:slave") != NULL &&
                strstr(r->str, "master_link_status:up") == NULL) {
                snprintf(why, sizeof(why), "node %d: replica link down", i);
                ok = 0;
            } else if (r->type == REDIS_REPLY_STRING &&
                       strstr(r->str, "role:master") != NULL &&
                       !replicas_listed(cl, s)) {
                snprintf(why, sizeof(why), "node %d: a replica not online", i);
                ok = 0;
            }
            freeReplyObject(r);
        }
        if (ok)
            return;
        if (rdlt_now_ms() >= deadline)
            fail_msg("rdlt: the cluster did not settle within %lld ms: %s",
                     (long long)timeout_ms, why);
        rdlt_sleep_ms(50);
    }
}

rdlt_server *rdlt_cluster_master_of(rdlt_cluster *cl, unsigned slot)
{
    redisReply *r = rdlt_cmd(any_running(cl), "CLUSTER SLOTS");
    rdlt_server *m = NULL;
    size_t i;
    for (i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        redisReply *e = r->element[i];
        if (e->element[0]->integer <= (long long)slot &&
            (long long)slot <= e->element[1]->integer)
            m = by_port(cl, e->element[2]->element[1]->integer);
    }
    freeReplyObject(r);
    if (m == NULL)
        fail_msg("rdlt: no master for slot %u", slot);
    return m;
}

rdlt_server *rdlt_cluster_replica_of(rdlt_cluster *cl, rdlt_server *master)
{
    char want[32];
    int i;
    /* Replication over TLS goes to the master's TLS port. */
    snprintf(want, sizeof(want), "master_port:%d\r",
             cl->pki != NULL ? rdlt_server_tls_port(master)
                             : rdlt_server_port(master));
    for (i = 0; i < RDLT_CLUSTER_NODES; i++) {
        rdlt_server *s = cl->node[i];
        redisReply *r;
        int match;
        if (s == master || !rdlt_server_running(s))
            continue;
        r = rdlt_cmd(s, "INFO replication");
        match = r->type == REDIS_REPLY_STRING &&
                strstr(r->str, "role:slave") != NULL &&
                strstr(r->str, want) != NULL;
        freeReplyObject(r);
        if (match)
            return s;
    }
    return NULL;
}

rdl_client_t *rdlt_cluster_client_new(rdlt_cluster *cl)
{
    rdl_client_t *c = rdlt_client_new(cl->url);
    if (cl->pki != NULL) {
        rdl_tls_options_t o = {.ca_file = cl->pki->ca};
        rdlt_assert_ok(rdl_client_set_tls(c, &o));
    }
    return c;
}

rdl_client_t *rdlt_cluster_client(rdlt_cluster *cl)
{
    rdl_client_t *c = rdlt_cluster_client_new(cl);
    int rc;
    rdlt_assert_ok(rdl_client_set_timeouts_ms(c, 2000, 2000));
    rc = rdl_client_connect(c);
    if (rc != 0)
        fail_msg("rdl_client_connect(%s): %s: %s", cl->url, rdl_err_name(rc),
                 rdl_client_errmsg(c));
    return c;
}
