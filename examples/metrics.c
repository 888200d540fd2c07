/* Metrics: rdl's events as a Prometheus text exposition page.
 *
 *   RDL_URL=redis://127.0.0.1:6379 ./metrics                 # page on stdout
 *   RDL_URL=... ./metrics -o /var/lib/node_exporter/rdl.prom -t 60
 *
 * The client's event callback (include/rdl/events.h) hears of every
 * acquisition, release, timed-out wait and lost hold. Here it does what an
 * exporter's callback should do and nothing more: under a short mutex it
 * bumps a counter per (event, lock kind) and files the acquisition's wait
 * and the hold's duration into histogram buckets. Another thread (main,
 * here) renders the page from those numbers whenever it likes: to stdout
 * once at the end, or with -o FILE every interval into FILE (written to
 * FILE.tmp and renamed, so a reader never sees half a page), the format
 * node_exporter's textfile collector reads. A metrics HTTP endpoint would
 * call the same render() from its handler.
 *
 * Labels are the event and the lock kind only. Lock names would make one
 * series per name: fine for a handful of fixed names, a memory leak in
 * Prometheus for per-order or per-user names.
 *
 * While it runs, threads make some traffic: four contend on a plain lock,
 * three share a semaphore of two permits, and one asks for the plain lock
 * with a 5 ms budget, so some waits time out.
 *
 * Options: -o FILE (rewrite FILE every interval), -i MS (interval,
 * default 1000), -t SECONDS (how long the traffic runs, default 2). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdl.h>

#include "example_server.h"
#include <uv.h>

/* ---- what the callback records --------------------------------------- */

/* The lock kinds events name (rdl_event_t.lock_kind); "other" guards
 * against a kind added in a later version. */
static const char *const kinds[] = {"lock",         "fair",      "rwlock:read",
                                    "rwlock:write", "semaphore", "other"};
#define KINDS (sizeof(kinds) / sizeof(kinds[0]))

static const char *const events[] = {"acquired", "released", "timedout",
                                     "lost"}; /* rdl_event_kind_t order */
#define EVENTS (sizeof(events) / sizeof(events[0]))

/* Histogram bounds in milliseconds (the events carry whole ms); printed
 * in seconds, Prometheus's unit. The last bucket is +Inf. */
static const int64_t bounds_ms[] = {1, 5, 10, 25, 50, 100, 250, 1000, 5000};
#define BOUNDS (sizeof(bounds_ms) / sizeof(bounds_ms[0]))

typedef struct histogram {
    uint64_t bucket[BOUNDS + 1]; /* not cumulative; the last is +Inf */
    uint64_t count;
    int64_t sum_ms;
} histogram;

typedef struct metrics {
    pthread_mutex_t mu; /* the loop thread writes, the renderer reads */
    uint64_t events[EVENTS][KINDS];
    histogram wait[KINDS]; /* acquired: from the call to the grant */
    histogram hold[KINDS]; /* released: from the grant to the release */
} metrics;

static size_t kind_index(const char *kind)
{
    size_t i;
    for (i = 0; i < KINDS - 1; i++)
        if (strcmp(kind, kinds[i]) == 0)
            return i;
    return KINDS - 1;
}

static void observe(histogram *h, int64_t ms)
{
    size_t b = 0;
    while (b < BOUNDS && ms > bounds_ms[b])
        b++;
    h->bucket[b]++;
    h->count++;
    h->sum_ms += ms;
}

/* On the client's loop thread, once per event: count and return. No
 * blocking rdl call here (it would fail with RDL_EDEADLK), no I/O. */
static void on_event(const rdl_event_t *ev, void *data)
{
    metrics *m = data;
    size_t k = kind_index(ev->lock_kind);

    if ((size_t)ev->kind >= EVENTS)
        return;
    pthread_mutex_lock(&m->mu);
    m->events[ev->kind][k]++;
    if (ev->kind == RDL_EVENT_ACQUIRED)
        observe(&m->wait[k], ev->wait_ms);
    else if (ev->kind == RDL_EVENT_RELEASED)
        observe(&m->hold[k], ev->held_ms);
    pthread_mutex_unlock(&m->mu);
}

/* ---- the page ----------------------------------------------------------- */

