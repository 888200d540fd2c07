/* Local holds: what this client knows of each owner's hold of a lock (its
 * count, token and how long it is known valid), and the glue between a
 * hold taken with RDL_LEASE_AUTO and its watchdog entry. The lost callback
 * itself is dispatched by lost.c.
 *
 * The holds array is guarded by lock->mu and read from any thread (the
 * token and validity getters); everything else runs on the loop thread.
 * The watchdog calls back into done() and lost(), which take the mutex, so
 * watchdog functions are never called with the mutex held. */
#include <stdio.h>
#include <string.h>

#include "lock_int.h"

/* A hold's watchdog entry. It holds a reference to the lock, so a lock
 * freed while held stays in memory until the watchdog lets go. */
struct rdl__auto {
    rdl__wd_hold wd;
    rdl_lock_t *lock;
    rdl_owner_t owner;
    char member[72]; /* [prefix] owner string */
};

/* A hold the client believes valid: not reported lost, its lease not run
 * out (an auto hold's watchdog still renews it). Mutex held. */
static int believed(const rdl__hold *h, uint64_t now)
{
    return h != NULL && !h->lost && h->count >= 1 &&
           (h->wd != NULL || h->deadline > now);
}

static rdl__hold *find_hold(const rdl_lock_t *lock, rdl_owner_t owner)
{
    size_t i;
    for (i = 0; i < lock->nholds; i++)
        if (lock->holds[i].owner == owner)
            return &lock->holds[i];
    return NULL;
}

/* Detaches rec from its hold, if it is still attached. Mutex held. */
static rdl__hold *detach(rdl__auto *rec)
{
    rdl__hold *h = find_hold(rec->lock, rec->owner);
    if (h != NULL && h->wd == rec)
        h->wd = NULL;
    return h;
}

static void on_done(rdl__wd_hold *wh)
{
    rdl__auto *rec = RDL_CONTAINER_OF(wh, rdl__auto, wd);
    rdl_lock_t *lock = rec->lock;
    uv_mutex_lock(&lock->mu);
    (void)detach(rec);
    uv_mutex_unlock(&lock->mu);
    rdl__free(rec);
    rdl__lock_unref(lock);
}

static void on_lost(rdl__wd_hold *wh, int reason)
{
    rdl__auto *rec = RDL_CONTAINER_OF(wh, rdl__auto, wd);
    rdl_lock_t *lock = rec->lock;
    rdl__hold *h;
    int attached;
    uint64_t since = 0, token = 0;

    uv_mutex_lock(&lock->mu);
    h = find_hold(lock, rec->owner);
    attached = h != NULL && h->wd == rec;
    if (attached) {
        h->wd = NULL;
        h->lost = 1;
        h->deadline = 0;
        since = h->since;
        token = h->token;
    }
    uv_mutex_unlock(&lock->mu);
    rdl__errmsg_set(lock->c, "the hold of lock \"%.200s\" was lost: %s",
                    lock->name, rdl_strerror(reason));
    if (attached) {
        rdl__lock_event(lock, RDL_EVENT_LOST, rec->owner, 0,
                        (int64_t)(rdl__now_ms() - since), token);
        rdl__lock_report_lost(lock, rec->owner, reason);
    }
}

/* Grows the array by one hold of owner. Mutex held. */
static rdl__hold *add_hold(rdl_lock_t *lock, rdl_owner_t owner)
{
    rdl__hold *h;
    if (lock->nholds == lock->cap) {
        size_t cap = lock->cap ? lock->cap * 2 : 2;
        rdl__hold *nh = rdl__realloc(lock->holds, cap * sizeof(*nh));
        if (nh == NULL)
            return NULL;
        lock->holds = nh;
        lock->cap = cap;
    }
    h = &lock->holds[lock->nholds++];
    memset(h, 0, sizeof(*h));
    h->owner = owner;
    return h;
}

