/* Raw connections (raw.h): blocking sockets with the --timeout bounds,
 * TLS through OpenSSL when the URL is rediss, and the URL's nodes: the
 * server, a sentinel's master, or a cluster's masters (CLUSTER SLOTS).
 *
 * The URL is parsed again here, loosely: the library accepted it already
 * (cli_connect() runs first), and its parser is not public. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#ifdef RDL_CLI_TLS
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#endif

#include "raw.h"

#define HOSTS_MAX 64 /* the library's limit of seeds in a URL */
#define MASTERS_MAX 1024

struct raw_conn {
    int fd;
#ifdef RDL_CLI_TLS
    SSL *ssl;
#endif
    redisReader *reader;
    int64_t cmd_ms;
    char addr[300];
    char err[256];
};

typedef struct raw_host {
    char host[256]; /* without brackets for IPv6 */
    int port;
} raw_host;

/* What raw.c needs of the URL. */
typedef struct raw_url {
    int tls, cluster, sentinel;
    char *user, *pass;   /* the data nodes' credentials, or NULL */
    char *suser, *spass; /* the sentinels', or NULL */
    char *master;        /* sentinel: the master's name */
    int db;
    size_t nhosts;
    raw_host hosts[HOSTS_MAX];
} raw_url;

/* ---- The URL ----------------------------------------------------------- */

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* s[0..n) percent-decoded, in a new string (NULL: out of memory). */
static char *decode(const char *s, size_t n)
{
    char *out = malloc(n + 1), *o = out;
    size_t i;
    if (out == NULL)
        return NULL;
    for (i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 &&
            hexval(s[i + 2]) >= 0) {
            *o++ = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else {
            *o++ = s[i];
        }
    }
    *o = '\0';
    return out;
}

static void url_clear(raw_url *u)
{
    free(u->user);
    free(u->pass);
    free(u->suser);
    free(u->spass);
    free(u->master);
    memset(u, 0, sizeof(*u));
}

/* Splits an accepted URL. -1 only when out of memory or, defensively,
 * when it is not one the library would have taken. */
static int url_split(const char *url, raw_url *u)
{
    const char *p = strstr(url, "://"), *end, *q, *at = NULL, *s;
    memset(u, 0, sizeof(*u));
    if (p == NULL)
        return -1;
    u->tls = strncmp(url, "rediss", 6) == 0;
    u->cluster = (size_t)(p - url) >= 8 && memcmp(p - 8, "+cluster", 8) == 0;
    u->sentinel = (size_t)(p - url) >= 9 && memcmp(p - 9, "+sentinel", 9) == 0;
    p += 3;
    end = p + strlen(p);
    q = memchr(p, '?', (size_t)(end - p));
    if (q != NULL) {
        /* sentinel_user=U&sentinel_password=P */
        for (s = q + 1; s < end;) {
            const char *amp = memchr(s, '&', (size_t)(end - s));
            const char *stop = amp != NULL ? amp : end;
            const char *eq = memchr(s, '=', (size_t)(stop - s));
            char **dst = NULL;
            if (eq != NULL && eq - s == 13 &&
                memcmp(s, "sentinel_user", 13) == 0)
                dst = &u->suser;
            else if (eq != NULL && eq - s == 17 &&
                     memcmp(s, "sentinel_password", 17) == 0)
                dst = &u->spass;
            if (dst != NULL) {
                free(*dst);
                if ((*dst = decode(eq + 1, (size_t)(stop - eq - 1))) == NULL)
                    return -1;
            }
            s = stop + (amp != NULL);
        }
        end = q;
    }
    for (s = p; s < end; s++)
        if (*s == '@')
            at = s;
    if (at != NULL) {
        const char *colon = memchr(p, ':', (size_t)(at - p));
        if (colon == NULL)
            return -1;
        if (colon > p && (u->user = decode(p, (size_t)(colon - p))) == NULL)
            return -1;
        if ((u->pass = decode(colon + 1, (size_t)(at - colon - 1))) == NULL)
            return -1;
        p = at + 1;
    }
    while (p < end && *p != '/') {
        raw_host *h;
        const char *hb = p, *he;
        if (u->nhosts == HOSTS_MAX)
            return -1;
        h = &u->hosts[u->nhosts++];
        h->port = u->sentinel ? 26379 : 6379;
        if (*p == '[') {
            hb = p + 1;
            he = memchr(hb, ']', (size_t)(end - hb));
            if (he == NULL)
                return -1;
            p = he + 1;
        } else {
            for (he = p; he < end && *he != ':' && *he != '/' && *he != ',';)
                he++;
            p = he;
        }
        if (he == hb || (size_t)(he - hb) >= sizeof(h->host))
            return -1;
        memcpy(h->host, hb, (size_t)(he - hb));
        h->host[he - hb] = '\0';
        if (p < end && *p == ':') {
            char *e;
            h->port = (int)strtol(p + 1, &e, 10);
            p = e;
        }
        if (p < end && *p == ',')
            p++;
    }
    if (u->nhosts == 0)
        return -1;
    if (u->sentinel) {
        const char *m;
        if (p >= end || *p != '/')
            return -1;
        for (m = ++p; p < end && *p != '/';)
            p++;
        if ((u->master = decode(m, (size_t)(p - m))) == NULL)
            return -1;
    }
    if (p < end && *p == '/' && p + 1 < end)
        u->db = atoi(p + 1);
    return 0;
}

