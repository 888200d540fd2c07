/* Running scripts, batched where they can be: see batch.h. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "batch.h"
#include "client.h"
#include "errmsg.h"
#include "queue.h"
#include "reply.h"
#include "router.h"
#include "script.h"

/* A batch's bounds: its keys and arguments (with three numbers per call)
 * stay within what script.c sends in one command. 32 calls: with 50
 * acquisitions in flight on one connection, batches that leave as soon as
 * they are full did best between 20 and 32 calls (61-65k cycles/s, five
 * runs each; 8 calls: 59k; 50, one batch per round: 48k, the client and
 * the server taking turns instead of working at once; docs/benchmarks.md). */
#define MAX_CALLS 32
#define MAX_WORDS 1000

typedef struct item {
    rdl__queue node;
    int id;
    int nkeys, nargs;
    rdl__reply_fn fn;
    void *data;
    char *words[]; /* nkeys keys, then nargs args, copied after the array */
} item;

struct rdl__batch {
    rdl_client_t *c;
    rdl__active active; /* the client's: ends the batch at its close */
    uv_idle_t idle;     /* sends the waiting calls (on_idle) */
    rdl__queue items;
    unsigned n;     /* calls waiting */
    unsigned words; /* keys and args they would send in one batch */
    unsigned slot;  /* theirs */
};

/* Calls sent as one command, until its reply. */
typedef struct group {
    rdl_client_t *c;
    unsigned n;
    item *calls[];
} group;

static item *item_new(int id, int nkeys, const char **keys, int nargs,
                      const char **args, rdl__reply_fn fn, void *data)
{
    size_t bytes = 0, len;
    int i, n = nkeys + nargs;
    item *it;
    char *p;

    for (i = 0; i < n; i++)
        bytes += strlen(i < nkeys ? keys[i] : args[i - nkeys]) + 1;
    it = rdl__malloc(sizeof(*it) + (size_t)n * sizeof(char *) + bytes);
    if (it == NULL)
        return NULL;
    rdl__queue_init(&it->node);
    it->id = id;
    it->nkeys = nkeys;
    it->nargs = nargs;
    it->fn = fn;
    it->data = data;
    p = (char *)&it->words[n];
    for (i = 0; i < n; i++) {
        const char *w = i < nkeys ? keys[i] : args[i - nkeys];
        len = strlen(w) + 1;
        memcpy(p, w, len);
        it->words[i] = p;
        p += len;
    }
    return it;
}

/* Hands one call its reply: the element of the batch's reply, or the
 * whole command's failure. */
static void answer(rdl_client_t *c, item *it, int status, const redisReply *r,
                   uint64_t written_ms)
{
    if (status == 0 && r != NULL && r->type == REDIS_REPLY_ERROR) {
        status = rdl__reply_public(rdl__reply_code(r));
        if (status >= 0) /* an error that looks like a message push */
            status = RDL_ESERVER;
        rdl__errmsg_set(c, "%s: %.200s", rdl__scripts[it->id].name, r->str);
    }
    it->fn(it->data, status, r, written_ms);
}

int rdl__batch_reply(const redisReply *r, unsigned ncalls, size_t *have)
{
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements > ncalls)
        return RDL_EPROTO;
    *have = r->elements;
    return 0;
}

/* Each call gets its own element of the reply: a call's odd reply (a nil)
 * is that call's failure only. The script "batch" replies one element per
 * call (a call's nil comes as false, EmbedScripts.cmake), but should an
 * array end early (a Lua array ends at its first nil), the elements it has
 * still answer their calls, grants included: only the calls past its end
 * fail. A failure of the whole command reaches every call. */
static void on_group_reply(void *data, int status, const redisReply *r,
                           uint64_t written_ms)
{
    group *g = data;
    unsigned i;
    size_t have = 0; /* elements that answer calls, from the first */
    (void)written_ms;
    if (status == 0 && (status = rdl__batch_reply(r, g->n, &have)) != 0)
        rdl__errmsg_set(g->c, "batch: unexpected reply");
    for (i = 0; i < g->n; i++) {
        if (i < have) {
            answer(g->c, g->calls[i], 0, r->element[i], written_ms);
        } else if (status != 0) {
            answer(g->c, g->calls[i], status, r, written_ms);
        } else {
            rdl__errmsg_set(g->c, "batch: %zu replies for %u calls", have,
                            g->n);
            answer(g->c, g->calls[i], RDL_EPROTO, NULL, written_ms);
        }
        rdl__free(g->calls[i]);
    }
    rdl__free(g);
}

