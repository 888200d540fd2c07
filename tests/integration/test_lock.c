/* The reentrant lock through the public API (include/rdl/lock.h), against
 * a redis-server of each test's own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdlt.h"

#define A ((rdl_owner_t)1)
#define B ((rdl_owner_t)2)

/* ---- helpers ---------------------------------------------------------------- */

/* Every key under "rdl:" with its value (DUMP) and whether it has a TTL,
 * as one string: equal snapshots mean nothing was written. */
static char *snapshot(rdlt_server *s)
{
    redisReply *keys = rdlt_cmd(s, "KEYS rdl:*");
    size_t cap = 4096, len = 0, i, j, k;
    char *out = malloc(cap);
    assert_non_null(out);
    out[0] = '\0';
    /* KEYS has no order: sort the names first. */
    for (i = 0; i < keys->elements; i++)
        for (j = i + 1; j < keys->elements; j++)
            if (strcmp(keys->element[j]->str, keys->element[i]->str) < 0) {
                redisReply *t = keys->element[i];
                keys->element[i] = keys->element[j];
                keys->element[j] = t;
            }
    for (i = 0; i < keys->elements; i++) {
        const char *name = keys->element[i]->str;
        redisReply *d = rdlt_cmd(s, "DUMP %s", name);
        redisReply *t = rdlt_cmd(s, "PTTL %s", name);
        size_t need = strlen(name) + 2 * d->len + 32;
        if (len + need >= cap) {
            cap = 2 * (len + need);
            out = realloc(out, cap);
            assert_non_null(out);
        }
        len += (size_t)sprintf(out + len, "%s=", name);
        for (k = 0; k < d->len; k++)
            len += (size_t)sprintf(out + len, "%02x", (unsigned char)d->str[k]);
        len += (size_t)sprintf(out + len, ",%s;",
                               t->integer >= 0 ? "ttl" : "persistent");
        freeReplyObject(d);
        freeReplyObject(t);
    }
    freeReplyObject(keys);
    return out;
}

/* Asserts that every key under "rdl:" expires: a lock must never be left
 * held forever. */
static void assert_all_keys_expire(rdlt_server *s)
{
    redisReply *keys = rdlt_cmd(s, "KEYS rdl:*");
    size_t i;
    for (i = 0; i < keys->elements; i++) {
        redisReply *t = rdlt_cmd(s, "PTTL %s", keys->element[i]->str);
        long long ttl = t->integer;
        char name[256];
        freeReplyObject(t);
        if (ttl < 0) {
            snprintf(name, sizeof(name), "%s", keys->element[i]->str);
            freeReplyObject(keys);
            fail_msg("key \"%s\" has no TTL (PTTL %lld)", name, ttl);
        }
    }
    freeReplyObject(keys);
}

/* ---- basics --------------------------------------------------------------- */

static void test_lock_acquire_release(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "basic");
    rdl_lock_info_t info;
    uint64_t token;
    (void)state;

    info = rdlt_info(l, A);
    assert_int_equal(info.locked, 0);
    assert_int_equal(info.held_by_owner, 0);
    assert_int_equal(info.hold_count, 0);
    assert_int_equal(info.holders, 0);
    assert_int_equal(info.waiters, 0);
    assert_int_equal(info.ttl_ms, -2);
    assert_int_equal(rdl_lock_fencing_token(l, A), 0);

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 5000));
    token = rdl_lock_fencing_token(l, A);
    assert_true(token > 0);
    assert_int_equal(rdl_lock_fencing_token(l, B), 0);
    info = rdlt_info(l, A);
    assert_int_equal(info.locked, 1);
    assert_int_equal(info.held_by_owner, 1);
    assert_int_equal(info.hold_count, 1);
    assert_int_equal(info.holders, 1);
    rdlt_assert_between(info.ttl_ms, 3000, 5000);
    assert_true(info.fencing_token == token);
    info = rdlt_info(l, B);
    assert_int_equal(info.locked, 1);
    assert_int_equal(info.held_by_owner, 0);
    assert_int_equal(info.hold_count, 0);

    rdlt_assert_ok(rdl_lock_release_as(l, A));
    assert_int_equal(rdl_lock_fencing_token(l, A), 0);
    info = rdlt_info(l, A);
    assert_int_equal(info.locked, 0);
    assert_int_equal(info.held_by_owner, 0);
    assert_int_equal(info.ttl_ms, -2);
    /* The latest token issued is still reported. */
    assert_true(info.fencing_token == token);
    assert_string_equal(rdl_lock_name(l), "basic");
}

static void test_lock_reentrant_counts(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "re");
    uint64_t token;
    uint32_t i;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire(l, 0, 5000));
    token = rdl_lock_fencing_token(l, rdl_owner_self());
    for (i = 2; i <= 3; i++) {
        rdlt_assert_ok(rdl_lock_acquire(l, 0, 5000));
        assert_int_equal(rdlt_info(l, rdl_owner_self()).hold_count, i);
        /* Anyone can see the holder's count. */
        assert_int_equal(rdlt_info(l, B).holder_count, i);
        /* Re-entering keeps the hold's token. */
        assert_true(rdl_lock_fencing_token(l, rdl_owner_self()) == token);
    }
    /* Another owner cannot enter meanwhile. */
    rdlt_assert_rc(rdl_lock_acquire_as(l, B, 0, 5000), RDL_EBUSY);
    for (i = 2; i >= 1; i--) {
        rdlt_assert_ok(rdl_lock_release(l));
        assert_int_equal(rdlt_info(l, rdl_owner_self()).hold_count, i);
        assert_int_equal(rdlt_info(l, A).locked, 1);
        assert_true(rdl_lock_fencing_token(l, rdl_owner_self()) == token);
    }
    rdlt_assert_ok(rdl_lock_release(l));
    assert_int_equal(rdlt_info(l, rdl_owner_self()).locked, 0);
    rdlt_assert_rc(rdl_lock_release(l), RDL_ENOTHELD);
    rdlt_assert_ok(rdl_lock_acquire_as(l, B, 0, 5000));
    assert_true(rdl_lock_fencing_token(l, B) > token);
}

