/* The history checker (stress.h). It reads nothing but the history, so
 * test_check.c can prove it on histories made up to break one property at
 * a time.
 *
 * Two intervals per hold carry the reasoning:
 * - guaranteed [start, end): from the return of the first grant to the
 *   start of the final release (or the death of its process): the owner
 *   surely believed it held the lock then. Two owners' guaranteed
 *   intervals that intersect are two holders at once.
 * - possible [pstart, pend): when the server may have recorded the hold:
 *   from a little before the grant returned (grant_slack; from the call's
 *   start for a multilock part, taken early) to the return of the final
 *   release, longer when that release's outcome is unknown. A lock outside
 *   every possible interval was surely free, which is what the lost
 *   wake-up check looks for.
 * A semaphore hold is a stack of permits, one per granted acquisition,
 * each returned by the release of its level (the last taken the first
 * returned: the server only counts them, so any pairing gives the same
 * count). Each permit has both intervals of its own, from its own grant,
 * and the permits check counts the guaranteed ones at each grant. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rdl.h"
#include "stress.h"

#define INF INT64_MAX
#define REPORT_PER_PROP 3

void stress_params_default(stress_params *p)
{
    p->cmd_timeout_ms = 1000;
    p->slack_ms = 250;
    p->stall_ms = 250;
    p->grant_slack_ms = 100;
    p->watchdog_ms = 2000;
    p->fault_ms = 6000;
    p->durable = 0;
}

static const char *const prop_names[SP_COUNT] = {
    "overlap",       "reader-writer", "permits",        "tokens",
    "budget",        "wake-up",       "spurious-error", "unexpected-code",
    "leftover-keys", "hang",          "callback-once"};

const char *stress_prop_name(int prop)
{
    return prop >= 0 && prop < SP_COUNT ? prop_names[prop] : "?";
}

/* ---- report ------------------------------------------------------------- */

static void report_vappend(stress_report *r, const char *fmt, va_list ap)
{
    va_list ap2;
    int n;
    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;
    if (r->len + (size_t)n + 1 > r->cap) {
        size_t cap = (r->cap ? r->cap * 2 : 4096) + (size_t)n;
        char *t = realloc(r->text, cap);
        if (t == NULL)
            return;
        r->text = t;
        r->cap = cap;
    }
    vsnprintf(r->text + r->len, r->cap - r->len, fmt, ap);
    r->len += (size_t)n;
}

