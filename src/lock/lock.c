/* The public lock calls: construction, argument checks, and dispatch
 * through the lock's operations table (lock_ext.h). This file knows no
 * kind by name: the script kinds share rdl__scripted_ops (scripted.c), a
 * composite brings its own (src/multilock). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lock_int.h"

/* ---- construction ---------------------------------------------------------- */

static void free_strings(rdl_lock_t *lock)
{
    rdl__free(lock->name);
    rdl__free(lock->key_hold);
    rdl__free(lock->key_fence);
    rdl__free(lock->channel);
    if (lock->wake_channel != lock->channel)
        rdl__free(lock->wake_channel);
    rdl__free(lock->key_aux[0]);
    rdl__free(lock->key_aux[1]);
}

int rdl__lock_create(rdl_client_t *c, const char *name,
                     const rdl__lock_kind *kind, rdl_lock_t **out)
{
    rdl_lock_t *lock;
    int i, rc, aux_failed = 0;
    if ((rc = rdl__client_check_new(c, name, "lock", out)) != 0)
        return rc;
    lock = rdl__calloc(1, sizeof(*lock));
    if (lock == NULL)
        return RDL_ENOMEM;
    lock->ops = &rdl__scripted_ops;
    lock->kind = kind;
    lock->permits = 1;
    lock->refs = 1;
    lock->c = c;
    lock->name = rdl__strdup(name);
    lock->key_hold = rdl__key(c->prefix, kind->name, name, NULL);
    lock->key_fence = rdl__key(c->prefix, kind->name, name, RDL__SUFFIX_FENCE);
    lock->channel = rdl__key(c->prefix, kind->name, name, "ch");
    if (lock->channel != NULL)
        lock->wake_channel = kind->queue != NULL && kind->queue->own_channel
                                 ? rdl__client_channel(lock->channel, c->net.id)
                                 : lock->channel;
    for (i = 0; i < 2; i++)
        if (kind->aux_suffix[i] != NULL &&
            (lock->key_aux[i] = rdl__key(c->prefix, kind->name, name,
                                         kind->aux_suffix[i])) == NULL)
            aux_failed = 1;
    if (lock->name == NULL || lock->key_hold == NULL ||
        lock->key_fence == NULL || lock->wake_channel == NULL || aux_failed ||
        rdl__lock_sync_init(lock) != 0) {
        free_strings(lock);
        rdl__free(lock);
        return RDL_ENOMEM;
    }
    *out = lock;
    return 0;
}

int rdl__lock_sync_init(rdl_lock_t *lock)
{
    if (uv_mutex_init(&lock->mu) != 0)
        return RDL_ENOMEM;
    if (uv_cond_init(&lock->lost_idle) != 0) {
        uv_mutex_destroy(&lock->mu);
        return RDL_ENOMEM;
    }
    return 0;
}

int rdl_lock_new(rdl_client_t *c, const char *name, rdl_lock_t **out)
{
    return rdl__lock_create(c, name, &rdl__reentrant_kind, out);
}

void rdl_lock_free(rdl_lock_t *lock)
{
    if (lock == NULL)
        return;
    if (lock->ops->free != NULL)
        lock->ops->free(lock);
    __atomic_store_n(&lock->freed, 1, __ATOMIC_RELEASE);
    /* A lost callback already running finishes before the caller may free
     * what it uses; none starts after this (freed is set). */
    rdl__lock_lost_quiesce(lock);
    rdl__lock_unref(lock);
}

void rdl__lock_ref(rdl_lock_t *lock)
{
    __atomic_add_fetch(&lock->refs, 1, __ATOMIC_RELAXED);
}