/* Re-entering sets the lease to the larger of what is left and the new
 * lease: it never shortens a hold. */
static void test_lock_reentry_never_shortens_lease(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "lease");
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 200));
    rdlt_assert_between(rdlt_info(l, A).ttl_ms, 8000, 10000);

    rdlt_assert_rc(rdl_lock_acquire_as(l, B, 0, 1), RDL_EBUSY);
    rdlt_assert_ok(rdl_lock_force_release(l));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 500));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000));
    rdlt_assert_between(rdlt_info(l, A).ttl_ms, 8000, 10000);
}

static void test_lock_wait_zero_on_held_lock_is_busy(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "busy");
    int64_t t0;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    t0 = rdlt_now_ms();
    rdlt_assert_rc(rdl_lock_acquire_as(l, B, 0, 5000), RDL_EBUSY);
    rdlt_assert_between(rdlt_now_ms() - t0, 0, 500);
    assert_true(strlen(rdl_client_errmsg(c)) > 0);
    assert_int_equal(rdl_lock_fencing_token(l, B), 0);
    assert_int_equal(rdlt_info(l, A).hold_count, 1);
    assert_int_equal(rdlt_info(l, B).held_by_owner, 0);
}

/* Owners are local to a client: the same owner value on another client is
 * another owner. */
static void test_lock_owner_is_per_client(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c1 = rdlt_client(s), *c2 = rdlt_client(s);
    rdl_lock_t *l1 = rdlt_lock(c1, "shared"), *l2 = rdlt_lock(c2, "shared");
    (void)state;

    assert_string_not_equal(rdl_client_id(c1), rdl_client_id(c2));
    rdlt_assert_ok(rdl_lock_acquire_as(l1, A, 0, 30000));
    rdlt_assert_rc(rdl_lock_acquire_as(l2, A, 0, 30000), RDL_EBUSY);
    rdlt_assert_rc(rdl_lock_release_as(l2, A), RDL_ENOTHELD);
    assert_int_equal(rdlt_info(l2, A).held_by_owner, 0);
    assert_int_equal(rdlt_info(l1, A).held_by_owner, 1);
}

static void test_lock_release_by_non_owner_changes_nothing(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c1 = rdlt_client(s), *c2 = rdlt_client(s);
    rdl_lock_t *l1 = rdlt_lock(c1, "mine"), *l2 = rdlt_lock(c2, "mine");
    rdl_lock_info_t before, after;
    char *snap1, *snap2;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l1, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_acquire_as(l1, A, 0, 30000));
    before = rdlt_info(l1, A);
    snap1 = snapshot(s);

    rdlt_assert_rc(rdl_lock_release_as(l1, B), RDL_ENOTHELD);
    rdlt_assert_rc(rdl_lock_release_as(l2, A), RDL_ENOTHELD);
    rdlt_assert_rc(rdl_lock_release(l2), RDL_ENOTHELD);

    snap2 = snapshot(s);
    after = rdlt_info(l1, A);
    if (strcmp(snap1, snap2) != 0) {
        print_error("before: %s\nafter:  %s\n", snap1, snap2);
        free(snap1);
        free(snap2);
        fail_msg("a release by a non-owner changed the data in Redis");
    }
    free(snap1);
    free(snap2);
    assert_int_equal(after.hold_count, 2);
    assert_true(after.fencing_token == before.fencing_token);
    assert_true(after.ttl_ms <= before.ttl_ms);
    assert_true(rdl_lock_fencing_token(l1, A) == before.fencing_token);
}

/* ---- waiting ---------------------------------------------------------------- */

static void test_lock_wait_budget_times_out(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "budget");
    int64_t t0, took;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    t0 = rdlt_now_ms();
    rdlt_assert_rc(rdl_lock_acquire_as(l, B, 300, 5000), RDL_ETIMEDOUT);
    took = rdlt_now_ms() - t0;
    rdlt_assert_between(took, 300, 1300);
    assert_true(strlen(rdl_client_errmsg(c)) > 0);
    /* The waiter left nothing behind: the holder is untouched. */
    assert_int_equal(rdlt_info(l, A).hold_count, 1);
    assert_int_equal(rdlt_info(l, B).held_by_owner, 0);
}

typedef struct waiter {
    rdl_lock_t *lock;
    rdl_owner_t owner;
    int64_t wait_ms;
    int64_t lease_ms;
    int rc;
    int64_t done_at;
    int started;
} waiter;

static void *wait_thread(void *arg)
{
    waiter *w = arg;
    __atomic_store_n(&w->started, 1, __ATOMIC_RELEASE);
    w->rc = rdl_lock_acquire_as(w->lock, w->owner, w->wait_ms, w->lease_ms);
    w->done_at = rdlt_now_ms();
    return NULL;
}

