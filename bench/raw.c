/* The raw floor: a hiredis blocking client that runs the very scripts rdl
 * runs (rdl__scripts[], the bytes and SHA1 embedded into librdl at build
 * time) with keys and arguments of the same shape and length as rdl's. Its
 * round trip is the least any client can pay for one script call. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "internal.h" /* rdl__scripts[]: compiled into the bench too */

/* The keys rdl builds for an untagged name (src/core/keys.c). */
#define KEY_HOLD "rdl:lock:{%s}"
#define CHANNEL "rdl:lock.ch:{%s}"
#define LEASE_MS "30000"
#define RETENTION_MS "86400000"
/* The applied-set window rdl sends with a 1 s command timeout. */
#define WINDOW_MS "6000"

static int check(bench_raw *r, redisReply *rep, const char *what)
{
    int ok = rep != NULL && rep->type != REDIS_REPLY_ERROR;
    if (!ok)
        fprintf(stderr, "rdl-bench: raw %s: %s\n", what,
                rep != NULL ? rep->str : r->rc->errstr);
    if (rep != NULL)
        freeReplyObject(rep);
    return ok ? 0 : -1;
}

int bench_raw_open(bench_raw *r, const bench_ctx *ctx)
{
    static const int ids[] = {RDL__SCRIPT_LOCK_ACQUIRE,
                              RDL__SCRIPT_LOCK_RELEASE};
    size_t i;
    memset(r, 0, sizeof(*r));
    r->rc = redisConnect(ctx->host, ctx->port);
    if (r->rc == NULL || r->rc->err) {
        fprintf(stderr, "rdl-bench: raw connect %s:%d: %s\n", ctx->host,
                ctx->port, r->rc ? r->rc->errstr : "out of memory");
        bench_raw_close(r);
        return -1;
    }
    if (ctx->password[0] &&
        check(r,
              ctx->user[0]
                  ? redisCommand(r->rc, "AUTH %s %s", ctx->user, ctx->password)
                  : redisCommand(r->rc, "AUTH %s", ctx->password),
              "AUTH") != 0)
        goto fail;
    if (ctx->db != 0 &&
        check(r, redisCommand(r->rc, "SELECT %d", ctx->db), "SELECT") != 0)
        goto fail;
    for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        const rdl__script *s = &rdl__scripts[ids[i]];
        redisReply *rep =
            redisCommand(r->rc, "SCRIPT LOAD %b", s->body, s->len);
        if (rep != NULL && rep->type == REDIS_REPLY_STRING &&
            strcmp(rep->str, s->sha) != 0) {
            fprintf(stderr, "rdl-bench: %s: server SHA1 %s, rdl's %s\n",
                    s->name, rep->str, s->sha);
            freeReplyObject(rep);
            goto fail;
        }
        if (check(r, rep, "SCRIPT LOAD") != 0)
            goto fail;
    }
    snprintf(r->tag, sizeof(r->tag), "%s", ctx->raw_tag);
    /* An id and owner of rdl's shape: 32 hex chars, then ":<number>". */
    for (i = 0; i < 32; i++)
        r->id[i] = "0123456789abcdef"[rand() % 16];
    r->id[32] = '\0';
    snprintf(r->owner, sizeof(r->owner), "%s:%llu", r->id,
             9223372036854775809ULL);
    return 0;
fail:
    bench_raw_close(r);
    return -1;
}

void bench_raw_close(bench_raw *r)
{
    if (r->rc != NULL)
        redisFree(r->rc);
    r->rc = NULL;
}

