/* MultiLock (all parts or none) and RedLock (a majority of independent
 * deployments), built from other locks through the public lock calls only,
 * so every kind can be a part and parts may live on several clients.
 *
 * MultiLock takes its parts in one canonical order (kind, key, server), the
 * same in every process, waiting on each with what is left of the budget.
 * Two multilocks over overlapping sets then never wait on each other in a
 * cycle, so they cannot deadlock; a part that cannot be had in time makes
 * the call give back what it took.
 *
 * The grant rule: a composite is reported acquired only when every part is
 * held at that moment with at least half of the lease left (RDL__MULTI_KEEP;
 * auto leases are kept by the watchdog). Parts taken first run down their
 * fixed lease while a later part is waited for, so that wait is capped at
 * what keeps the earlier parts valid; when the cap (not the budget) ends
 * it, every part is given back and the acquisition starts over. A check of
 * every part's validity after the last one closes the remaining gap.
 *
 * RedLock tries every part once per round (the Redlock algorithm): it holds
 * the lock when a majority granted it and the time spent leaves some of the
 * lease (less a drift allowance); otherwise it releases what it got at
 * once, sleeps a random while and tries again until the budget is spent.
 *
 * A composite is a lock kind of its own: it implements the lock layer's
 * operations table on the public calls of its parts plus the extension
 * interface (lock/lock_ext.h), and sees nothing else of that layer.
 *
 * Blocking calls only: a composite spans clients, hence loops, so its async
 * calls return RDL_ENOTSUP. All calls run on the caller's thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>
#include <uv.h>

#include "core/alloc.h"
#include "core/clock.h"
#include "lock/lock_ext.h"

/* At most this many parts (a part's membership is a bit of a mask). */
#define MULTI_MAX 64

/* A composite with a fixed lease is granted only while every part has at
 * least this much of it left ("The grant rule" above). */
#define MULTI_KEEP(lease_ms) ((lease_ms) / 2)

/* What the composite knows of one owner's hold. */
typedef struct mstate {
    rdl_owner_t owner;
    uint64_t mask;  /* parts held */
    uint32_t count; /* levels: a composite is reentrant as its parts are */
    int lost;       /* reported lost */
    int drained;    /* lost, and every level of its parts was given back */
} mstate;

typedef struct rdl__multi {
    int redlock;
    int one_call;     /* plain locks of one slot on one client: one script */
    size_t n, quorum; /* quorum: n for a multilock, n/2+1 for a redlock */
    rdl_lock_t **parts;
    uv_mutex_t mu;  /* guards the owners' states */
    mstate *owners; /* guarded by mu */
    size_t nowners, cap;
} rdl__multi;

static rdl__multi *multi_of(const rdl_lock_t *ml)
{
    return rdl__lock_impl(ml);
}

/* ---- owner state (composite mutex held) ----------------------------------- */

static mstate *find_state(rdl__multi *m, rdl_owner_t owner)
{
    size_t i;
    for (i = 0; i < m->nowners; i++)
        if (m->owners[i].owner == owner)
            return &m->owners[i];
    return NULL;
}

static int64_t min_valid(const rdl__multi *m, rdl_owner_t owner, uint64_t mask);

/* Records one more level of the owner's hold of the parts in mask, if
 * every one of them is still valid for at least keep_ms (see "The grant
 * rule"); returns 1 if recorded. The check and the record are one step
 * under the composite's mutex: a part lost before it fails the check, and
 * one lost after it finds the state in on_part_lost() and is reported. */
static int grant(rdl_lock_t *ml, rdl_owner_t owner, uint64_t mask,
                 int64_t keep_ms)
{
    rdl__multi *m = multi_of(ml);
    mstate *s;
    uv_mutex_lock(&m->mu);
    if (min_valid(m, owner, mask) < keep_ms) {
        uv_mutex_unlock(&m->mu);
        return 0;
    }
    s = find_state(m, owner);
    if (s == NULL && m->nowners == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 2;
        mstate *grown = rdl__realloc(m->owners, cap * sizeof(*grown));
        if (grown != NULL) {
            m->owners = grown;
            m->cap = cap;
        }
    }
    if (s == NULL && m->nowners < m->cap) {
        s = &m->owners[m->nowners++];
        s->owner = owner;
        s->count = 0;
    }
    if (s != NULL) {
        if (s->lost) /* a new hold after a lost one */
            s->count = 0;
        s->mask = s->count > 0 ? s->mask | mask : mask;
        s->count++;
        s->lost = 0;
        s->drained = 0;
    }
    uv_mutex_unlock(&m->mu);
    return 1;
}