/* A waiter sleeps until the release message, not until its budget or the
 * holder's lease (30 s here), and does not poll meanwhile. */
static void test_lock_waiter_wakes_on_release(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *ch = rdlt_client(s), *cw = rdlt_client(s);
    rdl_lock_t *lh = rdlt_lock(ch, "wake"), *lw = rdlt_lock(cw, "wake");
    waiter w = {lw, B, 10000, 5000, -999, 0, 0};
    rdl_client_stats_t before, after;
    rdlt_thread *t;
    int64_t released;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(lh, A, 0, 30000));
    rdlt_assert_ok(rdl_client_stats(cw, &before));
    t = rdlt_thread_start(wait_thread, &w);
    rdlt_sleep_ms(200);
    released = rdlt_now_ms(); /* the waiter may return before release does */
    rdlt_assert_ok(rdl_lock_release_as(lh, A));
    rdlt_thread_join(t);
    rdlt_assert_ok(rdl_client_stats(cw, &after));

    rdlt_assert_ok(w.rc);
    rdlt_assert_between(w.done_at - released, 0, 500);
    assert_true(rdl_lock_fencing_token(lw, B) > 0);
    /* First try, the try after the subscription is confirmed, the try after
     * the wake-up: a waiter that polled would have made many more. */
    rdlt_assert_between(after.attempts - before.attempts, 1, 4);
    rdlt_assert_between(after.acquires - before.acquires, 1, 1);
}

/* A holder that never releases costs a waiter one lease, not its whole
 * budget (Redis publishes nothing when a key expires). */
static void test_lock_waiter_takes_over_after_lease(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "expire");
    int64_t t0, took;
    uint64_t t1;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 600));
    t1 = rdl_lock_fencing_token(l, A);
    t0 = rdlt_now_ms();
    rdlt_assert_ok(rdl_lock_acquire_as(l, B, 10000, 5000));
    took = rdlt_now_ms() - t0;
    rdlt_assert_between(took, 400, 1600);
    assert_true(rdl_lock_fencing_token(l, B) > t1);
}

/* Very long waits are "no limit" in practice, not an overflow into the
 * past. */
static void test_lock_huge_wait_budget(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "huge-wait");
    int64_t t0;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 300));
    t0 = rdlt_now_ms();
    rdlt_assert_ok(rdl_lock_acquire_as(l, B, INT64_MAX, 5000));
    rdlt_assert_between(rdlt_now_ms() - t0, 100, 1300);
}

static void test_lock_force_release(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c1 = rdlt_client(s), *c2 = rdlt_client(s);
    rdl_lock_t *l1 = rdlt_lock(c1, "force"), *l2 = rdlt_lock(c2, "force");
    waiter w = {l2, B, 10000, 5000, -999, 0, 0};
    rdlt_thread *t;
    int64_t forced;
    (void)state;

    rdlt_assert_rc(rdl_lock_force_release(l1), RDL_ENOTHELD);
    rdlt_assert_ok(rdl_lock_acquire_as(l1, A, 0, 30000));
    rdlt_assert_ok(rdl_lock_acquire_as(l1, A, 0, 30000));
    t = rdlt_thread_start(wait_thread, &w);
    rdlt_sleep_ms(200);
    /* Frees it whatever the count, and wakes the waiter at once. */
    forced = rdlt_now_ms();
    rdlt_assert_ok(rdl_lock_force_release(l2));
    rdlt_thread_join(t);
    rdlt_assert_ok(w.rc);
    rdlt_assert_between(w.done_at - forced, 0, 500);
    /* The old holder learns that its hold is gone. */
    rdlt_assert_rc(rdl_lock_release_as(l1, A), RDL_ELOST);
    assert_int_equal(rdl_lock_fencing_token(l1, A), 0);
    assert_int_equal(rdlt_info(l2, B).hold_count, 1);
    rdlt_assert_ok(rdl_lock_release_as(l2, B));
    rdlt_assert_rc(rdl_lock_force_release(l1), RDL_ENOTHELD);
}

static void test_lock_release_after_expiry_is_lost(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "lost");
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire(l, 0, 100));
    rdlt_sleep_ms(300);
    assert_int_equal(rdlt_info(l, rdl_owner_self()).locked, 0);
    rdlt_assert_rc(rdl_lock_release(l), RDL_ELOST);
    rdlt_assert_rc(rdl_lock_release(l), RDL_ENOTHELD);
}

/* ---- fencing tokens ----------------------------------------------------- */

static void test_lock_fencing_token_increases_across_expiry(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "fence");
    uint64_t t1, t2, t3;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire(l, 0, 100));
    t1 = rdl_lock_fencing_token(l, rdl_owner_self());
    rdlt_sleep_ms(300);
    rdlt_assert_ok(rdl_lock_acquire(l, 0, 5000));
    t2 = rdl_lock_fencing_token(l, rdl_owner_self());
    assert_int_equal(rdlt_info(l, rdl_owner_self()).hold_count, 1);
    rdlt_assert_ok(rdl_lock_release(l));
    rdlt_assert_ok(rdl_lock_acquire_as(l, B, 0, 5000));
    t3 = rdl_lock_fencing_token(l, B);
    if (!(t1 > 0 && t2 > t1 && t3 > t2))
        fail_msg("tokens %llu, %llu, %llu do not increase",
                 (unsigned long long)t1, (unsigned long long)t2,
                 (unsigned long long)t3);
    assert_true(rdlt_info(l, B).fencing_token == t3);
}