int rdl__hold_granted(rdl_lock_t *lock, rdl_owner_t owner, uint64_t token,
                      uint32_t count, uint64_t sent_at, int64_t lease_ms,
                      int auto_lease)
{
    rdl_client_t *c = lock->c;
    rdl__auto *rec = NULL, *old;
    rdl__hold *h;
    uint64_t deadline = rdl__wd_deadline(sent_at, lease_ms);

    uv_mutex_lock(&lock->mu);
    h = find_hold(lock, owner);
    old = h != NULL ? h->wd : NULL;
    uv_mutex_unlock(&lock->mu);

    if (auto_lease && old == NULL) {
        rec = rdl__calloc(1, sizeof(*rec));
        if (rec == NULL)
            return RDL_ENOMEM;
        rec->lock = lock;
        rec->owner = owner;
        char os[RDL__OWNER_STR_SIZE];
        rdl__client_owner(c, owner, os);
        /* "<side>:<owner>" for a kind with sides (scripts/rwlock_renew.lua). */
        if (lock->kind->side != NULL)
            snprintf(rec->member, sizeof(rec->member), "%s:%s",
                     lock->kind->side, os);
        else
            snprintf(rec->member, sizeof(rec->member), "%s", os);
        rec->wd.script = lock->kind->scripts.renew;
        rec->wd.key = lock->key_hold;
        rec->wd.key2 = lock->kind->renew_aux0 ? lock->key_aux[0] : NULL;
        rec->wd.member = rec->member;
        rec->wd.lost = on_lost;
        rec->wd.done = on_done;
    }

    uv_mutex_lock(&lock->mu);
    h = find_hold(lock, owner);
    if (h == NULL && (h = add_hold(lock, owner)) == NULL) {
        uv_mutex_unlock(&lock->mu);
        rdl__free(rec);
        return RDL_ENOMEM;
    }
    h->token = token;
    h->count = count;
    h->lost = 0; /* the server has just granted it */
    if (count == 1) {
        h->deadline = 0; /* a new hold: nothing of an earlier one holds */
        h->since = rdl__now_ms();
    }
    if (deadline > h->deadline)
        h->deadline = deadline;
    if (rec != NULL)
        h->wd = rec;
    uv_mutex_unlock(&lock->mu);

    if (rec != NULL) {
        rdl__lock_ref(lock);
        if (rdl__wd_add(c, &rec->wd, sent_at) != 0) {
            on_done(&rec->wd); /* the caller gives the level back */
            return RDL_ENOMEM;
        }
    } else if (old != NULL) {
        rdl__wd_extend(&old->wd, sent_at, lease_ms);
    }
    return 0;
}

int rdl__hold_lost_unnoticed(rdl_lock_t *lock, rdl_owner_t owner)
{
    rdl__hold *h;
    rdl__auto *rec = NULL;
    int valid;
    uint64_t now = rdl__now_ms(), since = 0, token = 0;

    uv_mutex_lock(&lock->mu);
    h = find_hold(lock, owner);
    valid = believed(h, now);
    if (valid) {
        rec = h->wd;
        h->wd = NULL;
        h->lost = 1;
        h->deadline = 0;
        since = h->since;
        token = h->token;
    }
    uv_mutex_unlock(&lock->mu);
    if (valid)
        rdl__lock_event(lock, RDL_EVENT_LOST, owner, 0, (int64_t)(now - since),
                        token);
    if (rec != NULL) {
        rdl__wd_remove(&rec->wd); /* its done callback frees it */
        rdl__lock_report_lost(lock, owner, RDL_ELOST);
    }
    return valid;
}

void rdl__hold_releasing(rdl_lock_t *lock, rdl_owner_t owner)
{
    rdl__hold *h;
    rdl__auto *rec = NULL;
    uv_mutex_lock(&lock->mu);
    h = find_hold(lock, owner);
    if (h != NULL && h->count <= 1)
        rec = h->wd;
    uv_mutex_unlock(&lock->mu);
    if (rec != NULL)
        rdl__wd_pause(&rec->wd);
}