/* Drops one level of the owner's hold; returns the parts to release and
 * how many levels of each (*levels), and whether the hold was lost. The
 * first release after a loss gives back every level of the parts that
 * survived (none may stay held, let alone renewed, by a composite that is
 * gone); it and every later release, one per level taken, report the
 * loss. A state that is not found gives mask 0 and *lost 0. */
static uint64_t take_state(rdl_lock_t *ml, rdl_owner_t owner, int *lost,
                           uint32_t *levels)
{
    rdl__multi *m = multi_of(ml);
    mstate *s;
    uint64_t mask = 0;
    *lost = 0;
    *levels = 1;
    uv_mutex_lock(&m->mu);
    s = find_state(m, owner);
    if (s != NULL) {
        *lost = s->lost;
        if (!s->lost) {
            mask = s->mask;
        } else if (!s->drained) {
            mask = s->mask;
            *levels = s->count;
            s->drained = 1;
        }
        if (--s->count == 0)
            *s = m->owners[--m->nowners];
    }
    uv_mutex_unlock(&m->mu);
    return mask;
}

static size_t popcount(uint64_t v)
{
    size_t n = 0;
    for (; v != 0; v &= v - 1)
        n++;
    return n;
}

/* A part's lost callback (the part's loop thread): the composite is lost
 * once fewer than its quorum of parts remain. */
static void on_part_lost(rdl_lock_t *part, rdl_owner_t owner, int reason,
                         void *data)
{
    rdl_lock_t *ml = data;
    rdl__multi *m = multi_of(ml);
    int report = 0;
    mstate *s;
    size_t i;

    uv_mutex_lock(&m->mu);
    s = find_state(m, owner);
    for (i = 0; s != NULL && i < m->n; i++) {
        if (m->parts[i] != part || !(s->mask & ((uint64_t)1 << i)))
            continue;
        s->mask &= ~((uint64_t)1 << i);
        if (!s->lost && popcount(s->mask) < m->quorum) {
            s->lost = 1;
            report = 1;
        }
    }
    uv_mutex_unlock(&m->mu);
    if (report)
        rdl__lock_report_lost(ml, owner, reason);
}

/* ---- messages --------------------------------------------------------------- */

/* Sets the detail of a composite's failure, for rdl_client_errmsg() of its
 * client: the first part's, as given to the constructor. (The detail is
 * kept per thread for one client at a time.) */
static void say(rdl_lock_t *ml, const char *text)
{
    rdl__lock_say(ml, "%s", text);
}

/* ---- acquire ----------------------------------------------------------------- */

static void release_mask(rdl__multi *m, rdl_owner_t owner, uint64_t mask)
{
    size_t i = m->n;
    while (i-- > 0)
        if (mask & ((uint64_t)1 << i)) {
            /* A part that cannot be released ends with its lease. */
            int rc = rdl_lock_release_as(m->parts[i], owner);
            (void)rc;
        }
}

/* The least validity (rdl_lock_valid_ms) of the parts in mask. */
static int64_t min_valid(const rdl__multi *m, rdl_owner_t owner, uint64_t mask)
{
    int64_t least = INT64_MAX, v;
    size_t i;
    for (i = 0; i < m->n; i++)
        if ((mask & ((uint64_t)1 << i)) &&
            (v = rdl_lock_valid_ms(m->parts[i], owner)) < least)
            least = v;
    return least;
}

/* A wait that ended without the lock: with budget given, RDL_ETIMEDOUT
 * (a one-try part answers RDL_EBUSY when the budget is down to 0). */
static int wait_failed(uint64_t deadline, int rc)
{
    return rc == RDL_EBUSY && deadline != 0 ? RDL_ETIMEDOUT : rc;
}