/* ---- Sockets and TLS --------------------------------------------------- */

#ifdef RDL_CLI_TLS
/* The global TLS options as an SSL_CTX, made once. */
static SSL_CTX *tls_ctx(const cli *g, char *err, size_t errlen)
{
    static SSL_CTX *ctx;
    const rdl_tls_options_t *t = &g->tls;
    if (ctx != NULL)
        return ctx;
    ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL) {
        snprintf(err, errlen, "TLS: cannot create a context");
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    if (!t->insecure) {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        if ((t->ca_file != NULL
                 ? SSL_CTX_load_verify_locations(ctx, t->ca_file, NULL)
                 : SSL_CTX_set_default_verify_paths(ctx)) != 1) {
            snprintf(err, errlen, "TLS: cannot load the CAs%s%s",
                     t->ca_file != NULL ? " of " : "",
                     t->ca_file != NULL ? t->ca_file : "");
            goto fail;
        }
    }
    if (t->cert_file != NULL &&
        (SSL_CTX_use_certificate_chain_file(ctx, t->cert_file) != 1 ||
         SSL_CTX_use_PrivateKey_file(
             ctx, t->key_file != NULL ? t->key_file : t->cert_file,
             SSL_FILETYPE_PEM) != 1 ||
         SSL_CTX_check_private_key(ctx) != 1)) {
        snprintf(err, errlen, "TLS: cannot use the client certificate %s",
                 t->cert_file);
        goto fail;
    }
    return ctx;
fail:
    SSL_CTX_free(ctx);
    ctx = NULL;
    return NULL;
}

static int is_address(const char *s)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

/* The handshake on c->fd, verifying the server as the library does: the
 * --sni name or the host, an address against the certificate's IP
 * entries (and then no SNI). 0 or -1 with c->err set. */
static int tls_start(const cli *g, raw_conn *c, const char *host)
{
    SSL_CTX *ctx = tls_ctx(g, c->err, sizeof(c->err));
    const char *name = g->tls.server_name != NULL ? g->tls.server_name : host;
    int addr = is_address(name);
    long v;
    if (ctx == NULL)
        return -1;
    if ((c->ssl = SSL_new(ctx)) == NULL || SSL_set_fd(c->ssl, c->fd) != 1) {
        snprintf(c->err, sizeof(c->err), "TLS: out of memory");
        return -1;
    }
    if (!addr)
        SSL_set_tlsext_host_name(c->ssl, name);
    if (!g->tls.insecure &&
        (addr ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), name)
              : SSL_set1_host(c->ssl, name)) != 1) {
        snprintf(c->err, sizeof(c->err), "TLS: cannot verify \"%s\"", name);
        return -1;
    }
    if (SSL_connect(c->ssl) == 1)
        return 0;
    v = SSL_get_verify_result(c->ssl);
    if (v != X509_V_OK)
        snprintf(c->err, sizeof(c->err),
                 "TLS: the server's certificate was refused: %s",
                 X509_verify_cert_error_string(v));
    else if (errno == EAGAIN || errno == EWOULDBLOCK)
        snprintf(c->err, sizeof(c->err), "TLS: the handshake timed out");
    else
        snprintf(c->err, sizeof(c->err), "TLS: the handshake failed (%s)",
                 ERR_reason_error_string(ERR_peek_last_error()) != NULL
                     ? ERR_reason_error_string(ERR_peek_last_error())
                     : "connection closed");
    ERR_clear_error();
    return -1;
}
#endif

/* A TCP connection to host:port within connect_ms, then blocking with
 * command timeouts. The fd, or -1 with err set. */
