/* MultiLock: all parts or none (rdl_multilock_new).
 *
 * MultiLock takes its parts in one canonical order (kind, key, server), the
 * same in every process, waiting on each with what is left of the budget.
 * Two multilocks over overlapping sets then never wait on each other in a
 * cycle, so they cannot deadlock; a part that cannot be had in time makes
 * the call give back what it took.
 *
 * The grant rule: a composite is reported acquired only when every part is
 * held at that moment with at least half of the lease left (MULTI_KEEP;
 * auto leases are kept by the watchdog). Parts taken first run down their
 * fixed lease while a later part is waited for, so that wait is capped at
 * what keeps the earlier parts valid; when the cap (not the budget) ends
 * it, every part is given back and the acquisition starts over. A check of
 * every part's validity after the last one closes the remaining gap.
 *
 * Plain locks of one slot on one client are taken in one script call
 * instead (the one-call path below).
 *
 * The caller's thread (a composite's calls are blocking). */
#include <stdlib.h>

#include <sodium.h>
#include <uv.h>

#include "core/clock.h"
#include "multilock_int.h"

/* A composite with a fixed lease is granted only while every part has at
 * least this much of it left ("The grant rule" above). */
#define MULTI_KEEP(lease_ms) ((lease_ms) / 2)

/* A wait that ended without the lock: with budget given, RDL_ETIMEDOUT
 * (a one-try part answers RDL_EBUSY when the budget is down to 0). */
static int wait_failed(uint64_t deadline, int rc)
{
    return rc == RDL_EBUSY && deadline != 0 ? RDL_ETIMEDOUT : rc;
}

/* Takes the parts one by one, in their canonical order, under the grant
 * rule. */
static int take_in_order(rdl_lock_t *ml, rdl_owner_t owner, uint64_t deadline,
                         int64_t lease_ms)
{
    rdl__multi *m = rdl__multi_of(ml);
    int fixed = lease_ms != RDL_LEASE_AUTO;
    /* Auto leases are kept by the watchdog: still held is enough. */
    int64_t keep = fixed ? MULTI_KEEP(lease_ms) : 1;
    size_t i;

    for (;;) {
        uint64_t mask = 0;
        int rc = 0, capped = 0;
        for (i = 0; i < m->n; i++) {
            /* deadline 0 (one try) leaves 0 */
            int64_t wait = rdl__left_of(deadline, rdl__now_ms()), room;
            int by_lease = 0;
            if (fixed && mask != 0) {
                /* How long the parts held can wait and keep `keep`. */
                room = rdl__multi_min_valid(m, owner, mask) - keep;
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
            if (rdl__multi_grant(ml, owner, mask, keep))
                return 0;
            /* The last part came too late for the first, or a part was
             * lost meanwhile (a restart, a failover). */
            capped = 1;
        }
        rdl__multi_release_parts(m, owner, mask);
        if (capped && deadline != 0 &&
            rdl__left_of(deadline, rdl__now_ms()) != 0) {
            /* Start over, holding nothing, after a short random pause: a
             * lease too short for the round trips would otherwise spin. */
            uv_sleep(1 + randombytes_uniform(10));
            continue;
        }
        rc = capped ? (deadline == 0 ? RDL_EBUSY : RDL_ETIMEDOUT)
                    : wait_failed(deadline, rc);
        rdl__lock_say(ml,
                      "multilock: part %zu (\"%.200s\") not acquired: %s; "
                      "the parts taken before it were released",
                      i < m->n ? i : m->n - 1,
                      rdl_lock_name(m->parts[i < m->n ? i : m->n - 1]),
                      rdl_err_name(rc));
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
    rdl__multi *m = rdl__multi_of(ml);
    rdl_lock_t *waited = NULL;
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
            if (rdl__multi_grant(ml, owner, all, 1))
                return 0;
            /* A part was lost as soon as it was granted: start over. */
            rdl__multi_release_parts(m, owner, all);
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
    rdl__lock_say(ml, "multilock: not acquired: %s", rdl_err_name(rc));
    return rc;
}

/* The kind's take: one script call if the parts allow it. */
static int take(rdl_lock_t *ml, rdl_owner_t owner, uint64_t deadline,
                int64_t lease_ms)
{
    if (rdl__multi_of(ml)->one_call)
        return one_call_take(ml, owner, deadline, lease_ms);
    return take_in_order(ml, owner, deadline, lease_ms);
}

/* The canonical order of a multilock's parts: by kind, key and server. */
static int cmp_parts(const void *a, const void *b)
{
    return rdl__lock_order(*(rdl_lock_t *const *)a, *(rdl_lock_t *const *)b);
}

/* The kind's arrange: the canonical order, and whether the parts can be
 * taken in one call. */
static void arrange(rdl__multi *m)
{
    qsort(m->parts, m->n, sizeof(*m->parts), cmp_parts);
    m->one_call = rdl__lock_set_eligible(m->parts, m->n);
}

static const rdl__multi_kind multilock_kind = {
    .majority = 0,
    .arrange = arrange,
    .take = take,
};

int rdl_multilock_new(rdl_lock_t *const *locks, size_t n, rdl_lock_t **out)
{
    return rdl__multi_new(locks, n, &multilock_kind, out);
}
