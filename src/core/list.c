/* The listing of locks (rdl_client_list_locks, include/rdl/client.h).
 *
 * On the loop thread: the router names one slot per master
 * (rdl__client_masters), and each master in turn gets
 * SCAN <cursor> MATCH <prefix>:* COUNT 1000 until the cursor is 0, then
 * TIME, over the ordinary send path (retries, redirects, a sentinel's
 * parked commands). The keys are copied out of the replies, nothing more:
 * the loop thread serves every other call meanwhile.
 *
 * On the caller's thread: each key is read back with rdl__key_parse
 * (keys.c). The keys that mark a lock are a hold key of the plain, fair
 * and read-write locks and of the semaphore (segment lock, fair, rw, sem,
 * no suffix), and a read-write lock's fence (rw.fence): its hold key
 * exists only while it is held, its fence for a day after, as long as a
 * free plain lock's hash. Every other key is skipped: auxiliary keys
 * (lock.x, sem.x, rw.ww, ...), latches, keys of other layouts. What
 * matches the pattern is sorted and deduplicated (SCAN may return a key
 * twice, and a held read-write lock shows by its hold and its fence), and
 * handed to the callback. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "alloc.h"
#include "client.h"
#include "errmsg.h"
#include "keys.h"
#include "list.h"
#include "reply.h"
#include "sync.h"

#define SCAN_COUNT "1000"

/* A key found: its bytes in list_call.bytes, and the master it was on. */
typedef struct found {
    size_t off, len;
    size_t master;
} found;

typedef struct list_call {
    rdl__sync sync;
    char *match;     /* "<prefix, glob characters escaped>:*" */
    unsigned *slots; /* one slot per master */
    int64_t *clock;  /* each master's TIME after its scan (µs), or -1 */
    size_t nmasters; /* of slots and clock */
    size_t at;       /* the master being scanned */
    char cursor[32]; /* SCAN's, as the server gave it */
    char *bytes;     /* the keys, one after another */
    size_t nbytes, bytes_cap;
    found *keys;
    size_t nkeys, keys_cap;
} list_call;

/* One lock, for the callback. */
typedef struct entry {
    char *name;
    const char *kind;
    int64_t server_us;
} entry;

/* ---- the loop thread ---------------------------------------------------- */

static void on_scan(void *data, int status, const redisReply *r,
                    uint64_t written_ms);
static void on_time(void *data, int status, const redisReply *r,
                    uint64_t written_ms);

static int send_argv(list_call *k, int argc, const char **argv,
                     rdl__reply_fn fn)
{
    char *cmd;
    int len = redisFormatCommandArgv(&cmd, argc, argv, NULL), rc;
    if (len < 0)
        return RDL_ENOMEM;
    rc = rdl__client_send_slot(k->sync.client, k->slots[k->at], cmd,
                               (size_t)len, fn, k);
    redisFreeCommand(cmd);
    return rc;
}

static int send_scan(list_call *k)
{
    const char *argv[6] = {"SCAN",   k->cursor, "MATCH",
                           k->match, "COUNT",   SCAN_COUNT};
    return send_argv(k, 6, argv, on_scan);
}

/* Ends the loop side with status; for an error reply, says what the
 * server said. */
static void finish(list_call *k, int status, const char *cmd,
                   const redisReply *r)
{
    if (status == RDL_ENOMEM)
        rdl__errmsg_set(k->sync.client, "out of memory listing locks");
    else if (r != NULL && r->type == REDIS_REPLY_ERROR)
        rdl__errmsg_set(k->sync.client, "%s: %.200s", cmd, r->str);
    else if (status == RDL_EPROTO)
        rdl__errmsg_set(k->sync.client, "%s: unexpected reply", cmd);
    rdl__sync_done(&k->sync, status);
}

/* Copies a key out of its reply (arrays doubled as they fill). */
static int keep(list_call *k, const char *key, size_t len)
{
    found *f;
    if (k->nbytes + len > k->bytes_cap) {
        size_t cap = 2 * (k->nbytes + len) + 4096;
        char *b = rdl__realloc(k->bytes, cap);
        if (b == NULL)
            return RDL_ENOMEM;
        k->bytes = b;
        k->bytes_cap = cap;
    }
    if (k->nkeys == k->keys_cap) {
        size_t cap = k->keys_cap > 0 ? 2 * k->keys_cap : 256;
        found *grown = rdl__realloc(k->keys, cap * sizeof(*grown));
        if (grown == NULL)
            return RDL_ENOMEM;
        k->keys = grown;
        k->keys_cap = cap;
    }
    f = &k->keys[k->nkeys++];
    f->off = k->nbytes;
    f->len = len;
    f->master = k->at;
    memcpy(k->bytes + k->nbytes, key, len);
    k->nbytes += len;
    return 0;
}

