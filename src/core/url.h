/* url.c: the client's URL. Any thread (a client parses its URL before it
 * connects). An rdl__url owns its strings; rdl__url_clear() frees them. */
#ifndef RDL_CORE_URL_H
#define RDL_CORE_URL_H

#include <stddef.h>

#include "rdl.h"

typedef struct rdl__addr {
    char *host; /* without brackets for IPv6 */
    int port;
} rdl__addr;

#define RDL__URL_SEEDS_MAX 64

typedef struct rdl__url {
    char *host; /* without brackets for IPv6; a cluster's first seed */
    int port;
    char *user; /* NULL if absent */
    char *pass; /* NULL if absent */
    int db;
    int cluster;         /* redis+cluster:// */
    int sentinel;        /* redis+sentinel://: seeds are the sentinels */
    int tls;             /* rediss://, rediss+cluster://, rediss+sentinel:// */
    size_t nseeds;       /* cluster: the seed nodes; sentinel: the sentinels;
                            in the URL's order */
    rdl__addr *seeds;    /* NULL unless cluster or sentinel */
    char *master;        /* sentinel: the master's name */
    char *sentinel_user; /* sentinel: credentials for the sentinels (the */
    char *sentinel_pass; /* userinfo is for the data nodes); NULL if none */
} rdl__url;

/* Parses redis://[user[:password]@]host[:port][/db],
 * redis+cluster://[user[:password]@]host[:port][,host[:port]...][/0]
 * (port 6379 when left out),
 * redis+sentinel://[user[:password]@]host[:port][,...]/MASTER[/db]
 * [?sentinel_user=U&sentinel_password=P] (sentinel port 26379 when left
 * out), and their TLS forms rediss://, rediss+cluster://,
 * rediss+sentinel://. On failure returns RDL_EINVAL (RDL_ENOTSUP for TLS
 * in a build without it, or RDL_ENOMEM) and writes a sentence saying what
 * is wrong to err; `out` is then untouched. */
int rdl__url_parse(const char *text, rdl__url *out, char *err, size_t errlen);
void rdl__url_clear(rdl__url *u);

#endif
