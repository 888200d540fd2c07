/* The lost callback of a lock (rdl_lock_set_lost_cb()), for every kind:
 * called so that setting another callback, or freeing the lock, can wait
 * for a call in progress on a loop thread, and so that a callback may free
 * its own lock. */
#include "lock_int.h"

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