int rdl__hold_released(rdl_lock_t *lock, rdl_owner_t owner, int remaining)
{
    rdl__hold *h;
    rdl__auto *rec = NULL;
    int lost = 0, known = 0;

    uv_mutex_lock(&lock->mu);
    h = find_hold(lock, owner);
    if (h != NULL) {
        known = 1;
        lost = h->lost;
        rec = h->wd;
        if (remaining > 0 && !h->lost) {
            h->count = (uint32_t)remaining;
        } else if (remaining == -2 && !h->lost) {
            /* not applied: the hold stands as it was */
        } else {
            *h = lock->holds[--lock->nholds];
        }
    }
    uv_mutex_unlock(&lock->mu);

    if (rec != NULL) {
        if (remaining > 0 || remaining == -2)
            rdl__wd_resume(lock->c, &rec->wd);
        else
            rdl__wd_remove(&rec->wd);
    }
    /* Not held by the server, yet known here: the hold ended under us. */
    return lost || (remaining == -1 && known);
}

void rdl__hold_clear(rdl_lock_t *lock)
{
    rdl__auto **recs = NULL;
    size_t i, n = 0;

    /* Loop thread: only this thread frees entries, so they may be used
     * after the mutex is released (rdl__wd_remove calls back into it). */
    uv_mutex_lock(&lock->mu);
    if (lock->nholds > 0)
        recs = rdl__calloc(lock->nholds, sizeof(*recs));
    for (i = 0; i < lock->nholds; i++) {
        if (lock->holds[i].wd == NULL)
            continue;
        if (recs != NULL)
            recs[n++] = lock->holds[i].wd;
        else
            rdl__wd_abandon(&lock->holds[i].wd->wd); /* next tick drops it */
    }
    lock->nholds = 0;
    uv_mutex_unlock(&lock->mu);
    for (i = 0; i < n; i++)
        rdl__wd_remove(&recs[i]->wd);
    rdl__free(recs);
}

void rdl__hold_abandon_all(rdl_lock_t *lock)
{
    size_t i;
    /* Any thread. Under the mutex, because the loop thread frees an entry
     * only after detaching it under the same mutex. */
    uv_mutex_lock(&lock->mu);
    for (i = 0; i < lock->nholds; i++)
        if (lock->holds[i].wd != NULL)
            rdl__wd_abandon(&lock->holds[i].wd->wd);
    uv_mutex_unlock(&lock->mu);
}

/* ---- getters (any thread) ----------------------------------------------------- */

uint64_t rdl__hold_token(const rdl_lock_t *lock, rdl_owner_t owner)
{
    rdl_lock_t *l = (rdl_lock_t *)lock; /* the mutex is not part of the value */
    rdl__hold *h;
    uint64_t token;
    uv_mutex_lock(&l->mu);
    h = find_hold(l, owner);
    token = h != NULL && !h->lost ? h->token : 0;
    uv_mutex_unlock(&l->mu);
    return token;
}

uint64_t rdl__hold_since(const rdl_lock_t *lock, rdl_owner_t owner)
{
    rdl_lock_t *l = (rdl_lock_t *)lock;
    rdl__hold *h;
    uint64_t since;
    uv_mutex_lock(&l->mu);
    h = find_hold(l, owner);
    since = h != NULL ? h->since : 0;
    uv_mutex_unlock(&l->mu);
    return since;
}

int64_t rdl__hold_valid_ms(const rdl_lock_t *lock, rdl_owner_t owner)
{
    rdl_lock_t *l = (rdl_lock_t *)lock;
    rdl__hold *h;
    int64_t ms = 0;
    uint64_t now;
    now = rdl__now_ms();
    uv_mutex_lock(&l->mu);
    h = find_hold(l, owner);
    if (h != NULL && !h->lost) {
        if (h->wd != NULL)
            ms = rdl__wd_valid_ms(&h->wd->wd);
        else if (h->deadline > now)
            ms = (int64_t)(h->deadline - now);
    }
    uv_mutex_unlock(&l->mu);
    return ms;
}

uint32_t rdl__hold_believed(const rdl_lock_t *lock, rdl_owner_t owner)
{
    rdl_lock_t *l = (rdl_lock_t *)lock;
    rdl__hold *h;
    uint32_t count = 0;
    uint64_t now = rdl__now_ms();
    uv_mutex_lock(&l->mu);
    h = find_hold(l, owner);
    if (believed(h, now))
        count = h->count;
    uv_mutex_unlock(&l->mu);
    return count;
}