static int tcp_connect(const char *host, int port, int64_t connect_ms,
                       int64_t cmd_ms, char *err, size_t errlen)
{
    struct addrinfo hints, *res, *ai;
    struct timeval tv;
    char service[16];
    int fd = -1, rc, saved = ECONNREFUSED, one = 1;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(service, sizeof(service), "%d", port);
    if ((rc = getaddrinfo(host, service, &hints, &res)) != 0) {
        snprintf(err, errlen, "%s", gai_strerror(rc));
        return -1;
    }
    for (ai = res; ai != NULL; ai = ai->ai_next) {
        struct pollfd pfd;
        socklen_t len = sizeof(saved);
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                    ai->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            if (errno != EINPROGRESS) {
                saved = errno;
                close(fd);
                fd = -1;
                continue;
            }
            pfd.fd = fd;
            pfd.events = POLLOUT;
            do
                rc = poll(&pfd, 1,
                          connect_ms > 3600000 ? 3600000 : (int)connect_ms);
            while (rc < 0 && errno == EINTR);
            if (rc == 0)
                saved = ETIMEDOUT;
            else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &saved, &len) != 0)
                saved = errno;
            if (rc <= 0 || saved != 0) {
                close(fd);
                fd = -1;
                continue;
            }
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        tv.tv_sec = (time_t)(cmd_ms / 1000);
        tv.tv_usec = (suseconds_t)(cmd_ms % 1000 * 1000);
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        break;
    }
    freeaddrinfo(res);
    if (fd < 0)
        snprintf(err, errlen, "%s",
                 saved == ETIMEDOUT ? "connect timed out" : strerror(saved));
    return fd;
}

static void conn_free(raw_conn *c)
{
    if (c == NULL)
        return;
#ifdef RDL_CLI_TLS
    if (c->ssl != NULL)
        SSL_free(c->ssl);
#endif
    if (c->fd >= 0)
        close(c->fd);
    if (c->reader != NULL)
        redisReaderFree(c->reader);
    free(c);
}

static int io_failed(raw_conn *c, const char *what, ssize_t n)
{
    if (n == 0)
        snprintf(c->err, sizeof(c->err), "connection closed by the server");
    else if (errno == EAGAIN || errno == EWOULDBLOCK)
        snprintf(c->err, sizeof(c->err), "%s timed out", what);
    else
        snprintf(c->err, sizeof(c->err), "%s: %s", what, strerror(errno));
    return EXIT_UNAVAILABLE;
}

static ssize_t conn_write(raw_conn *c, const char *buf, size_t len)
{
#ifdef RDL_CLI_TLS
    if (c->ssl != NULL) {
        int n = SSL_write(c->ssl, buf, (int)len);
        ERR_clear_error();
        return n > 0 ? n : -1;
    }
#endif
    return send(c->fd, buf, len, MSG_NOSIGNAL);
}

static ssize_t conn_read(raw_conn *c, char *buf, size_t len)
{
#ifdef RDL_CLI_TLS
    if (c->ssl != NULL) {
        int n = SSL_read(c->ssl, buf, (int)len);
        int e = n > 0 ? SSL_ERROR_NONE : SSL_get_error(c->ssl, n);
        ERR_clear_error();
        if (e == SSL_ERROR_ZERO_RETURN)
            return 0;
        return n > 0 ? n : -1;
    }
#endif
    return recv(c->fd, buf, len, 0);
}

int raw_command(raw_conn *c, redisReply **out, int argc, const char **argv)
{
    char *cmd = NULL, buf[16384];
    int len = redisFormatCommandArgv(&cmd, argc, argv, NULL), off = 0;
    void *reply = NULL;
    ssize_t n;

    *out = NULL;
    if (len < 0) {
        snprintf(c->err, sizeof(c->err), "out of memory");
        return EXIT_SOFTWARE;
    }
    while (off < len) {
        n = conn_write(c, cmd + off, (size_t)(len - off));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            redisFreeCommand(cmd);
            return io_failed(c, "write", n);
        }
        off += (int)n;
    }
    redisFreeCommand(cmd);
    for (;;) {
        if (redisReaderGetReply(c->reader, &reply) != REDIS_OK) {
            snprintf(c->err, sizeof(c->err), "protocol error: %s",
                     c->reader->errstr);
            return EXIT_SOFTWARE;
        }
        if (reply != NULL)
            break;
        n = conn_read(c, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return io_failed(c, "read", n);
        if (redisReaderFeed(c->reader, buf, (size_t)n) != REDIS_OK) {
            snprintf(c->err, sizeof(c->err), "out of memory");
            return EXIT_SOFTWARE;
        }
    }
    *out = reply;
    return 0;
}

