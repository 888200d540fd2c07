/* Fuzz target `url`: rdl__url_parse() (src/core/url.c) on any bytes, as a
 * configuration file or $RDL_URL would hand them over: every scheme
 * (redis, rediss, +cluster, +sentinel), userinfo with %-escapes, seed
 * lists, IPv6 brackets, the sentinel query options.
 *
 * Invariants checked beyond "no crash, no leak": a refusal says why and
 * leaves `out` untouched; an accepted URL has a host, ports in 1..65535,
 * the flags of its scheme, seeds only for cluster and sentinel, the
 * credentials decoded whole (an escape is never cut short by a NUL), and
 * written back out it parses to the same URL. */
#include "fuzz.h"

#include "url.h"

/* The bytes s[0..n) %-decode to. */
static size_t decoded_len(const char *s, size_t n)
{
    size_t i, k = 0;
    for (i = 0; i < n; i++, k++)
        if (s[i] == '%')
            i += 2;
    return k;
}

/* Appends s %-encoded (every byte but letters and digits). */
static char *encode(char *o, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
            (ch >= '0' && ch <= '9')) {
            *o++ = (char)ch;
        } else {
            *o++ = '%';
            *o++ = hex[ch >> 4];
            *o++ = hex[ch & 15];
        }
    }
    return o;
}

static char *put(char *o, const char *s)
{
    size_t n = strlen(s);
    memcpy(o, s, n);
    return o + n;
}

static char *host(char *o, const char *h, int port)
{
    int bracket = h[0] == '[' || strpbrk(h, ":/,") != NULL;
    o += sprintf(o, bracket ? "[%s]:%d" : "%s:%d", h, port);
    return o;
}

/* u written back as a URL (into a buffer of `cap` bytes). */
static void format(const rdl__url *u, char *o, size_t cap)
{
    char *start = o;
    size_t i;
    (void)cap;
    o += sprintf(o, "redis%s%s://", u->tls ? "s" : "",
                 u->cluster    ? "+cluster"
                 : u->sentinel ? "+sentinel"
                               : "");
    if (u->pass != NULL) {
        if (u->user != NULL)
            o = encode(o, u->user);
        *o++ = ':';
        o = encode(o, u->pass);
        *o++ = '@';
    }
    if (u->cluster || u->sentinel) {
        for (i = 0; i < u->nseeds; i++) {
            if (i > 0)
                *o++ = ',';
            o = host(o, u->seeds[i].host, u->seeds[i].port);
        }
    } else {
        o = host(o, u->host, u->port);
    }
    if (u->sentinel) {
        *o++ = '/';
        o = put(o, u->master);
    }
    if (u->db != 0)
        o += sprintf(o, "/%d", u->db);
    if (u->sentinel_user != NULL || u->sentinel_pass != NULL) {
        *o++ = '?';
        if (u->sentinel_user != NULL) {
            o = put(o, "sentinel_user=");
            o = encode(o, u->sentinel_user);
            *o++ = '&';
        }
        o = put(o, "sentinel_password=");
        o = encode(o, u->sentinel_pass);
    }
    *o = '\0';
    FUZZ_CHECK((size_t)(o - start) < cap);
}