static void report_append(stress_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void report_append(stress_report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report_vappend(r, fmt, ap);
    va_end(ap);
}

/* Counts a violation; returns 1 if its detail should be printed. */
static int report_count(stress_report *r, int prop)
{
    return ++r->count[prop] <= REPORT_PER_PROP;
}

void stress_report_add(stress_report *r, int prop, const char *fmt, ...)
{
    va_list ap;
    if (!report_count(r, prop))
        return;
    report_append(r, "VIOLATION %s: ", stress_prop_name(prop));
    va_start(ap, fmt);
    report_vappend(r, fmt, ap);
    va_end(ap);
    report_append(r, "\n");
}

static void report_line(stress_report *r, const stress_ev *e)
{
    char line[256];
    if (e == NULL)
        return;
    stress_ev_format(e, r->base_us, line, sizeof(line));
    report_append(r, "    %s\n", line);
}

unsigned stress_report_total(const stress_report *r)
{
    unsigned t = 0;
    int i;
    for (i = 0; i < SP_COUNT; i++)
        t += r->count[i];
    return t;
}

void stress_report_free(stress_report *r)
{
    free(r->text);
    memset(r, 0, sizeof(*r));
}

/* ---- history model ----------------------------------------------------- */

typedef struct hold {
    const stress_ev *acq;      /* first acquire: granted */
    const stress_ev *last_acq; /* latest granted (re-)entry */
    const stress_ev *rel;      /* final release; NULL if none completed */
    const stress_ev *bad_rel;  /* a release that reported the hold gone */
    int64_t start, end;        /* guaranteed, us */
    int64_t pstart, pend;      /* possible, us */
    int told;                  /* the owner was told it lost the hold */
    size_t perm0, nperm;       /* a semaphore hold's permits (model.perms) */
} hold;

/* One permit of a semaphore hold. */
typedef struct permit {
    const hold *h;        /* its hold (told or not) */
    const stress_ev *acq; /* the acquisition that took it */
    const stress_ev *rel; /* the release that returned it; NULL if none */
    int64_t start, end;   /* guaranteed, us */
    int64_t pstart, pend; /* possible, us */
} permit;

typedef struct span {
    int64_t a, b;
} span;

typedef struct model {
    const stress_params *p;
    const stress_ev **faults;
    size_t nfaults;
    hold *holds;
    size_t nholds;
    span *poss; /* possibly-held intervals of failed attempts */
    const stress_ev **poss_ev;
    size_t nposs;
    permit *perms; /* semaphore holds' permits, hold by hold */
    size_t nperms;
} model;

static char family(int kind)
{
    switch (kind) {
    case SK_PLAIN:
        return 'L';
    case SK_FAIR:
        return 'F';
    case SK_READ:
    case SK_WRITE:
        return 'R';
    case SK_SEM:
        return 'S';
    default:
        return 'D';
    }
}

static int same_resource(const stress_ev *a, const stress_ev *b)
{
    return family(a->kind) == family(b->kind) &&
           strncmp(a->name, b->name, sizeof(a->name)) == 0;
}

static int unknown_outcome(int rc)
{
    return rc == RDL_ECONNLOST || rc == RDL_ECMDTIMEOUT || rc == RDL_ECLOSED;
}

/* The earliest a fixed lease granted by call `e` can end by this machine's
 * clock: Redis measures it from its own cached clock, which may run a
 * little ahead, so allow the drift the library allows (1% + 2 ms). */
static int64_t lease_end_min(const stress_ev *e)
{
    int64_t lease = e->lease_ms * 1000;
    return e->t0_us + lease - lease / 100 - 2000;
}

static int64_t lease_us(const model *m, const stress_ev *e)
{
    return (e->lease_ms > 0 ? e->lease_ms : m->p->watchdog_ms) * 1000;
}

static int delay_fault(int kind)
{
    return kind == SF_DELAY_SUB || kind == SF_DELAY_CMD;
}

/* A fault that may disturb a call of process `proc` during [a, b]: data
 * loss (restart, failover, external stages) anywhere, or a stop or kill of
 * that process (proc -1: of any process, -2: of none, and then data loss
 * only: not a replica pause, nor a failover or master kill when
 * p->durable); a replica pause, failover or master kill anywhere; with `conns`
 * 1, connection kills and proxy resets too, and reply or request drops until a
 * command timeout after them; with `conns` 2, connection kills and resets but
 * not drops. Delays are never here (delay_slack()). The fault counts from its
 * start to `after_us` past its end. */
static const stress_ev *fault_near(const model *m, int64_t a, int64_t b,
                                   int proc, int conns, int64_t after_us)
{
    size_t i;
    for (i = 0; i < m->nfaults; i++) {
        const stress_ev *f = m->faults[i];
        int64_t after = after_us;
        int hits;
        switch (f->kind) {
        case SF_KILLCONN:
        case SF_PROXY_RESET:
            hits = conns != 0;
            break;
        case SF_DROP_REPLY:
        case SF_DROP_REQUEST:
            hits = conns == 1;
            if (after > m->p->cmd_timeout_ms * 1000)
                after = m->p->cmd_timeout_ms * 1000;
            break;
        case SF_DELAY_SUB:
        case SF_DELAY_CMD:
            hits = 0;
            break;
        case SF_STOP:
        case SF_SIGKILL:
        case SF_CLOSE:
            hits = proc == -1 || f->proc == proc;
            break;
        case SF_REPLICA_PAUSE: /* like a failover, but never data loss */
            hits = proc != -2;
            break;
        case SF_FAILOVER:
        case SF_MASTER_KILL:
            /* With durable grants a failover promotes a replica that has
             * every confirmed grant: no data loss (proc -2 asks for that
             * only), but everything else a failover may disturb. */
            hits = proc != -2 || !m->p->durable;
            break;
        default:
            hits = 1;
        }
        if (hits && f->t0_us <= b && f->t1_us + after >= a)
            return f;
    }
    return NULL;
}

/* How much longer than usual a call during [a, b] may take because of
 * proxy delays: a delay of D holds back what arrives until D after its
 * end, and a wait may sit behind two delayed messages in a row (a busy
 * answer, then the grant of the retry that a release message prompted),
 * so 2 D per delay it overlaps. */
static int64_t delay_slack(const model *m, int64_t a, int64_t b)
{
    int64_t slack = 0;
    size_t i;
    for (i = 0; i < m->nfaults; i++) {
        const stress_ev *f = m->faults[i];
        int64_t d = f->wait_ms * 1000;
        if (delay_fault(f->kind) && d > 0 && f->t0_us <= b && f->t1_us + d >= a)
            slack += 2 * d;
    }
    return slack;
}

static int64_t death_of(const model *m, int proc)
{
    size_t i;
    for (i = 0; i < m->nfaults; i++)
        if ((m->faults[i]->kind == SF_SIGKILL ||
             m->faults[i]->kind == SF_CLOSE) &&
            m->faults[i]->proc == proc)
            return m->faults[i]->t0_us;
    return INF;
}

static int by_hold(const void *x, const void *y)
{
    const stress_ev *a = *(const stress_ev *const *)x;
    const stress_ev *b = *(const stress_ev *const *)y;
    if (a->hold != b->hold)
        return a->hold < b->hold ? -1 : 1;
    if (a->t0_us != b->t0_us)
        return a->t0_us < b->t0_us ? -1 : 1;
    return a->type - b->type;
}

static void add_poss(model *m, const stress_ev *e, int64_t a, int64_t b)
{
    m->poss[m->nposs].a = a;
    m->poss[m->nposs].b = b;
    m->poss_ev[m->nposs++] = e;
}

/* The permits of semaphore hold `h` (to be stored at `at`): one per
 * granted acquisition, returned by the first later release of its level.
 * A re-entry whose outcome is unknown may have taken a permit that no
 * release returns: possible until a lease after the hold's end. */
static void build_permits(model *m, hold *h, const hold *at,
                          const stress_ev **ev, size_t n)
{
    size_t i, j;
    h->perm0 = m->nperms;
    for (i = 0; i < n; i++) {
        const stress_ev *e = ev[i], *rel = NULL;
        permit *p;
        if (e->type != SE_ACQ || e->done != 2)
            continue;
        if (e->rc != 0) {
            int64_t until = h->pend > e->t1_us ? h->pend : e->t1_us;
            if (unknown_outcome(e->rc))
                add_poss(m, e, e->t0_us,
                         until == INF ? INF : until + lease_us(m, h->last_acq));
            continue;
        }
        for (j = i + 1; j < n && rel == NULL; j++)
            if (ev[j]->type == SE_REL && ev[j]->level == e->level &&
                ev[j]->t0_us >= e->t1_us)
                rel = ev[j];
        p = &m->perms[m->nperms++];
        p->h = at;
        p->acq = e;
        p->rel = rel;
        p->start = e->t1_us;
        p->pstart =
            e->multi > 0 ? e->t0_us : e->t1_us - m->p->grant_slack_ms * 1000;
        if (p->pstart < e->t0_us)
            p->pstart = e->t0_us;
        if (rel != NULL) {
            p->end = rel->t0_us;
            p->pend = rel->done == 2 ? rel->t1_us : INF;
            if (rel->done == 2 && unknown_outcome(rel->rc))
                p->pend = rel->t1_us + lease_us(m, h->last_acq);
        } else {
            p->end = death_of(m, e->proc);
            p->pend = INF;
        }
    }
    h->nperm = m->nperms - h->perm0;
}

/* Builds one hold (or failed attempt) from the events of one hold id. */
static void build_hold(model *m, const stress_ev **ev, size_t n,
                       stress_report *r)
{
    const stress_ev *a0 = ev[0];
    hold h;
    size_t i;

    if (a0->type != SE_ACQ)
        return; /* a release without its acquire: the history is cut */
    if (a0->done != 2) {
        add_poss(m, a0, a0->t0_us, INF);
        return;
    }
    if (a0->rc != 0) {
        if (a0->multi > 0)
            add_poss(m, a0, a0->t0_us, a0->t1_us);
        if (unknown_outcome(a0->rc))
            add_poss(m, a0, a0->t0_us, a0->t1_us + lease_us(m, a0));
        return;
    }
    memset(&h, 0, sizeof(h));
    h.acq = h.last_acq = a0;
    for (i = 1; i < n; i++) {
        const stress_ev *e = ev[i];
        if (e->type == SE_ACQ && e->done == 2 && e->rc == 0) {
            h.last_acq = e;
            /* A semaphore's re-entry takes a permit with a token of its
             * own (check_tokens orders it). */
            if (e->kind != SK_SEM && e->token != a0->token &&
                report_count(r, SP_TOKENS)) {
                report_append(r, "VIOLATION tokens: re-entry changed the "
                                 "token\n");
                report_line(r, a0);
                report_line(r, e);
            }
        } else if (e->type == SE_REL) {
            if (e->done == 2 &&
                (e->rc == RDL_ELOST || e->rc == RDL_ENOTHELD || e->lost > 0)) {
                h.told = 1;
                if (h.bad_rel == NULL)
                    h.bad_rel = e;
            }
            if (e->level <= 1)
                h.rel = e;
        }
    }
    h.start = a0->t1_us;
    h.pstart =
        a0->multi > 0 ? a0->t0_us : a0->t1_us - m->p->grant_slack_ms * 1000;
    if (h.pstart < a0->t0_us)
        h.pstart = a0->t0_us;
    if (h.rel != NULL) {
        h.end = h.rel->t0_us;
        h.pend = h.rel->done == 2 ? h.rel->t1_us : INF;
        if (h.rel->done == 2 && unknown_outcome(h.rel->rc))
            h.pend = h.rel->t1_us + lease_us(m, h.last_acq);
    } else {
        h.end = death_of(m, a0->proc);
        h.pend = INF;
    }
    if (a0->kind == SK_SEM)
        build_permits(m, &h, &m->holds[m->nholds], ev, n);
    m->holds[m->nholds++] = h;
}

/* ---- properties ---------------------------------------------------------- */

static int exclusive(const hold *h)
{
    return h->acq->kind != SK_READ && h->acq->kind != SK_SEM;
}

/* Whether `a`, granted first, may have lost the lock before `b` was
 * granted, and knows it (or was killed before it could): its lease could
 * have run out by then, or a fault wiped the server. Or whether `b`, told, was
 * granted on a server that lost its data before `a` was granted: a multilock
 * part taken before a restart, while the multilock went on waiting for its
 * other parts, returns after `a`'s grant, and no client can tell before its
 * release. */
static int excused_grant(const model *m, const hold *a, const stress_ev *ag,
                         const stress_ev *alease, const stress_ev *arel,
                         const hold *b, const stress_ev *bg)
{
    int64_t grant = bg->t1_us;
    /* A holder killed (SIGKILL) before it released can never be told; its
     * hold ended with its lease like any other, so it counts as told. */
    int gone = arel == NULL && death_of(m, ag->proc) != INF;
    if (b->told && fault_near(m, bg->t0_us, ag->t1_us, -2, 0, 0) != NULL)
        return 1;
    if (!a->told && !gone)
        return 0;
    if (alease->lease_ms < 0)
        return 1;
    if (lease_end_min(alease) <= grant)
        return 1;
    return fault_near(m, ag->t0_us, grant, -2, 0, 0) != NULL;
}

/* Holds of exclusive kinds: a hold is its first grant, its lease the
 * latest re-entry's (re-entries extend it). */
static int excused(const model *m, const hold *a, const hold *b)
{
    return excused_grant(m, a, a->acq, a->last_acq, a->rel, b, b->acq);
}

/* Permits: `a`, certainly held when `b` was granted, may have been gone
 * by then, as for an exclusive hold. Its own acquisition bounds its lease
 * from below (the owner's permits share one lease, which an acquisition
 * only extends, or starts afresh if the lease had ended), and only a data
 * loss after that acquisition began can have wiped it. */
static int permit_excused(const model *m, const permit *a, const permit *b)
{
    return excused_grant(m, a->h, a->acq, a->acq, a->rel, b->h, b->acq);
}

static int by_start(const void *x, const void *y)
{
    const hold *a = *(const hold *const *)x, *b = *(const hold *const *)y;
    int c = family(a->acq->kind) - family(b->acq->kind);
    if (c == 0)
        c = strncmp(a->acq->name, b->acq->name, sizeof(a->acq->name));
    if (c == 0 && a->start != b->start)
        c = a->start < b->start ? -1 : 1;
    return c;
}

static void check_overlap(model *m, hold **hs, size_t n, stress_report *r)
{
    size_t i, j;
    for (i = 0; i < n; i++) {
        for (j = i + 1; j < n && hs[j]->start < hs[i]->end; j++) {
            hold *a = hs[i], *b = hs[j];
            int prop;
            if (!exclusive(a) && !exclusive(b))
                continue;
            if (b->start >= a->end || b->end <= a->start)
                continue;
            /* Only the earlier grant can have lost the lock to the later
             * one: a grant that returns while another owner surely holds
             * the lock is wrong even if its own lease then ran out (a
             * multilock whose first part expired while it waited for the
             * last). */
            if (excused(m, a, b))
                continue;
            prop = exclusive(a) && exclusive(b) ? SP_OVERLAP : SP_RW;
            if (!report_count(r, prop))
                continue;
            report_append(
                r,
                "VIOLATION %s: %c:%s held by owners %d and %d "
                "at once for %lld ms\n",
                stress_prop_name(prop), family(a->acq->kind), a->acq->name,
                a->acq->owner, b->acq->owner,
                (long long)(((a->end < b->end ? a->end : b->end) - b->start) /
                            1000));
            report_line(r, a->acq);
            report_line(r, a->rel);
            report_line(r, b->acq);
            report_line(r, b->rel);
        }
    }
}

static int by_permit_start(const void *x, const void *y)
{
    const permit *a = *(const permit *const *)x, *b = *(const permit *const *)y;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return 0;
}

/* The permits of the semaphore holds hs[0..n) (one resource) into `ps`,
 * by guaranteed start; returns how many. */
static size_t sem_permits(const model *m, hold **hs, size_t n, permit **ps)
{
    size_t i, k, np = 0;
    for (i = 0; i < n; i++)
        for (k = 0; k < hs[i]->nperm; k++)
            ps[np++] = &m->perms[hs[i]->perm0 + k];
    qsort(ps, np, sizeof(*ps), by_permit_start);
    return np;
}

static int sem_total(const stress_ev *e)
{
    return e->permits > 0 ? e->permits : 1;
}

/* A semaphore's permits ps[0..n) (one name, by start): at each grant, the
 * permits certainly held then (their guaranteed intervals), less those
 * that may have been gone by then (permit_excused), number at most the
 * total, the one granted included. Only grants need looking at: the
 * count of intervals is largest at a start. */
static void check_permits(const model *m, permit **ps, size_t n,
                          stress_report *r)
{
    permit **act = malloc((n + 1) * sizeof(*act));
    permit **held = malloc((n + 1) * sizeof(*held));
    size_t i, j, k, x, na = 0;
    if (act == NULL || held == NULL) {
        free(act);
        free(held);
        return;
    }
    for (i = 0; i < n; i = j) {
        int64_t t = ps[i]->start;
        for (k = 0; k < na;) /* the permits no longer certainly held */
            if (act[k]->end <= t)
                act[k] = act[--na];
            else
                k++;
        for (j = i; j < n && ps[j]->start == t; j++)
            if (ps[j]->end > t)
                act[na++] = ps[j];
        for (k = i; k < j; k++) {
            const permit *b = ps[k];
            int total = sem_total(b->acq);
            size_t nh = 0;
            char owners[160];
            size_t off = 0;
            if (b->end <= t)
                continue;
            held[nh++] = ps[k];
            for (x = 0; x < na; x++)
                if (act[x] != b && !permit_excused(m, act[x], b))
                    held[nh++] = act[x];
            if (nh <= (size_t)total || !report_count(r, SP_PERMITS))
                continue;
            owners[0] = '\0';
            for (x = 0; x < nh && off + 16 < sizeof(owners); x++)
                off +=
                    (size_t)snprintf(owners + off, sizeof(owners) - off, "%s%d",
                                     x > 0 ? ", " : "", held[x]->acq->owner);
            report_append(r,
                          "VIOLATION permits: S:%s has %d permits, %zu held "
                          "at once at +%lld ms (owners %s)\n",
                          b->acq->name, total, nh,
                          (long long)((t - r->base_us) / 1000), owners);
            for (x = 0; x < nh; x++) {
                report_line(r, held[x]->acq);
                report_line(r, held[x]->rel);
            }
        }
    }
    free(act);
    free(held);
}

static int by_grant(const void *x, const void *y)
{
    const stress_ev *a = *(const stress_ev *const *)x,
                    *b = *(const stress_ev *const *)y;
    if (a->t1_us != b->t1_us)
        return a->t1_us < b->t1_us ? -1 : 1;
    return 0;
}

/* Grants of one resource: a grant that surely came after another (its
 * call started after the other returned) has a larger token. The grants
 * are the first of each exclusive hold, and every acquisition of a
 * semaphore (each takes a permit with a token of its own). */
/* With durable grants, a release is not waited for: one made on the old
 * master while a failover promotes a replica is lost, the hold comes back
 * on the new master until its lease ends, and its owner's next
 * acquisition re-enters it with its old token (the README's "Durable
 * acquisitions", its limits). So `e` may repeat `p`'s token, never go
 * below it, if it is the same owner's on the same resource and a failover
 * or master kill (until fault_ms after it) lies between their calls. */
static int resurrected(const model *m, const stress_ev *p, const stress_ev *e)
{
    size_t i;
    if (!m->p->durable || p->token != e->token || p->owner != e->owner ||
        !same_resource(p, e))
        return 0;
    for (i = 0; i < m->nfaults; i++) {
        const stress_ev *f = m->faults[i];
        if ((f->kind == SF_FAILOVER || f->kind == SF_MASTER_KILL) &&
            f->t0_us <= e->t0_us &&
            f->t1_us + m->p->fault_ms * 1000 >= p->t0_us)
            return 1;
    }
    return 0;
}

static void check_tokens(const model *m, hold **hs, size_t n, stress_report *r)
{
    size_t i, k, nx = 0, cap = 0, *best;
    const stress_ev **x;
    for (i = 0; i < n; i++)
        cap += hs[i]->acq->kind == SK_SEM ? hs[i]->nperm : 1;
    x = malloc((cap + 1) * sizeof(*x));
    if (x == NULL)
        return;
    for (i = 0; i < n; i++) {
        if (hs[i]->acq->kind == SK_SEM)
            for (k = 0; k < hs[i]->nperm; k++)
                x[nx++] = m->perms[hs[i]->perm0 + k].acq;
        else if (exclusive(hs[i]))
            x[nx++] = hs[i]->acq;
    }
    qsort(x, nx, sizeof(*x), by_grant);
    best = malloc((nx + 1) * sizeof(*best));
    if (best == NULL) {
        free(x);
        return;
    }
    for (i = 0; i < nx; i++) {
        best[i] = i;
        if (i > 0 && x[best[i - 1]]->token >= x[i]->token)
            best[i] = best[i - 1];
    }
    for (i = 0; i < nx; i++) {
        size_t lo = 0, hi = i; /* first index whose grant is not before */
        const stress_ev *e = x[i], *p;
        if (e->token == 0 && report_count(r, SP_TOKENS)) {
            report_append(r, "VIOLATION tokens: a grant without a token\n");
            report_line(r, e);
        }
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (x[mid]->t1_us < e->t0_us)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == 0)
            continue;
        p = x[best[lo - 1]];
        if (p->token >= e->token && !resurrected(m, p, e) &&
            report_count(r, SP_TOKENS)) {
            report_append(r,
                          "VIOLATION tokens: %c:%s granted with token %llu "
                          "after token %llu\n",
                          family(e->kind), e->name,
                          (unsigned long long)e->token,
                          (unsigned long long)p->token);
            report_line(r, p);
            report_line(r, e);
        }
    }
    free(best);
    free(x);
}