static int multi_take(rdl_lock_t *ml, rdl_owner_t owner, uint64_t deadline,
                      int64_t lease_ms)
{
    rdl__multi *m = multi_of(ml);
    int fixed = lease_ms != RDL_LEASE_AUTO;
    /* Auto leases are kept by the watchdog: still held is enough. */
    int64_t keep = fixed ? MULTI_KEEP(lease_ms) : 1;
    size_t i;
    char text[512];

    for (;;) {
        uint64_t mask = 0;
        int rc = 0, capped = 0;
        for (i = 0; i < m->n; i++) {
            /* deadline 0 (one try) leaves 0 */
            int64_t wait = rdl__left_of(deadline, rdl__now_ms()), room;
            int by_lease = 0;
            if (fixed && mask != 0) {
                /* How long the parts held can wait and keep `keep`. */
                room = min_valid(m, owner, mask) - keep;
                if (room <= 0) {
                    rc = RDL_ETIMEDOUT;
                    capped = 1;
                    break;
                }
                if (wait != 0 && (wait == RDL_WAIT_FOREVER || room < wait)) {
                    wait = room;
                    by_lease = 1;
                }
            }
            rc = rdl_lock_acquire_as(m->parts[i], owner, wait, lease_ms);
            if (rc != 0) {
                capped = by_lease && (rc == RDL_ETIMEDOUT || rc == RDL_EBUSY);
                break;
            }
            mask |= (uint64_t)1 << i;
        }
        if (rc == 0) {
            if (grant(ml, owner, mask, keep))
                return 0;
            /* The last part came too late for the first, or a part was
             * lost meanwhile (a restart, a failover). */
            capped = 1;
        }
        release_mask(m, owner, mask);
        if (capped && deadline != 0 &&
            rdl__left_of(deadline, rdl__now_ms()) != 0) {
            /* Start over, holding nothing, after a short random pause: a
             * lease too short for the round trips would otherwise spin. */
            uv_sleep(1 + randombytes_uniform(10));
            continue;
        }
        rc = capped ? (deadline == 0 ? RDL_EBUSY : RDL_ETIMEDOUT)
                    : wait_failed(deadline, rc);
        snprintf(text, sizeof(text),
                 "multilock: part %zu (\"%.200s\") not acquired: %s; the "
                 "parts taken before it were released",
                 i < m->n ? i : m->n - 1,
                 rdl_lock_name(m->parts[i < m->n ? i : m->n - 1]),
                 rdl_err_name(rc));
        say(ml, text);
        return rc;
    }
}

/* ---- the one-call path ---------------------------------------------------- */

/* Takes every part in one script call. While a part is held elsewhere,
 * waits for that part alone (pub/sub, as any waiter), then tries the whole
 * set again with that part re-entered, and gives the extra level back. */
static int one_call_take(rdl_lock_t *ml, rdl_owner_t owner, uint64_t deadline,
                         int64_t lease_ms)
{
    rdl__multi *m = multi_of(ml);
    rdl_lock_t *waited = NULL;
    char text[512];
    int rc;

    for (;;) {
        size_t busy = 0;
        rc = rdl__lock_set_acquire(m->parts, m->n, owner, lease_ms, &busy);
        if (rc == 0) {
            if (waited != NULL) {
                int rrc = rdl_lock_release_as(waited, owner);
                (void)rrc; /* one level too many: it ends with its lease */
                waited = NULL;
            }
            uint64_t all = m->n == 64 ? UINT64_MAX : ((uint64_t)1 << m->n) - 1;
            if (grant(ml, owner, all, 1))
                return 0;
            /* A part was lost as soon as it was granted: start over. */
            release_mask(m, owner, all);
            rc = deadline == 0 ? RDL_EBUSY : RDL_ETIMEDOUT;
            if (deadline == 0 || rdl__left_of(deadline, rdl__now_ms()) == 0)
                break;
            continue;
        }
        if (waited != NULL) {
            int rrc = rdl_lock_release_as(waited, owner);
            (void)rrc;
            waited = NULL;
        }
        if (rc != RDL_EBUSY || deadline == 0)
            break;
        /* Wait for the busy part alone, holding nothing else. */
        waited = m->parts[busy];
        rc = rdl_lock_acquire_as(
            waited, owner, rdl__left_of(deadline, rdl__now_ms()), lease_ms);
        if (rc != 0) {
            waited = NULL;
            rc = wait_failed(deadline, rc);
            break;
        }
    }
    snprintf(text, sizeof(text), "multilock: not acquired: %s",
             rdl_err_name(rc));
    say(ml, text);
    return rc;
}