/* A failover to a replica that missed the latest grants: the new master's
 * copy of the lock's hash is older, its last token smaller than tokens the
 * old master issued since. Played on one server by putting back an older
 * copy of the hash (DUMP, then RESTORE ... REPLACE). The next grant must
 * still get a larger token than every one issued before: the token follows
 * the server clock, not only the last token in the hash. */
static void
test_lock_fencing_token_increases_across_stale_failover(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "stale");
    uint64_t last = 0, t;
    redisReply *dump, *r;
    int i;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire(l, 0, 5000));
    rdlt_assert_ok(rdl_lock_release(l));
    dump = rdlt_cmd(s, "DUMP rdl:lock:{stale}");
    assert_int_equal(dump->type, REDIS_REPLY_STRING);
    /* The grants the replica never saw. */
    for (i = 0; i < 5; i++) {
        rdlt_assert_ok(rdl_lock_acquire(l, 0, 5000));
        last = rdl_lock_fencing_token(l, rdl_owner_self());
        rdlt_assert_ok(rdl_lock_release(l));
    }
    r = rdlt_cmd(s, "RESTORE rdl:lock:{stale} 0 %b REPLACE", dump->str,
                 dump->len);
    assert_int_equal(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    freeReplyObject(dump);
    rdlt_assert_ok(rdl_lock_acquire_as(l, B, 0, 5000));
    t = rdl_lock_fencing_token(l, B);
    if (t <= last)
        fail_msg("token %llu after the stale copy is not above %llu",
                 (unsigned long long)t, (unsigned long long)last);
    rdlt_assert_ok(rdl_lock_release_as(l, B));
}

#define CONTENDERS 8
#define ROUNDS 125

typedef struct contest {
    rdl_lock_t *locks[2];
    int inside;      /* holders in the critical section right now */
    int overlaps;    /* times a holder found another one inside */
    uint64_t last;   /* token of the previous critical section */
    int regressions; /* tokens not above the previous section's */
    int errors;
    int first_error;
    uint64_t tokens[CONTENDERS * ROUNDS];
    int ntokens;
} contest;

typedef struct contender {
    contest *k;
    int index;
} contender;

