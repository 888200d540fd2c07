/* The one place that reads the strings of server replies: rdl__reply_code()
 * maps error replies to codes and recognises pub/sub pushes. Everything
 * else in the library works with its result. */
#include <stdio.h>
#include <string.h>

#include "reply.h"

/* Error replies start with an upper-case code word ("NOSCRIPT No matching
 * script..."). Maps the word; anything unknown is a generic server error. */
static const struct {
    const char *word;
    int code;
} error_words[] = {
    {"NOSCRIPT", RDL__ENOSCRIPT},
    {"MOVED", RDL__EMOVED},
    {"ASK", RDL__EASK},
    {"TRYAGAIN", RDL__ETRYAGAIN},
    {"LOADING", RDL__ELOADING},
    {"CLUSTERDOWN", RDL_ECLUSTERDOWN},
    {"READONLY", RDL_EREADONLY},
    {"NOAUTH", RDL_EAUTH},
    {"WRONGPASS", RDL_EAUTH},
    {"NOPERM", RDL_EAUTH},
    {"OOM", RDL_EOOM},
    {"CROSSSLOT", RDL_ECROSSSLOT},
    {"MASTERDOWN", RDL_ECLUSTERDOWN},
};

static int str_is(const redisReply *r, const char *s)
{
    size_t n = strlen(s);
    return (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) &&
           r->len == n && memcmp(r->str, s, n) == 0;
}

/* A pub/sub message push: ["message" | "smessage", channel, payload]. */
static int is_message(const redisReply *r)
{
    return r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
           (str_is(r->element[0], "message") ||
            str_is(r->element[0], "smessage")) &&
           r->element[1]->type == REDIS_REPLY_STRING &&
           r->element[2]->type == REDIS_REPLY_STRING;
}

/* ["sunsubscribe", channel, count]. */
static int is_sunsubscribe(const redisReply *r)
{
    return r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
           str_is(r->element[0], "sunsubscribe") &&
           r->element[1]->type == REDIS_REPLY_STRING;
}

/* The code of the error word at s[0..len), or 0 if it is none of ours. */
static int word_code(const char *s, size_t len)
{
    size_t i, n;
    for (i = 0; i < sizeof(error_words) / sizeof(error_words[0]); i++) {
        n = strlen(error_words[i].word);
        if (len >= n && memcmp(s, error_words[i].word, n) == 0 &&
            (len == n || s[n] == ' '))
            return error_words[i].code;
    }
    return 0;
}

/* Before Redis 7.0 an error raised by a command inside a script comes
 * wrapped in the script's ERR: "ERR Error running script (call to f_...):
 * @user_script:1: @user_script: 1: -READONLY You can't write ...". The
 * error's own word follows the last ": -". */
static int wrapped_code(const redisReply *r)
{
    const char *p = r->str, *at = NULL, *end = r->str + r->len;
    if (strncmp(r->str, "ERR Error running script", 24) != 0)
        return 0;
    while ((p = strstr(p, ": @user_script: ")) != NULL && p < end)
        at = p++;
    if (at == NULL || (at = strstr(at + 16, ": -")) == NULL)
        return 0;
    at += 3;
    return word_code(at, (size_t)(end - at));
}

int rdl__reply_code(const redisReply *r)
{
    int code;
    if (r == NULL)
        return RDL_EPROTO;
    if (r->type == REDIS_REPLY_ARRAY)
        return is_message(r)        ? RDL__REPLY_MESSAGE
               : is_sunsubscribe(r) ? RDL__REPLY_SUNSUBSCRIBE
                                    : 0;
    if (r->type != REDIS_REPLY_ERROR)
        return 0;
    if ((code = word_code(r->str, r->len)) != 0 ||
        (code = wrapped_code(r)) != 0)
        return code;
    /* "ERR invalid password" predates WRONGPASS (Redis < 6). */
    if (strstr(r->str, "invalid password") != NULL ||
        strstr(r->str, "invalid username-password") != NULL)
        return RDL_EAUTH;
    /* A failing script reports "ERR user_script:..." or "ERR Error running
     * script ..." depending on the version. */
    if (strstr(r->str, "script") != NULL)
        return RDL_ESCRIPT;
    return RDL_ESERVER;
}

int rdl__reply_public(int code)
{
    switch (code) {
    case RDL__ENOSCRIPT:
        return RDL_ESCRIPT;
    case RDL__EMOVED:
    case RDL__EASK:
    case RDL__ETRYAGAIN:
        return RDL_EREDIRECT;
    case RDL__ELOADING:
        return RDL_ECONNREFUSED; /* as a cluster reports it: nothing ran */
    default:
        return code;
    }
}