/* One Redlock round: tries every part once. Returns 0 (quorum held, state
 * set) or the round's failure, with the parts it took released. */
static int red_round(rdl_lock_t *ml, rdl_owner_t owner, int64_t lease_ms,
                     int *contended, char *text, size_t len)
{
    rdl__multi *m = multi_of(ml);
    uint64_t start = rdl__now_ms(), mask = 0, elapsed;
    size_t i, ok = 0, busy = 0, at = 0;

    at += (size_t)snprintf(text, len, "redlock:");
    for (i = 0; i < m->n; i++) {
        int rc = rdl_lock_acquire_as(m->parts[i], owner, 0, lease_ms);
        if (rc == 0) {
            mask |= (uint64_t)1 << i;
            ok++;
        } else if (rc == RDL_EBUSY) {
            busy++;
        }
        if (at < len) {
            char server[300];
            rdl__lock_server(m->parts[i], server, sizeof(server));
            at += (size_t)snprintf(text + at, len - at, " %s %s%s", server,
                                   rc == 0 ? "granted" : rdl_err_name(rc),
                                   i + 1 < m->n ? "," : "");
        }
    }
    elapsed = rdl__now_ms() - start;
    /* What is left of the lease on the part granted first, less the drift
     * allowance (inside rdl_lock_valid_ms), must be positive. */
    if (ok >= m->quorum && grant(ml, owner, mask, 1))
        return 0;
    release_mask(m, owner, mask);
    *contended = ok + busy >= m->quorum;
    if (at < len)
        snprintf(text + at, len - at,
                 "; %zu of %zu granted, %zu needed, %llu ms spent", ok, m->n,
                 m->quorum, (unsigned long long)elapsed);
    return ok >= m->quorum ? RDL_ETIMEDOUT : RDL_ENOQUORUM;
}

static int red_take(rdl_lock_t *ml, rdl_owner_t owner, uint64_t deadline,
                    int64_t lease_ms)
{
    char text[1024];
    int rc, contended = 0;

    for (;;) {
        int64_t left;
        uint32_t pause;
        rc = red_round(ml, owner, lease_ms, &contended, text, sizeof(text));
        if (rc == 0)
            return 0;
        left = rdl__left_of(deadline, rdl__now_ms()); /* 0 after one try */
        if (left == 0)
            break;
        /* Retry after a random pause, so competing clients spread out. */
        pause = 20 + randombytes_uniform(80);
        if (left != RDL_WAIT_FOREVER && (int64_t)pause > left)
            pause = (uint32_t)left;
        uv_sleep(pause);
    }
    say(ml, text);
    /* Contention (the others answered: held elsewhere) is a busy lock; too
     * few answers is the lack of a quorum. */
    if (contended)
        return deadline == 0 ? RDL_EBUSY : RDL_ETIMEDOUT;
    return RDL_ENOQUORUM;
}

static int multi_acquire(rdl_lock_t *ml, rdl_owner_t owner, int64_t wait_ms,
                         int64_t lease_ms)
{
    /* deadline 0: one try per part */
    uint64_t deadline =
        wait_ms == 0 ? 0 : rdl__deadline_of(wait_ms, rdl__now_ms());
    if (multi_of(ml)->redlock)
        return red_take(ml, owner, deadline, lease_ms);
    if (multi_of(ml)->one_call)
        return one_call_take(ml, owner, deadline, lease_ms);
    return multi_take(ml, owner, deadline, lease_ms);
}

/* ---- release and the rest ---------------------------------------------------- */

static int multi_release(rdl_lock_t *ml, rdl_owner_t owner)
{
    rdl__multi *m = multi_of(ml);
    int lost, first = 0;
    uint32_t levels, l;
    uint64_t mask = take_state(ml, owner, &lost, &levels);
    size_t i = m->n;

    if (mask == 0 && !lost) {
        say(ml, "the composite lock is not held by this owner");
        return RDL_ENOTHELD;
    }
    while (i-- > 0) {
        if (!(mask & ((uint64_t)1 << i)))
            continue;
        for (l = 0; l < levels; l++) {
            int rc = rdl_lock_release_as(m->parts[i], owner);
            if (rc != 0 && first == 0)
                first = rc;
            if (rc != 0)
                break;
        }
    }
    if (lost)
        say(ml, "the composite lock was lost (too few of its parts remained "
                "held); the parts that survived were released");
    return lost ? RDL_ELOST : first;
}

