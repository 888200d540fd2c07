/* The event callback (include/rdl/events.h): one event per acquisition,
 * release, timed-out wait and lost hold, with the lock's name and kind,
 * the owner, the token and sane times; none for a one-shot try that found
 * the lock busy; none once the callback is cleared. */
#include <string.h>

#include <uv.h>

#include "rdlt.h"

#define A ((rdl_owner_t)1)
#define B ((rdl_owner_t)2)
#define MAX_EVENTS 64

typedef struct seen {
    uv_mutex_t mu;
    int n;
    rdl_event_t ev[MAX_EVENTS];
    char names[MAX_EVENTS][32];
    char kinds[MAX_EVENTS][16];
} seen;

static void on_event(const rdl_event_t *ev, void *data)
{
    seen *s = data;
    uv_mutex_lock(&s->mu);
    if (s->n < MAX_EVENTS) {
        s->ev[s->n] = *ev;
        snprintf(s->names[s->n], sizeof(s->names[0]), "%s", ev->name);
        snprintf(s->kinds[s->n], sizeof(s->kinds[0]), "%s", ev->lock_kind);
        s->n++;
    }
    uv_mutex_unlock(&s->mu);
}

static int count(seen *s)
{
    int n;
    uv_mutex_lock(&s->mu);
    n = s->n;
    uv_mutex_unlock(&s->mu);
    return n;
}

static void destroy(void *p)
{
    uv_mutex_destroy(&((seen *)p)->mu);
    free(p);
}

static seen *listen_to(rdl_client_t *c)
{
    seen *s = calloc(1, sizeof(*s));
    assert_non_null(s);
    assert_int_equal(uv_mutex_init(&s->mu), 0);
    rdlt_defer(destroy, s);
    rdlt_assert_ok(rdl_client_set_event_cb(c, on_event, s));
    return s;
}

/* Checks event i: kind, name, lock kind, owner. */
static const rdl_event_t *expect(seen *s, int i, rdl_event_kind_t kind,
                                 const char *name, const char *lock_kind,
                                 rdl_owner_t owner)
{
    if (count(s) <= i)
        fail_msg("event %d missing (%d seen)", i, count(s));
    assert_int_equal(s->ev[i].kind, kind);
    assert_string_equal(s->names[i], name);
    assert_string_equal(s->kinds[i], lock_kind);
    assert_int_equal(s->ev[i].owner, owner);
    return &s->ev[i];
}

static void free_lock(void *l)
{
    rdl_lock_free(l);
}

/* Acquired (wait time, token), released (held time), timed out (about
 * the budget); a busy one-shot try says nothing. */
static void test_events_plain_lock(void **state)
{
    rdlt_server *srv = rdlt_server_start();
    rdl_client_t *c = rdlt_client(srv);
    rdl_lock_t *l = rdlt_lock(c, "ev");
    seen *s = listen_to(c);
    const rdl_event_t *e;
    (void)state;

    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000));
    e = expect(s, 0, RDL_EVENT_ACQUIRED, "ev", "lock", A);
    assert_int_equal(e->fencing_token, rdl_lock_fencing_token(l, A));
    assert_true(e->wait_ms >= 0 && e->wait_ms < 2000);
    rdlt_assert_rc(rdl_lock_acquire_as(l, B, 0, 10000), RDL_EBUSY);
    assert_int_equal(count(s), 1);
    rdlt_assert_rc(rdl_lock_acquire_as(l, B, 300, 10000), RDL_ETIMEDOUT);
    e = expect(s, 1, RDL_EVENT_TIMEDOUT, "ev", "lock", B);
    assert_true(e->wait_ms >= 250 && e->wait_ms < 3000);
    assert_int_equal(e->fencing_token, 0);
    rdlt_sleep_ms(100);
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000)); /* re-entry */
    expect(s, 2, RDL_EVENT_ACQUIRED, "ev", "lock", A);
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    e = expect(s, 4, RDL_EVENT_RELEASED, "ev", "lock", A);
    assert_true(e->held_ms >= 350 && e->held_ms < 5000);
    assert_int_equal(e->fencing_token, s->ev[0].fencing_token);
    expect(s, 3, RDL_EVENT_RELEASED, "ev", "lock", A);
    rdlt_assert_rc(rdl_lock_release_as(l, A), RDL_ENOTHELD);
    assert_int_equal(count(s), 5);
}