const char *rdl__reply_shape(const redisReply *r, char *buf, size_t len)
{
    if (r == NULL) {
        snprintf(buf, len, "no reply");
        return buf;
    }
    switch (r->type) {
    case REDIS_REPLY_STRING:
        snprintf(buf, len, "a %zu-byte string", r->len);
        break;
    case REDIS_REPLY_STATUS:
        snprintf(buf, len, "a status (+%.40s)", r->str);
        break;
    case REDIS_REPLY_INTEGER:
        snprintf(buf, len, "an integer (%lld)", r->integer);
        break;
    case REDIS_REPLY_NIL:
        snprintf(buf, len, "nil");
        break;
    case REDIS_REPLY_ARRAY:
        snprintf(buf, len, "an array of %zu elements", r->elements);
        break;
    case REDIS_REPLY_ERROR:
        snprintf(buf, len, "an error (-%.60s)", r->str);
        break;
    default:
        snprintf(buf, len, "a reply of type %d", r->type);
    }
    return buf;
}

int rdl__reply_message(const redisReply *r, const char **chan, size_t *chanlen,
                       const char **msg, size_t *msglen)
{
    if (r == NULL || rdl__reply_code(r) != RDL__REPLY_MESSAGE)
        return 0;
    *chan = r->element[1]->str;
    *chanlen = r->element[1]->len;
    *msg = r->element[2]->str;
    *msglen = r->element[2]->len;
    return 1;
}

int rdl__reply_sunsubscribe(const redisReply *r, const char **chan,
                            size_t *chanlen)
{
    if (r == NULL || !is_sunsubscribe(r))
        return 0;
    *chan = r->element[1]->str;
    *chanlen = r->element[1]->len;
    return 1;
}

/* "MOVED <slot> <host>:<port>" or "ASK ...": the port follows the last
 * ':', so IPv6 hosts need no brackets; an empty host means the node does
 * not know its own address (the caller uses the one it dialled). */
int rdl__reply_redirect(const redisReply *r, unsigned *slot, char *host,
                        size_t hostlen, int *port)
{
    const char *p, *addr, *colon, *end;
    unsigned long s = 0, pt = 0;
    int code = rdl__reply_code(r);
    if (code != RDL__EMOVED && code != RDL__EASK)
        return 0;
    p = strchr(r->str, ' ');
    if (p == NULL)
        return 0;
    for (p++; *p >= '0' && *p <= '9' && s < 100000; p++)
        s = s * 10 + (unsigned long)(*p - '0');
    if (*p != ' ' || s >= 16384)
        return 0;
    addr = p + 1;
    end = r->str + r->len;
    colon = NULL;
    for (p = addr; p < end; p++)
        if (*p == ':')
            colon = p;
    if (colon == NULL || colon + 1 == end ||
        (size_t)(colon - addr) >= hostlen ||
        memchr(addr, '\0', (size_t)(colon - addr)) != NULL)
        return 0;
    for (p = colon + 1; p < end; p++) {
        if (*p < '0' || *p > '9' || pt > 65535)
            return 0;
        pt = pt * 10 + (unsigned long)(*p - '0');
    }
    if (pt == 0 || pt > 65535)
        return 0;
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    *slot = (unsigned)s;
    *port = (int)pt;
    return 1;
}

/* A decimal port 1..65535 in s[0..n); 0 if it is not one. */
static int port_of(const char *s, size_t n)
{
    unsigned long v = 0;
    size_t i;
    if (n == 0 || n > 5)
        return 0;
    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    return v >= 1 && v <= 65535 ? (int)v : 0;
}

static int copy_host(const char *s, size_t n, char *host, size_t hostlen)
{
    if (n == 0 || n >= hostlen || memchr(s, '\0', n) != NULL)
        return 0;
    memcpy(host, s, n);
    host[n] = '\0';
    return 1;
}

int rdl__reply_master_addr(const redisReply *r, char *host, size_t hostlen,
                           int *port)
{
    if (r->type == REDIS_REPLY_NIL)
        return 0;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != REDIS_REPLY_STRING ||
        r->element[1]->type != REDIS_REPLY_STRING)
        return -1;
    *port = port_of(r->element[1]->str, r->element[1]->len);
    if (*port == 0 ||
        !copy_host(r->element[0]->str, r->element[0]->len, host, hostlen))
        return -1;
    return 1;
}

/* The value of field `name` in a flat [field, value, ...] array; NULL if
 * absent. */
static const redisReply *field(const redisReply *r, const char *name)
{
    size_t i;
    for (i = 0; i + 1 < r->elements; i += 2)
        if (str_is(r->element[i], name))
            return r->element[i + 1];
    return NULL;
}

static int flat_strings(const redisReply *r)
{
    size_t i;
    if (r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 0)
        return 0;
    for (i = 0; i < r->elements; i++)
        if (r->element[i]->type != REDIS_REPLY_STRING)
            return 0;
    return 1;
}