static void *contend(void *arg)
{
    contender *me = arg;
    contest *k = me->k;
    rdl_lock_t *l = k->locks[me->index % 2];
    int i, rc;

    for (i = 0; i < ROUNDS; i++) {
        uint64_t token;
        rc = rdl_lock_acquire(l, 20000, 5000);
        if (rc != 0) {
            if (__atomic_fetch_add(&k->errors, 1, __ATOMIC_SEQ_CST) == 0)
                k->first_error = rc;
            continue;
        }
        if (__atomic_add_fetch(&k->inside, 1, __ATOMIC_SEQ_CST) != 1)
            __atomic_fetch_add(&k->overlaps, 1, __ATOMIC_SEQ_CST);
        token = rdl_lock_fencing_token(l, rdl_owner_self());
        /* Inside the critical section, so these are serialised if the
         * lock works; atomics keep a broken lock from being a data race. */
        if (token <= __atomic_load_n(&k->last, __ATOMIC_SEQ_CST))
            __atomic_fetch_add(&k->regressions, 1, __ATOMIC_SEQ_CST);
        __atomic_store_n(&k->last, token, __ATOMIC_SEQ_CST);
        k->tokens[__atomic_fetch_add(&k->ntokens, 1, __ATOMIC_SEQ_CST)] = token;
        __atomic_sub_fetch(&k->inside, 1, __ATOMIC_SEQ_CST);
        rc = rdl_lock_release(l);
        if (rc != 0 && __atomic_fetch_add(&k->errors, 1, __ATOMIC_SEQ_CST) == 0)
            k->first_error = rc;
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* 8 threads on two clients, 125 acquisitions each: never two holders,
 * and 1,000 tokens strictly increasing in the order of the holds. */
static void test_lock_fencing_tokens_strictly_increase(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c1 = rdlt_client(s), *c2 = rdlt_client(s);
    static contest k;
    contender who[CONTENDERS];
    rdlt_thread *t[CONTENDERS];
    int i;
    (void)state;

    memset(&k, 0, sizeof(k));
    k.locks[0] = rdlt_lock(c1, "tokens");
    k.locks[1] = rdlt_lock(c2, "tokens");
    for (i = 0; i < CONTENDERS; i++) {
        who[i].k = &k;
        who[i].index = i;
        t[i] = rdlt_thread_start(contend, &who[i]);
    }
    for (i = 0; i < CONTENDERS; i++)
        rdlt_thread_join(t[i]);

    if (k.errors > 0)
        fail_msg("%d calls failed, the first with %s", k.errors,
                 rdl_err_name(k.first_error));
    assert_int_equal(k.overlaps, 0);
    assert_int_equal(k.regressions, 0);
    assert_int_equal(k.ntokens, CONTENDERS * ROUNDS);
    qsort(k.tokens, (size_t)k.ntokens, sizeof(k.tokens[0]), cmp_u64);
    for (i = 1; i < k.ntokens; i++)
        if (k.tokens[i] <= k.tokens[i - 1])
            fail_msg("token %llu issued twice",
                     (unsigned long long)k.tokens[i]);
    assert_true(rdlt_info(k.locks[0], A).fencing_token ==
                k.tokens[k.ntokens - 1]);
}

typedef struct hammer {
    rdl_lock_t *lock;
    int *inside;
    int *overlaps;
    int *errors;
    int rounds;
} hammer;

static void *hammer_thread(void *arg)
{
    hammer *h = arg;
    int i;
    for (i = 0; i < h->rounds; i++) {
        if (rdl_lock_acquire(h->lock, 20000, 5000) != 0) {
            __atomic_fetch_add(h->errors, 1, __ATOMIC_SEQ_CST);
            continue;
        }
        if (__atomic_add_fetch(h->inside, 1, __ATOMIC_SEQ_CST) != 1)
            __atomic_fetch_add(h->overlaps, 1, __ATOMIC_SEQ_CST);
        /* Re-entering inside the section must not let anyone in. */
        if (i % 4 == 0) {
            if (rdl_lock_acquire(h->lock, 0, 5000) != 0 ||
                rdl_lock_release(h->lock) != 0)
                __atomic_fetch_add(h->errors, 1, __ATOMIC_SEQ_CST);
        }
        rdlt_sleep_ms(i % 3); /* widen the window a little */
        if (__atomic_load_n(h->inside, __ATOMIC_SEQ_CST) != 1)
            __atomic_fetch_add(h->overlaps, 1, __ATOMIC_SEQ_CST);
        __atomic_sub_fetch(h->inside, 1, __ATOMIC_SEQ_CST);
        if (rdl_lock_release(h->lock) != 0)
            __atomic_fetch_add(h->errors, 1, __ATOMIC_SEQ_CST);
    }
    return NULL;
}

static void test_lock_threads_never_hold_together(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c[2];
    rdl_lock_t *l[2];
    hammer h[CONTENDERS];
    rdlt_thread *t[CONTENDERS];
    int inside = 0, overlaps = 0, errors = 0, i;
    (void)state;

    c[0] = rdlt_client(s);
    c[1] = rdlt_client(s);
    l[0] = rdlt_lock(c[0], "hammer");
    l[1] = rdlt_lock(c[1], "hammer");
    for (i = 0; i < CONTENDERS; i++) {
        h[i].lock = l[i % 2];
        h[i].inside = &inside;
        h[i].overlaps = &overlaps;
        h[i].errors = &errors;
        h[i].rounds = 40;
        t[i] = rdlt_thread_start(hammer_thread, &h[i]);
    }
    for (i = 0; i < CONTENDERS; i++)
        rdlt_thread_join(t[i]);
    assert_int_equal(errors, 0);
    assert_int_equal(overlaps, 0);
    assert_int_equal(rdlt_info(l[0], A).locked, 0);
}

/* RDL_LEASE_AUTO takes the client's watchdog lease (client.h: applied at
 * acquisition; renewal arrives with the watchdog, and keeps the TTL within
 * the lease as well). */
static void test_lock_lease_auto_uses_watchdog_lease(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client_new(rdlt_server_url(s));
    rdl_lock_t *l;
    (void)state;

    rdlt_assert_ok(rdl_client_set_watchdog_ms(c, 2000));
    rdlt_assert_ok(rdl_client_connect(c));
    l = rdlt_lock(c, "auto");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, RDL_LEASE_AUTO));
    rdlt_assert_between(rdlt_info(l, A).ttl_ms, 1000, 2000);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
}

/* Subscriptions are not leaked: once nobody waits, the client unsubscribes
 * (after a short linger). */
static void test_lock_subscription_ends_after_wait(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "subs");
    int64_t deadline;
    long long channels = -1;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 30000));
    rdlt_assert_rc(rdl_lock_acquire_as(l, B, 200, 5000), RDL_ETIMEDOUT);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    deadline = rdlt_now_ms() + 10000;
    while (rdlt_now_ms() < deadline) {
        redisReply *r = rdlt_cmd(s, "PUBSUB CHANNELS *");
        channels = (long long)r->elements;
        freeReplyObject(r);
        if (channels == 0)
            break;
        rdlt_sleep_ms(100);
    }
    assert_int_equal(channels, 0);
}

typedef struct errmsg_arg {
    rdl_client_t *c;
    rdl_lock_t *lock;
    int rc;
    char msg[256];
} errmsg_arg;

static void *errmsg_thread(void *arg)
{
    errmsg_arg *e = arg;
    e->rc = rdl_lock_acquire_as(e->lock, B, 0, 1000);
    snprintf(e->msg, sizeof(e->msg), "%s", rdl_client_errmsg(e->c));
    return NULL;
}

/* rdl_client_errmsg() is per thread: a thread sees the detail of its own
 * last error, not of another thread's. */
static void test_lock_errmsg_per_thread(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "errmsg");
    errmsg_arg e = {c, l, -999, ""};
    char mine[256];
    (void)state;

    rdlt_assert_rc(rdl_lock_acquire_as(l, A, 0, -7), RDL_EINVAL);
    snprintf(mine, sizeof(mine), "%s", rdl_client_errmsg(c));
    assert_true(strlen(mine) > 0);
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 5000));
    rdlt_thread_join(rdlt_thread_start(errmsg_thread, &e));
    rdlt_assert_rc(e.rc, RDL_EBUSY);
    assert_true(strlen(e.msg) > 0);
    assert_string_not_equal(e.msg, mine);
    assert_string_equal(rdl_client_errmsg(c), mine);
}