static void render_histogram(FILE *out, const char *name, const char *help,
                             const histogram *h)
{
    size_t k, b;
    fprintf(out, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    for (k = 0; k < KINDS; k++) {
        uint64_t cumulative = 0;
        if (h[k].count == 0)
            continue; /* a kind this program never used */
        for (b = 0; b < BOUNDS; b++) {
            cumulative += h[k].bucket[b];
            fprintf(out, "%s_bucket{kind=\"%s\",le=\"%g\"} %llu\n", name,
                    kinds[k], (double)bounds_ms[b] / 1000.0,
                    (unsigned long long)cumulative);
        }
        cumulative += h[k].bucket[BOUNDS];
        fprintf(out, "%s_bucket{kind=\"%s\",le=\"+Inf\"} %llu\n", name,
                kinds[k], (unsigned long long)cumulative);
        fprintf(out, "%s_sum{kind=\"%s\"} %.3f\n", name, kinds[k],
                (double)h[k].sum_ms / 1000.0);
        fprintf(out, "%s_count{kind=\"%s\"} %llu\n", name, kinds[k],
                (unsigned long long)h[k].count);
    }
}

static void render_counter(FILE *out, const char *name, const char *help,
                           uint64_t value)
{
    fprintf(out, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name,
            name, (unsigned long long)value);
}

/* Copies the numbers under the mutex, then writes without it, so the loop
 * thread never waits for the output. */
static void render(FILE *out, metrics *m, const rdl_client_t *client)
{
    uint64_t ev[EVENTS][KINDS];
    histogram wait[KINDS], hold[KINDS];
    rdl_client_stats_t st;
    size_t e, k;

    pthread_mutex_lock(&m->mu);
    memcpy(ev, m->events, sizeof(ev));
    memcpy(wait, m->wait, sizeof(wait));
    memcpy(hold, m->hold, sizeof(hold));
    pthread_mutex_unlock(&m->mu);

    fprintf(out, "# HELP rdl_lock_events_total Lock events seen by this "
                 "client, by event and lock kind.\n"
                 "# TYPE rdl_lock_events_total counter\n");
    for (e = 0; e < EVENTS; e++)
        for (k = 0; k < KINDS; k++)
            if (ev[e][k] != 0 || k == 0) /* kind "lock": every event, 0 too */
                fprintf(out,
                        "rdl_lock_events_total{event=\"%s\",kind=\"%s\"} "
                        "%llu\n",
                        events[e], kinds[k], (unsigned long long)ev[e][k]);
    render_histogram(out, "rdl_lock_wait_seconds",
                     "Time from an acquire call to its grant.", wait);
    render_histogram(out, "rdl_lock_hold_seconds",
                     "Time from a grant to the release of a level.", hold);

    /* The client's own counters (include/rdl/client.h). */
    if (rdl_client_stats(client, &st) == 0) {
        render_counter(out, "rdl_client_commands_total",
                       "Commands written to servers.", st.commands);
        render_counter(out, "rdl_client_wakeups_total",
                       "Waiters woken by a pub/sub message.", st.wakeups);
        render_counter(out, "rdl_client_renewals_total",
                       "Holds renewed by the watchdog.", st.renewals);
        render_counter(out, "rdl_client_renewal_failures_total",
                       "Watchdog renewal calls that failed.",
                       st.renewal_failures);
        render_counter(out, "rdl_client_holds_lost_total",
                       "Holds the watchdog reported lost.", st.holds_lost);
        render_counter(out, "rdl_client_cmd_timeouts_total",
                       "Commands that timed out.", st.cmd_timeouts);
    }
}

/* Writes the page to path.tmp, then renames it over path. */
static int write_page(const char *path, metrics *m, const rdl_client_t *c)
{
    char tmp[4096];
    FILE *f;
    int failed;

    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
        return -1;
    if ((f = fopen(tmp, "w")) == NULL)
        return -1;
    render(f, m, c);
    failed = ferror(f);
    if (fclose(f) != 0 || failed || rename(tmp, path) != 0) {
        remove(tmp);
        return -1;
    }
    return 0;
}

/* ---- some traffic ------------------------------------------------------- */

static rdl_lock_t *orders, *pool;
static uint64_t end_ns;

static void contend(void *arg)
{
    (void)arg;
    while (uv_hrtime() < end_ns) {
        if (rdl_lock_acquire(orders, 2000, RDL_LEASE_AUTO) != 0)
            continue;
        uv_sleep(3); /* the critical section */
        if (rdl_lock_release(orders) != 0)
            fprintf(stderr, "metrics: release failed\n");
    }
}

static void use_pool(void *arg)
{
    (void)arg;
    while (uv_hrtime() < end_ns) {
        if (rdl_lock_acquire(pool, 2000, 10000) != 0)
            continue;
        uv_sleep(10);
        if (rdl_lock_release(pool) != 0)
            fprintf(stderr, "metrics: release failed\n");
    }
}

/* Asks with a budget shorter than a hold: some waits time out. */
static void impatient(void *arg)
{
    (void)arg;
    while (uv_hrtime() < end_ns) {
        if (rdl_lock_acquire(orders, 5, RDL_LEASE_AUTO) == 0 &&
            rdl_lock_release(orders) != 0)
            fprintf(stderr, "metrics: release failed\n");
        uv_sleep(20);
    }
}

#define THREADS 8

int main(int argc, char **argv)
{
    const char *url = getenv("RDL_URL"), *out = NULL;
    long interval_ms = 1000, seconds = 2;
    rdl_client_t *client = NULL;
    uv_thread_t t[THREADS];
    metrics *m;
    int i, rc, failed = 0;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "-i") == 0 && i + 1 < argc)
            interval_ms = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc)
            seconds = strtol(argv[++i], NULL, 10);
        else
            break;
    }
    if (i < argc || interval_ms < 10 || seconds < 1) {
        fprintf(stderr, "usage: metrics [-o FILE] [-i MS] [-t SECONDS]\n");
        return 64;
    }
    if ((m = calloc(1, sizeof(*m))) == NULL ||
        pthread_mutex_init(&m->mu, NULL) != 0)
        return 1;

    /* The callback may be set before or after connect; before, it also
     * hears of the first acquisitions. */
    if ((rc = rdl_client_new(&client)) != 0 ||
        (url != NULL && (rc = example_set_server(client, url)) != 0) ||
        (rc = rdl_client_set_event_cb(client, on_event, m)) != 0 ||
        (rc = rdl_client_connect(client)) != 0 ||
        (rc = rdl_lock_new(client, "example:metrics:orders", &orders)) != 0 ||
        (rc = rdl_semaphore_new(client, "example:metrics:pool", 2, &pool)) !=
            0) {
        fprintf(stderr, "metrics: set-up: %s (%s)\n", rdl_strerror(rc),
                client != NULL ? rdl_client_errmsg(client) : "");
        rdl_client_free(client);
        return 1;
    }

    end_ns = uv_hrtime() + (uint64_t)seconds * 1000000000ull;
    for (i = 0; i < THREADS; i++)
        uv_thread_create(&t[i],
                         i < 4   ? contend
                         : i < 7 ? use_pool
                                 : impatient,
                         NULL);
    /* The exporter's side: a page every interval, while the traffic runs. */
    while (out != NULL && uv_hrtime() < end_ns) {
        uv_sleep((unsigned)interval_ms);
        if (write_page(out, m, client) != 0) {
            fprintf(stderr, "metrics: %s: %s\n", out, strerror(errno));
            failed = 1;
            break;
        }
    }
    for (i = 0; i < THREADS; i++)
        uv_thread_join(&t[i]);

    /* The last page, with every event counted: a release's event runs
     * before its blocking call returns. */
    if (out != NULL) {
        if (!failed && write_page(out, m, client) != 0) {
            fprintf(stderr, "metrics: %s: %s\n", out, strerror(errno));
            failed = 1;
        }
    } else {
        render(stdout, m, client);
    }

    /* Every acquisition was released (both kinds used here report one
     * release per acquisition). */
    pthread_mutex_lock(&m->mu);
    for (i = 0; i < (int)KINDS; i++)
        if (m->events[RDL_EVENT_ACQUIRED][i] !=
            m->events[RDL_EVENT_RELEASED][i])
            failed = 1;
    if (m->events[RDL_EVENT_ACQUIRED][0] == 0)
        failed = 1;
    pthread_mutex_unlock(&m->mu);

    rdl_lock_free(orders);
    rdl_lock_free(pool);
    rdl_client_free(client); /* no callback runs after this */
    pthread_mutex_destroy(&m->mu);
    free(m);
    return failed;
}