static int by_a(const void *x, const void *y)
{
    const span *a = x, *b = y;
    return a->a < b->a ? -1 : a->a > b->a;
}

typedef struct edge {
    int64_t t;
    int d; /* +1 a span starts, -1 one ends */
} edge;

static int by_edge(const void *x, const void *y)
{
    const edge *a = x, *b = y;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return b->d - a->d; /* starts first: touching spans join */
}

/* Replaces the spans s[0..ns) (sorted by start) with the disjoint spans
 * in which at least `need` of them overlap; returns how many. For need 1,
 * their union. */
static size_t busy_spans(span *s, size_t ns, int need)
{
    size_t i, k;
    int cnt = 0;
    int64_t open = 0;
    edge *e;
    if (need <= 1) {
        for (i = 0, k = 0; i < ns; i++) {
            if (k > 0 && s[i].a <= s[k - 1].b) {
                if (s[i].b > s[k - 1].b)
                    s[k - 1].b = s[i].b;
            } else {
                s[k++] = s[i];
            }
        }
        return k;
    }
    e = malloc((2 * ns + 1) * sizeof(*e));
    if (e == NULL) { /* as if always busy: nothing judged */
        s[0].a = INT64_MIN;
        s[0].b = INF;
        return 1;
    }
    for (i = 0, k = 0; i < ns; i++) {
        if (s[i].b <= s[i].a)
            continue;
        e[k].t = s[i].a;
        e[k++].d = 1;
        e[k].t = s[i].b;
        e[k++].d = -1;
    }
    qsort(e, k, sizeof(*e), by_edge);
    ns = 0;
    for (i = 0; i < k; i++) {
        int before = cnt;
        cnt += e[i].d;
        if (before < need && cnt >= need)
            open = e[i].t;
        else if (before >= need && cnt < need) {
            s[ns].a = open;
            s[ns++].b = e[i].t;
        }
    }
    free(e);
    return ns;
}