int rdl__list_scan_ok(const redisReply *r, size_t cursor_max)
{
    size_t i;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != REDIS_REPLY_STRING || r->element[0]->len == 0 ||
        r->element[0]->len >= cursor_max ||
        r->element[1]->type != REDIS_REPLY_ARRAY)
        return 0;
    for (i = 0; i < r->element[1]->elements; i++)
        if (r->element[1]->element[i]->type != REDIS_REPLY_STRING)
            return 0;
    return 1;
}

static void on_scan(void *data, int status, const redisReply *r,
                    uint64_t written_ms)
{
    (void)written_ms;
    static const char *time_argv[1] = {"TIME"};
    list_call *k = data;
    size_t i;
    if (status != 0) {
        finish(k, status, "SCAN", r);
        return;
    }
    if (!rdl__list_scan_ok(r, sizeof(k->cursor))) {
        finish(k, RDL_EPROTO, "SCAN", r);
        return;
    }
    for (i = 0; i < r->element[1]->elements; i++) {
        const redisReply *key = r->element[1]->element[i];
        if (keep(k, key->str, key->len) != 0) {
            finish(k, RDL_ENOMEM, "SCAN", NULL);
            return;
        }
    }
    memcpy(k->cursor, r->element[0]->str, r->element[0]->len);
    k->cursor[r->element[0]->len] = '\0';
    status = strcmp(k->cursor, "0") != 0 ? send_scan(k)
                                         : send_argv(k, 1, time_argv, on_time);
    if (status != 0)
        finish(k, status, "SCAN", NULL);
}

static void on_time(void *data, int status, const redisReply *r,
                    uint64_t written_ms)
{
    list_call *k = data;
    (void)written_ms;
    if (status != 0 && r == NULL) {
        finish(k, status, "TIME", NULL);
        return;
    }
    /* A server that refuses TIME (an ACL) still had its keys listed; only
     * the clock is unknown. */
    k->clock[k->at] = status == 0 ? rdl__reply_time_us(r) : -1;
    if (++k->at == k->nmasters) {
        rdl__sync_done(&k->sync, 0);
        return;
    }
    strcpy(k->cursor, "0");
    if ((status = send_scan(k)) != 0)
        finish(k, status, "SCAN", NULL);
}

static void start(rdl__sync *s)
{
    list_call *k = RDL_CONTAINER_OF(s, list_call, sync);
    size_t n;
    int rc = rdl__client_masters(s->client, NULL, 0, &n);
    if (rc == 0 && n == 0) {
        rdl__sync_done(s, 0); /* nothing to scan */
        return;
    }
    if (rc == 0) {
        k->slots = rdl__calloc(n, sizeof(*k->slots));
        k->clock = rdl__calloc(n, sizeof(*k->clock));
        if (k->slots == NULL || k->clock == NULL)
            rc = RDL_ENOMEM;
    }
    /* The same answer as above: nothing ran on the loop in between. */
    if (rc == 0)
        rc = rdl__client_masters(s->client, k->slots, n, &k->nmasters);
    if (rc == 0) {
        strcpy(k->cursor, "0");
        rc = send_scan(k);
    }
    if (rc != 0)
        finish(k, rc, "SCAN", NULL);
}

/* ---- the caller's thread ------------------------------------------------ */

/* The kind a key marks a lock of (see the top), or NULL. */
static const char *lock_kind(const rdl__key_parts *p)
{
    static const struct {
        const char *segment, *suffix, *kind;
    } marks[] = {
        {RDL__KIND_LOCK, NULL, "lock"},
        {RDL__KIND_FAIR, NULL, "fair"},
        {RDL__KIND_RWLOCK, NULL, "rwlock"},
        {RDL__KIND_RWLOCK, RDL__SUFFIX_FENCE, "rwlock"},
        {RDL__KIND_SEMAPHORE, NULL, "semaphore"},
    };
    size_t i;
    for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
        const char *seg = marks[i].segment, *suf = marks[i].suffix;
        if (p->kind_len != strlen(seg) ||
            memcmp(p->kind, seg, p->kind_len) != 0)
            continue;
        if (suf == NULL ? p->suffix == NULL
                        : p->suffix != NULL && p->suffix_len == strlen(suf) &&
                              memcmp(p->suffix, suf, p->suffix_len) == 0)
            return marks[i].kind;
    }
    return NULL;
}

