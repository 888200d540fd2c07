/* Figure "cluster": the uncontended and hand-off figures again, against a
 * 6-node Redis Cluster (3 masters, 3 replicas) that tools/cluster.sh
 * starts on loopback for this run, or the one in $RDL_BENCH_CLUSTER_URL.
 * The raw client's keys share one hash tag, so it talks to one master
 * without redirects; its round trip to that master is the floor the
 * figures' ratios use. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define RAW_TAG "rawbench"

static char cluster_dir[256];

static void stop_cluster(void)
{
    char cmd[700];
    if (cluster_dir[0] == '\0')
        return;
    snprintf(cmd, sizeof(cmd),
             "bash '%s/tools/cluster.sh' stop '%s' >/dev/null",
             RDL_BENCH_SOURCE_DIR, cluster_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "rdl-bench: could not stop the cluster in %s\n",
                cluster_dir);
    cluster_dir[0] = '\0';
}

/* Starts a cluster; fills url. 0 or -1. */
static int start_cluster(char *url, size_t len)
{
    char cmd[700];
    FILE *p;
    snprintf(cluster_dir, sizeof(cluster_dir), "/tmp/rdl-bench-cluster-XXXXXX");
    if (mkdtemp(cluster_dir) == NULL) {
        cluster_dir[0] = '\0';
        return -1;
    }
    atexit(stop_cluster);
    snprintf(cmd, sizeof(cmd), "bash '%s/tools/cluster.sh' start '%s'",
             RDL_BENCH_SOURCE_DIR, cluster_dir);
    p = popen(cmd, "r");
    if (p == NULL)
        return -1;
    url[0] = '\0';
    if (fgets(url, (int)len, p) == NULL)
        url[0] = '\0';
    if (pclose(p) != 0 || strncmp(url, "redis+cluster://", 16) != 0)
        return -1;
    url[strcspn(url, "\r\n")] = '\0';
    return 0;
}

/* The master that serves the raw client's hash tag: asks the first seed. */
static int raw_master(const char *url, char *host, size_t hlen, int *port)
{
    char seed[256];
    int sport, ok = -1;
    long long slot;
    redisContext *rc;
    redisReply *r;
    size_t i;

    if (sscanf(url, "redis+cluster://%255[^:,/]:%d", seed, &sport) != 2)
        return -1;
    rc = redisConnect(seed, sport);
    if (rc == NULL || rc->err)
        goto out;
    r = redisCommand(rc, "CLUSTER KEYSLOT {%s}", RAW_TAG);
    if (r == NULL || r->type != REDIS_REPLY_INTEGER) {
        freeReplyObject(r);
        goto out;
    }
    slot = r->integer;
    freeReplyObject(r);
    r = redisCommand(rc, "CLUSTER SLOTS");
    for (i = 0; r != NULL && r->type == REDIS_REPLY_ARRAY && i < r->elements;
         i++) {
        redisReply *e = r->element[i];
        if (e->elements >= 3 && e->element[0]->integer <= slot &&
            slot <= e->element[1]->integer) {
            snprintf(host, hlen, "%s", e->element[2]->element[0]->str);
            *port = (int)e->element[2]->element[1]->integer;
            ok = 0;
        }
    }
    freeReplyObject(r);
out:
    if (rc != NULL)
        redisFree(rc);
    return ok;
}

int bench_fig_cluster(bench_ctx *ctx)
{
    bench_ctx cc = *ctx;
    const char *given = getenv("RDL_BENCH_CLUSTER_URL");
    int rc = 0;

    if (given != NULL)
        snprintf(cc.url, sizeof(cc.url), "%s", given);
    else if (start_cluster(cc.url, sizeof(cc.url)) != 0) {
        bench_row_begin(ctx, "cluster", "6-node cluster on loopback");
        bench_row_text("status", "n/a: tools/cluster.sh could not start one");
        bench_row_end();
        stop_cluster();
        return 0;
    }
    if (raw_master(cc.url, cc.host, sizeof(cc.host), &cc.port) != 0) {
        fprintf(stderr, "rdl-bench: cluster: no master for the raw client\n");
        stop_cluster();
        return -1;
    }
    snprintf(cc.scope, sizeof(cc.scope), "cluster");
    snprintf(cc.raw_tag, sizeof(cc.raw_tag), "%s", RAW_TAG);
    cc.password[0] = '\0';
    cc.db = 0;
    cc.floor_ok = 0;
    rc |= bench_fig_uncontended(&cc);
    rc |= bench_fig_handoff(&cc);
    stop_cluster();
    return rc ? -1 : 0;
}