/* Lost wake-ups on one resource: a waiter that slept longer than stall_ms
 * while the lock was surely free (outside every possible interval); for a
 * semaphore (ps: its permits), while fewer possible permits than its
 * total were held. */
static void check_wakeups(model *m, hold **hs, size_t n, permit **ps, size_t np,
                          const stress_ev *const *waits, size_t nw,
                          stress_report *r)
{
    size_t i, k, ns = 0;
    span *s = malloc(((ps != NULL ? np : n) + m->nposs + 1) * sizeof(*s));
    int64_t stall = m->p->stall_ms * 1000;
    int need = ps != NULL ? sem_total(hs[0]->acq) : 1;
    if (s == NULL || n == 0) {
        free(s);
        return;
    }
    if (ps != NULL) {
        for (i = 0; i < np; i++) {
            s[ns].a = ps[i]->pstart;
            s[ns++].b = ps[i]->pend;
        }
    } else {
        for (i = 0; i < n; i++) {
            s[ns].a = hs[i]->pstart;
            s[ns++].b = hs[i]->pend;
        }
    }
    for (i = 0; i < m->nposs; i++)
        if (same_resource(m->poss_ev[i], hs[0]->acq))
            s[ns++] = m->poss[i];
    qsort(s, ns, sizeof(*s), by_a);
    /* Merge into disjoint spans. */
    ns = busy_spans(s, ns, need);
    for (i = 0; i < nw; i++) {
        const stress_ev *w = waits[i];
        int64_t from = w->t0_us, to = w->t1_us - m->p->grant_slack_ms * 1000;
        int64_t cur = from, gap_a = 0, gap_b = 0;
        size_t lo = 0, hi = ns;
        int64_t limit = stall + delay_slack(m, from, w->t1_us);
        if (to - from <= limit)
            continue;
        if (fault_near(m, from, to, -1, 1, m->p->fault_ms * 1000))
            continue;
        while (lo < hi) { /* first span ending after `from` */
            size_t mid = (lo + hi) / 2;
            if (s[mid].b <= from)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (k = lo; k < ns && cur < to; k++) {
            if (s[k].a > cur && s[k].a - cur > gap_b - gap_a) {
                gap_a = cur;
                gap_b = s[k].a < to ? s[k].a : to;
            }
            if (s[k].b > cur)
                cur = s[k].b;
        }
        if (cur < to && to - cur > gap_b - gap_a) {
            gap_a = cur;
            gap_b = to;
        }
        if (gap_b - gap_a > limit && report_count(r, SP_WAKEUP)) {
            report_append(r,
                          "VIOLATION wake-up: owner %d waited %lld ms for "
                          "%c:%s, which %s for %lld ms of it "
                          "(+%lld..+%lld ms)\n",
                          w->owner, (long long)((w->t1_us - w->t0_us) / 1000),
                          family(w->kind), w->name,
                          ps != NULL ? "had a free permit" : "was free",
                          (long long)((gap_b - gap_a) / 1000),
                          (long long)((gap_a - r->base_us) / 1000),
                          (long long)((gap_b - r->base_us) / 1000));
            report_line(r, w);
            /* The holds (permits) that end and start the free span. */
            for (k = 0; ps != NULL && k < np; k++)
                if (ps[k]->pend == gap_a || ps[k]->pstart == gap_b) {
                    report_line(r, ps[k]->acq);
                    report_line(r, ps[k]->rel);
                }
            for (k = 0; ps == NULL && k < n; k++)
                if (hs[k]->pend == gap_a || hs[k]->pstart == gap_b) {
                    report_line(r, hs[k]->acq);
                    report_line(r, hs[k]->rel);
                }
        }
    }
    free(s);
}

/* Per-call checks: budgets and result codes. */
static void check_calls(model *m, const stress_ev *const *ev, size_t n,
                        stress_report *r)
{
    size_t i;
    for (i = 0; i < n; i++) {
        const stress_ev *e = ev[i];
        int64_t cmd = m->p->cmd_timeout_ms * 1000;
        int first_part = e->multi == 0 || e->hold % 4 == 0;
        int ok;
        if (e->done == 2 && e->calls > 1 && report_count(r, SP_ONCE)) {
            report_append(r,
                          "VIOLATION callback-once: the call returned %d "
                          "times\n",
                          e->calls);
            report_line(r, e);
        }
        if (e->done != 2 || !first_part)
            continue;
        if (e->type == SE_ACQ && e->wait_ms >= 0 &&
            e->t1_us - e->t0_us >
                (e->wait_ms + m->p->cmd_timeout_ms + m->p->slack_ms) * 1000 +
                    delay_slack(m, e->t0_us, e->t1_us) &&
            !fault_near(m, e->t0_us, e->t1_us, e->proc, 0, 0) &&
            report_count(r, SP_BUDGET)) {
            report_append(r,
                          "VIOLATION budget: a call with a %lld ms budget "
                          "took %lld ms\n",
                          (long long)e->wait_ms,
                          (long long)((e->t1_us - e->t0_us) / 1000));
            report_line(r, e);
        }
        if (e->type == SE_ACQ)
            ok = e->rc == 0 || e->rc == RDL_EBUSY || e->rc == RDL_ETIMEDOUT ||
                 (e->kind == SK_RED && e->rc == RDL_ENOQUORUM);
        else
            ok = e->rc == 0 || e->rc == RDL_ELOST || e->rc == RDL_ENOTHELD;
        /* A dropped reply or request excuses nothing but an unknown
         * outcome, once the retries failed too. */
        if (!ok &&
            !fault_near(m, e->t0_us, e->t1_us, e->proc,
                        unknown_outcome(e->rc) ? 1 : 2,
                        cmd + m->p->fault_ms * 1000) &&
            report_count(r, SP_UNEXPECTED)) {
            report_append(r, "VIOLATION unexpected-code: %s\n",
                          rdl_err_name(e->rc));
            report_line(r, e);
        }
    }
}

/* A hold reported lost (release RDL_ELOST/RDL_ENOTHELD, lost callback)
 * although its lease still ran and no fault could have ended it. */
static void check_spurious(model *m, stress_report *r)
{
    size_t i;
    for (i = 0; i < m->nholds; i++) {
        const hold *h = &m->holds[i];
        const stress_ev *e = h->bad_rel;
        if (e == NULL || (e->multi > 0 && e->hold % 4 != 0))
            continue;
        if (h->last_acq->lease_ms > 0 && e->t1_us >= lease_end_min(h->last_acq))
            continue;
        if (fault_near(m, h->acq->t0_us, e->t1_us, e->proc, 0,
                       m->p->fault_ms * 1000))
            continue;
        if (!report_count(r, SP_SPURIOUS))
            continue;
        report_append(r,
                      "VIOLATION spurious-error: release said %s%s %lld ms "
                      "into a %s lease\n",
                      rdl_err_name(e->rc),
                      e->lost > 0 ? " (lost callback ran)" : "",
                      (long long)((e->t1_us - h->last_acq->t0_us) / 1000),
                      h->last_acq->lease_ms < 0 ? "auto" : "fixed");
        report_line(r, h->acq);
        if (h->last_acq != h->acq)
            report_line(r, h->last_acq);
        report_line(r, e);
    }
}

unsigned stress_check(const stress_ev *ev, size_t n, const stress_params *p,
                      stress_report *r)
{
    model m;
    const stress_ev **calls = calloc(n + 1, sizeof(*calls));
    const stress_ev **waits = calloc(n + 1, sizeof(*waits));
    hold **hs = calloc(n + 1, sizeof(*hs));
    permit **ps = calloc(n + 1, sizeof(*ps));
    size_t i, j, nc = 0, nw, np;

    memset(&m, 0, sizeof(m));
    m.p = p;
    m.faults = calloc(n + 1, sizeof(*m.faults));
    m.holds = calloc(n + 1, sizeof(*m.holds));
    m.poss = calloc(n + 1, sizeof(*m.poss));
    m.poss_ev = calloc(n + 1, sizeof(*m.poss_ev));
    m.perms = calloc(n + 1, sizeof(*m.perms));
    if (!calls || !waits || !hs || !ps || !m.faults || !m.holds || !m.poss ||
        !m.poss_ev || !m.perms) {
        stress_report_add(r, SP_HANG, "checker out of memory");
        goto out;
    }
    if (r->base_us == 0 && n > 0)
        r->base_us = ev[0].t0_us;
    for (i = 0; i < n; i++) {
        const stress_ev *e = &ev[i];
        if (e->done == 0)
            continue;
        if (e->type == SE_FAULT)
            m.faults[m.nfaults++] = e;
        else if (e->type == SE_ACQ || e->type == SE_REL)
            calls[nc++] = e;
    }
    qsort(calls, nc, sizeof(*calls), by_hold);
    for (i = 0; i < nc; i = j) {
        for (j = i + 1; j < nc && calls[j]->hold == calls[i]->hold; j++)
            ;
        build_hold(&m, calls + i, j - i, r);
    }
    check_calls(&m, calls, nc, r);
    check_spurious(&m, r);

    for (i = 0; i < m.nholds; i++)
        hs[i] = &m.holds[i];
    qsort(hs, m.nholds, sizeof(*hs), by_start);
    for (i = 0; i < m.nholds; i = j) {
        for (j = i + 1; j < m.nholds && same_resource(hs[j]->acq, hs[i]->acq);
             j++)
            ;
        np = 0;
        if (hs[i]->acq->kind == SK_SEM) {
            np = sem_permits(&m, hs + i, j - i, ps);
            check_permits(&m, ps, np, r);
        } else {
            check_overlap(&m, hs + i, j - i, r);
        }
        check_tokens(&m, hs + i, j - i, r);
        /* The waits for this resource: first tries of plain, fair, rw
         * locks and semaphores (a multilock or redlock waits on
         * several). */
        nw = 0;
        for (size_t k = 0; k < nc; k++) {
            const stress_ev *e = calls[k];
            if (e->type == SE_ACQ && e->done == 2 && e->multi == 0 &&
                e->kind != SK_RED && e->level <= 1 &&
                (e->rc == 0 || e->rc == RDL_ETIMEDOUT) &&
                same_resource(e, hs[i]->acq))
                waits[nw++] = e;
        }
        check_wakeups(&m, hs + i, j - i, hs[i]->acq->kind == SK_SEM ? ps : NULL,
                      np, waits, nw, r);
    }
out:
    free(calls);
    free(waits);
    free(hs);
    free(ps);
    free(m.faults);
    free(m.holds);
    free(m.poss);
    free(m.poss_ev);
    free(m.perms);
    return stress_report_total(r);
}
