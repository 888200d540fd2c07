/* The read-write lock: two views of one name, each an ordinary lock kind
 * (scripts/rw_*.lua). Both views build the same keys (kind name "rw"), so
 * the scripts see readers and the writer in one hash; the write view also
 * records waiting writers (with expiries the watchdog keeps pushing back,
 * as for fair-lock waiters), which hold new readers back when writers go
 * first. */
#include "lock/lock_int.h"

struct rdl_rwlock_s {
    rdl_lock_t *read;
    rdl_lock_t *write;
};

/* As the other kinds, plus {-1}: the caller holds the read side and asked
 * for the write side. A waiting writer's position is only "queued". */
static int parse_try(const redisReply *r, rdl__try *out)
{
    long long flag;
    int rc;
    if (rdl__int_at(r, 0, &flag) != 0)
        return RDL_EPROTO;
    if (flag == -1)
        return RDL_EDEADLK; /* an upgrade: it would wait on itself */
    rc = rdl__parse_try(r, out);
    if (rc == 0 && out->position > 0)
        out->position = 1; /* a waiting writer: keep its entry alive */
    return rc;
}

/* The read-write reply ends with {holders, waiting writers, held}. */
static int parse_info(const redisReply *r, rdl_lock_info_t *out)
{
    long long more[3];
    int rc = rdl__parse_info(r, 3, more, out);
    if (rc == 0) {
        out->holders = (uint32_t)more[0];
        out->waiters = (uint32_t)more[1];
        out->holder_count = (uint32_t)more[2];
    }
    return rc;
}

static const rdl__lock_kind read_kind = {
    .name = RDL__KIND_RW,
    .label = "read",
    .acquire = {RDL__SCRIPT_RW_ACQUIRE,
                3,
                {RDL__KEY_HOLD, RDL__KEY_FENCE, RDL__KEY_AUX1},
                2,
                {RDL__ARG_SIDE, RDL__ARG_WRITERS_FIRST}},
    .parse_try = parse_try,
    .release = {RDL__SCRIPT_RW_RELEASE,
                3,
                {RDL__KEY_HOLD, RDL__KEY_FENCE, RDL__KEY_AUX1},
                1,
                {RDL__ARG_SIDE}},
    .force = {RDL__SCRIPT_RW_FORCE_RELEASE, 2, {RDL__KEY_HOLD, RDL__KEY_FENCE}},
    .info = {RDL__SCRIPT_RW_INFO,
             3,
             {RDL__KEY_HOLD, RDL__KEY_FENCE, RDL__KEY_AUX1},
             1,
             {RDL__ARG_SIDE}},
    .side = "r",
    .parse_release = rdl__parse_release,
    .parse_force = rdl__parse_force,
    .parse_info = parse_info,
    .renew_script = RDL__SCRIPT_RW_RENEW,
    .member_prefix = "r:",
    .aux_suffix = {NULL, "ww"},
};

/* Waiting writers: one sorted set of entry expiries, which also orders
 * them (readers wait behind it when writers go first). */
static const rdl__kind_queue writers_queue = {
    .renewed = 1,
    .targeted = 1, /* a release names the writer it wakes */
    .renew_script = RDL__SCRIPT_RW_TOUCH,
    .entry_key = RDL__KEY_AUX1,
    .leave = {RDL__SCRIPT_RW_LEAVE, 1, {RDL__KEY_AUX1}},
};

static const rdl__lock_kind write_kind = {
    .name = RDL__KIND_RW,
    .label = "write",
    .acquire = {RDL__SCRIPT_RW_ACQUIRE,
                3,
                {RDL__KEY_HOLD, RDL__KEY_FENCE, RDL__KEY_AUX1},
                2,
                {RDL__ARG_SIDE, RDL__ARG_WRITERS_FIRST}},
    .parse_try = parse_try,
    .release = {RDL__SCRIPT_RW_RELEASE,
                3,
                {RDL__KEY_HOLD, RDL__KEY_FENCE, RDL__KEY_AUX1},
                1,
                {RDL__ARG_SIDE}},
    .force = {RDL__SCRIPT_RW_FORCE_RELEASE, 2, {RDL__KEY_HOLD, RDL__KEY_FENCE}},
    .info = {RDL__SCRIPT_RW_INFO,
             3,
             {RDL__KEY_HOLD, RDL__KEY_FENCE, RDL__KEY_AUX1},
             1,
             {RDL__ARG_SIDE}},
    .side = "w",
    .parse_release = rdl__parse_release,
    .parse_force = rdl__parse_force,
    .parse_info = parse_info,
    .renew_script = RDL__SCRIPT_RW_RENEW,
    .member_prefix = "w:",
    .aux_suffix = {NULL, "ww"},
    .queue = &writers_queue,
};

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