/* Every script kind names itself. */
static void test_events_every_kind(void **state)
{
    rdlt_server *srv = rdlt_server_start();
    rdl_client_t *c = rdlt_client(srv);
    seen *s = listen_to(c);
    rdl_lock_t *f = NULL, *sem = NULL;
    rdl_rwlock_t *rw = NULL;
    (void)state;

    rdlt_assert_ok(rdl_fairlock_new(c, "f", &f));
    rdlt_defer(free_lock, f);
    rdlt_assert_ok(rdl_semaphore_new(c, "s", 2, &sem));
    rdlt_defer(free_lock, sem);
    rdlt_assert_ok(rdl_rwlock_new(c, "rw", &rw));
    rdlt_assert_ok(rdl_lock_acquire_as(f, A, 0, 10000));
    rdlt_assert_ok(rdl_lock_acquire_as(sem, A, 0, 10000));
    rdlt_assert_ok(rdl_lock_acquire_as(rdl_rwlock_read(rw), A, 0, 10000));
    rdlt_assert_ok(rdl_lock_release_as(rdl_rwlock_read(rw), A));
    rdlt_assert_ok(rdl_lock_acquire_as(rdl_rwlock_write(rw), A, 0, 10000));
    expect(s, 0, RDL_EVENT_ACQUIRED, "f", "fair", A);
    expect(s, 1, RDL_EVENT_ACQUIRED, "s", "semaphore", A);
    expect(s, 2, RDL_EVENT_ACQUIRED, "rw", "rwlock:read", A);
    expect(s, 3, RDL_EVENT_RELEASED, "rw", "rwlock:read", A);
    expect(s, 4, RDL_EVENT_ACQUIRED, "rw", "rwlock:write", A);
    rdl_rwlock_free(rw);
}

/* A hold the watchdog cannot keep (force-released elsewhere) is reported
 * lost; a cleared callback hears nothing more. */
static void test_events_lost_and_cleared(void **state)
{
    rdlt_server *srv = rdlt_server_start();
    rdl_client_t *c = rdlt_client_new(rdlt_server_url(srv));
    rdl_lock_t *l, *other;
    seen *s;
    int64_t deadline;
    const rdl_event_t *e;
    (void)state;

    rdlt_assert_ok(rdl_client_set_watchdog_ms(c, 300));
    s = listen_to(c); /* before connect */
    rdlt_assert_ok(rdl_client_connect(c));
    l = rdlt_lock(c, "lost");
    other = rdlt_lock(rdlt_client(srv), "lost");
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, RDL_LEASE_AUTO));
    rdlt_assert_ok(rdl_lock_force_release(other));
    deadline = rdlt_now_ms() + 5000;
    while (count(s) < 2 && rdlt_now_ms() < deadline)
        rdlt_sleep_ms(10);
    e = expect(s, 1, RDL_EVENT_LOST, "lost", "lock", A);
    assert_int_equal(e->fencing_token, s->ev[0].fencing_token);
    assert_true(e->held_ms >= 0 && e->held_ms < 5000);
    rdlt_assert_rc(rdl_lock_release_as(l, A), RDL_ELOST);
    assert_int_equal(count(s), 2); /* a failed release is no event */

    rdlt_assert_ok(rdl_client_set_event_cb(c, NULL, NULL));
    rdlt_assert_ok(rdl_lock_acquire_as(l, A, 0, 10000));
    rdlt_assert_ok(rdl_lock_release_as(l, A));
    assert_int_equal(count(s), 2);
    rdlt_assert_rc(rdl_client_set_event_cb(NULL, on_event, s), RDL_EINVAL);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_events_plain_lock),
    RDLT_TEST(test_events_every_kind),
    RDLT_TEST(test_events_lost_and_cleared),
};

RDLT_MAIN(tests)
