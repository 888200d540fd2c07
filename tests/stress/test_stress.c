/* Stress profiles (tests/stress/README.md): a seeded random workload of
 * threads and forked processes on a few lock names, a seeded fault
 * schedule, and the history checker (check.c) at the end.
 *
 * Environment: RDL_STRESS_SEED (a profile's seed), RDL_STRESS_SECONDS (its
 * duration), RDL_STRESS_STALL_MS (the lost wake-up threshold),
 * RDL_STRESS_DUMP (a file for the whole history; by default it is written
 * next to the servers' directories when the check fails). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/mman.h>

#include <uv.h>

#include "rdlt.h"
#include "stress.h"

#define MAX_PROCS 6
#define MAX_THREADS 8
#define MAX_CLIENTS 4
#define MAX_NAMES 8
#define RED_SERVERS 3
#define HIST_CAP ((size_t)1 << 20)

#define CMD_TIMEOUT_MS 1000
#define WATCHDOG_MS 2000
#define LEASE_MAX_MS 3000

/* ---- hooks ------------------------------------------------------------------ */

/* A stage another component can plug in (the TCP fault proxy of
 * tests/support/proxy.c, below): `url` may route the profile's first
 * `proxied` clients of each process through something of its own (return
 * the URL to use, or NULL to keep the real one; called once, before the
 * worker processes are forked, so whatever it starts must be up by then),
 * and `fault`, called on a tick of the fault schedule that picked a kind
 * from SF_EXTERNAL on, injects that kind if it can: it writes a short
 * note, sets *arg (the fault entry's wait_ms: a delay's length) and
 * returns 1. Both run on the main thread of the test process. */
typedef struct stress_hooks {
    const char *(*url)(void *ctx, int server, const char *real_url);
    int (*fault)(void *ctx, int kind, uint64_t *rng, char *note, size_t len,
                 int64_t *arg);
    void *ctx;
} stress_hooks;

static stress_hooks hooks;

/* ---- profile ---------------------------------------------------------------- */

typedef struct profile {
    const char *name;
    uint64_t seed; /* 0: random */
    int seconds;
    int procs;   /* forked worker processes */
    int threads; /* per process */
    int clients; /* per process */
    int names;
    int w_plain, w_fair, w_read, w_write, w_multi, w_red, w_sem;
    int w_batch;     /* batch_close: a session of async calls on a client of
                        the worker's own loop, sometimes closed from inside a
                        callback (op_batch) */
    unsigned faults; /* 1u << SF_* */
    int cluster;
    int forever;  /* percent of waits without a budget */
    int proxied;  /* clients per process through the fault proxy (hooks) */
    int deck;     /* fault kinds drawn like cards (each once before any one
                     twice), a tick every 1-2.5 s: a fixed seed sees them all */
    int sentinel; /* the Sentinel fixture (a master, 2 replicas, 3
                     sentinels), clients on its sentinel URL */
    int tls;      /* one TLS server (a throwaway PKI), clients on rediss:// */
    int replicas; /* rdl_client_set_durability(): 0 off, n or
                     RDL_REPLICAS_ALL (with durable_ms); the checker then
                     takes failovers for no data loss */
    int durable_ms;
} profile;

/* What every process needs, and what they share (ctl lives in a shared
 * mapping). */
typedef struct ctl {
    int stop;
    int finished[MAX_PROCS][MAX_THREADS];
    int64_t current[MAX_PROCS][MAX_THREADS]; /* history index + 1 */
    int dead[MAX_PROCS];
} ctl;

typedef struct run {
    profile p;
    uint64_t seed;
    char url[512];
    char via_url[512]; /* hooks.url's, for the first p.proxied clients */
    char red_url[RED_SERVERS][128];
    char ca[300]; /* profile.tls: the CA file the clients trust */
    stress_hist hist;
    ctl *ctl;
    unsigned deck[SF_LAST + 1]; /* profile.deck: the kinds not drawn yet */
    int ndeck;
} run;

struct proc;

typedef struct worker {
    struct proc *pr;
    int idx, owner_id;
    rdl_owner_t self;
    uint64_t rng;
    uint64_t seq;
    int lost; /* lost callbacks so far (atomic) */
    pthread_t tid;
} worker;

typedef struct proc {
    run *r;
    int id;
    int nclients;
    rdl_client_t *cl[MAX_CLIENTS];
    rdl_client_t *red[RED_SERVERS];
    rdl_lock_t *plain[MAX_CLIENTS][MAX_NAMES];
    rdl_lock_t *fair[MAX_CLIENTS][MAX_NAMES];
    rdl_rwlock_t *rw[MAX_CLIENTS][MAX_NAMES];
    rdl_lock_t *sem[MAX_CLIENTS][MAX_NAMES];
    worker w[MAX_THREADS];
    int nworkers;
} proc;

/* ---- random ----------------------------------------------------------------- */

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int64_t rnd_in(uint64_t *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd(s) % (uint64_t)(hi - lo + 1));
}

