/* The one place that reads the strings of server replies: rdl__reply_code()
 * maps error replies to codes and recognises pub/sub pushes. Everything
 * else in the library works with its result. */
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

int rdl__reply_code(const redisReply *r)
{
    size_t i, n;
    if (r == NULL)
        return RDL_EPROTO;
    if (r->type == REDIS_REPLY_ARRAY)
        return is_message(r)        ? RDL__REPLY_MESSAGE
               : is_sunsubscribe(r) ? RDL__REPLY_SUNSUBSCRIBE
                                    : 0;
    if (r->type != REDIS_REPLY_ERROR)
        return 0;
    for (i = 0; i < sizeof(error_words) / sizeof(error_words[0]); i++) {
        n = strlen(error_words[i].word);
        if (r->len >= n && memcmp(r->str, error_words[i].word, n) == 0 &&
            (r->len == n || r->str[n] == ' '))
            return error_words[i].code;
    }
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
    if (colon == NULL || colon + 1 == end || (size_t)(colon - addr) >= hostlen)
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
