/* Events: a wait-time histogram from the client's event callback.
 *
 *   RDL_URL=redis://127.0.0.1:6379 ./events
 *
 * Six threads contend on one lock for a second, each holding it about
 * 2 ms. The event callback (on the client's loop thread) counts the
 * events by kind and files each acquisition's wait into a histogram,
 * which main prints at the end - what a metrics exporter would do with
 * the same events (a counter per kind, a histogram of wait_ms and
 * held_ms, labelled by lock name). */
#include <stdio.h>
#include <stdlib.h>

#include <rdl.h>

#include "example_server.h"
#include <uv.h>

#define THREADS 6

/* Buckets of wait_ms: [0,1) [1,2) [2,5) [5,10) [10,20) [20,50) [50,inf). */
static const int64_t bounds[] = {1, 2, 5, 10, 20, 50};
#define BUCKETS (sizeof(bounds) / sizeof(bounds[0]) + 1)

typedef struct metrics {
    uint64_t by_kind[4]; /* RDL_EVENT_* */
    uint64_t wait[BUCKETS];
    int64_t held_total_ms;
} metrics;

/* The loop thread is the only writer; main reads after the threads are
 * done and the client is closed. */
static void on_event(const rdl_event_t *ev, void *data)
{
    metrics *m = data;
    size_t b = 0;
    m->by_kind[ev->kind]++;
    if (ev->kind == RDL_EVENT_ACQUIRED) {
        while (b < BUCKETS - 1 && ev->wait_ms >= bounds[b])
            b++;
        m->wait[b]++;
    } else if (ev->kind == RDL_EVENT_RELEASED) {
        m->held_total_ms += ev->held_ms;
    }
}

static rdl_lock_t *lock;
static uint64_t end_ns;

static void worker(void *arg)
{
    (void)arg;
    while (uv_hrtime() < end_ns) {
        if (rdl_lock_acquire(lock, 2000, 10000) != 0)
            continue;
        uv_sleep(2);
        if (rdl_lock_release(lock) != 0)
            fprintf(stderr, "release failed\n");
    }
}

int main(void)
{
    static const char *const labels[BUCKETS] = {
        "  <1 ms",  " 1-2 ms",  " 2-5 ms", "5-10 ms",
        "10-20 ms", "20-50 ms", " >50 ms"};
    const char *url = getenv("RDL_URL");
    rdl_client_t *client;
    metrics m = {{0}, {0}, 0};
    uv_thread_t t[THREADS];
    uint64_t most = 1;
    size_t b;
    int i, rc;

    if ((rc = rdl_client_new(&client)) != 0)
        return 1;
    if ((url != NULL && (rc = example_set_server(client, url)) != 0) ||
        (rc = rdl_client_set_event_cb(client, on_event, &m)) != 0 ||
        (rc = rdl_client_connect(client)) != 0 ||
        (rc = rdl_lock_new(client, "example:events", &lock)) != 0) {
        fprintf(stderr, "set-up: %s (%s)\n", rdl_strerror(rc),
                rdl_client_errmsg(client));
        rdl_client_free(client);
        return 1;
    }
    end_ns = uv_hrtime() + 1000000000ull;
    for (i = 0; i < THREADS; i++)
        uv_thread_create(&t[i], worker, NULL);
    for (i = 0; i < THREADS; i++)
        uv_thread_join(&t[i]);
    rdl_lock_free(lock);
    rdl_client_free(client); /* no callback runs after this */

    printf("acquired %llu, released %llu, timed out %llu, lost %llu; "
           "mean hold %.1f ms\n",
           (unsigned long long)m.by_kind[RDL_EVENT_ACQUIRED],
           (unsigned long long)m.by_kind[RDL_EVENT_RELEASED],
           (unsigned long long)m.by_kind[RDL_EVENT_TIMEDOUT],
           (unsigned long long)m.by_kind[RDL_EVENT_LOST],
           m.by_kind[RDL_EVENT_RELEASED]
               ? (double)m.held_total_ms / (double)m.by_kind[RDL_EVENT_RELEASED]
               : 0.0);
    for (b = 0; b < BUCKETS; b++)
        if (m.wait[b] > most)
            most = m.wait[b];
    printf("wait before the grant:\n");
    for (b = 0; b < BUCKETS; b++) {
        int bar = (int)(m.wait[b] * 50 / most);
        printf("  %8s %6llu |", labels[b], (unsigned long long)m.wait[b]);
        while (bar-- > 0)
            putchar('#');
        putchar('\n');
    }
    return m.by_kind[RDL_EVENT_ACQUIRED] > 0 &&
                   m.by_kind[RDL_EVENT_ACQUIRED] ==
                       m.by_kind[RDL_EVENT_RELEASED]
               ? 0
               : 1;
}