/* ---- owners and threads ------------------------------------------------- */

typedef struct handoff {
    rdl_lock_t *lock;
    rdl_owner_t self;
    int busy_rc;
    int release_rc;
} handoff;

static void *other_thread(void *arg)
{
    handoff *h = arg;
    h->self = rdl_owner_self();
    /* The main thread holds the lock as its own owner: busy for us. */
    h->busy_rc = rdl_lock_acquire(h->lock, 0, 5000);
    /* A hold taken with an explicit owner may be released anywhere. */
    h->release_rc = rdl_lock_release_as(h->lock, 77);
    return NULL;
}

static void test_lock_owner_self_and_explicit_owners(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "threads"), *l2 = rdlt_lock(c, "handed");
    handoff h = {l2, 0, -999, -999};
    rdl_owner_t self = rdl_owner_self();
    (void)state;

    assert_true(self == rdl_owner_self());
    assert_true(self >> 63 == 1);
    rdlt_assert_ok(rdl_lock_acquire(l, 0, 5000));
    rdlt_assert_ok(rdl_lock_acquire_as(l, self, 0, 5000));
    assert_int_equal(rdlt_info(l, self).hold_count, 2);

    rdlt_assert_ok(rdl_lock_acquire(l2, 0, 5000));
    rdlt_assert_rc(rdl_lock_acquire_as(l2, 77, 0, 5000), RDL_EBUSY);
    rdlt_assert_ok(rdl_lock_release(l2));
    rdlt_assert_ok(rdl_lock_acquire_as(l2, 77, 0, 5000));
    rdlt_thread_join(rdlt_thread_start(other_thread, &h));
    assert_true(h.self != self);
    assert_true(h.self >> 63 == 1);
    rdlt_assert_rc(h.busy_rc, RDL_EBUSY);
    rdlt_assert_ok(h.release_rc);
    assert_int_equal(rdlt_info(l2, 77).locked, 0);
}

/* ---- names -------------------------------------------------------------- */

static void test_lock_odd_names(void **state)
{
    static const char *const names[] = {"{}",
                                        "a}b{c}",
                                        "{{x}}",
                                        "x{}{y}",
                                        "}{a}",
                                        "a}b",
                                        "a b\tc",
                                        "\xc3\xa9",
                                        "rdl:lock:{x}",
                                        "{order:42}:stock",
                                        "{order:42}:payment"};
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l[sizeof(names) / sizeof(names[0])];
    size_t i, n = sizeof(names) / sizeof(names[0]);
    (void)state;

    /* Distinct names are distinct locks, even when they share a slot. */
    for (i = 0; i < n; i++) {
        l[i] = rdlt_lock(c, names[i]);
        rdlt_assert_ok(rdl_lock_acquire_as(l[i], A, 0, 5000));
    }
    for (i = 0; i < n; i++) {
        rdl_lock_info_t info = rdlt_info(l[i], A);
        assert_int_equal(info.hold_count, 1);
        assert_string_equal(rdl_lock_name(l[i]), names[i]);
    }
    for (i = 0; i < n; i++)
        rdlt_assert_ok(rdl_lock_release_as(l[i], A));
    for (i = 0; i < n; i++)
        assert_int_equal(rdlt_info(l[i], A).locked, 0);
}

/* Distinct names are distinct locks: no key of one lock may be a key of
 * another. A name may hold ':' and braces, so a name that ends like one of
 * the library's key suffixes must not land on that key of another lock
 * ("{x}:fence" is a valid name, and "{x}" keeps its tag). Here the hold of
 * "{x}:fence" must keep its 2 s lease whatever happens to lock "{x}". */
static void test_lock_names_never_share_keys(void **state)
{
    static const char *const suffixes[] = {"fence", "ch",      "token",
                                           "queue", "timeout", "fence:x"};
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *base = rdlt_lock(c, "{x}");
    char name[64], why[512] = "";
    size_t i, at = 0;
    (void)state;

    for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        rdl_lock_t *other;
        rdl_lock_info_t info;
        int rc;
        snprintf(name, sizeof(name), "{x}:%s", suffixes[i]);
        other = rdlt_lock(c, name);
        rdlt_assert_ok(rdl_lock_acquire_as(base, A, 0, 2000));
        rc = rdl_lock_acquire_as(other, B, 0, 2000);
        if (rc == 0)
            rc = rdl_lock_release_as(base, A);
        else
            (void)rdl_lock_force_release(base);
        info = rdlt_info(other, B);
        if (rc != 0 || info.hold_count != 1 || info.ttl_ms > 2000)
            at += (size_t)snprintf(why + at, sizeof(why) - at,
                                   "\"%s\": %s, count %u, ttl %lld ms; ", name,
                                   rdl_err_name(rc), info.hold_count,
                                   (long long)info.ttl_ms);
        (void)rdl_lock_force_release(other);
        freeReplyObject(rdlt_cmd(s, "FLUSHALL"));
        if (at >= sizeof(why) - 1)
            break;
    }
    if (why[0] != '\0')
        fail_msg("lock \"{x}\" changed other locks: %s", why);
}

static void test_lock_longest_name_and_copy(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    char name[1025];
    rdl_lock_t *l;
    (void)state;

    memset(name, 'n', 1024);
    name[1024] = '\0';
    l = rdlt_lock(c, name);
    name[0] = 'X'; /* the lock keeps its own copy */
    assert_int_equal(strlen(rdl_lock_name(l)), 1024);
    assert_int_equal(rdl_lock_name(l)[0], 'n');
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 5000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
}