/* A decimal number >= 0 in v; -1 if it is not one. */
static long long number_of(const redisReply *v)
{
    long long n = 0;
    size_t i;
    if (v == NULL || v->len == 0 || v->len > 18)
        return -1;
    for (i = 0; i < v->len; i++) {
        if (v->str[i] < '0' || v->str[i] > '9')
            return -1;
        n = n * 10 + (v->str[i] - '0');
    }
    return n;
}

/* Whether the comma-separated list v has the word w. */
static int has_word(const redisReply *v, const char *w)
{
    size_t n = strlen(w), i = 0;
    while (i < v->len) {
        const char *p = v->str + i;
        const char *comma = memchr(p, ',', v->len - i);
        size_t len = (size_t)((comma != NULL ? comma : v->str + v->len) - p);
        if (len == n && memcmp(p, w, n) == 0)
            return 1;
        i += len + 1;
    }
    return 0;
}

int64_t rdl__reply_time_us(const redisReply *r)
{
    long long sec, usec;
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != REDIS_REPLY_STRING ||
        r->element[1]->type != REDIS_REPLY_STRING)
        return -1;
    sec = number_of(r->element[0]);
    usec = number_of(r->element[1]);
    if (sec < 0 || usec < 0 || usec >= 1000000)
        return -1;
    return (int64_t)sec * 1000000 + usec;
}

long long rdl__reply_sentinel_epoch(const redisReply *r)
{
    return flat_strings(r) ? number_of(field(r, "config-epoch")) : -1;
}

long long rdl__reply_sentinel_replicas_up(const redisReply *r)
{
    long long n = 0;
    size_t i;
    if (r->type != REDIS_REPLY_ARRAY)
        return -1;
    for (i = 0; i < r->elements; i++) {
        const redisReply *e = r->element[i], *flags;
        if (!flat_strings(e) || (flags = field(e, "flags")) == NULL)
            return -1;
        n += !has_word(flags, "s_down") && !has_word(flags, "o_down") &&
             !has_word(flags, "disconnected");
    }
    return n;
}

int rdl__reply_sentinel_lists(const redisReply *r, const char *host, int port)
{
    size_t i;
    if (r->type != REDIS_REPLY_ARRAY)
        return 0;
    for (i = 0; i < r->elements; i++) {
        const redisReply *e = r->element[i], *ip;
        if (flat_strings(e) && (ip = field(e, "ip")) != NULL &&
            ip->len == strlen(host) && memcmp(ip->str, host, ip->len) == 0 &&
            number_of(field(e, "port")) == port)
            return 1;
    }
    return 0;
}

long long rdl__reply_role_replicas(const redisReply *r)
{
    if (rdl__reply_role_master(r) != 1 || r->elements < 3 ||
        r->element[2]->type != REDIS_REPLY_ARRAY)
        return -1;
    return (long long)r->element[2]->elements;
}

int rdl__reply_role_master(const redisReply *r)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 1)
        return -1;
    return str_is(r->element[0], "master");
}

/* Splits msg[0..len) at spaces into at most max fields; the count. */
static int fields(const char *msg, size_t len, const char **f, size_t *fl,
                  int max)
{
    const char *end = msg + len, *p = msg;
    int n = 0;
    while (p < end && n < max) {
        const char *sp = memchr(p, ' ', (size_t)(end - p));
        f[n] = p;
        fl[n] = (size_t)((sp != NULL ? sp : end) - p);
        n++;
        p = sp != NULL ? sp + 1 : end;
    }
    return p == end ? n : max + 1;
}

static int field_is(const char *f, size_t fl, const char *s)
{
    return fl == strlen(s) && memcmp(f, s, fl) == 0;
}

/* +switch-master: "<name> <old-ip> <old-port> <new-ip> <new-port>".
 * +promoted-slave: "slave <ip>:<port> <ip> <port> @ <name> <ip> <port>". */
int rdl__reply_sentinel_event(const char *ch, size_t chl, const char *msg,
                              size_t len, const char *name, char *host,
                              size_t hostlen, int *port)
{
    const char *f[8];
    size_t fl[8];
    int n = fields(msg, len, f, fl, 8), h;
    if (field_is(ch, chl, "+switch-master") && n == 5 &&
        field_is(f[0], fl[0], name))
        h = 3;
    else if (field_is(ch, chl, "+promoted-slave") && n == 8 &&
             field_is(f[4], fl[4], "@") && field_is(f[5], fl[5], name))
        h = 2;
    else
        return 0;
    *port = port_of(f[h + 1], fl[h + 1]);
    return *port != 0 && copy_host(f[h], fl[h], host, hostlen);
}
