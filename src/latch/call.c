/* The latch's single script calls, blocking: set (latch_set.lua), count
 * down (latch_count_down.lua) and count (latch_count.lua). A call whose
 * outcome is unknown (connection lost, command timeout) is sent again,
 * RDL__UNKNOWN_RETRIES times at most; set and count down carry a request id,
 * the same on every retry, which the scripts apply once, and retry only
 * within the applied set's window (latch_int.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latch_int.h"

enum { OP_SET, OP_COUNT_DOWN, OP_COUNT };

typedef struct latch_call {
    rdl__sync sync;
    rdl_latch_t *l;
    int op;
    uint64_t count; /* set: the count; count: the answer */
    int64_t ttl_ms; /* set */
    char reqid[64]; /* set, count down: "" until the first send */
    uint64_t first_sent;
    int unknown;        /* unknown outcomes retried so far */
    int unknown_status; /* the last of them */
} latch_call;

/* Parses a decimal uint64 (a bulk string). */
static int parse_u64(const redisReply *r, uint64_t *out)
{
    char buf[24], *end;
    unsigned long long v;
    if (r == NULL || r->type != REDIS_REPLY_STRING || r->len == 0 ||
        r->len >= sizeof(buf) || r->str[0] < '0' || r->str[0] > '9')
        return RDL_EPROTO;
    memcpy(buf, r->str, r->len);
    buf[r->len] = '\0';
    errno = 0;
    v = strtoull(buf, &end, 10);
    /* The whole string: a NUL in it would end strtoull() early. */
    if (errno != 0 || end != buf + r->len)
        return RDL_EPROTO;
    *out = (uint64_t)v;
    return 0;
}

int rdl__latch_parse_flag_count(const redisReply *r, long long *flag,
                                uint64_t *count)
{
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != REDIS_REPLY_INTEGER)
        return RDL_EPROTO;
    *flag = r->element[0]->integer;
    return parse_u64(r->element[1], count);
}

int rdl__latch_parse_count(const redisReply *r, uint64_t *count, int64_t *pttl)
{
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[1]->type != REDIS_REPLY_INTEGER)
        return RDL_EPROTO;
    *pttl = (int64_t)r->element[1]->integer;
    return parse_u64(r->element[0], count);
}

void rdl__latch_bad_reply(rdl_latch_t *l, const redisReply *r)
{
    char shape[96];
    rdl__errmsg_set(l->c,
                    "latch \"%.200s\": the server answered with %s, which "
                    "no script returns",
                    l->name, rdl__reply_shape(r, shape, sizeof(shape)));
}

int rdl__latch_send_count(rdl_latch_t *l, rdl__reply_fn fn, void *data)
{
    const char *keys[1] = {l->key};
    return rdl__script_run(l->c, RDL__SCRIPT_LATCH_COUNT, 1, keys, 0, NULL, fn,
                           data);
}

static void on_reply(void *data, int status, const redisReply *r,
                     uint64_t written_ms);

static int send_call(latch_call *k)
{
    rdl_latch_t *l = k->l;
    const char *keys[1] = {l->key};
    char count[24], ttl[24], window[24];
    snprintf(window, sizeof(window), "%lld",
             (long long)rdl__done_window_ms(l->c));
    if (k->op == OP_SET) {
        const char *args[4] = {count, ttl, k->reqid, window};
        snprintf(count, sizeof(count), "%llu", (unsigned long long)k->count);
        snprintf(ttl, sizeof(ttl), "%lld", (long long)k->ttl_ms);
        return rdl__script_run(l->c, RDL__SCRIPT_LATCH_SET, 1, keys, 4, args,
                               on_reply, k);
    }
    if (k->op == OP_COUNT_DOWN) {
        const char *args[4] = {k->reqid, rdl__client_publish_cmd(l->c),
                               l->channel, window};
        return rdl__script_run(l->c, RDL__SCRIPT_LATCH_COUNT_DOWN, 1, keys, 4,
                               args, on_reply, k);
    }
    return rdl__latch_send_count(l, on_reply, k);
}

static void start(rdl__sync *s)
{
    latch_call *k = RDL_CONTAINER_OF(s, latch_call, sync);
    int rc;
    if (k->op != OP_COUNT && k->reqid[0] == '\0') {
        rdl__client_reqid(k->l->c, k->reqid);
        k->first_sent = rdl__now_ms();
    }
    rc = send_call(k);
    if (rc != 0) /* a retry not sent leaves the first outcome unknown */
        rdl__sync_done(
            s, k->unknown > 0 && k->op != OP_COUNT ? k->unknown_status : rc);
}

static void on_reply(void *data, int status, const redisReply *r,
                     uint64_t written_ms)
{
    latch_call *k = data;
    rdl_latch_t *l = k->l;
    (void)written_ms;
    long long flag = 0;
    uint64_t count = 0;
    int64_t pttl;

    if (rdl__outcome_unknown(status) && k->unknown < RDL__UNKNOWN_RETRIES &&
        (k->op == OP_COUNT || rdl__retry_in_window(l->c, k->first_sent))) {
        /* The same request id: the script answers a retry of an applied
         * request as it answered the first, and counts nothing twice. */
        k->unknown++;
        k->unknown_status = status;
        start(&k->sync);
        return;
    }
    /* Once an outcome was unknown, only an answer settles it: a retry
     * that was never written (or cut short by a close) tells nothing. */
    if (k->unknown > 0 && k->op != OP_COUNT &&
        (status == RDL_ECONNREFUSED || status == RDL_ECLOSED))
        status = k->unknown_status;
    if (status == 0) {
        if (k->op == OP_COUNT)
            status = rdl__latch_parse_count(r, &k->count, &pttl);
        else
            status = rdl__latch_parse_flag_count(r, &flag, &count);
        if (status == RDL_EPROTO)
            rdl__latch_bad_reply(l, r);
    }
    if (status == 0 && k->op == OP_SET && flag == 0) {
        rdl__errmsg_set(l->c,
                        "latch \"%.200s\" is counting down (count %llu); "
                        "it may be set again once it reaches 0",
                        l->name, (unsigned long long)count);
        status = RDL_EBUSY;
    }
    rdl__sync_done(&k->sync, status);
}

static int call(rdl_latch_t *l, latch_call *k, int op)
{
    k->l = l;
    k->op = op;
    k->sync.start = start;
    return rdl__sync_call(l->c, &k->sync);
}

int rdl__latch_set(rdl_latch_t *l, uint64_t count, int64_t ttl_ms)
{
    latch_call k;
    memset(&k, 0, sizeof(k));
    k.count = count;
    k.ttl_ms = ttl_ms;
    return call(l, &k, OP_SET);
}

int rdl__latch_count_down(rdl_latch_t *l)
{
    latch_call k;
    memset(&k, 0, sizeof(k));
    return call(l, &k, OP_COUNT_DOWN);
}

int rdl__latch_count(rdl_latch_t *l, uint64_t *out)
{
    latch_call k;
    int rc;
    memset(&k, 0, sizeof(k));
    rc = call(l, &k, OP_COUNT);
    if (rc == 0)
        *out = k.count;
    return rc;
}
