/* The composite lock kind (multilock_int.h): its parts, what it knows of
 * each owner's hold, and the operations table that every composite shares
 * (release, force release, info, token, validity, free); the acquisition
 * is its kind's (rdl__multi_kind.take). A composite implements the lock
 * layer's operations table on the public calls of its parts plus the
 * extension interface (lock/lock_ext.h), and sees nothing else of that
 * layer.
 *
 * Threads: every call runs on the caller's thread; a part's lost callback
 * runs on that part's loop thread. The owners' states are guarded by the
 * composite's mutex. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/clock.h"
#include "multilock_int.h"

/* What the composite knows of one owner's hold. */
typedef struct rdl__multi_owner {
    rdl_owner_t owner;
    uint64_t mask;  /* parts held */
    uint32_t count; /* levels: a composite is reentrant as its parts are */
    int lost;       /* reported lost */
    int drained;    /* lost, and every level of its parts was given back */
} mstate;

rdl__multi *rdl__multi_of(const rdl_lock_t *ml)
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

/* The validity check and the record are one step under the mutex: a part
 * lost before it fails the check, and one lost after it finds the state
 * in on_part_lost() and is reported. */
int rdl__multi_grant(rdl_lock_t *ml, rdl_owner_t owner, uint64_t mask,
                     int64_t keep_ms)
{
    rdl__multi *m = rdl__multi_of(ml);
    mstate *s;
    uv_mutex_lock(&m->mu);
    if (rdl__multi_min_valid(m, owner, mask) < keep_ms) {
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
    rdl__multi *m = rdl__multi_of(ml);
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
    rdl__multi *m = rdl__multi_of(ml);
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

/* ---- acquire ----------------------------------------------------------------- */

void rdl__multi_release_parts(const rdl__multi *m, rdl_owner_t owner,
                              uint64_t mask)
{
    size_t i = m->n;
    while (i-- > 0)
        if (mask & ((uint64_t)1 << i)) {
            /* A part that cannot be released ends with its lease. */
            int rc = rdl_lock_release_as(m->parts[i], owner);
            (void)rc;
        }
}

int64_t rdl__multi_min_valid(const rdl__multi *m, rdl_owner_t owner,
                             uint64_t mask)
{
    int64_t least = INT64_MAX, v;
    size_t i;
    for (i = 0; i < m->n; i++)
        if ((mask & ((uint64_t)1 << i)) &&
            (v = rdl_lock_valid_ms(m->parts[i], owner)) < least)
            least = v;
    return least;
}

static int multi_acquire(rdl_lock_t *ml, rdl_owner_t owner, int64_t wait_ms,
                         int64_t lease_ms)
{
    /* deadline 0: one try per part */
    uint64_t deadline =
        wait_ms == 0 ? 0 : rdl__deadline_of(wait_ms, rdl__now_ms());
    return rdl__multi_of(ml)->kind->take(ml, owner, deadline, lease_ms);
}

/* ---- release and the rest ---------------------------------------------------- */

static int multi_release(rdl_lock_t *ml, rdl_owner_t owner)
{
    rdl__multi *m = rdl__multi_of(ml);
    int lost, first = 0;
    uint32_t levels, l;
    uint64_t mask = take_state(ml, owner, &lost, &levels);
    size_t i = m->n;

    if (mask == 0 && !lost) {
        rdl__lock_say(ml, "the composite lock is not held by this owner");
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
        rdl__lock_say(ml, "the composite lock was lost (too few of its parts "
                          "remained held); the parts that survived were "
                          "released");
    return lost ? RDL_ELOST : first;
}

static int multi_force_release(rdl_lock_t *ml)
{
    rdl__multi *m = rdl__multi_of(ml);
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
    rdl__multi *m = rdl__multi_of(ml);
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
    rdl__multi *m = rdl__multi_of(ml);
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
    rdl__multi *m = rdl__multi_of(ml);
    int64_t v[RDL__MULTI_MAX];
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
    if (ml == NULL || !rdl__lock_is_ext(ml) || i >= rdl__multi_of(ml)->n)
        return 0;
    return rdl_lock_fencing_token(rdl__multi_of(ml)->parts[i], owner);
}

/* ---- construction ------------------------------------------------------------ */

static int check_parts(rdl_lock_t *const *locks, size_t n, int majority,
                       const char **why)
{
    size_t i, j;
    if (locks == NULL || n == 0 || n > RDL__MULTI_MAX) {
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
            if (majority &&
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

int rdl__multi_new(rdl_lock_t *const *locks, size_t n,
                   const rdl__multi_kind *kind, rdl_lock_t **out)
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
    if ((rc = check_parts(locks, n, kind->majority, &why)) != 0) {
        if (locks != NULL && n > 0 && n <= RDL__MULTI_MAX && locks[0] != NULL)
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
    m->kind = kind;
    m->n = n;
    m->quorum = kind->majority ? n / 2 + 1 : n;
    memcpy(m->parts, locks, n * sizeof(*locks));
    if (kind->arrange != NULL)
        kind->arrange(m);
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
    rdl__multi *m = rdl__multi_of(ml);
    size_t i;
    for (i = 0; i < m->n; i++)
        (void)rdl_lock_set_lost_cb(m->parts[i], NULL, NULL);
    uv_mutex_destroy(&m->mu);
    free_state(m);
}