static int by_name_kind(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int d = strcmp(x->name, y->name);
    return d != 0 ? d : strcmp(x->kind, y->kind);
}

static void free_entries(entry *e, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        rdl__free(e[i].name);
    rdl__free(e);
}

/* The locks among the keys found that match pattern, sorted, each once.
 * 0 or RDL_ENOMEM. */
static int collect(const rdl_client_t *c, const list_call *k,
                   const char *pattern, entry **out, size_t *nout)
{
    entry *e = NULL;
    size_t i, n = 0, j;
    if (k->nkeys > 0 && (e = rdl__calloc(k->nkeys, sizeof(*e))) == NULL)
        return RDL_ENOMEM;
    for (i = 0; i < k->nkeys; i++) {
        const found *f = &k->keys[i];
        rdl__key_parts p;
        const char *kind;
        char *name;
        if (!rdl__key_parse(c->prefix, k->bytes + f->off, f->len, &p) ||
            (kind = lock_kind(&p)) == NULL)
            continue;
        if ((name = rdl__strndup(p.name, p.name_len)) == NULL) {
            free_entries(e, n);
            return RDL_ENOMEM;
        }
        if (fnmatch(pattern, name, 0) != 0) {
            rdl__free(name);
            continue;
        }
        e[n].name = name;
        e[n].kind = kind;
        e[n].server_us = k->clock[f->master];
        n++;
    }
    if (n > 1)
        qsort(e, n, sizeof(*e), by_name_kind);
    for (i = j = 0; i < n; i++) {
        if (j > 0 && by_name_kind(&e[j - 1], &e[i]) == 0) {
            rdl__free(e[i].name);
            continue;
        }
        e[j++] = e[i];
    }
    *out = e;
    *nout = j;
    return 0;
}

/* "<prefix>:*" with the prefix's glob characters escaped, so that a
 * prefix "a*b" scans its own keys only. */
static char *scan_match(const char *prefix)
{
    char *m = rdl__malloc(2 * strlen(prefix) + 3), *p = m;
    if (m == NULL)
        return NULL;
    for (; *prefix != '\0'; prefix++) {
        if (strchr("*?[]\\^", *prefix) != NULL)
            *p++ = '\\';
        *p++ = *prefix;
    }
    strcpy(p, ":*");
    return m;
}

int rdl_client_list_locks(rdl_client_t *c, const char *pattern,
                          rdl_lock_list_cb cb, void *data)
{
    list_call k;
    entry *e = NULL;
    size_t n = 0, i;
    int rc;

    if (c == NULL)
        return RDL_EINVAL;
    if (cb == NULL) {
        rdl__errmsg_set(c, "rdl_client_list_locks() needs a callback");
        return RDL_EINVAL;
    }
    memset(&k, 0, sizeof(k));
    k.sync.start = start;
    if ((k.match = scan_match(c->prefix)) == NULL) {
        rdl__errmsg_set(c, "out of memory listing locks");
        return RDL_ENOMEM;
    }
    rc = rdl__sync_call(c, &k.sync);
    if (rc == 0 &&
        (rc = collect(c, &k, pattern != NULL ? pattern : "*", &e, &n)) != 0)
        rdl__errmsg_set(c, "out of memory listing locks");
    rdl__free(k.match);
    rdl__free(k.slots);
    rdl__free(k.clock);
    rdl__free(k.bytes);
    rdl__free(k.keys);
    for (i = 0; rc == 0 && i < n; i++) {
        rdl_lock_entry_t le;
        le.name = e[i].name;
        le.kind = e[i].kind;
        le.server_us = e[i].server_us;
        if (cb(&le, data) != 0)
            break;
    }
    free_entries(e, n);
    return rc;
}

/* ---- rdl_client_master_count ---------------------------------------------- */

typedef struct count_call {
    rdl__sync sync;
    size_t n;
} count_call;

static void count_start(rdl__sync *s)
{
    count_call *k = RDL_CONTAINER_OF(s, count_call, sync);
    rdl__sync_done(s, rdl__client_masters(s->client, NULL, 0, &k->n));
}

int rdl_client_master_count(rdl_client_t *c, size_t *out)
{
    count_call k;
    int rc;
    if (c == NULL || out == NULL)
        return RDL_EINVAL;
    *out = 0;
    memset(&k, 0, sizeof(k));
    k.sync.start = count_start;
    if ((rc = rdl__sync_call(c, &k.sync)) == 0)
        *out = k.n;
    return rc;
}