/* ---- object lifetime ------------------------------------------------------ */

/* Once a blocking call has returned, nothing of it is pending: the lock may
 * be freed at once (lock.h: "no request on the lock may be pending"). The
 * library must not touch the lock object afterwards (AddressSanitizer
 * reports it as heap-use-after-free; without it, a crash now and then). */
static void test_lock_free_right_after_calls(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *busy = rdlt_lock(c, "lifetime-busy");
    char name[64];
    int i;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(busy, A, 0, 30000));
    for (i = 0; i < 300; i++) {
        rdl_lock_t *l = NULL;
        snprintf(name, sizeof(name), "lifetime-%d", i % 3);
        rdlt_assert_ok(rdl_lock_new(c, name, &l));
        switch (i % 3) {
        case 0: /* acquired */
            rdlt_assert_ok(rdl_lock_acquire_as(l, B, 0, 1000));
            rdlt_assert_ok(rdl_lock_release_as(l, B));
            break;
        case 1: /* timed out after a wait */
            rdl_lock_free(l);
            rdlt_assert_ok(rdl_lock_new(c, "lifetime-busy", &l));
            rdlt_assert_rc(rdl_lock_acquire_as(l, B, 1, 1000), RDL_ETIMEDOUT);
            break;
        default: /* busy */
            rdl_lock_free(l);
            rdlt_assert_ok(rdl_lock_new(c, "lifetime-busy", &l));
            rdlt_assert_rc(rdl_lock_acquire_as(l, B, 0, 1000), RDL_EBUSY);
            break;
        }
        rdl_lock_free(l);
    }
}

/* ---- bad input -------------------------------------------------------------- */

static void test_lock_bad_input_writes_nothing(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "input"), *out = (rdl_lock_t *)&out;
    rdl_lock_info_t info;
    char *big = malloc(2049);
    (void)state;

    assert_non_null(big);
    memset(big, 'b', 2048);
    big[2048] = '\0';
    rdlt_assert_rc(rdl_lock_new(NULL, "x", &out), RDL_EINVAL);
    assert_null(out);
    rdlt_assert_rc(rdl_lock_new(c, NULL, &out), RDL_EINVAL);
    rdlt_assert_rc(rdl_lock_new(c, "x", NULL), RDL_EINVAL);
    rdlt_assert_rc(rdl_lock_new(c, "", &out), RDL_EINVAL);
    rdlt_assert_rc(rdl_lock_new(c, big, &out), RDL_EINVAL);
    assert_null(out);
    big[1025] = '\0';
    rdlt_assert_rc(rdl_lock_new(c, big, &out), RDL_EINVAL);
    free(big);
    /* An untagged name that starts with '}' cannot keep its keys in one
     * cluster slot (src/core/keys.c). */
    rdlt_assert_rc(rdl_lock_new(c, "}abc", &out), RDL_EINVAL);
    assert_non_null(strstr(rdl_client_errmsg(c), "hash tag"));
    assert_null(out);

    rdlt_assert_rc(rdl_lock_acquire(NULL, 0, 1000), RDL_EINVAL);
    rdlt_assert_rc(rdl_lock_acquire_as(NULL, A, 0, 1000), RDL_EINVAL);
    rdlt_assert_rc(rdl_lock_release(NULL), RDL_EINVAL);
    rdlt_assert_rc(rdl_lock_release_as(NULL, A), RDL_EINVAL);
    rdlt_assert_rc(rdl_lock_force_release(NULL), RDL_EINVAL);
    rdlt_assert_rc(rdl_lock_info(NULL, A, &info), RDL_EINVAL);
    rdlt_assert_rc(rdl_lock_info(l, A, NULL), RDL_EINVAL);
    assert_int_equal(rdl_lock_fencing_token(NULL, A), 0);

    rdlt_assert_rc(rdl_lock_acquire(l, -2, 1000), RDL_EINVAL);
    rdlt_assert_rc(rdl_lock_acquire(l, INT64_MIN, 1000), RDL_EINVAL);
    rdlt_assert_rc(rdl_lock_acquire(l, 0, 0), RDL_EINVAL);
    rdlt_assert_rc(rdl_lock_acquire(l, 0, -2), RDL_EINVAL);
    rdlt_assert_rc(rdl_lock_acquire(l, 0, INT64_MIN), RDL_EINVAL);
    rdlt_assert_rc(rdl_lock_acquire_as(l, A, 100, 0), RDL_EINVAL);
    rdlt_assert_rc(rdl_lock_acquire_as(l, A, -5, 1000), RDL_EINVAL);
    assert_true(strlen(rdl_client_errmsg(c)) > 0);

    assert_int_equal(rdlt_dbsize(s), 0);
    assert_int_equal(rdl_lock_fencing_token(l, A), 0);
}

/* A lease too long for Redis must be refused up front or work; an error
 * after the hold was written would leave it without expiry, held forever. */