static int append(bench_raw *r, const char *name, int acquire)
{
    const rdl__script *s = &rdl__scripts[acquire ? RDL__SCRIPT_LOCK_ACQUIRE
                                                 : RDL__SCRIPT_LOCK_RELEASE];
    char hold[1100], chan[1100], reqid[64];
    if (r->tag[0] != '\0') { /* a cluster: every raw key in one slot */
        snprintf(hold, sizeof(hold), "rdl:lock:{%s}:%s", r->tag, name);
    } else {
        snprintf(hold, sizeof(hold), KEY_HOLD, name);
    }
    snprintf(reqid, sizeof(reqid), "%s:%llx", r->id,
             (unsigned long long)++r->seq);
    if (acquire) {
        /* ARGV as every kind's acquire (src/lock/lock_int.h): ..., ""
         * (a one-shot try, not registered as a waiter), ..., the
         * retention. */
        const char *argv[] = {"EVALSHA", s->sha,   "1",         hold,
                              r->owner,  LEASE_MS, reqid,       "",
                              "publish", chan,     RETENTION_MS};
        snprintf(chan, sizeof(chan), CHANNEL, name);
        return redisAppendCommandArgv(r->rc, 11, argv, NULL) == REDIS_OK ? 0
                                                                         : -1;
    } else {
        /* ARGV as every kind's release (src/lock/release.c): ..., the
         * applied-set window, "" (not an undo). */
        const char *argv[] = {"EVALSHA",    s->sha,    "1",       hold,
                              r->owner,     reqid,     "publish", chan,
                              RETENTION_MS, WINDOW_MS, ""};
        snprintf(chan, sizeof(chan), CHANNEL, name);
        return redisAppendCommandArgv(r->rc, 11, argv, NULL) == REDIS_OK ? 0
                                                                         : -1;
    }
}

int bench_raw_append_acquire(bench_raw *r, const char *name)
{
    return append(r, name, 1);
}

int bench_raw_append_release(bench_raw *r, const char *name)
{
    return append(r, name, 0);
}

/* redisGetReply, busy-polling: write what is queued, then poll() with a
 * zero timeout until the socket is readable, so the thread never sleeps
 * and no wake-up sits on the path of the reply. */
static int spin_reply(redisContext *rc, void **p)
{
    int done = 0;
    *p = NULL;
    if (redisGetReplyFromReader(rc, p) != REDIS_OK)
        return REDIS_ERR;
    if (*p != NULL)
        return REDIS_OK;
    do {
        if (redisBufferWrite(rc, &done) != REDIS_OK)
            return REDIS_ERR;
    } while (!done);
    for (;;) {
        struct pollfd pfd = {rc->fd, POLLIN, 0};
        int n = poll(&pfd, 1, 0);
        if (n < 0 && errno != EINTR)
            return REDIS_ERR;
        if (n <= 0)
            continue;
        if (redisBufferRead(rc) != REDIS_OK ||
            redisGetReplyFromReader(rc, p) != REDIS_OK)
            return REDIS_ERR;
        if (*p != NULL)
            return REDIS_OK;
    }
}

int bench_raw_read(bench_raw *r)
{
    void *p = NULL;
    redisReply *rep;
    int res;
    if ((r->spin ? spin_reply(r->rc, &p) : redisGetReply(r->rc, &p)) !=
            REDIS_OK ||
        p == NULL) {
        fprintf(stderr, "rdl-bench: raw client: %s\n", r->rc->errstr);
        return -1;
    }
    rep = p;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 1 ||
        rep->element[0]->type != REDIS_REPLY_INTEGER) {
        fprintf(stderr, "rdl-bench: raw client: unexpected reply%s%s\n",
                rep->type == REDIS_REPLY_ERROR ? ": " : "",
                rep->type == REDIS_REPLY_ERROR ? rep->str : "");
        freeReplyObject(rep);
        return -1;
    }
    res = rep->element[0]->integer == 1;
    freeReplyObject(rep);
    return res;
}

int bench_raw_acquire(bench_raw *r, const char *name)
{
    return append(r, name, 1) == 0 ? bench_raw_read(r) : -1;
}

int bench_raw_release(bench_raw *r, const char *name)
{
    return append(r, name, 0) == 0 ? bench_raw_read(r) : -1;
}

redisReply *bench_raw_command(bench_raw *r, const char *fmt, ...)
{
    va_list ap;
    redisReply *rep;
    va_start(ap, fmt);
    rep = redisvCommand(r->rc, fmt, ap);
    va_end(ap);
    if (rep == NULL || rep->type == REDIS_REPLY_ERROR) {
        fprintf(stderr, "rdl-bench: raw command: %s\n",
                rep != NULL ? rep->str : r->rc->errstr);
        if (rep != NULL)
            freeReplyObject(rep);
        return NULL;
    }
    return rep;
}