static int same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) ||
           (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static void same_url(const rdl__url *a, const rdl__url *b)
{
    size_t i;
    FUZZ_CHECK(strcmp(a->host, b->host) == 0 && a->port == b->port);
    FUZZ_CHECK(same_str(a->user, b->user) && same_str(a->pass, b->pass));
    FUZZ_CHECK(a->db == b->db && a->cluster == b->cluster &&
               a->sentinel == b->sentinel && a->tls == b->tls);
    FUZZ_CHECK(a->nseeds == b->nseeds);
    for (i = 0; i < a->nseeds; i++)
        FUZZ_CHECK(strcmp(a->seeds[i].host, b->seeds[i].host) == 0 &&
                   a->seeds[i].port == b->seeds[i].port);
    FUZZ_CHECK(same_str(a->master, b->master));
    FUZZ_CHECK(same_str(a->sentinel_user, b->sentinel_user));
    FUZZ_CHECK(same_str(a->sentinel_pass, b->sentinel_pass));
}

/* The value the query gives option `name` (the last one wins), or NULL:
 * its raw bytes in *len. */
static const char *option(const char *q, const char *name, size_t *len)
{
    const char *found = NULL;
    size_t n = strlen(name);
    while (q != NULL && *q != '\0') {
        const char *amp = strchr(q, '&');
        size_t part = amp != NULL ? (size_t)(amp - q) : strlen(q);
        if (part > n && memcmp(q, name, n) == 0 && q[n] == '=') {
            found = q + n + 1;
            *len = part - n - 1;
        }
        q = amp != NULL ? amp + 1 : NULL;
    }
    return found;
}

/* The credentials came out whole: as many bytes as their text decodes
 * to (a %00 must not cut one short). */
static void check_decoded(const char *text, const rdl__url *u)
{
    const char *p = strstr(text, "://") + 3, *q = strchr(p, '?'), *v;
    size_t n = q != NULL ? (size_t)(q - p) : strlen(p), len = 0;
    const char *at = NULL, *colon, *c;
    for (c = p; c < p + n; c++)
        if (*c == '@')
            at = c;
    if (at != NULL) {
        colon = memchr(p, ':', (size_t)(at - p));
        FUZZ_CHECK(colon != NULL && u->pass != NULL);
        if (u->user != NULL)
            FUZZ_CHECK(strlen(u->user) == decoded_len(p, (size_t)(colon - p)));
        else
            FUZZ_CHECK(colon == p);
        FUZZ_CHECK(strlen(u->pass) ==
                   decoded_len(colon + 1, (size_t)(at - colon - 1)));
    } else {
        FUZZ_CHECK(u->user == NULL && u->pass == NULL);
    }
    if ((v = option(q != NULL ? q + 1 : NULL, "sentinel_user", &len)))
        FUZZ_CHECK(strlen(u->sentinel_user) == decoded_len(v, len));
    if ((v = option(q != NULL ? q + 1 : NULL, "sentinel_password", &len)))
        FUZZ_CHECK(strlen(u->sentinel_pass) == decoded_len(v, len));
}

static void check_ok(const char *text, const rdl__url *u)
{
    size_t i;
    FUZZ_CHECK(u->host != NULL && u->host[0] != '\0');
    FUZZ_CHECK(u->port >= 1 && u->port <= 65535);
    FUZZ_CHECK(u->db >= 0);
    FUZZ_CHECK(!(u->cluster && u->sentinel));
    FUZZ_CHECK(u->tls == (strncmp(text, "rediss", 6) == 0));
    FUZZ_CHECK(u->cluster == (strncmp(text, "redis+cluster://", 16) == 0 ||
                              strncmp(text, "rediss+cluster://", 17) == 0));
    FUZZ_CHECK(u->sentinel == (strncmp(text, "redis+sentinel://", 17) == 0 ||
                               strncmp(text, "rediss+sentinel://", 18) == 0));
    if (u->cluster)
        FUZZ_CHECK(u->db == 0);
    if (u->pass != NULL)
        FUZZ_CHECK(u->pass[0] != '\0');
    if (u->user != NULL)
        FUZZ_CHECK(u->pass != NULL);
    if (u->cluster || u->sentinel) {
        FUZZ_CHECK(u->nseeds >= 1 && u->nseeds <= RDL__URL_SEEDS_MAX);
        FUZZ_CHECK(strcmp(u->host, u->seeds[0].host) == 0 &&
                   u->port == u->seeds[0].port);
        for (i = 0; i < u->nseeds; i++)
            FUZZ_CHECK(u->seeds[i].host[0] != '\0' && u->seeds[i].port >= 1 &&
                       u->seeds[i].port <= 65535);
    } else {
        FUZZ_CHECK(u->nseeds == 0 && u->seeds == NULL);
    }
    if (u->sentinel) {
        FUZZ_CHECK(u->master != NULL && u->master[0] != '\0' &&
                   strchr(u->master, '/') == NULL);
        if (u->sentinel_user != NULL)
            FUZZ_CHECK(u->sentinel_pass != NULL);
    } else {
        FUZZ_CHECK(u->master == NULL && u->sentinel_user == NULL &&
                   u->sentinel_pass == NULL);
    }
    check_decoded(text, u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_string(data, size), *again, err[256];
    rdl__url u, v, untouched;
    int rc;

    if (text == NULL)
        return 0;
    memset(&u, 0xa5, sizeof(u));
    untouched = u;
    err[0] = '\0';
    rc = rdl__url_parse(text, &u, err, sizeof(err));
    if (rc != 0) {
        FUZZ_CHECK(rc == RDL_EINVAL || rc == RDL_ENOTSUP || rc == RDL_ENOMEM);
        FUZZ_CHECK(err[0] != '\0');
        FUZZ_CHECK(memcmp(&u, &untouched, sizeof(u)) == 0);
        free(text);
        return 0;
    }
    check_ok(text, &u);
    /* Written back out (every byte of a credential %-encoded), it reads
     * the same. */
    again = malloc(3 * size + 1024);
    FUZZ_CHECK(again != NULL);
    format(&u, again, 3 * size + 1024);
    err[0] = '\0';
    rc = rdl__url_parse(again, &v, err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "written back: %s\nrefused: %s\n", again, err);
    FUZZ_CHECK(rc == 0);
    same_url(&u, &v);
    rdl__url_clear(&v);
    rdl__url_clear(&u);
    free(again);
    free(text);
    return 0;
}