static void test_lock_huge_lease_never_persists(void **state)
{
    static const int64_t leases[] = {INT64_MAX, INT64_MAX / 2, (int64_t)1 << 53,
                                     100000000000000000LL};
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "huge");
    size_t i;
    (void)state;

    for (i = 0; i < sizeof(leases) / sizeof(leases[0]); i++) {
        int rc = rdl_lock_acquire_as(l, A, 0, leases[i]);
        if (rc == 0) {
            assert_all_keys_expire(s);
            rdlt_assert_ok(rdl_lock_release_as(l, A));
        } else {
            if (rdlt_dbsize(s) != 0) {
                redisReply *r = rdlt_cmd(s, "PTTL rdl:lock:{huge}");
                long long ttl = r->integer;
                freeReplyObject(r);
                fail_msg("lease %lld: %s, yet the lock was written (PTTL of "
                         "the hold %lld)",
                         (long long)leases[i], rdl_err_name(rc), ttl);
            }
        }
        assert_int_equal(rdlt_info(l, B).locked, 0);
    }
}

static void test_lock_closed_client(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "closed"), *out = NULL;
    rdl_lock_info_t info;
    (void)state;

    rdlt_assert_ok(rdl_client_close(c));
    rdlt_assert_ok(rdl_client_close(c));
    rdlt_assert_rc(rdl_lock_acquire(l, 0, 1000), RDL_ECLOSED);
    rdlt_assert_rc(rdl_lock_acquire_as(l, A, 1000, 1000), RDL_ECLOSED);
    rdlt_assert_rc(rdl_lock_release(l), RDL_ECLOSED);
    rdlt_assert_rc(rdl_lock_release_as(l, A), RDL_ECLOSED);
    rdlt_assert_rc(rdl_lock_force_release(l), RDL_ECLOSED);
    rdlt_assert_rc(rdl_lock_info(l, A, &info), RDL_ECLOSED);
    rdlt_assert_rc(rdl_lock_new(c, "other", &out), RDL_ECLOSED);
    assert_null(out);
    assert_int_equal(rdlt_dbsize(s), 0);
}

/* ---- undo of an acquisition ------------------------------------------------ */

static long long undo_level(rdlt_server *s, const char *body, const char *owner,
                            const char *undo_of)
{
    redisReply *r =
        rdlt_cmd(s,
                 "EVAL %s 2 rdl:lock:{undo} rdl:lock.fence:{undo} "
                 "%s undo-req-%s publish rdl:lock.ch:{undo} 1000 5000 %s",
                 body, owner, undo_of, undo_of);
    long long v;
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    v = r->element[0]->integer;
    freeReplyObject(r);
    return v;
}

/* The release that undoes an acquisition whose outcome is unknown (or that
 * was cancelled) gives back a level only if the hold's last request is
 * that acquisition: if it never happened, nothing is released. */
static void test_lock_undo_releases_only_that_request(void **state)
{
    rdlt_server *s = rdlt_server_start();
    rdl_client_t *c = rdlt_client(s);
    rdl_lock_t *l = rdlt_lock(c, "undo");
    char *body = rdlt_read_script(RDL_TEST_SCRIPTS_DIR, "lock_release");
    redisReply *r;
    char owner[128], last[128];
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 5000));
    r = rdlt_cmd(s, "HMGET rdl:lock:{undo} o r");
    snprintf(owner, sizeof(owner), "%s", r->element[0]->str);
    snprintf(last, sizeof(last), "%s", r->element[1]->str);
    freeReplyObject(r);

    assert_int_equal(undo_level(s, body, owner, "some-other-request"), 0);
    assert_int_equal(rdlt_info(l, A).hold_count, 1);
    assert_int_equal(undo_level(s, body, owner, last), 1);
    assert_int_equal(rdlt_info(l, A).locked, 0);
    free(body);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_lock_acquire_release),
    RDLT_TEST(test_lock_reentrant_counts),
    RDLT_TEST(test_lock_reentry_never_shortens_lease),
    RDLT_TEST(test_lock_wait_zero_on_held_lock_is_busy),
    RDLT_TEST(test_lock_owner_is_per_client),
    RDLT_TEST(test_lock_release_by_non_owner_changes_nothing),
    RDLT_TEST(test_lock_wait_budget_times_out),
    RDLT_TEST(test_lock_waiter_wakes_on_release),
    RDLT_TEST(test_lock_waiter_takes_over_after_lease),
    RDLT_TEST(test_lock_huge_wait_budget),
    RDLT_TEST(test_lock_force_release),
    RDLT_TEST(test_lock_release_after_expiry_is_lost),
    RDLT_TEST(test_lock_fencing_token_increases_across_expiry),
    RDLT_TEST(test_lock_fencing_tokens_strictly_increase),
    RDLT_TEST(test_lock_fencing_token_increases_across_stale_failover),
    RDLT_TEST(test_lock_threads_never_hold_together),
    RDLT_TEST(test_lock_lease_auto_uses_watchdog_lease),
    RDLT_TEST(test_lock_subscription_ends_after_wait),
    RDLT_TEST(test_lock_errmsg_per_thread),
    RDLT_TEST(test_lock_owner_self_and_explicit_owners),
    RDLT_TEST(test_lock_odd_names),
    RDLT_TEST(test_lock_names_never_share_keys),
    RDLT_TEST(test_lock_longest_name_and_copy),
    RDLT_TEST(test_lock_free_right_after_calls),
    RDLT_TEST(test_lock_bad_input_writes_nothing),
    RDLT_TEST(test_lock_huge_lease_never_persists),
    RDLT_TEST(test_lock_closed_client),
    RDLT_TEST(test_lock_undo_releases_only_that_request),
};

RDLT_MAIN(tests)
