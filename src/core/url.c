/* Parsing of redis://[user[:password]@]host[:port][/db],
 * redis+cluster://[user[:password]@]host[:port][,host[:port]...],
 * redis+sentinel://[user[:password]@]host[:port][,...]/MASTER[/db][?...]
 * and their TLS forms (rediss...). Every
 * rejection says what is wrong, because a URL usually comes from a
 * configuration file that a person has to fix. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "url.h"

#define FAIL(...)                                                              \
    do {                                                                       \
        snprintf(err, errlen, __VA_ARGS__);                                    \
        goto fail;                                                             \
    } while (0)

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    ch = (char)tolower((unsigned char)ch);
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    return -1;
}

/* Percent-decodes s[0..n) into a new string; NULL with *bad set on a
 * malformed escape or a %00 (a NUL byte would cut the C string short: a
 * password "a%00b" would be sent as "a"), NULL with *bad clear when out
 * of memory. */
static char *decode(const char *s, size_t n, int *bad)
{
    char *out = rdl__malloc(n + 1), *o = out;
    size_t i;
    *bad = 0;
    if (out == NULL)
        return NULL;
    for (i = 0; i < n; i++) {
        if (s[i] == '%') {
            if (i + 2 >= n || hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0 ||
                (s[i + 1] == '0' && s[i + 2] == '0')) {
                rdl__free(out);
                *bad = 1;
                return NULL;
            }
            *o++ = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else {
            *o++ = s[i];
        }
    }
    *o = '\0';
    return out;
}

/* Parses s[0..n) as a decimal number in [lo, hi]; -1 if it is not one. */
static long number(const char *s, size_t n, long lo, long hi)
{
    long v = 0;
    size_t i;
    if (n == 0 || n > 10)
        return -1;
    for (i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v >= lo && v <= hi ? v : -1;
}

/* Parses one "host[:port]" (an IPv6 host in brackets) at *pp, stopping at
 * '/', ',' or the end; advances *pp. Returns 0, RDL_EINVAL with a sentence
 * in err, or RDL_ENOMEM. */
static int host_port(const char **pp, char **host_out, int *port_out, char *err,
                     size_t errlen)
{
    const char *p = *pp, *host, *hend;
    if (*p == '[') {
        host = p + 1;
        hend = strchr(host, ']');
        if (hend == NULL) {
            snprintf(err, errlen, "URL has an unterminated IPv6 address");
            return RDL_EINVAL;
        }
        p = hend + 1;
    } else {
        host = p;
        hend = host + strcspn(host, ":/,");
        p = hend;
    }
    if (hend == host) {
        snprintf(err, errlen, "URL has no host");
        return RDL_EINVAL;
    }
    if (*p == ':') {
        size_t n = strcspn(p + 1, "/,");
        long port = number(p + 1, n, 1, 65535);
        if (port < 0) {
            snprintf(err, errlen,
                     "URL port \"%.*s\" is not a number in 1..65535",
                     (int)(n > 16 ? 16 : n), p + 1);
            return RDL_EINVAL;
        }
        *port_out = (int)port;
        p += 1 + n;
    }
    *host_out = rdl__strndup(host, (size_t)(hend - host));
    if (*host_out == NULL) {
        snprintf(err, errlen, "out of memory");
        return RDL_ENOMEM;
    }
    *pp = p;
    return 0;
}

/* Parses the node list of a cluster or sentinel URL at p: host[:port]
 * items separated by ',' (port `dflt` when left out), the first of which
 * is also u->host:u->port. */
static int seeds(const char **pp, rdl__url *u, int dflt, char *err,
                 size_t errlen)
{
    const char *p = *pp;
    size_t n = 1, i;
    int rc;
    /* A comma or slash inside brackets (that open a node) is part of a
     * host. */
    for (i = 0; p[i] != '\0' && p[i] != '/'; i++) {
        const char *close = p[i] == '[' && (i == 0 || p[i - 1] == ',')
                                ? strchr(p + i, ']')
                                : NULL;
        if (close != NULL)
            i = (size_t)(close - p);
        n += p[i] == ',';
    }
    if (n > RDL__URL_SEEDS_MAX) {
        snprintf(err, errlen, "URL lists %zu nodes; at most %d", n,
                 RDL__URL_SEEDS_MAX);
        return RDL_EINVAL;
    }
    u->seeds = rdl__calloc(n, sizeof(*u->seeds));
    if (u->seeds == NULL) {
        snprintf(err, errlen, "out of memory");
        return RDL_ENOMEM;
    }
    for (i = 0; i < n; i++) {
        u->seeds[i].port = dflt;
        rc = host_port(&p, &u->seeds[i].host, &u->seeds[i].port, err, errlen);
        if (rc != 0)
            return rc;
        u->nseeds++;
        if (*p == ',') {
            p++;
        } else if (i + 1 < n) { /* "[::1]x,host": text after a bracket */
            snprintf(err, errlen,
                     "URL has unexpected text after node %zu: \"%.32s\"", i + 1,
                     p);
            return RDL_EINVAL;
        }
    }
    u->host = rdl__strdup(u->seeds[0].host);
    if (u->host == NULL) {
        snprintf(err, errlen, "out of memory");
        return RDL_ENOMEM;
    }
    u->port = u->seeds[0].port;
    *pp = p;
    return 0;
}

/* The schemes. */
static const struct {
    const char *text;
    int cluster, sentinel, tls;
} schemes[] = {
    {"redis://", 0, 0, 0},          {"redis+cluster://", 1, 0, 0},
    {"redis+sentinel://", 0, 1, 0}, {"rediss://", 0, 0, 1},
    {"rediss+cluster://", 1, 0, 1}, {"rediss+sentinel://", 0, 1, 1},
};

/* The query of a sentinel URL, q[0..n) after the '?':
 * sentinel_user=U&sentinel_password=P, percent-encoded. */
static int query(const char *q, size_t n, rdl__url *u, char *err, size_t errlen)
{
    const char *end = q + n;
    while (q < end) {
        const char *amp = memchr(q, '&', (size_t)(end - q));
        const char *stop = amp != NULL ? amp : end;
        const char *eq = memchr(q, '=', (size_t)(stop - q));
        char **dst = NULL;
        int bad = 0;
        if (eq != NULL && (size_t)(eq - q) == 13 &&
            memcmp(q, "sentinel_user", 13) == 0)
            dst = &u->sentinel_user;
        else if (eq != NULL && (size_t)(eq - q) == 17 &&
                 memcmp(q, "sentinel_password", 17) == 0)
            dst = &u->sentinel_pass;
        if (dst == NULL) {
            snprintf(err, errlen,
                     "URL option \"%.*s\" is unknown (a sentinel URL takes "
                     "sentinel_user and sentinel_password)",
                     (int)(stop - q > 32 ? 32 : stop - q), q);
            return RDL_EINVAL;
        }
        rdl__free(*dst);
        *dst = decode(eq + 1, (size_t)(stop - eq - 1), &bad);
        if (*dst == NULL) {
            snprintf(err, errlen,
                     bad ? "URL option has a malformed %%-escape or a %%00"
                         : "out of memory");
            return bad ? RDL_EINVAL : RDL_ENOMEM;
        }
        q = stop + (amp != NULL);
    }
    if (u->sentinel_user != NULL && u->sentinel_pass == NULL) {
        snprintf(err, errlen,
                 "URL has sentinel_user without "
                 "sentinel_password");
        return RDL_EINVAL;
    }
    return 0;
}

/* "/MASTER_NAME[/db]" of a sentinel URL at p; leaves p at the "/db". */
static int master_name(const char **pp, rdl__url *u, char *err, size_t errlen)
{
    const char *p = *pp;
    size_t n;
    if (*p != '/' || p[1] == '\0' || p[1] == '/') {
        snprintf(err, errlen,
                 "a sentinel URL names the master after the "
                 "sentinels: redis+sentinel://host:port/NAME");
        return RDL_EINVAL;
    }
    p++;
    n = strcspn(p, "/");
    u->master = rdl__strndup(p, n);
    if (u->master == NULL) {
        snprintf(err, errlen, "out of memory");
        return RDL_ENOMEM;
    }
    *pp = p + n;
    return 0;
}

int rdl__url_parse(const char *text, rdl__url *out, char *err, size_t errlen)
{
    rdl__url u;
    const char *p = NULL, *at, *end, *colon, *q;
    char *base = NULL; /* the URL without its query */
    int bad = 0, rc = RDL_EINVAL;
    size_t i;

    memset(&u, 0, sizeof(u));
    u.port = 6379;
    if (text == NULL)
        FAIL("URL is NULL");
    for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
        size_t n = strlen(schemes[i].text);
        if (strncmp(text, schemes[i].text, n) == 0) {
            u.cluster = schemes[i].cluster;
            u.sentinel = schemes[i].sentinel;
            u.tls = schemes[i].tls;
            p = text + n;
        }
    }
    if (p == NULL)
        FAIL("URL \"%.64s\" does not start with redis://, rediss://, "
             "redis+cluster://, rediss+cluster://, redis+sentinel:// or "
             "rediss+sentinel://",
             text);
#ifndef RDL_WITH_TLS
    if (u.tls) {
        rc = RDL_ENOTSUP;
        FAIL("rediss:// (TLS) is not available: rdl was built with "
             "RDL_WITH_TLS=OFF");
    }
#endif
    end = p + strlen(p);
    for (const char *c = p; c < end; c++)
        if (isspace((unsigned char)*c) || iscntrl((unsigned char)*c))
            FAIL("URL contains whitespace or control characters");
    if (memchr(p, '#', (size_t)(end - p)) != NULL)
        FAIL("URL fragments (#...) are not supported");
    q = memchr(p, '?', (size_t)(end - p));
    if (q != NULL && !u.sentinel)
        FAIL("URL options (?...) are taken by sentinel URLs only");
    if (q != NULL) {
        rc = query(q + 1, (size_t)(end - q - 1), &u, err, errlen);
        if (rc != 0)
            goto fail;
        rc = RDL_EINVAL;
    }
    base = rdl__strndup(p, q != NULL ? (size_t)(q - p) : (size_t)(end - p));
    if (base == NULL) {
        rc = RDL_ENOMEM;
        FAIL("out of memory");
    }
    p = base;

    /* The user information ends at the last '@' (a password may hold
     * '@' characters; '/' and ':' in it must be percent-encoded). */
    at = strrchr(p, '@');
    if (at != NULL) {
        colon = memchr(p, ':', (size_t)(at - p));
        if (colon == NULL)
            FAIL("URL user \"%.*s\" has no password (use user:password@ "
                 "or :password@)",
                 (int)(at - p > 32 ? 32 : at - p), p);
        if (colon > p) {
            u.user = decode(p, (size_t)(colon - p), &bad);
            if (u.user == NULL)
                goto decode_fail;
        }
        u.pass = decode(colon + 1, (size_t)(at - colon - 1), &bad);
        if (u.pass == NULL)
            goto decode_fail;
        if (u.pass[0] == '\0')
            FAIL("URL has an empty password");
        p = at + 1;
    }

    if (u.cluster || u.sentinel)
        rc = seeds(&p, &u, u.sentinel ? 26379 : 6379, err, errlen);
    else
        rc = host_port(&p, &u.host, &u.port, err, errlen);
    if (rc == 0 && u.sentinel)
        rc = master_name(&p, &u, err, errlen);
    if (rc != 0)
        goto fail;
    rc = RDL_EINVAL;
    if (*p == '/') {
        size_t n = strlen(p + 1);
        if (n > 0) {
            long db = number(p + 1, n, 0, 2147483647L);
            if (db < 0)
                FAIL("URL database \"%.*s\" is not a number >= 0",
                     (int)(n > 16 ? 16 : n), p + 1);
            /* A cluster has database 0 only (SELECT is refused). */
            if (u.cluster && db != 0)
                FAIL("a Redis Cluster has database 0 only");
            u.db = (int)db;
        }
    } else if (*p != '\0') {
        FAIL("URL has unexpected text after the host: \"%.32s\"", p);
    }
    rdl__free(base);
    *out = u;
    return 0;

decode_fail:
    if (bad)
        FAIL("URL user or password has a malformed %%-escape or a %%00");
    rc = RDL_ENOMEM;
    snprintf(err, errlen, "out of memory");
fail:
    rdl__free(base);
    rdl__url_clear(&u);
    return rc;
}

void rdl__url_clear(rdl__url *u)
{
    rdl__free(u->host);
    rdl__free(u->user);
    rdl__free(u->pass);
    u->host = u->user = u->pass = NULL;
    while (u->nseeds > 0)
        rdl__free(u->seeds[--u->nseeds].host);
    rdl__free(u->seeds);
    u->seeds = NULL;
    rdl__free(u->master);
    rdl__free(u->sentinel_user);
    rdl__free(u->sentinel_pass);
    u->master = u->sentinel_user = u->sentinel_pass = NULL;
    u->cluster = 0;
    u->sentinel = 0;
    u->tls = 0;
}
