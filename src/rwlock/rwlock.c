/* The read-write lock: two views of one name, each an ordinary lock kind
 * (scripts/rwlock_*.lua). Both views build the same keys (kind name "rw"), so
 * the scripts see readers and the writer in one hash; the write view also
 * records waiting writers (with expiries the watchdog keeps pushing back,
 * as for fair-lock waiters), which hold new readers back when writers go
 * first. */
#include "lock/lock_int.h"

struct rdl_rwlock_s {
    rdl_lock_t *read;
    rdl_lock_t *write;
};

/* Waiting writers: one sorted set of entry expiries, which also orders
 * them (readers wait behind it when writers go first). A release names the
 * writer it wakes. */
static const rdl__kind_queue writers_queue = {
    .renewed = 1,
    .renew_script = RDL__SCRIPT_RWLOCK_TOUCH,
    .entry_key = RDL__KEY_AUX1,
    .targeted = 1,
};

/* The two views: one kind but for the side, and only writers queue. */
#define RW_VIEW(label_, side_, queue_)                                         \
    {                                                                          \
        .name = RDL__KIND_RWLOCK, .label = label_,                             \
        .scripts = RDL__KIND_SCRIPTS(RWLOCK),                                  \
        .keys = {RDL__KEY_FENCE, RDL__KEY_AUX1},                               \
        .args = {RDL__ARG_SIDE, RDL__ARG_WRITERS_FIRST}, .side = side_,        \
        .parse_try = rdl__parse_try, .aux_suffix = {NULL, "ww"},               \
        .queue = queue_                                                        \
    }
static const rdl__lock_kind read_kind = RW_VIEW("rwlock:read", "r", NULL);
static const rdl__lock_kind write_kind =
    RW_VIEW("rwlock:write", "w", &writers_queue);

int rdl_rwlock_new_ex(rdl_client_t *c, const char *name, unsigned flags,
                      rdl_rwlock_t **out)
{
    rdl_rwlock_t *rw;
    int rc;
    if (out == NULL)
        return RDL_EINVAL;
    *out = NULL;
    if ((flags & ~(unsigned)RDL_RW_READERS_FIRST) != 0) {
        if (c != NULL)
            rdl__errmsg_set(c, "unknown read-write lock flags 0x%x", flags);
        return RDL_EINVAL;
    }
    rw = rdl__calloc(1, sizeof(*rw));
    if (rw == NULL)
        return RDL_ENOMEM;
    if ((rc = rdl__lock_create(c, name, &read_kind, &rw->read)) != 0 ||
        (rc = rdl__lock_create(c, name, &write_kind, &rw->write)) != 0) {
        rdl_lock_free(rw->read);
        rdl__free(rw);
        return rc;
    }
    rw->read->flags = rw->write->flags = flags;
    *out = rw;
    return 0;
}

int rdl_rwlock_new(rdl_client_t *c, const char *name, rdl_rwlock_t **out)
{
    return rdl_rwlock_new_ex(c, name, 0, out);
}

rdl_lock_t *rdl_rwlock_read(rdl_rwlock_t *rw)
{
    return rw != NULL ? rw->read : NULL;
}

rdl_lock_t *rdl_rwlock_write(rdl_rwlock_t *rw)
{
    return rw != NULL ? rw->write : NULL;
}

void rdl_rwlock_free(rdl_rwlock_t *rw)
{
    if (rw == NULL)
        return;
    rdl_lock_free(rw->read);
    rdl_lock_free(rw->write);
    rdl__free(rw);
}