static int multi_force_release(rdl_lock_t *ml)
{
    rdl__multi *m = multi_of(ml);
    size_t i, freed = 0;
    int first = 0;
    for (i = 0; i < m->n; i++) {
        int rc = rdl_lock_force_release(m->parts[i]);
        if (rc == 0)
            freed++;
        else if (rc != RDL_ENOTHELD && first == 0)
            first = rc;
    }
    uv_mutex_lock(&m->mu);
    m->nowners = 0;
    uv_mutex_unlock(&m->mu);
    if (first != 0)
        return first;
    return freed > 0 ? 0 : RDL_ENOTHELD;
}

static int multi_info(rdl_lock_t *ml, rdl_owner_t owner, rdl_lock_info_t *out)
{
    rdl__multi *m = multi_of(ml);
    size_t i, held = 0;
    uint32_t count = UINT32_MAX;
    memset(out, 0, sizeof(*out));
    out->permits = 1;
    out->ttl_ms = INT64_MAX;
    for (i = 0; i < m->n; i++) {
        rdl_lock_info_t p;
        int rc = rdl_lock_info(m->parts[i], owner, &p);
        if (rc != 0)
            return rc;
        out->locked |= p.locked;
        if (p.held_by_owner) {
            held++;
            if (p.hold_count < count)
                count = p.hold_count;
        }
        if (p.holders > out->holders)
            out->holders = p.holders;
        if (p.holder_count > out->holder_count)
            out->holder_count = p.holder_count;
        out->waiters += p.waiters;
        if (p.locked && p.ttl_ms < out->ttl_ms)
            out->ttl_ms = p.ttl_ms;
        if (p.fencing_token > out->fencing_token)
            out->fencing_token = p.fencing_token;
    }
    out->held_by_owner = held >= m->quorum;
    out->hold_count = out->held_by_owner ? count : 0;
    if (!out->locked)
        out->ttl_ms = -2;
    return 0;
}

static uint64_t multi_token(const rdl_lock_t *ml, rdl_owner_t owner)
{
    rdl__multi *m = multi_of(ml);
    uint64_t best = 0, t;
    size_t i;
    for (i = 0; i < m->n; i++)
        if ((t = rdl_lock_fencing_token(m->parts[i], owner)) > best)
            best = t;
    return best;
}

static int cmp_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

static int64_t multi_valid_ms(const rdl_lock_t *ml, rdl_owner_t owner)
{
    rdl__multi *m = multi_of(ml);
    int64_t v[MULTI_MAX];
    size_t i;
    for (i = 0; i < m->n; i++)
        v[i] = rdl_lock_valid_ms(m->parts[i], owner);
    /* Valid while its quorum of parts is: the quorum-th longest. */
    qsort(v, m->n, sizeof(v[0]), cmp_desc);
    return v[m->quorum - 1];
}

uint64_t rdl_multilock_part_token(const rdl_lock_t *ml, rdl_owner_t owner,
                                  size_t i)
{
    if (ml == NULL || !rdl__lock_is_ext(ml) || i >= multi_of(ml)->n)
        return 0;
    return rdl_lock_fencing_token(multi_of(ml)->parts[i], owner);
}

/* ---- construction ------------------------------------------------------------ */

/* The canonical order of a multilock's parts: by kind, key and server. */
static int cmp_parts(const void *a, const void *b)
{
    return rdl__lock_order(*(rdl_lock_t *const *)a, *(rdl_lock_t *const *)b);
}