/* One call alone: its own script, as if it had never waited. */
static int send_one(rdl_client_t *c, item *it)
{
    return rdl__script_send(
        c, RDL__LINE_MAIN, it->id, it->nkeys, (const char **)it->words,
        it->nargs, (const char **)it->words + it->nkeys, it->fn, it->data);
}

/* The waiting calls as one call of the script "batch" (its arguments:
 * cmake/EmbedScripts.cmake). 0, or the failure (nothing sent, the calls
 * still wait). */
static int send_group(rdl_client_t *c, rdl__batch *b)
{
    const char *keys[MAX_WORDS], *args[MAX_WORDS + 1 + 3 * MAX_CALLS];
    char nums[1 + 3 * MAX_CALLS][12];
    int nk = 0, na = 0, nn = 0, i, rc;
    group *g = rdl__malloc(sizeof(*g) + b->n * sizeof(item *));
    rdl__queue *q;

    if (g == NULL)
        return RDL_ENOMEM;
    g->c = c;
    g->n = 0;
    snprintf(nums[nn], sizeof(nums[nn]), "%u", b->n);
    args[na++] = nums[nn++];
    for (q = b->items.next; q != &b->items; q = q->next) {
        item *it = RDL_CONTAINER_OF(q, item, node);
        snprintf(nums[nn], sizeof(nums[nn]), "%d", rdl__scripts[it->id].batch);
        args[na++] = nums[nn++];
        snprintf(nums[nn], sizeof(nums[nn]), "%d", it->nkeys);
        args[na++] = nums[nn++];
        snprintf(nums[nn], sizeof(nums[nn]), "%d", it->nargs);
        args[na++] = nums[nn++];
        for (i = 0; i < it->nkeys; i++)
            keys[nk++] = it->words[i];
        for (i = 0; i < it->nargs; i++)
            args[na++] = it->words[it->nkeys + i];
        g->calls[g->n++] = it;
    }
    rc = rdl__script_send(c, RDL__LINE_MAIN, RDL__SCRIPT_BATCH, nk, keys, na,
                          args, on_group_reply, g);
    if (rc != 0) {
        rdl__free(g);
        return rc;
    }
    rdl__queue_init(&b->items);
    b->n = 0;
    b->words = 0;
    return 0;
}

static item *pop(rdl__batch *b)
{
    item *it = RDL_CONTAINER_OF(rdl__queue_head(&b->items), item, node);
    rdl__queue_remove(&it->node);
    b->n--;
    b->words -= (unsigned)(it->nkeys + it->nargs + 3);
    return it;
}

/* Sends the waiting calls. `safe`: called where their callbacks may run
 * (the connection's flush or close: nobody's call is on the stack), so a
 * call that cannot be sent is told so. Otherwise (inside somebody's call)
 * a failure leaves them waiting for that flush, and is returned. */
static int send_waiting(rdl_client_t *c, int safe)
{
    rdl__batch *b = c->batch;
    int rc;
    if (b == NULL || b->n == 0)
        return 0;
    if (b->n > 1) {
        rc = send_group(c, b);
        if (rc == 0 || !safe)
            return rc;
    }
    /* One call; or, at the flush, no memory for the batch: each alone. */
    while (b->n > 0) {
        item *it = RDL_CONTAINER_OF(rdl__queue_head(&b->items), item, node);
        rc = send_one(c, it);
        if (rc != 0 && !safe)
            return rc;
        pop(b);
        if (rc != 0)
            it->fn(it->data, rc, NULL, 0);
        rdl__free(it);
    }
    return 0;
}

void rdl__batch_flush(rdl_client_t *c)
{
    /* Out of memory, they wait for the idle phase: the order of calls is
     * then kept only as far as memory allows. */
    (void)send_waiting(c, 0);
}

/* The loop's idle phase, which comes before its prepare phase, where the
 * connections flush their writes: the calls made since the last flush
 * leave in the next one, as one command. Nobody's call is on the stack. */