const char *raw_addr(const raw_conn *c)
{
    return c->addr;
}

const char *raw_errmsg(const raw_conn *c)
{
    return c->err;
}

/* One command whose reply must not be an error: 0, or an exit code
 * (EXIT_UNAVAILABLE for an error reply too: AUTH, SELECT and the
 * discovery commands failing mean the node cannot be used). */
static int command_ok(raw_conn *c, int argc, const char **argv,
                      redisReply **out)
{
    redisReply *r;
    int rc = raw_command(c, &r, argc, argv);
    if (rc != 0)
        return rc;
    if (r->type == REDIS_REPLY_ERROR) {
        snprintf(c->err, sizeof(c->err), "%s: %s", argv[0], r->str);
        freeReplyObject(r);
        return EXIT_UNAVAILABLE;
    }
    if (out != NULL)
        *out = r;
    else
        freeReplyObject(r);
    return 0;
}

/* A connection to host:port, authenticated (AUTH [user] pass) and on
 * database db. Returns 0, or an exit code with err set to a message
 * (the caller prints it). */
static int conn_open(const cli *g, const raw_url *u, const char *host, int port,
                     const char *user, const char *pass, int db, raw_conn **out,
                     char *err, size_t errlen)
{
    int64_t connect_ms = g->timeout_ms > 0 ? g->timeout_ms : 5000;
    raw_conn *c = calloc(1, sizeof(*c));
    int rc;

    *out = NULL;
    if (c == NULL || (c->reader = redisReaderCreate()) == NULL) {
        conn_free(c);
        snprintf(err, errlen, "out of memory");
        return EXIT_SOFTWARE;
    }
    c->cmd_ms = g->timeout_ms > 0 ? g->timeout_ms : 3000;
    snprintf(c->addr, sizeof(c->addr), strchr(host, ':') ? "[%s]:%d" : "%s:%d",
             host, port);
    c->fd =
        tcp_connect(host, port, connect_ms, c->cmd_ms, c->err, sizeof(c->err));
    rc = c->fd < 0 ? EXIT_UNAVAILABLE : 0;
#ifdef RDL_CLI_TLS
    if (rc == 0 && u->tls && tls_start(g, c, host) != 0)
        rc = EXIT_UNAVAILABLE;
#else
    (void)u;
#endif
    if (rc == 0 && pass != NULL) {
        const char *auth[3] = {"AUTH", user != NULL ? user : pass, pass};
        rc = command_ok(c, user != NULL ? 3 : 2, auth, NULL);
    }
    if (rc == 0 && db != 0) {
        char n[16];
        const char *sel[2] = {"SELECT", n};
        snprintf(n, sizeof(n), "%d", db);
        rc = command_ok(c, 2, sel, NULL);
    }
    if (rc != 0) {
        snprintf(err, errlen, "%.100s: %.200s", c->addr, c->err);
        conn_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* ---- The nodes --------------------------------------------------------- */

static int add_node(raw_nodes *nodes, raw_conn *c)
{
    raw_conn **grown = realloc(nodes->conn, (nodes->n + 1) * sizeof(*grown));
    if (grown == NULL) {
        conn_free(c);
        return -1;
    }
    nodes->conn = grown;
    nodes->conn[nodes->n++] = c;
    return 0;
}

/* The masters of a cluster, from the first seed that answers CLUSTER
 * SLOTS: each range's first node. An empty address means the node asked. */
static int cluster_masters(const cli *g, const raw_url *u, raw_host *masters,
                           size_t *n, char *err, size_t errlen)
{
    const char *argv[2] = {"CLUSTER", "SLOTS"};
    int rc = EXIT_UNAVAILABLE;
    size_t s, i, j;

    *n = 0;
    for (s = 0; s < u->nhosts; s++) {
        redisReply *r = NULL;
        raw_conn *c;
        rc = conn_open(g, u, u->hosts[s].host, u->hosts[s].port, u->user,
                       u->pass, 0, &c, err, errlen);
        if (rc == 0 && (rc = command_ok(c, 2, argv, &r)) != 0)
            snprintf(err, errlen, "%.100s: %.200s", c->addr, c->err);
        if (c != NULL)
            conn_free(c);
        if (rc != 0)
            continue;
        for (i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
            redisReply *range = r->element[i], *m;
            raw_host h;
            if (range->type != REDIS_REPLY_ARRAY || range->elements < 3)
                continue;
            m = range->element[2];
            if (m->type != REDIS_REPLY_ARRAY || m->elements < 2 ||
                m->element[0]->type != REDIS_REPLY_STRING ||
                m->element[1]->type != REDIS_REPLY_INTEGER ||
                m->element[0]->len >= sizeof(h.host))
                continue;
            if (m->element[0]->len == 0 || strcmp(m->element[0]->str, "?") == 0)
                snprintf(h.host, sizeof(h.host), "%s", u->hosts[s].host);
            else
                snprintf(h.host, sizeof(h.host), "%s", m->element[0]->str);
            h.port = (int)m->element[1]->integer;
            for (j = 0; j < *n; j++)
                if (masters[j].port == h.port &&
                    strcmp(masters[j].host, h.host) == 0)
                    break;
            if (j == *n && *n < MASTERS_MAX)
                masters[(*n)++] = h;
        }
        freeReplyObject(r);
        if (*n > 0)
            return 0;
        snprintf(err, errlen, "%s:%d: CLUSTER SLOTS lists no master",
                 u->hosts[s].host, u->hosts[s].port);
        rc = EXIT_UNAVAILABLE;
    }
    return rc;
}

/* The master a sentinel names, from the first that answers. */
static int sentinel_master(const cli *g, const raw_url *u, raw_host *m,
                           char *err, size_t errlen)
{
    const char *argv[3] = {"SENTINEL", "get-master-addr-by-name", u->master};
    int rc = EXIT_UNAVAILABLE;
    size_t s;

    for (s = 0; s < u->nhosts; s++) {
        redisReply *r = NULL;
        raw_conn *c;
        rc = conn_open(g, u, u->hosts[s].host, u->hosts[s].port, u->suser,
                       u->spass, 0, &c, err, errlen);
        if (rc == 0 && (rc = command_ok(c, 3, argv, &r)) != 0)
            snprintf(err, errlen, "%.100s: %.200s", c->addr, c->err);
        if (c != NULL)
            conn_free(c);
        if (rc != 0)
            continue;
        if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
            r->element[0]->type == REDIS_REPLY_STRING &&
            r->element[1]->type == REDIS_REPLY_STRING &&
            r->element[0]->len < sizeof(m->host)) {
            snprintf(m->host, sizeof(m->host), "%s", r->element[0]->str);
            m->port = atoi(r->element[1]->str);
            freeReplyObject(r);
            return 0;
        }
        freeReplyObject(r);
        snprintf(err, errlen, "%s:%d: the sentinel knows no master \"%s\"",
                 u->hosts[s].host, u->hosts[s].port, u->master);
        rc = EXIT_UNAVAILABLE;
    }
    return rc;
}

int raw_nodes_open(const cli *g, raw_nodes *out)
{
    raw_url u;
    raw_host *masters = NULL, one;
    size_t n = 1, i;
    char err[512] = "";
    int rc;

    memset(out, 0, sizeof(*out));
    if (url_split(g->url, &u) != 0) {
        url_clear(&u);
        cli_error("--url", "cannot split the URL into its nodes");
        return EXIT_SOFTWARE;
    }
    if (u.cluster) {
        if ((masters = calloc(MASTERS_MAX, sizeof(*masters))) == NULL) {
            url_clear(&u);
            cli_error("ls", "out of memory");
            return EXIT_SOFTWARE;
        }
        rc = cluster_masters(g, &u, masters, &n, err, sizeof(err));
    } else if (u.sentinel) {
        masters = &one;
        rc = sentinel_master(g, &u, &one, err, sizeof(err));
    } else {
        masters = &one;
        one = u.hosts[0];
        rc = 0;
    }
    for (i = 0; rc == 0 && i < n; i++) {
        raw_conn *c;
        cli_note(g, "scanning %s:%d", masters[i].host, masters[i].port);
        rc = conn_open(g, &u, masters[i].host, masters[i].port, u.user, u.pass,
                       u.cluster ? 0 : u.db, &c, err, sizeof(err));
        if (rc == 0 && add_node(out, c) != 0) {
            snprintf(err, sizeof(err), "out of memory");
            rc = EXIT_SOFTWARE;
        }
    }
    if (rc != 0) {
        cli_error("cannot connect", "%s", err);
        raw_nodes_close(out);
    }
    if (masters != &one)
        free(masters);
    url_clear(&u);
    return rc;
}

void raw_nodes_close(raw_nodes *nodes)
{
    size_t i;
    for (i = 0; i < nodes->n; i++)
        conn_free(nodes->conn[i]);
    free(nodes->conn);
    memset(nodes, 0, sizeof(*nodes));
}