static void sleep_us(int64_t us)
{
    struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ---- semaphores ------------------------------------------------------------- */

/* The total of semaphore "n<i>": 2 or 3 permits, the same for every
 * worker (the first acquisition stores it in Redis; all agree on it). */
static int sem_permits(const char *name)
{
    return 2 + atoi(name + 1) % 2;
}

/* ---- history ---------------------------------------------------------------- */

static stress_ev *ev_start(worker *w, int type, int kind, const char *name,
                           int64_t hold, int64_t wait, int64_t lease, int level,
                           int multi)
{
    run *r = w->pr->r;
    stress_ev *e = stress_hist_add(&r->hist);
    if (e == NULL) {
        __atomic_store_n(&r->ctl->stop, 1, __ATOMIC_SEQ_CST);
        return NULL;
    }
    e->type = (int16_t)type;
    e->kind = (int16_t)kind;
    e->proc = w->pr->id;
    e->owner = w->owner_id;
    e->hold = hold;
    e->wait_ms = wait;
    e->lease_ms = lease;
    e->level = (int16_t)level;
    e->multi = (int16_t)multi;
    e->permits = (int16_t)(kind == SK_SEM ? sem_permits(name) : 0);
    snprintf(e->name, sizeof(e->name), "%s", name);
    __atomic_store_n(&r->ctl->current[w->pr->id][w->idx],
                     (int64_t)(e - r->hist.ev) + 1, __ATOMIC_SEQ_CST);
    e->t0_us = stress_now_us();
    stress_hist_done(e, 1);
    return e;
}

static void ev_end(stress_ev *e, int rc, uint64_t token, int level, int lost)
{
    if (e == NULL)
        return;
    e->t1_us = stress_now_us();
    e->calls++;
    e->rc = rc;
    e->token = token;
    e->level = (int16_t)level;
    e->lost = lost;
    stress_hist_done(e, 2);
}

static void on_lost(rdl_lock_t *lock, rdl_owner_t owner, int reason, void *data)
{
    proc *pr = data;
    int i;
    for (i = 0; i < pr->nworkers; i++) {
        worker *w = &pr->w[i];
        stress_ev *e;
        if (w->self != owner)
            continue;
        __atomic_fetch_add(&w->lost, 1, __ATOMIC_SEQ_CST);
        e = stress_hist_add(&pr->r->hist);
        if (e != NULL) {
            e->type = SE_LOST;
            e->proc = pr->id;
            e->owner = w->owner_id;
            e->rc = reason;
            e->t0_us = e->t1_us = stress_now_us();
            snprintf(e->name, sizeof(e->name), "%s", rdl_lock_name(lock));
            stress_hist_done(e, 2);
        }
    }
}

/* ---- operations ------------------------------------------------------------- */

static int64_t pick_wait(worker *w)
{
    int64_t x = rnd_in(&w->rng, 0, 99);
    if (x < 15)
        return 0;
    if (x < 60)
        return rnd_in(&w->rng, 10, 300);
    if (x < 100 - w->pr->r->p.forever)
        return rnd_in(&w->rng, 500, 2500);
    return RDL_WAIT_FOREVER;
}

static int64_t pick_lease(worker *w)
{
    return rnd_in(&w->rng, 0, 3) == 0 ? RDL_LEASE_AUTO
                                      : rnd_in(&w->rng, 300, LEASE_MAX_MS);
}

static void hold_for_a_while(worker *w)
{
    int64_t x = rnd_in(&w->rng, 0, 99);
    if (x < 90)
        sleep_us(rnd_in(&w->rng, 0, 2000));
    else if (x < 98)
        sleep_us(rnd_in(&w->rng, 5000, 50000));
    else
        sleep_us(rnd_in(&w->rng, 200000, 1200000));
}

static int64_t next_hold(worker *w)
{
    return ((int64_t)w->owner_id << 32) | (int64_t)(++w->seq << 2);
}

static int lost_since(worker *w, int before)
{
    return __atomic_load_n(&w->lost, __ATOMIC_SEQ_CST) - before;
}

/* A plain, fair, read, write or semaphore hold, re-entered up to 3 times
 * (rw and semaphore: 2). A semaphore's re-entry takes one more permit, if
 * one is free (it does not wait), and each release returns one. */
static void op_simple(worker *w, int kind)
{
    proc *pr = w->pr;
    int c = (int)rnd_in(&w->rng, 0, pr->nclients - 1);
    int n = (int)rnd_in(&w->rng, 0, pr->r->p.names - 1);
    int depth =
        (int)rnd_in(&w->rng, 1, kind == SK_PLAIN || kind == SK_FAIR ? 3 : 2);
    int64_t wait = pick_wait(w), lease = pick_lease(w), hold = next_hold(w);
    int lost0 = __atomic_load_n(&w->lost, __ATOMIC_SEQ_CST), got = 0, rc;
    rdl_lock_t *l;
    char name[12];
    stress_ev *e;

    snprintf(name, sizeof(name), "n%d", n);
    if (kind == SK_PLAIN)
        l = pr->plain[c][n];
    else if (kind == SK_FAIR)
        l = pr->fair[c][n];
    else if (kind == SK_READ)
        l = rdl_rwlock_read(pr->rw[c][n]);
    else if (kind == SK_WRITE)
        l = rdl_rwlock_write(pr->rw[c][n]);
    else
        l = pr->sem[c][n];

    while (got < depth) {
        int64_t wt = got == 0 ? wait : 0;
        e = ev_start(w, SE_ACQ, kind, name, hold, wt, lease, got, 0);
        rc = rdl_lock_acquire(l, wt, lease);
        ev_end(e, rc, rc == 0 ? rdl_lock_fencing_token(l, w->self) : 0,
               rc == 0 ? got + 1 : got, 0);
        if (rc != 0)
            break;
        got++;
    }
    if (got == 0)
        return;
    hold_for_a_while(w);
    for (; got > 0; got--) {
        e = ev_start(w, SE_REL, kind, name, hold, 0, lease, got, 0);
        rc = rdl_lock_release(l);
        ev_end(e, rc, 0, got, lost_since(w, lost0));
    }
}

static int rw_kind(int kind)
{
    return kind == SK_READ || kind == SK_WRITE;
}

/* A multilock over 2-3 distinct locks of mixed kinds (semaphores too if
 * the profile has them), made for this operation from fresh lock objects
 * (a multilock takes over its parts' lost callbacks, so parts are never
 * shared). */
static void op_multi(worker *w)
{
    proc *pr = w->pr;
    int n = (int)rnd_in(&w->rng, 2, 3), kinds[3], names[3], i, j, rc;
    rdl_lock_t *parts[3] = {NULL, NULL, NULL}, *ml = NULL;
    rdl_rwlock_t *rws[3] = {NULL, NULL, NULL};
    stress_ev *e[3];
    char nm[3][12];
    int64_t wait = pick_wait(w), lease = pick_lease(w), hold = next_hold(w);
    int lost0 = __atomic_load_n(&w->lost, __ATOMIC_SEQ_CST);

    for (i = 0; i < n; i++) {
        int again;
        do {
            kinds[i] =
                (int)rnd_in(&w->rng, SK_PLAIN,
                            pr->r->p.w_sem > 0 ? SK_WRITE + 1 : SK_WRITE);
            if (kinds[i] > SK_WRITE)
                kinds[i] = SK_SEM;
            names[i] = (int)rnd_in(&w->rng, 0, pr->r->p.names - 1);
            again = 0;
            for (j = 0; j < i; j++) /* read and write share a family */
                if (names[j] == names[i] &&
                    (kinds[j] == kinds[i] ||
                     (rw_kind(kinds[j]) && rw_kind(kinds[i]))))
                    again = 1;
        } while (again);
        snprintf(nm[i], sizeof(nm[i]), "n%d", names[i]);
    }
    for (i = 0; i < n; i++) {
        rdl_client_t *c = pr->cl[rnd_in(&w->rng, 0, pr->nclients - 1)];
        if (kinds[i] == SK_PLAIN)
            rc = rdl_lock_new(c, nm[i], &parts[i]);
        else if (kinds[i] == SK_FAIR)
            rc = rdl_fairlock_new(c, nm[i], &parts[i]);
        else if (kinds[i] == SK_SEM)
            rc = rdl_semaphore_new(c, nm[i], (uint32_t)sem_permits(nm[i]),
                                   &parts[i]);
        else if ((rc = rdl_rwlock_new(c, nm[i], &rws[i])) == 0)
            parts[i] = kinds[i] == SK_READ ? rdl_rwlock_read(rws[i])
                                           : rdl_rwlock_write(rws[i]);
        if (rc != 0)
            goto out;
    }
    if (rdl_multilock_new(parts, (size_t)n, &ml) != 0)
        goto out;
    (void)rdl_lock_set_lost_cb(ml, on_lost, pr);
    for (i = 0; i < n; i++)
        e[i] =
            ev_start(w, SE_ACQ, kinds[i], nm[i], hold + i, wait, lease, 0, n);
    rc = rdl_lock_acquire(ml, wait, lease);
    for (i = 0; i < n; i++)
        ev_end(e[i], rc,
               rc == 0 ? rdl_lock_fencing_token(parts[i], w->self) : 0,
               rc == 0 ? 1 : 0, 0);
    if (rc != 0)
        goto out;
    hold_for_a_while(w);
    for (i = 0; i < n; i++)
        e[i] = ev_start(w, SE_REL, kinds[i], nm[i], hold + i, 0, lease, 1, n);
    rc = rdl_lock_release(ml);
    for (i = 0; i < n; i++)
        ev_end(e[i], rc, 0, 1, lost_since(w, lost0));
out:
    rdl_lock_free(ml);
    for (i = 0; i < n; i++) {
        if (rws[i] != NULL)
            rdl_rwlock_free(rws[i]);
        else
            rdl_lock_free(parts[i]);
    }
}

/* A RedLock over the three independent servers. */
static void op_red(worker *w)
{
    proc *pr = w->pr;
    rdl_lock_t *parts[RED_SERVERS] = {NULL, NULL, NULL}, *rl = NULL;
    int64_t wait = pick_wait(w), lease = pick_lease(w), hold = next_hold(w);
    int lost0 = __atomic_load_n(&w->lost, __ATOMIC_SEQ_CST), i, rc;
    stress_ev *e;
    char name[12];

    snprintf(name, sizeof(name), "r%d",
             (int)rnd_in(&w->rng, 0, pr->r->p.names / 2));
    for (i = 0; i < RED_SERVERS; i++)
        if (rdl_lock_new(pr->red[i], name, &parts[i]) != 0)
            goto out;
    if (rdl_redlock_new(parts, RED_SERVERS, &rl) != 0)
        goto out;
    (void)rdl_lock_set_lost_cb(rl, on_lost, pr);
    e = ev_start(w, SE_ACQ, SK_RED, name, hold, wait, lease, 0, 0);
    rc = rdl_lock_acquire(rl, wait, lease);
    ev_end(e, rc, rc == 0 ? rdl_lock_fencing_token(rl, w->self) : 0,
           rc == 0 ? 1 : 0, 0);
    if (rc != 0)
        goto out;
    hold_for_a_while(w);
    e = ev_start(w, SE_REL, SK_RED, name, hold, 0, lease, 1, 0);
    rc = rdl_lock_release(rl);
    ev_end(e, rc, 0, 1, lost_since(w, lost0));
out:
    rdl_lock_free(rl);
    for (i = 0; i < RED_SERVERS; i++)
        rdl_lock_free(parts[i]);
}

/* ---- batch_close: async calls on the worker's own loop, closed from a
 * callback ------------------------------------------------------------------
 */

#define BATCH_MAX 8

struct bsess;

typedef struct bcall {
    struct bsess *s;
    rdl_req_t req;
    rdl_lock_t *l;
    stress_ev *e;
    int kind;
    char name[12];
    int32_t owner;  /* the history's owner of this call's hold */
    rdl_owner_t id; /* rdl's */
    int64_t hold, lease;
    int releasing;
} bcall;

typedef struct bsess {
    worker *w;
    uv_loop_t loop;
    rdl_client_t *c;
    bcall call[BATCH_MAX];
    int n;
    int pending;  /* calls whose callback has not run */
    int closed;   /* the client was closed from a callback */
    int32_t proc; /* the session's own process number (SF_CLOSE) */
} bsess;

static void on_batch(rdl_req_t *req, int status);

/* The call's event, as ev_start() makes it, but in the session's
 * process and with the call's own owner. */
static stress_ev *bev_start(bcall *k, int type, int64_t wait, int level)
{
    stress_ev *e = ev_start(k->s->w, type, k->kind, k->name, k->hold, wait,
                            k->lease, level, 0);
    if (e != NULL) {
        e->proc = k->s->proc;
        e->owner = k->owner;
    }
    return e;
}

/* The session's client closes inside this callback: recorded first, so
 * the close covers every call it ends. */
static void close_here(bsess *s)
{
    stress_ev *e = stress_hist_add(&s->w->pr->r->hist);
    if (e != NULL) {
        e->type = SE_FAULT;
        e->kind = SF_CLOSE;
        e->proc = s->proc;
        e->t0_us = stress_now_us();
        snprintf(e->name, sizeof(e->name), "in cb");
    }
    s->closed = 1;
    (void)rdl_client_close(s->c);
    if (e != NULL) {
        e->t1_us = stress_now_us();
        stress_hist_done(e, 2);
    }
}

static void on_batch(rdl_req_t *req, int status)
{
    bcall *k = req->data;
    bsess *s = k->s;
    worker *w = s->w;
    stress_ev *e = k->e;

    if (!k->releasing) {
        ev_end(e, status, status == 0 ? rdl_lock_fencing_token(k->l, k->id) : 0,
               status == 0 ? 1 : 0, 0);
        if (status == 0 && !s->closed && rnd_in(&w->rng, 0, 3) == 0) {
            /* This hold is abandoned: its lease ends it on the server. */
            s->pending--;
            close_here(s);
            return;
        }
        if (status == 0 && !s->closed) {
            k->releasing = 1;
            k->e = bev_start(k, SE_REL, 0, 1);
            memset(&k->req, 0, sizeof(k->req));
            k->req.data = k;
            status = rdl_lock_release_async(&k->req, k->l, k->id, on_batch);
            if (status == 0)
                return;
            ev_end(k->e, status, 0, 1, 0);
        }
        s->pending--;
        return;
    }
    ev_end(e, status, 0, 1, 0);
    s->pending--;
}

/* One session: a client on a loop of this worker's, 2-8 async
 * acquisitions of plain, fair and semaphore locks made in one turn (they
 * share batches and, on a loop's turn, replies), each released from its
 * callback; in a third of the sessions the first grant's callback closes
 * the client instead, ending the calls still running. Every callback
 * must run exactly once (callback-once), and the process must survive. */
static void op_batch(worker *w)
{
    run *r = w->pr->r;
    bsess *s = calloc(1, sizeof(*s));
    int i, rc;

    if (s == NULL)
        return;
    s->w = w;
    /* Unique per session: SF_CLOSE and the owners' ids name it. */
    s->proc = 1000 + w->owner_id * 100000 + (int32_t)(++w->seq % 100000);
    if (uv_loop_init(&s->loop) != 0) {
        free(s);
        return;
    }
    if (rdl_client_new(&s->c) != 0 || rdl_client_set_url(s->c, r->url) != 0 ||
        rdl_client_set_timeouts_ms(s->c, 2000, CMD_TIMEOUT_MS) != 0 ||
        rdl_client_set_watchdog_ms(s->c, WATCHDOG_MS) != 0 ||
        rdl_client_set_loop(s->c, &s->loop) != 0 ||
        rdl_client_connect(s->c) != 0)
        goto out;
    s->n = (int)rnd_in(&w->rng, 2, BATCH_MAX);
    for (i = 0; i < s->n; i++) {
        bcall *k = &s->call[i];
        int pick = (int)rnd_in(&w->rng, 0, 2);
        k->s = s;
        k->kind = pick == 0 ? SK_PLAIN : pick == 1 ? SK_FAIR : SK_SEM;
        snprintf(k->name, sizeof(k->name), "n%d",
                 (int)rnd_in(&w->rng, 0, r->p.names - 1));
        k->owner = s->proc * 10 + i;
        k->id = (rdl_owner_t)k->owner;
        k->hold = next_hold(w);
        k->lease = pick_lease(w);
        rc = k->kind == SK_PLAIN ? rdl_lock_new(s->c, k->name, &k->l)
             : k->kind == SK_FAIR
                 ? rdl_fairlock_new(s->c, k->name, &k->l)
                 : rdl_semaphore_new(s->c, k->name,
                                     (uint32_t)sem_permits(k->name), &k->l);
        if (rc != 0) {
            s->n = i;
            break;
        }
    }
    for (i = 0; i < s->n; i++) {
        bcall *k = &s->call[i];
        int64_t wait = rnd_in(&w->rng, 0, 1) ? 0 : rnd_in(&w->rng, 10, 300);
        k->req.data = k;
        k->e = bev_start(k, SE_ACQ, wait, 0);
        s->pending++;
        rc = rdl_lock_acquire_async(&k->req, k->l, k->id, wait, k->lease,
                                    on_batch);
        if (rc != 0) {
            ev_end(k->e, rc, 0, 0, 0);
            s->pending--;
        }
    }
    while (s->pending > 0 && uv_run(&s->loop, UV_RUN_ONCE) >= 0)
        if (!uv_loop_alive(&s->loop))
            break;
out:
    for (i = 0; i < s->n; i++)
        rdl_lock_free(s->call[i].l);
    rdl_client_free(s->c); /* closes it if no callback did */
    (void)uv_run(&s->loop, UV_RUN_DEFAULT);
    (void)uv_loop_close(&s->loop);
    free(s);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    const profile *p = &w->pr->r->p;
    ctl *ct = w->pr->r->ctl;
    int total = p->w_plain + p->w_fair + p->w_read + p->w_write + p->w_sem +
                p->w_multi + p->w_red + p->w_batch;

    w->self = rdl_owner_self();
    __atomic_store_n(&w->lost, 0, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&ct->stop, __ATOMIC_SEQ_CST)) {
        int x = (int)rnd_in(&w->rng, 0, total - 1);
        if ((x -= p->w_plain) < 0)
            op_simple(w, SK_PLAIN);
        else if ((x -= p->w_fair) < 0)
            op_simple(w, SK_FAIR);
        else if ((x -= p->w_read) < 0)
            op_simple(w, SK_READ);
        else if ((x -= p->w_write) < 0)
            op_simple(w, SK_WRITE);
        else if ((x -= p->w_sem) < 0)
            op_simple(w, SK_SEM);
        else if ((x -= p->w_multi) < 0)
            op_multi(w);
        else if ((x -= p->w_batch) < 0)
            op_batch(w);
        else
            op_red(w);
        sleep_us(rnd_in(&w->rng, 0, 1000));
    }
    __atomic_store_n(&ct->finished[w->pr->id][w->idx], 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* ---- processes ---------------------------------------------------------------- */

/* A client of `url`; durability and TLS as the profile says (not for the
 * RedLock servers: durable = 0). */
static int connect_client(const run *r, const char *url, int durable,
                          rdl_client_t **out)
{
    rdl_client_t *c = NULL;
    rdl_tls_options_t tls;
    int rc;
    *out = NULL;
    memset(&tls, 0, sizeof(tls));
    tls.ca_file = r->ca;
    if ((rc = rdl_client_new(&c)) != 0 ||
        (rc = rdl_client_set_url(c, url)) != 0 ||
        (rc = rdl_client_set_timeouts_ms(c, 2000, CMD_TIMEOUT_MS)) != 0 ||
        (rc = rdl_client_set_watchdog_ms(c, WATCHDOG_MS)) != 0 ||
        (durable && r->p.replicas != 0 &&
         (rc = rdl_client_set_durability(c, r->p.replicas, r->p.durable_ms)) !=
             0) ||
        (r->ca[0] != '\0' && (rc = rdl_client_set_tls(c, &tls)) != 0) ||
        (rc = rdl_client_connect(c)) != 0) {
        fprintf(stderr, "stress: connect %s: %s: %s\n", url, rdl_err_name(rc),
                c != NULL ? rdl_client_errmsg(c) : "");
        rdl_client_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

static void proc_free(proc *pr)
{
    int c, n;
    for (c = 0; c < MAX_CLIENTS; c++)
        for (n = 0; n < MAX_NAMES; n++) {
            rdl_lock_free(pr->plain[c][n]);
            rdl_lock_free(pr->fair[c][n]);
            rdl_rwlock_free(pr->rw[c][n]);
            rdl_lock_free(pr->sem[c][n]);
        }
    for (c = 0; c < MAX_CLIENTS; c++)
        rdl_client_free(pr->cl[c]);
    for (c = 0; c < RED_SERVERS; c++)
        rdl_client_free(pr->red[c]);
    free(pr);
}

/* Connects a process's clients and makes its locks; 0 or an rdl code. */
static int proc_setup(run *r, int id, proc **out)
{
    proc *pr = calloc(1, sizeof(*pr));
    int c, n, rc = 0;
    *out = NULL;
    if (pr == NULL)
        return RDL_ENOMEM;
    pr->r = r;
    pr->id = id;
    pr->nclients = r->p.clients;
    for (c = 0; c < pr->nclients && rc == 0; c++)
        rc = connect_client(
            r, c < r->p.proxied && r->via_url[0] != '\0' ? r->via_url : r->url,
            1, &pr->cl[c]);
    for (c = 0; c < RED_SERVERS && rc == 0 && r->p.w_red > 0; c++)
        rc = connect_client(r, r->red_url[c], 0, &pr->red[c]);
    for (c = 0; c < pr->nclients && rc == 0; c++)
        for (n = 0; n < r->p.names && rc == 0; n++) {
            char name[12];
            snprintf(name, sizeof(name), "n%d", n);
            if ((rc = rdl_lock_new(pr->cl[c], name, &pr->plain[c][n])) ||
                (rc = rdl_fairlock_new(pr->cl[c], name, &pr->fair[c][n])) ||
                (rc = rdl_rwlock_new(pr->cl[c], name, &pr->rw[c][n])) ||
                (rc = rdl_semaphore_new(pr->cl[c], name,
                                        (uint32_t)sem_permits(name),
                                        &pr->sem[c][n])))
                break;
            (void)rdl_lock_set_lost_cb(pr->plain[c][n], on_lost, pr);
            (void)rdl_lock_set_lost_cb(pr->fair[c][n], on_lost, pr);
            (void)rdl_lock_set_lost_cb(rdl_rwlock_read(pr->rw[c][n]), on_lost,
                                       pr);
            (void)rdl_lock_set_lost_cb(rdl_rwlock_write(pr->rw[c][n]), on_lost,
                                       pr);
            (void)rdl_lock_set_lost_cb(pr->sem[c][n], on_lost, pr);
        }
    if (rc != 0) {
        proc_free(pr);
        return rc;
    }
    *out = pr;
    return 0;
}

static int proc_start(proc *pr)
{
    int t;
    pr->nworkers = pr->r->p.threads;
    for (t = 0; t < pr->nworkers; t++) {
        worker *w = &pr->w[t];
        w->pr = pr;
        w->idx = t;
        w->owner_id = pr->id * 100 + t;
        w->rng = pr->r->seed ^ ((uint64_t)(pr->id + 1) << 40) ^
                 ((uint64_t)(t + 1) << 20);
        (void)rnd(&w->rng);
    }
    for (t = 0; t < pr->nworkers; t++)
        if (pthread_create(&pr->w[t].tid, NULL, worker_main, &pr->w[t]) != 0)
            return RDL_ENOMEM;
    return 0;
}

static void proc_join(proc *pr)
{
    int t;
    for (t = 0; t < pr->nworkers; t++)
        pthread_join(pr->w[t].tid, NULL);
}

typedef struct child_arg {
    run *r;
    int id;
} child_arg;

/* A forked worker process: no cmocka here (rdlt_child_start()). */
static int child_main(void *arg, int fd)
{
    child_arg *a = arg;
    proc *pr;
    int rc = proc_setup(a->r, a->id, &pr);
    if (rc == 0)
        rc = proc_start(pr);
    rdlt_child_say(fd, "ready %d", rc);
    if (rc != 0)
        return 1;
    proc_join(pr);
    proc_free(pr);
    return 0;
}

/* ---- the run ------------------------------------------------------------------ */

typedef struct servers {
    rdlt_server *main; /* with a sentinel: the master the sentinels name */
    rdlt_cluster *cluster;
    rdlt_sentinel *sentinel;
    rdlt_server *red[RED_SERVERS];
} servers;

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0' ? strtoull(v, NULL, 0) : dflt;
}

static void add_fault(run *r, int kind, int who, int64_t t0, int64_t t1,
                      const char *note, int64_t arg)
{
    stress_ev *e = stress_hist_add(&r->hist);
    if (e == NULL)
        return;
    e->type = SE_FAULT;
    e->kind = (int16_t)kind;
    e->proc = who;
    e->t0_us = t0;
    e->t1_us = t1;
    e->wait_ms = arg;
    snprintf(e->name, sizeof(e->name), "%s", note);
    stress_hist_done(e, 2);
}

static rdlt_server *any_node(servers *sv, uint64_t *rng)
{
    if (sv->sentinel != NULL)
        return rdlt_sentinel_master(sv->sentinel);
    if (sv->cluster == NULL)
        return sv->main;
    for (;;) {
        rdlt_server *s = rdlt_cluster_node(sv->cluster, (int)rnd_in(rng, 0, 5));
        if (rdlt_server_running(s))
            return s;
    }
}

/* One step of the fault schedule. */
static void inject(run *r, servers *sv, rdlt_child **kids, uint64_t *rng)
{
    unsigned kinds[SF_LAST + 1], nk = 0, k;
    int64_t t0 = stress_now_us();
    for (k = SF_KILLCONN; k <= SF_LAST; k++)
        if (r->p.faults & (1u << k))
            kinds[nk++] = k;
    if (nk == 0)
        return;
    if (r->p.deck) {
        if (r->ndeck == 0) {
            for (r->ndeck = 0; r->ndeck < (int)nk; r->ndeck++) {
                unsigned j = (unsigned)(rnd(rng) % (unsigned)(r->ndeck + 1));
                r->deck[r->ndeck] = r->deck[j];
                r->deck[j] = kinds[r->ndeck];
            }
        }
        k = r->deck[--r->ndeck];
    } else {
        k = kinds[rnd(rng) % nk];
    }
    if (k == SF_KILLCONN) {
        int n = rdlt_kill_clients(any_node(sv, rng), "rdl:");
        char note[12];
        snprintf(note, sizeof(note), "%d conns", n);
        add_fault(r, SF_KILLCONN, -1, t0, stress_now_us(), note, 0);
    } else if (k == SF_STOP || k == SF_SIGKILL) {
        int id = (int)rnd_in(rng, 1, r->p.procs), alive = 0, i;
        for (i = 1; i <= r->p.procs; i++)
            alive += !r->ctl->dead[i];
        if (r->p.procs == 0 || r->ctl->dead[id] ||
            (k == SF_SIGKILL && alive <= 1))
            return;
        if (k == SF_STOP) {
            int64_t ms = rnd_in(rng, WATCHDOG_MS + 200, LEASE_MAX_MS + 500);
            rdlt_child_signal(kids[id], SIGSTOP);
            sleep_us(ms * 1000);
            rdlt_child_signal(kids[id], SIGCONT);
            add_fault(r, SF_STOP, id, t0, stress_now_us(), "stop", 0);
        } else {
            add_fault(r, SF_SIGKILL, id, t0, t0, "kill", 0);
            r->ctl->dead[id] = 1;
            rdlt_child_signal(kids[id], SIGKILL);
        }
    } else if (k == SF_RESTART && sv->main != NULL) {
        rdlt_server_signal(sv->main, SIGKILL);
        sleep_us(rnd_in(rng, 50, 500) * 1000);
        rdlt_server_restart(sv->main);
        add_fault(r, SF_RESTART, -1, t0, stress_now_us(), "restart", 0);
    } else if (k == SF_FAILOVER && sv->sentinel != NULL) {
        /* SENTINEL FAILOVER: forced, without the old master's clients
         * paused (unlike CLUSTER FAILOVER), so a release it still takes
         * may be lost; it rejoins as a replica, and the fault lasts until
         * both replicas are in sync. */
        (void)rdlt_sentinel_failover(sv->sentinel);
        rdlt_sentinel_wait_synced(sv->sentinel, 30000);
        add_fault(r, SF_FAILOVER, -1, t0, stress_now_us(), "sentinel", 0);
    } else if (k == SF_REPLICA_PAUSE && sv->sentinel != NULL) {
        rdlt_server *m = rdlt_sentinel_master(sv->sentinel), *rs[2];
        int64_t ms = rnd_in(rng, 300, 1500);
        int i, n = 0, both = (int)rnd_in(rng, 0, 1), skip;
        char note[12];
        for (i = 0; i < RDLT_SENTINEL_DATA; i++)
            if (rdlt_sentinel_data(sv->sentinel, i) != m && n < 2)
                rs[n++] = rdlt_sentinel_data(sv->sentinel, i);
        skip = both || n < 2 ? -1 : (int)rnd_in(rng, 0, 1);
        for (i = 0; i < n; i++)
            if (i != skip)
                rdlt_server_signal(rs[i], SIGSTOP);
        sleep_us(ms * 1000);
        for (i = 0; i < n; i++)
            if (i != skip)
                rdlt_server_signal(rs[i], SIGCONT);
        snprintf(note, sizeof(note), "%s %lldms", skip < 0 ? "both" : "one",
                 (long long)ms);
        add_fault(r, SF_REPLICA_PAUSE, -1, t0, stress_now_us(), note, ms);
    } else if (k == SF_MASTER_KILL && sv->sentinel != NULL) {
        /* Down until the sentinels promote a replica, then restarted: it
         * comes back empty and the sentinels make it a replica; the fault
         * lasts until it is in sync. */
        rdlt_server *m = rdlt_sentinel_master(sv->sentinel);
        rdlt_server_signal(m, SIGKILL);
        (void)rdlt_sentinel_wait_switch(sv->sentinel, m, 30000);
        sleep_us(rnd_in(rng, 200, 1000) * 1000);
        rdlt_server_restart(m);
        rdlt_sentinel_wait_synced(sv->sentinel, 30000);
        add_fault(r, SF_MASTER_KILL, -1, t0, stress_now_us(), "master", 0);
    } else if (k == SF_FAILOVER && sv->cluster != NULL) {
        rdlt_server *m = rdlt_cluster_master_of(
            sv->cluster, (unsigned)rnd_in(rng, 0, 16383));
        rdlt_server *rep = rdlt_cluster_replica_of(sv->cluster, m);
        redisReply *rr;
        if (rep == NULL)
            return;
        rr = rdlt_cmd(rep, "CLUSTER FAILOVER");
        freeReplyObject(rr);
        rdlt_cluster_wait_ok(sv->cluster, 20000);
        add_fault(r, SF_FAILOVER, -1, t0, stress_now_us(), "failover", 0);
    } else if (k >= SF_EXTERNAL && hooks.fault != NULL) {
        char note[12] = "";
        int64_t arg = 0;
        if (hooks.fault(hooks.ctx, (int)k, rng, note, sizeof(note), &arg))
            add_fault(r, (int)k, -1, t0, stress_now_us(), note, arg);
    }
}

/* ---- the fault proxy stage ------------------------------------------------------ */

static const char *proxy_url(void *ctx, int server, const char *real_url)
{
    (void)server;
    (void)real_url;
    return rdlt_proxy_url(ctx);
}

/* Drops the replies or the requests of the next 1-3 EVALSHAs (any script:
 * acquisitions, releases, renewals, queue work), waiting until they went
 * by or 1.5 s passed; then the rules left are cleared, so the fault ends
 * with its entry. */
static void proxy_drop(rdlt_proxy *px, int reply, int n)
{
    unsigned before = rdlt_proxy_count(px, "EVALSHA");
    if (reply)
        rdlt_proxy_drop_reply(px, "EVALSHA", NULL, n);
    else
        rdlt_proxy_drop_request(px, "EVALSHA", NULL, n);
    (void)rdlt_proxy_wait_count(px, "EVALSHA", before + (unsigned)n, 1500);
    rdlt_sleep_ms(100); /* commands on a closing connection count too */
    rdlt_proxy_clear_rules(px);
}

static int proxy_fault(void *ctx, int kind, uint64_t *rng, char *note,
                       size_t len, int64_t *arg)
{
    rdlt_proxy *px = ctx;
    int n;
    int64_t ms;
    switch (kind) {
    case SF_DROP_REPLY:
    case SF_DROP_REQUEST:
        n = (int)rnd_in(rng, 1, 3);
        proxy_drop(px, kind == SF_DROP_REPLY, n);
        snprintf(note, len, "%d evalsha", n);
        return 1;
    case SF_DELAY_SUB:
    case SF_DELAY_CMD:
        ms = rnd_in(rng, 50, 400); /* below the command timeout */
        rdlt_proxy_delay(
            px, kind == SF_DELAY_SUB ? RDLT_PROXY_SUB : RDLT_PROXY_CMD, ms);
        sleep_us(rnd_in(rng, 1000, 2000) * 1000);
        rdlt_proxy_delay(px, RDLT_PROXY_ALL, 0);
        snprintf(note, len, "%s %lldms", kind == SF_DELAY_SUB ? "sub" : "cmd",
                 (long long)ms);
        *arg = ms;
        return 1;
    case SF_PROXY_RESET:
        n = (int)rnd_in(rng, 0, 1);
        rdlt_proxy_reset(px, n);
        snprintf(note, len, "%s", n ? "rst" : "fin");
        return 1;
    default:
        return 0;
    }
}

/* Routes clients through a proxy in front of `s`, which the proxy kinds
 * of faults act on. */
static void proxy_hooks(stress_hooks *h, rdlt_server *s)
{
    h->url = proxy_url;
    h->fault = proxy_fault;
    h->ctx = rdlt_proxy_new(s); /* its thread starts after the fork */
}

/* A command to the node that has `key`: a cluster replica answers MOVED
 * until READONLY. */
static redisReply *key_cmd(rdlt_server *s, const char *fmt, const char *key)
{
    redisReply *r = rdlt_cmd(s, fmt, key);
    if (r->type == REDIS_REPLY_ERROR) {
        freeReplyObject(r);
        freeReplyObject(rdlt_cmd(s, "READONLY"));
        r = rdlt_cmd(s, fmt, key);
    }
    return r;
}

/* Whether semaphore `name` (its hash key) has a holder whose lease has not
 * ended, or counts permits in use ('u') that its holders do not hold. */
static int sem_live(rdlt_server *s, const char *hash)
{
    char xkey[160];
    redisReply *r = rdlt_cmd(s, "TIME"), *h, *x;
    long long now = strtoll(r->element[0]->str, NULL, 10) * 1000 +
                    strtoll(r->element[1]->str, NULL, 10) / 1000;
    long long used = 0, held = 0;
    int live = 0;
    size_t i;
    freeReplyObject(r);
    snprintf(xkey, sizeof(xkey), "rdl:sem.x:%s", hash + 8);
    h = key_cmd(s, "HGETALL %s", hash);
    x = key_cmd(s, "ZRANGE %s 0 -1 WITHSCORES", xkey);
    if (h->type != REDIS_REPLY_ARRAY || x->type != REDIS_REPLY_ARRAY)
        live = 1;
    for (i = 0; !live && i + 1 < h->elements; i += 2) {
        const char *f = h->element[i]->str, *v = h->element[i + 1]->str;
        if (strcmp(f, "u") == 0)
            used = strtoll(v, NULL, 10);
        else if (strncmp(f, "c:", 2) == 0)
            held += strtoll(v, NULL, 10);
    }
    for (i = 0; !live && i + 1 < x->elements; i += 2)
        live = strtoll(x->element[i + 1]->str, NULL, 10) > now;
    freeReplyObject(h);
    freeReplyObject(x);
    return live || used != held;
}

/* A semaphore's hash ("rdl:sem:{name}") outlives its holders by design,
 * like a fence: it keeps the total and the last token (scripts/lib/
 * sem.lua); its expiry set ("rdl:sem.x:{name}") lists the holders. A
 * holder whose lease ended stays in both until the next call on the name
 * drops it (it no longer counts), so both are left over only while a
 * lease runs (or the count of permits in use is wrong). */
static int sem_retained(rdlt_server *s, const char *key)
{
    char hash[160];
    if (strncmp(key, "rdl:sem:", 8) == 0)
        return !sem_live(s, key);
    if (strncmp(key, "rdl:sem.x:", 10) != 0)
        return 0;
    snprintf(hash, sizeof(hash), "rdl:sem:%s", key + 10);
    return !sem_live(s, hash);
}

static long long rdl_keys_left(rdlt_server *s, char *names, size_t len)
{
    long long n = 0;
    redisReply *rr;
    size_t i, off = strlen(names);
    if (!rdlt_server_running(s))
        return 0;
    if (rdlt_count_held(s, "rdl:*") <= 0)
        return 0;
    rr = rdlt_cmd(s, "KEYS rdl:*");
    for (i = 0; rr->type == REDIS_REPLY_ARRAY && i < rr->elements; i++) {
        const char *key = rr->element[i]->str;
        if (rdlt_key_retained(s, key) || sem_retained(s, key))
            continue;
        n++;
        if (off + 80 < len)
            off += (size_t)snprintf(names + off, len - off, " %d:%s",
                                    rdlt_server_port(s), key);
    }
    freeReplyObject(rr);
    return n;
}

/* Keys other than fences, on every server, once leases of killed holders
 * may have run out. */
static void check_keys(run *r, servers *sv, int64_t settle_until_us,
                       stress_report *rep)
{
    char names[1024];
    long long left;
    int i;
    do {
        names[0] = '\0';
        left = 0;
        if (sv->cluster != NULL)
            for (i = 0; i < RDLT_CLUSTER_NODES; i++)
                left += rdl_keys_left(rdlt_cluster_node(sv->cluster, i), names,
                                      sizeof(names));
        else if (sv->sentinel != NULL) /* the master after failovers */
            left = rdl_keys_left(rdlt_sentinel_master(sv->sentinel), names,
                                 sizeof(names));
        else
            left = rdl_keys_left(sv->main, names, sizeof(names));
        for (i = 0; i < RED_SERVERS && r->p.w_red > 0; i++)
            left += rdl_keys_left(sv->red[i], names, sizeof(names));
        if (left == 0)
            return;
        rdlt_sleep_ms(100);
    } while (stress_now_us() < settle_until_us);
    stress_report_add(rep, SP_LEFTOVER,
                      "%lld keys left after every owner released:%s", left,
                      names);
}

static void dump_history(run *r, const char *path)
{
    FILE *f = fopen(path, "w");
    size_t i, n = stress_hist_len(&r->hist);
    char line[256];
    if (f == NULL)
        return;
    for (i = 0; i < n; i++) {
        if (r->hist.ev[i].done == 0)
            continue;
        stress_ev_format(&r->hist.ev[i], r->hist.ev[0].t0_us, line,
                         sizeof(line));
        fprintf(f, "%s\n", line);
    }
    fclose(f);
    printf("stress: history (%zu events) in %s\n", n, path);
}

static void print_stats(run *r)
{
    size_t i, n = stress_hist_len(&r->hist);
    unsigned grants[SK_LAST + 1] = {0}, tries = 0, lost = 0, multi = 0;
    unsigned faults[SF_LAST + 1] = {0}, nf = 0, enorep = 0;
    char line[256];
    for (i = 0; i < n; i++) {
        const stress_ev *e = &r->hist.ev[i];
        if (e->type == SE_FAULT && e->kind > 0 && e->kind <= SF_LAST) {
            faults[e->kind]++;
            nf++;
        }
        enorep += e->type == SE_ACQ && e->done == 2 && e->rc == RDL_ENOREPLICAS;
        if (e->type == SE_ACQ && e->done == 2 && e->level <= 1 &&
            (e->multi == 0 || e->hold % 4 == 0)) {
            tries++;
            if (e->rc == 0 && e->kind <= SK_LAST)
                grants[e->multi ? 0 : e->kind]++;
            multi += e->rc == 0 && e->multi > 0;
        }
        lost += e->type == SE_LOST;
    }
    printf("stress %s: %zu events, %u acquisitions, granted plain %u fair %u "
           "read %u write %u sem %u multi %u redlock %u; %u lost callbacks\n",
           r->p.name, n, tries, grants[SK_PLAIN], grants[SK_FAIR],
           grants[SK_READ], grants[SK_WRITE], grants[SK_SEM], multi,
           grants[SK_RED], lost);
    if (enorep > 0)
        printf("stress %s: %u acquisitions failed with RDL_ENOREPLICAS\n",
               r->p.name, enorep);
    if (nf > 0) {
        size_t off = 0;
        line[0] = '\0';
        for (i = 0; i <= SF_LAST; i++) {
            if (faults[i] == 0)
                continue;
            off +=
                (size_t)snprintf(line + off, sizeof(line) - off, " %s %u",
                                 stress_kind_name(SE_FAULT, (int)i), faults[i]);
            if (off >= sizeof(line))
                break;
        }
        printf("stress %s: %u faults:%s\n", r->p.name, nf, line);
    }
}

static void free_hist(void *p)
{
    stress_hist_free(p);
}

static void unmap_ctl(void *p)
{
    munmap(p, sizeof(ctl));
}

static void stress_run(const profile *prof)
{
    static run r;
    static servers sv;
    static child_arg args[MAX_PROCS];
    rdlt_child *kids[MAX_PROCS] = {NULL};
    stress_params params;
    stress_report rep;
    proc *pr = NULL;
    uint64_t frng;
    int64_t end, deadline, settle = 0;
    int i, rc, hung = 0;
    char line[512];
    const char *dump = getenv("RDL_STRESS_DUMP");

    memset(&r, 0, sizeof(r));
    memset(&sv, 0, sizeof(sv));
    memset(&rep, 0, sizeof(rep));
    r.p = *prof;
    r.seed = prof->seed;
    if (r.seed == 0)
        r.seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
    r.seed = env_u64("RDL_STRESS_SEED", r.seed);
    r.p.seconds = (int)env_u64("RDL_STRESS_SECONDS", (uint64_t)prof->seconds);
    printf("stress %s: seed %" PRIu64 " (RDL_STRESS_SEED=%" PRIu64
           "), %d s, %d+%d processes x %d threads x %d clients\n",
           r.p.name, r.seed, r.seed, r.p.seconds, 1, r.p.procs, r.p.threads,
           r.p.clients);
    fflush(stdout);

    if (stress_hist_init(&r.hist, HIST_CAP) != 0)
        fail_msg("stress: cannot map the history");
    rdlt_defer(free_hist, &r.hist);
    r.ctl = mmap(NULL, sizeof(ctl), PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (r.ctl == MAP_FAILED)
        fail_msg("stress: cannot map the control block");
    rdlt_defer(unmap_ctl, r.ctl);

    if (r.p.cluster) {
        sv.cluster = rdlt_cluster_start();
        snprintf(r.url, sizeof(r.url), "%s", rdlt_cluster_url(sv.cluster));
    } else if (r.p.sentinel) {
        sv.sentinel = rdlt_sentinel_start(NULL);
        snprintf(r.url, sizeof(r.url), "%s", rdlt_sentinel_url(sv.sentinel));
    } else if (r.p.tls) {
        const rdlt_pki *pki = rdlt_pki_make();
        sv.main = rdlt_tls_server_start(pki, pki->server, 0, NULL);
        snprintf(r.url, sizeof(r.url), "%s", rdlt_tls_url(sv.main));
        snprintf(r.ca, sizeof(r.ca), "%s", pki->ca);
    } else {
        sv.main = rdlt_server_start();
        snprintf(r.url, sizeof(r.url), "%s", rdlt_server_url(sv.main));
    }
    /* The proxy's port is bound before the fork, its thread started after
     * it: the workers connect to it over TCP, and only this process
     * touches it. */
    memset(&hooks, 0, sizeof(hooks));
    if (r.p.proxied > 0 && sv.main != NULL)
        proxy_hooks(&hooks, sv.main);
    if (hooks.url != NULL && hooks.url(hooks.ctx, 0, r.url) != NULL)
        snprintf(r.via_url, sizeof(r.via_url), "%s",
                 hooks.url(hooks.ctx, 0, r.url));
    for (i = 0; i < RED_SERVERS && r.p.w_red > 0; i++) {
        sv.red[i] = rdlt_server_start();
        snprintf(r.red_url[i], sizeof(r.red_url[i]), "%s",
                 rdlt_server_url(sv.red[i]));
    }

    /* Fork before this process has threads of its own. */
    for (i = 1; i <= r.p.procs; i++) {
        args[i].r = &r;
        args[i].id = i;
        kids[i] = rdlt_child_start(child_main, &args[i]);
    }
    if (hooks.ctx != NULL)
        rdlt_proxy_run(hooks.ctx);
    for (i = 1; i <= r.p.procs; i++) {
        if (rdlt_child_hear(kids[i], line, sizeof(line), 10000) != 0 ||
            strcmp(line, "ready 0") != 0)
            fail_msg("stress: worker process %d did not start", i);
    }
    rc = proc_setup(&r, 0, &pr);
    if (rc == 0)
        rc = proc_start(pr);
    if (rc != 0)
        fail_msg("stress: workers: %s", rdl_err_name(rc));

    /* The fault schedule, from the same seed. */
    frng = r.seed ^ 0xfa017ULL;
    end = stress_now_us() + (int64_t)r.p.seconds * 1000000;
    while (stress_now_us() < end &&
           !__atomic_load_n(&r.ctl->stop, __ATOMIC_SEQ_CST)) {
        int64_t next =
            stress_now_us() +
            (r.p.deck ? rnd_in(&frng, 1000, 2500) : rnd_in(&frng, 1500, 4000)) *
                1000;
        while (stress_now_us() < next && stress_now_us() < end)
            sleep_us(50000);
        if (stress_now_us() < end && r.p.faults != 0)
            inject(&r, &sv, kids, &frng);
    }
    if (__atomic_load_n(&r.ctl->stop, __ATOMIC_SEQ_CST))
        printf("stress %s: the history is full; stopped early\n", r.p.name);
    __atomic_store_n(&r.ctl->stop, 1, __ATOMIC_SEQ_CST);

    /* Drain: every worker finishes its operation (a wait without budget
     * included: leases bound it), or it hangs. */
    deadline = stress_now_us() + 30000000;
    for (i = 0; i <= r.p.procs; i++) {
        int t;
        if (r.ctl->dead[i])
            continue;
        for (t = 0; t < r.p.threads; t++) {
            while (!__atomic_load_n(&r.ctl->finished[i][t], __ATOMIC_SEQ_CST) &&
                   stress_now_us() < deadline)
                sleep_us(20000);
            if (!r.ctl->finished[i][t]) {
                int64_t cur = r.ctl->current[i][t];
                hung++;
                line[0] = '\0';
                if (cur > 0)
                    stress_ev_format(&r.hist.ev[cur - 1], r.hist.ev[0].t0_us,
                                     line, sizeof(line));
                stress_report_add(&rep, SP_HANG,
                                  "process %d thread %d still busy 30 s "
                                  "after the stop, in: %s",
                                  i, t, line);
            }
        }
    }
    if (hung) {
        /* Its threads cannot be joined, nor its clients freed: report and
         * leave (exit() still stops the servers). */
        print_stats(&r);
        printf("stress %s: seed %" PRIu64 "\n%s", r.p.name, r.seed, rep.text);
        dump_history(&r, dump != NULL ? dump : "stress-hang.log");
        fflush(stdout);
        exit(1);
    }
    proc_join(pr);
    proc_free(pr);
    for (i = 1; i <= r.p.procs; i++)
        if (!r.ctl->dead[i] && rdlt_child_wait(kids[i], 10000) != 0)
            stress_report_add(&rep, SP_HANG, "process %d exited badly", i);

    stress_params_default(&params);
    params.cmd_timeout_ms = CMD_TIMEOUT_MS;
    params.watchdog_ms = WATCHDOG_MS;
    params.fault_ms = LEASE_MAX_MS + 3000;
    params.stall_ms = (int64_t)env_u64("RDL_STRESS_STALL_MS", 250);
    params.durable = r.p.replicas != 0;
    rep.base_us = r.hist.ev[0].t0_us;
    for (i = 0; i < (int)stress_hist_len(&r.hist); i++)
        if (r.hist.ev[i].type == SE_FAULT)
            settle = r.hist.ev[i].t1_us + params.fault_ms * 1000;
    if (settle < stress_now_us() + 300000)
        settle = stress_now_us() + 300000;
    check_keys(&r, &sv, settle, &rep);
    stress_check(r.hist.ev, stress_hist_len(&r.hist), &params, &rep);
    print_stats(&r);
    if (stress_report_total(&rep) > 0) {
        char path[512];
        const char *tmp = getenv("RDL_TEST_TMPDIR");
        printf("stress %s: seed %" PRIu64 ": %u violations:", r.p.name, r.seed,
               stress_report_total(&rep));
        for (i = 0; i < SP_COUNT; i++)
            if (rep.count[i])
                printf(" %s %u", stress_prop_name(i), rep.count[i]);
        printf("\n%s", rep.text);
        snprintf(path, sizeof(path), "%s/stress-%s-%" PRIu64 ".log",
                 tmp != NULL ? tmp : ".", r.p.name, r.seed);
        dump_history(&r, dump != NULL ? dump : path);
        stress_report_free(&rep);
        fail_msg("stress %s: seed %" PRIu64 ": properties violated", r.p.name,
                 r.seed);
    }
    if (dump != NULL)
        dump_history(&r, dump);
    stress_report_free(&rep);
}

/* ---- profiles ------------------------------------------------------------------ */

#define F(x) (1u << (x))

static void test_stress_plain_fair_rw(void **state)
{
    profile p = {.name = "plain_fair_rw",
                 .seed = 1001,
                 .seconds = 25,
                 .procs = 2,
                 .threads = 3,
                 .clients = 2,
                 .names = 3,
                 .w_plain = 3,
                 .w_fair = 3,
                 .w_read = 2,
                 .w_write = 2,
                 .w_sem = 3,
                 .forever = 5};
    (void)state;
    stress_run(&p);
}

static void test_stress_multilock_redlock(void **state)
{
    profile p = {.name = "multilock_redlock",
                 .seed = 2002,
                 .seconds = 25,
                 .procs = 1,
                 .threads = 4,
                 .clients = 2,
                 .names = 4,
                 .w_plain = 1,
                 .w_fair = 1,
                 .w_read = 1,
                 .w_write = 1,
                 .w_sem = 1,
                 .w_multi = 4,
                 .w_red = 2,
                 .forever = 5};
    (void)state;
    stress_run(&p);
}

static void test_stress_faults(void **state)
{
    profile p = {.name = "faults",
                 .seed = 3003,
                 .seconds = 25,
                 .procs = 3,
                 .threads = 2,
                 .clients = 2,
                 .names = 3,
                 .w_plain = 3,
                 .w_fair = 2,
                 .w_read = 2,
                 .w_write = 2,
                 .w_sem = 2,
                 .w_multi = 1,
                 .faults = F(SF_KILLCONN) | F(SF_STOP) | F(SF_SIGKILL) |
                           F(SF_RESTART) | F(SF_DROP_REPLY) |
                           F(SF_DROP_REQUEST) | F(SF_DELAY_SUB) |
                           F(SF_DELAY_CMD) | F(SF_PROXY_RESET),
                 .proxied = 1,
                 .deck = 1};
    (void)state;
    stress_run(&p);
}

static void test_stress_cluster(void **state)
{
    profile p = {.name = "cluster",
                 .seed = 4004,
                 .seconds = 25,
                 .procs = 1,
                 .threads = 3,
                 .clients = 2,
                 .names = 4,
                 .w_plain = 3,
                 .w_fair = 2,
                 .w_read = 1,
                 .w_write = 1,
                 .w_sem = 1,
                 .w_multi = 1,
                 .faults = F(SF_KILLCONN) | F(SF_FAILOVER),
                 .cluster = 1};
    (void)state;
    stress_run(&p);
}

/* Batched async calls on clients of the workers' own loops, closed from
 * inside a callback in a third of the sessions (op_batch), beside
 * blocking calls on the same names, with connection kills. */
static void test_stress_batch_close(void **state)
{
    profile p = {.name = "batch_close",
                 .seed = 8008,
                 .seconds = 20,
                 .procs = 1,
                 .threads = 3,
                 .clients = 2,
                 .names = 3,
                 .w_plain = 2,
                 .w_fair = 1,
                 .w_sem = 1,
                 .w_batch = 4,
                 .faults = F(SF_KILLCONN)};
    (void)state;
    stress_run(&p);
}

/* A fresh seed each run, logged: new interleavings for CI to find. */
static void test_stress_random_seed(void **state)
{
    profile p = {.name = "random_seed",
                 .seed = 0,
                 .seconds = 15,
                 .procs = 1,
                 .threads = 3,
                 .clients = 2,
                 .names = 3,
                 .w_plain = 2,
                 .w_fair = 2,
                 .w_read = 1,
                 .w_write = 1,
                 .w_sem = 1,
                 .w_multi = 1,
                 .forever = 5,
                 .faults = F(SF_KILLCONN)};
    (void)state;
    stress_run(&p);
}

/* The Sentinel fixture with durable grants (every replica confirms within
 * 500 ms): replicas paused (grants fail with RDL_ENOREPLICAS meanwhile),
 * the master killed until the sentinels switch and then restarted, forced
 * failovers. A confirmed grant is on the promoted replica, so no failover
 * excuses an overlap here (stress_params.durable). */
static void test_stress_durable_sentinel(void **state)
{
    profile p = {.name = "durable_sentinel",
                 .seed = 5005,
                 .seconds = 30,
                 .procs = 1,
                 .threads = 3,
                 .clients = 2,
                 .names = 3,
                 .w_plain = 3,
                 .w_fair = 2,
                 .w_read = 2,
                 .w_write = 2,
                 .w_sem = 2,
                 .forever = 5,
                 .faults =
                     F(SF_REPLICA_PAUSE) | F(SF_MASTER_KILL) | F(SF_FAILOVER),
                 .deck = 1,
                 .sentinel = 1,
                 .replicas = RDL_REPLICAS_ALL,
                 .durable_ms = 500};
    (void)state;
    stress_run(&p);
}

/* The cluster profile with durable grants (one replica, 500 ms): CLUSTER
 * FAILOVER is coordinated, and with every grant on the replica it must
 * not excuse an overlap (stress_params.durable). */
static void test_stress_cluster_durable(void **state)
{
    profile p = {.name = "cluster_durable",
                 .seed = 7007,
                 .seconds = 25,
                 .procs = 1,
                 .threads = 3,
                 .clients = 2,
                 .names = 4,
                 .w_plain = 3,
                 .w_fair = 2,
                 .w_read = 1,
                 .w_write = 1,
                 .w_sem = 1,
                 .w_multi = 1,
                 .faults = F(SF_KILLCONN) | F(SF_FAILOVER),
                 .cluster = 1,
                 .replicas = 1,
                 .durable_ms = 500};
    (void)state;
    stress_run(&p);
}

/* plain_fair_rw over TLS (a throwaway PKI, clients trusting its CA):
 * every connection, reconnect and pub/sub through a TLS session, with
 * connection kills. */
static void test_stress_tls(void **state)
{
    profile p = {.name = "tls",
                 .seed = 6006,
                 .seconds = 20,
                 .procs = 1,
                 .threads = 3,
                 .clients = 2,
                 .names = 3,
                 .w_plain = 3,
                 .w_fair = 3,
                 .w_read = 2,
                 .w_write = 2,
                 .w_sem = 3,
                 .forever = 5,
                 .faults = F(SF_KILLCONN),
                 .tls = 1};
    (void)state;
    stress_run(&p);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_stress_plain_fair_rw),
    RDLT_TEST(test_stress_multilock_redlock),
    RDLT_TEST(test_stress_faults),
    RDLT_TEST(test_stress_cluster),
    RDLT_TEST(test_stress_batch_close),
    RDLT_TEST(test_stress_random_seed),
    RDLT_TEST(test_stress_durable_sentinel),
    RDLT_TEST(test_stress_tls),
    RDLT_TEST(test_stress_cluster_durable),
};

RDLT_MAIN(tests)