void rdl__lock_unref(rdl_lock_t *lock)
{
    if (__atomic_sub_fetch(&lock->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    uv_cond_destroy(&lock->lost_idle);
    uv_mutex_destroy(&lock->mu);
    rdl__free(lock->holds);
    free_strings(lock);
    rdl__free(lock);
}

const char *rdl_lock_name(const rdl_lock_t *lock)
{
    return lock != NULL ? lock->name : NULL;
}

/* ---- argument checks ------------------------------------------------------- */

static int check_durations(rdl_lock_t *lock, int64_t wait_ms, int64_t lease_ms)
{
    if (wait_ms < 0 && wait_ms != RDL_WAIT_FOREVER) {
        rdl__errmsg_set(lock->c, "wait_ms %lld: use >= 0 or RDL_WAIT_FOREVER",
                        (long long)wait_ms);
        return RDL_EINVAL;
    }
    if ((lease_ms <= 0 && lease_ms != RDL_LEASE_AUTO) ||
        lease_ms > RDL_LEASE_MAX_MS) {
        rdl__errmsg_set(lock->c,
                        "lease_ms %lld: use 1..RDL_LEASE_MAX_MS (100 years) "
                        "or RDL_LEASE_AUTO",
                        (long long)lease_ms);
        return RDL_EINVAL;
    }
    return 0;
}

/* ---- dispatch ---------------------------------------------------------------- */

static int no_async(rdl_lock_t *lock)
{
    rdl__errmsg_set(lock->c,
                    "lock \"%.200s\" has blocking calls only (a "
                    "multilock or redlock spans clients)",
                    lock->name);
    return RDL_ENOTSUP;
}

int rdl_lock_acquire_async(rdl_req_t *req, rdl_lock_t *lock, rdl_owner_t owner,
                           int64_t wait_ms, int64_t lease_ms, rdl_req_cb cb)
{
    int rc;
    if (req == NULL || lock == NULL || cb == NULL || req->internal != NULL)
        return RDL_EINVAL;
    if (lock->ops->acquire_async == NULL)
        return no_async(lock);
    if ((rc = check_durations(lock, wait_ms, lease_ms)) != 0)
        return rc;
    return lock->ops->acquire_async(req, lock, owner, wait_ms, lease_ms, cb);
}

int rdl_lock_release_async(rdl_req_t *req, rdl_lock_t *lock, rdl_owner_t owner,
                           rdl_req_cb cb)
{
    if (req == NULL || lock == NULL || cb == NULL || req->internal != NULL)
        return RDL_EINVAL;
    if (lock->ops->release_async == NULL)
        return no_async(lock);
    return lock->ops->release_async(req, lock, owner, cb);
}

int rdl_req_cancel(rdl_req_t *req)
{
    rdl__op *op;
    if (req == NULL || req->internal == NULL)
        return RDL_EINVAL;
    op = req->internal;
    return op->cancel(op);
}

int rdl_lock_acquire_as(rdl_lock_t *lock, rdl_owner_t owner, int64_t wait_ms,
                        int64_t lease_ms)
{
    int rc;
    if (lock == NULL)
        return RDL_EINVAL;
    if ((rc = check_durations(lock, wait_ms, lease_ms)) != 0)
        return rc;
    return lock->ops->acquire(lock, owner, wait_ms, lease_ms);
}

int rdl_lock_acquire(rdl_lock_t *lock, int64_t wait_ms, int64_t lease_ms)
{
    return rdl_lock_acquire_as(lock, rdl_owner_self(), wait_ms, lease_ms);
}

int rdl_lock_release_as(rdl_lock_t *lock, rdl_owner_t owner)
{
    if (lock == NULL)
        return RDL_EINVAL;
    return lock->ops->release(lock, owner);
}

int rdl_lock_release(rdl_lock_t *lock)
{
    return rdl_lock_release_as(lock, rdl_owner_self());
}

int rdl_lock_force_release(rdl_lock_t *lock)
{
    if (lock == NULL)
        return RDL_EINVAL;
    return lock->ops->force_release(lock);
}

int rdl_lock_info(rdl_lock_t *lock, rdl_owner_t owner, rdl_lock_info_t *out)
{
    if (lock == NULL || out == NULL)
        return RDL_EINVAL;
    return lock->ops->info(lock, owner, out);
}

uint64_t rdl_lock_fencing_token(const rdl_lock_t *lock, rdl_owner_t owner)
{
    return lock != NULL ? lock->ops->token(lock, owner) : 0;
}

int64_t rdl_lock_valid_ms(const rdl_lock_t *lock, rdl_owner_t owner)
{
    return lock != NULL ? lock->ops->valid_ms(lock, owner) : 0;
}

/* ---- the extension interface (lock_ext.h) ---------------------------------- */

int rdl__lock_new_ext(rdl_client_t *c, const char *name,
                      const rdl__lock_ops *ops, void *impl, rdl_lock_t **out)
{
    rdl_lock_t *lock = rdl__calloc(1, sizeof(*lock));
    if (lock == NULL)
        return RDL_ENOMEM;
    lock->name = rdl__strdup(name);
    if (lock->name == NULL || rdl__lock_sync_init(lock) != 0) {
        rdl__free(lock->name);
        rdl__free(lock);
        return RDL_ENOMEM;
    }
    lock->ops = ops;
    lock->impl = impl;
    lock->c = c;
    lock->refs = 1;
    *out = lock;
    return 0;
}

void *rdl__lock_impl(const rdl_lock_t *lock)
{
    return lock->impl;
}

int rdl__lock_is_ext(const rdl_lock_t *lock)
{
    return lock->ops != &rdl__scripted_ops;
}

rdl_client_t *rdl__lock_client(const rdl_lock_t *lock)
{
    return lock->c;
}

void rdl__lock_say(const rdl_lock_t *lock, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    rdl__errmsg_set(lock->c, "%s", text);
}

int rdl__lock_order(const rdl_lock_t *x, const rdl_lock_t *y)
{
    int d;
    if ((d = strcmp(x->kind->name, y->kind->name)) != 0)
        return d;
    if ((d = strcmp(x->key_hold, y->key_hold)) != 0)
        return d;
    if ((d = strcmp(x->c->net.url.host, y->c->net.url.host)) != 0)
        return d;
    return (x->c->net.url.port > y->c->net.url.port) -
           (x->c->net.url.port < y->c->net.url.port);
}

int rdl__lock_same(const rdl_lock_t *a, const rdl_lock_t *b)
{
    if (strcmp(a->kind->name, b->kind->name) != 0 ||
        strcmp(a->key_hold, b->key_hold) != 0)
        return 0;
    if (a->c == b->c)
        return 1;
    return a->c->net.url.port == b->c->net.url.port &&
           a->c->net.url.db == b->c->net.url.db &&
           strcmp(a->c->net.url.host, b->c->net.url.host) == 0;
}

void rdl__lock_server(const rdl_lock_t *lock, char *buf, size_t len)
{
    snprintf(buf, len, "%s:%d", lock->c->net.url.host, lock->c->net.url.port);
}
