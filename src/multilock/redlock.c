/* RedLock: a majority of independent deployments (rdl_redlock_new).
 *
 * RedLock tries every part once per round (the Redlock algorithm): it holds
 * the lock when a majority granted it and the time spent leaves some of the
 * lease (less a drift allowance); otherwise it releases what it got at
 * once, sleeps a random while and tries again until the budget is spent.
 * Its parts are taken in the order given, each on a client of its own.
 *
 * The caller's thread (a composite's calls are blocking). */
#include <stdio.h>

#include <sodium.h>
#include <uv.h>

#include "core/clock.h"
#include "multilock_int.h"

/* One Redlock round: tries every part once. Returns 0 (quorum held, state
 * set) or the round's failure, with the parts it took released. */
static int red_round(rdl_lock_t *ml, rdl_owner_t owner, int64_t lease_ms,
                     int *contended, char *text, size_t len)
{
    rdl__multi *m = rdl__multi_of(ml);
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
    if (ok >= m->quorum && rdl__multi_grant(ml, owner, mask, 1))
        return 0;
    rdl__multi_release_parts(m, owner, mask);
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
    rdl__lock_say(ml, "%s", text);
    /* Contention (the others answered: held elsewhere) is a busy lock; too
     * few answers is the lack of a quorum. */
    if (contended)
        return deadline == 0 ? RDL_EBUSY : RDL_ETIMEDOUT;
    return RDL_ENOQUORUM;
}

static const rdl__multi_kind redlock_kind = {
    .majority = 1,
    .arrange = NULL, /* as given */
    .take = red_take,
};

int rdl_redlock_new(rdl_lock_t *const *locks, size_t n, rdl_lock_t **out)
{
    return rdl__multi_new(locks, n, &redlock_kind, out);
}