static void on_idle(uv_idle_t *h)
{
    rdl__batch *b = h->data;
    uv_idle_stop(h);
    (void)send_waiting(b->c, 1);
}

static void on_idle_closed(uv_handle_t *h)
{
    rdl__batch *b = h->data;
    rdl_client_t *c = b->c;
    rdl__free(b);
    rdl__net_handle_closed(&c->net);
}

/* Shutdown, before the router closes: the waiting calls never ran, and
 * fail with RDL_ECLOSED; later calls find no batch and a closing client. */
static void batch_close(rdl__active *a)
{
    rdl__batch *b = RDL_CONTAINER_OF(a, rdl__batch, active);
    b->c->batch = NULL;
    while (b->n > 0) {
        item *it = pop(b);
        it->fn(it->data, RDL_ECLOSED, NULL, 0);
        rdl__free(it);
    }
    uv_close((uv_handle_t *)&b->idle, on_idle_closed);
}

/* The client's batch, made on the first batched call. */
static rdl__batch *batch_of(rdl_client_t *c)
{
    rdl__batch *b = c->batch;
    if (b != NULL)
        return b;
    b = rdl__calloc(1, sizeof(*b));
    if (b == NULL)
        return NULL;
    b->c = c;
    rdl__queue_init(&b->items);
    uv_idle_init(c->net.loop, &b->idle);
    b->idle.data = b;
    rdl__net_handle_opened(&c->net);
    rdl__active_init(&b->active, RDL__STAGE_UNSENT, batch_close, NULL);
    rdl__client_active_add(c, &b->active);
    c->batch = b;
    return b;
}

int rdl__batch_add(rdl_client_t *c, int id, int nkeys, const char **keys,
                   int nargs, const char **args, rdl__reply_fn fn, void *data)
{
    rdl__batch *b;
    unsigned slot, words = (unsigned)(nkeys + nargs + 3);
    rdl__conn *cn;
    item *it;
    int rc;

    if (c->state != RDL__CLIENT_RUNNING)
        return RDL_ECLOSED;
    if (words > MAX_WORDS - 1)
        return RDL_EINVAL;
    if ((b = batch_of(c)) == NULL)
        return RDL_ENOMEM;
    slot = rdl__client_slot(c, keys[0]);
    if (b->n > 0 &&
        (slot != b->slot || b->n >= MAX_CALLS ||
         b->words + words > MAX_WORDS - 1) &&
        (rc = send_waiting(c, 0)) != 0)
        return rc; /* the waiting calls go at the idle phase; this one not */
    it = item_new(id, nkeys, keys, nargs, args, fn, data);
    if (it == NULL)
        return RDL_ENOMEM;
    cn = rdl__client_route_line(c, keys[0], RDL__LINE_MAIN);
    if (cn == NULL) {
        rdl__free(it);
        return RDL_ECLOSED;
    }
    rdl__queue_insert_tail(&b->items, &it->node);
    b->slot = slot;
    b->n++;
    b->words += words;
    uv_idle_start(&b->idle, on_idle);
    /* A full batch leaves as soon as the reply being handled is done with:
     * the server starts on it while this loop makes the next. */
    if (b->n == MAX_CALLS && send_waiting(c, 0) == 0)
        rdl__conn_flush_soon(cn);
    return 0;
}

int rdl__script_run(rdl_client_t *c, int id, int nkeys, const char **keys,
                    int nargs, const char **args, rdl__reply_fn fn, void *data)
{
    return rdl__script_run_line(c, 0, id, nkeys, keys, nargs, args, fn, data);
}

int rdl__script_run_line(rdl_client_t *c, int line, int id, int nkeys,
                         const char **keys, int nargs, const char **args,
                         rdl__reply_fn fn, void *data)
{
    int rc;
    if (nkeys < 1 || nkeys + nargs > RDL__SCRIPT_MAX_ARGS)
        return RDL_EINVAL;
    if (line == RDL__LINE_MAIN && rdl__scripts[id].batch >= 0) {
        rc = rdl__batch_add(c, id, nkeys, keys, nargs, args, fn, data);
    } else {
        rdl__batch_flush(c); /* the calls before this one go first */
        rc = rdl__script_send(c, line, id, nkeys, keys, nargs, args, fn, data);
    }
    if (rc == 0)
        RDL__STAT_INC(&c->net, scripts);
    return rc;
}
