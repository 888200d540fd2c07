/* Local holds: what this client knows of each owner's hold of a lock (its
 * count, token and how long it is known valid), and the glue between a
 * hold taken with RDL_LEASE_AUTO and its watchdog entry.
 *
 * The holds array is guarded by lock->mu and read from any thread (the
 * token and validity getters); everything else runs on the loop thread.
 * The watchdog calls back into done() and lost(), which take the mutex, so
 * watchdog functions are never called with the mutex held. */
#include <stdio.h>
#include <string.h>

#include "lock_int.h"
#include "multilock/multi.h"

/* A hold's watchdog entry. It holds a reference to the lock, so a lock
 * freed while held stays in memory until the watchdog lets go. */
struct rdl__auto {
    rdl__wd_hold wd;
    rdl_lock_t *lock;
    rdl_owner_t owner;
    char member[72]; /* [prefix] owner string */
};

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

    uv_mutex_lock(&lock->mu);
    h = find_hold(lock, rec->owner);
    attached = h != NULL && h->wd == rec;
    if (attached) {
        h->wd = NULL;
        h->lost = 1;
        h->deadline = 0;
    }
    uv_mutex_unlock(&lock->mu);
    rdl__errmsg_set(lock->c, "the hold of lock \"%.200s\" was lost: %s",
                    lock->name, rdl_strerror(reason));
    if (attached)
        rdl__lock_report_lost(lock, rec->owner, reason);
}

/* The lost callbacks this thread is inside of: waiting for them to end
 * would wait for itself. */
static _Thread_local int in_lost_cb;

void rdl__lock_report_lost(rdl_lock_t *lock, rdl_owner_t owner, int reason)
{
    rdl_lost_cb cb;
    void *data;
    uv_mutex_lock(&lock->mu);
    cb = lock->lost_cb;
    data = lock->lost_data;
    if (cb == NULL || __atomic_load_n(&lock->freed, __ATOMIC_ACQUIRE)) {
        uv_mutex_unlock(&lock->mu);
        return;
    }
    lock->lost_busy++;
    uv_mutex_unlock(&lock->mu);
    /* The callback may free the lock (rdl_lock_free does not wait for the
     * callback it is called from): the object stays until this is done. */
    rdl__lock_ref(lock);
    in_lost_cb++;
    cb(lock, owner, reason, data);
    in_lost_cb--;
    uv_mutex_lock(&lock->mu);
    if (--lock->lost_busy == 0)
        uv_cond_broadcast(&lock->lost_idle);
    uv_mutex_unlock(&lock->mu);
    rdl__lock_unref(lock);
}

void rdl__lock_lost_quiesce(rdl_lock_t *lock)
{
    if (in_lost_cb > 0)
        return;
    uv_mutex_lock(&lock->mu);
    while (lock->lost_busy > 0)
        uv_cond_wait(&lock->lost_idle, &lock->mu);
    uv_mutex_unlock(&lock->mu);
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
        char os[64];
        rdl__client_owner(c, owner, os);
        snprintf(rec->member, sizeof(rec->member), "%s%s",
                 lock->kind->member_prefix ? lock->kind->member_prefix : "",
                 os);
        rec->wd.script = lock->kind->renew_script;
        rec->wd.key = lock->key_hold;
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
    if (count == 1)
        h->deadline = 0; /* a new hold: nothing of an earlier one holds */
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

/* ---- public getters -------------------------------------------------------- */

uint64_t rdl_lock_fencing_token(const rdl_lock_t *lock, rdl_owner_t owner)
{
    rdl_lock_t *l = (rdl_lock_t *)lock; /* the mutex is not part of the value */
    rdl__hold *h;
    uint64_t token;
    if (lock == NULL)
        return 0;
    if (lock->multi != NULL)
        return rdl__multi_token(lock, owner);
    uv_mutex_lock(&l->mu);
    h = find_hold(l, owner);
    token = h != NULL && !h->lost ? h->token : 0;
    uv_mutex_unlock(&l->mu);
    return token;
}

int64_t rdl_lock_valid_ms(const rdl_lock_t *lock, rdl_owner_t owner)
{
    rdl_lock_t *l = (rdl_lock_t *)lock;
    rdl__hold *h;
    int64_t ms = 0;
    uint64_t now;
    if (lock == NULL)
        return 0;
    if (lock->multi != NULL)
        return rdl__multi_valid_ms(lock, owner);
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

int rdl_lock_set_lost_cb(rdl_lock_t *lock, rdl_lost_cb cb, void *data)
{
    if (lock == NULL)
        return RDL_EINVAL;
    uv_mutex_lock(&lock->mu);
    lock->lost_cb = cb;
    lock->lost_data = data;
    uv_mutex_unlock(&lock->mu);
    /* The old callback may be running on a loop thread: it ends before
     * this returns, so its data can be freed then. */
    rdl__lock_lost_quiesce(lock);
    return 0;
}