static int check_parts(rdl_lock_t *const *locks, size_t n, int redlock,
                       const char **why)
{
    size_t i, j;
    if (locks == NULL || n == 0 || n > MULTI_MAX) {
        *why = "a composite lock takes 1..64 parts";
        return RDL_EINVAL;
    }
    for (i = 0; i < n; i++) {
        if (locks[i] == NULL || rdl__lock_is_ext(locks[i])) {
            *why = "a part is NULL or itself a composite lock";
            return RDL_EINVAL;
        }
        for (j = 0; j < i; j++) {
            if (locks[j] == locks[i] || rdl__lock_same(locks[j], locks[i])) {
                *why = "a lock is given twice (the same key on the same "
                       "server)";
                return RDL_EINVAL;
            }
            if (redlock &&
                rdl__lock_client(locks[j]) == rdl__lock_client(locks[i])) {
                *why = "redlock parts must be on distinct clients "
                       "(independent deployments)";
                return RDL_EINVAL;
            }
        }
    }
    return 0;
}

static void multi_free(rdl_lock_t *ml);

static const rdl__lock_ops multi_ops = {
    .acquire = multi_acquire,
    .release = multi_release,
    .force_release = multi_force_release,
    .info = multi_info,
    .token = multi_token,
    .valid_ms = multi_valid_ms,
    .free = multi_free, /* no async calls: a composite spans loops */
};

static void free_state(rdl__multi *m)
{
    if (m == NULL)
        return;
    rdl__free(m->parts);
    rdl__free(m->owners);
    rdl__free(m);
}

static int create(rdl_lock_t *const *locks, size_t n, int redlock,
                  rdl_lock_t **out)
{
    const char *why = NULL;
    rdl_lock_t *ml = NULL;
    rdl__multi *m;
    char *name = NULL;
    size_t i, len = 16;
    int rc;

    if (out == NULL)
        return RDL_EINVAL;
    *out = NULL;
    if ((rc = check_parts(locks, n, redlock, &why)) != 0) {
        if (locks != NULL && n > 0 && n <= MULTI_MAX && locks[0] != NULL)
            rdl__lock_say(locks[0], "%s", why);
        return rc;
    }
    m = rdl__calloc(1, sizeof(*m));
    if (m != NULL && (m->parts = rdl__calloc(n, sizeof(*m->parts))) != NULL &&
        uv_mutex_init(&m->mu) != 0) {
        rdl__free(m->parts);
        m->parts = NULL;
    }
    for (i = 0; i < n; i++)
        len += strlen(rdl_lock_name(locks[i])) + 1;
    name = rdl__malloc(len);
    if (m == NULL || m->parts == NULL || name == NULL) {
        rdl__free(name);
        free_state(m);
        return RDL_ENOMEM;
    }
    /* The name lists the parts as given: "a+b+c". */
    name[0] = '\0';
    for (i = 0; i < n; i++) {
        if (i > 0)
            strcat(name, "+");
        strcat(name, rdl_lock_name(locks[i]));
    }
    m->redlock = redlock;
    m->n = n;
    m->quorum = redlock ? n / 2 + 1 : n;
    memcpy(m->parts, locks, n * sizeof(*locks));
    if (!redlock)
        qsort(m->parts, n, sizeof(*m->parts), cmp_parts);
    m->one_call = !redlock && rdl__lock_set_eligible(m->parts, n);
    rc =
        rdl__lock_new_ext(rdl__lock_client(locks[0]), name, &multi_ops, m, &ml);
    rdl__free(name);
    if (rc != 0) {
        uv_mutex_destroy(&m->mu);
        free_state(m);
        return rc;
    }
    /* The composite token of a RedLock is the largest of the parts held,
     * and a quorum is a different set of servers each time: it stays in
     * order across sets because every grant's token follows the server
     * clock (scripts/lock_acquire.lua). */
    for (i = 0; i < n; i++)
        (void)rdl_lock_set_lost_cb(m->parts[i], on_part_lost, ml);
    *out = ml;
    return 0;
}

/* Detaches the parts' lost callbacks (each waits for a call of
 * on_part_lost() in progress), then frees the state. */
static void multi_free(rdl_lock_t *ml)
{
    rdl__multi *m = multi_of(ml);
    size_t i;
    for (i = 0; i < m->n; i++)
        (void)rdl_lock_set_lost_cb(m->parts[i], NULL, NULL);
    uv_mutex_destroy(&m->mu);
    free_state(m);
}

int rdl_multilock_new(rdl_lock_t *const *locks, size_t n, rdl_lock_t **out)
{
    return create(locks, n, 0, out);
}

int rdl_redlock_new(rdl_lock_t *const *locks, size_t n, rdl_lock_t **out)
{
    return create(locks, n, 1, out);
}
