/* rdl-peer: rdl's driver in the side-by-side comparison with other Redis lock
 * libraries (bench/peers/README.md). compare.py starts it once per workload
 * (eight times at once for H) and talks to it over stdin and stdout, in the
 * same line protocol as the other libraries' drivers:
 *
 *   rdl-peer WORKLOAD HOST PORT KEY SECONDS HOLD_MS ACQUIRERS
 *
 *   driver -> compare.py   "ready {json}"   connected and warmed up
 *                          "A <ns>"         H only: acquired at <ns>
 *                          "result {json}"  measured phase over
 *   compare.py -> driver   "go"             start the measured phase
 *                          "N <ns>"         H only: another process
 *                                           acquired at <ns>
 *                          "stop"           H only: stop contending
 *                          "bye"            disconnect and exit
 *
 * Times are CLOCK_MONOTONIC nanoseconds, the clock every process on the
 * machine shares (node's process.hrtime and Python's time.monotonic_ns read
 * it too), so compare.py can put the eight H processes' records on one line.
 *
 * Workloads, each lock a plain rdl_lock_new() lock, acquired with a 10 s
 * wait budget and a fixed 10 s lease (the other drivers use 10 s leases as
 * well), released at once:
 *   U            one client, one name, blocking acquire + release in a loop.
 *   T1           ACQUIRERS async chains (acquire_async -> release_async ->
 *                next) on as many names, all on one client run on this
 *                program's own libuv loop: one connection, whose commands
 *                rdl batches (the calls made in one loop iteration leave
 *                together).
 *   T1-threads   ACQUIRERS threads making blocking calls, one client.
 *   T50          the chains of T1, each on a client of its own, all the
 *                clients on this program's loop.
 *   T50-threads  the threads of T1-threads, each with a client of its own
 *                (and so its own loop thread).
 *   H            one client, one name shared with the other H processes:
 *                acquire, hold HOLD_MS, release; after a release, wait until
 *                another process has acquired before trying again, so every
 *                acquisition is a hand-off. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdl.h>
#include <uv.h>

#define WAIT_MS 10000
#define LEASE_MS 10000
#define WARMUP_U 200 /* cycles before the measured phase */
#define WARMUP_T 20  /* per acquirer */

static const char *workload, *key;
static char url[300];
static double seconds, hold_ms;
static long acquirers;

/* ---- small helpers ----------------------------------------------------- */

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "rdl-peer %s: ", workload ? workload : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void check(int rc, rdl_client_t *c, const char *what)
{
    if (rc != 0)
        die("%s: %s (%s)", what, rdl_err_name(rc),
            c != NULL ? rdl_client_errmsg(c) : "");
}

/* One protocol line to compare.py; only the main thread writes. */
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

/* Reads protocol lines until one equals word; 0 on EOF. */
static int expect(const char *word)
{
    char line[128];
    while (fgets(line, sizeof(line), stdin) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strcmp(line, word) == 0)
            return 1;
    }
    return 0;
}

static void say_ready(const char *form)
{
    say("ready {\"library\":\"rdl\",\"version\":\"%s\",\"form\":\"%s\","
        "\"client\":\"libuv %s\",\"settings\":\"wait %d s, lease %d s; "
        "waiters woken by pub/sub\",\"lease_ms\":%d}",
        rdl_version_string(), form, uv_version_string(), WAIT_MS / 1000,
        LEASE_MS / 1000, LEASE_MS);
}

static void say_result(long cycles, int64_t elapsed_ns)
{
    say("result {\"cycles\":%ld,\"seconds\":%.6f,\"failures\":0}", cycles,
        (double)elapsed_ns / 1e9);
}

/* A connected client; on `loop` if not NULL, else on a loop thread of its
 * own. */
static rdl_client_t *client_open(uv_loop_t *loop)
{
    rdl_client_t *c = NULL;
    check(rdl_client_new(&c), NULL, "rdl_client_new");
    check(rdl_client_set_url(c, url), c, "rdl_client_set_url");
    if (loop != NULL)
        check(rdl_client_set_loop(c, loop), c, "rdl_client_set_loop");
    check(rdl_client_connect(c), c, "rdl_client_connect");
    return c;
}

static rdl_lock_t *lock_open(rdl_client_t *c, long index)
{
    char name[200];
    rdl_lock_t *lock = NULL;
    if (index < 0)
        snprintf(name, sizeof(name), "%s", key);
    else
        snprintf(name, sizeof(name), "%s:%ld", key, index);
    check(rdl_lock_new(c, name, &lock), c, "rdl_lock_new");
    return lock;
}

static void cycle(rdl_lock_t *lock, rdl_client_t *c)
{
    check(rdl_lock_acquire(lock, WAIT_MS, LEASE_MS), c, "acquire");
    check(rdl_lock_release(lock), c, "release");
}

/* ---- U ----------------------------------------------------------------- */

static void run_u(void)
{
    rdl_client_t *c = client_open(NULL);
    rdl_lock_t *lock = lock_open(c, -1);
    int64_t start, deadline, end;
    long cycles = 0;

    for (int i = 0; i < WARMUP_U; i++)
        cycle(lock, c);
    say_ready("blocking");
    if (!expect("go"))
        die("no go");
    start = now_ns();
    deadline = start + (int64_t)(seconds * 1e9);
    do {
        cycle(lock, c);
        cycles++;
    } while (now_ns() < deadline);
    end = now_ns();
    say_result(cycles, end - start);
    expect("bye");
    rdl_lock_free(lock);
    rdl_client_free(c);
}

/* ---- T, async: chains of callbacks on this program's loop -------------- */

typedef struct chain {
    uv_loop_t *loop;
    long *running; /* chains not finished yet */
    rdl_client_t *client;
    rdl_lock_t *lock;
    rdl_owner_t owner;
    rdl_req_t acq, rel;
    long todo;        /* cycles left in the warm-up; -1: until deadline */
    int64_t deadline; /* measured phase */
    long cycles;
} chain;

static void chain_acquired(rdl_req_t *req, int status);

static void chain_next(chain *ch)
{
    int more = ch->todo >= 0 ? ch->todo-- > 0 : now_ns() < ch->deadline;
    if (!more) {
        if (--*ch->running == 0)
            uv_stop(ch->loop);
        return;
    }
    check(rdl_lock_acquire_async(&ch->acq, ch->lock, ch->owner, WAIT_MS,
                                 LEASE_MS, chain_acquired),
          ch->client, "acquire_async");
}

static void chain_released(rdl_req_t *req, int status)
{
    chain *ch = req->data;
    check(status, ch->client, "release (async)");
    ch->cycles++;
    chain_next(ch);
}

static void chain_acquired(rdl_req_t *req, int status)
{
    chain *ch = req->data;
    check(status, ch->client, "acquire (async)");
    check(rdl_lock_release_async(&ch->rel, ch->lock, ch->owner, chain_released),
          ch->client, "release_async");
}

/* Runs every chain once through: `todo` cycles each, or until deadline. */
static void run_chains(uv_loop_t *loop, chain *chains, long todo,
                       int64_t deadline)
{
    long running = acquirers;
    for (long i = 0; i < acquirers; i++) {
        chains[i].running = &running;
        chains[i].todo = todo;
        chains[i].deadline = deadline;
        chains[i].cycles = 0;
    }
    for (long i = 0; i < acquirers; i++)
        chain_next(&chains[i]);
    uv_run(loop, UV_RUN_DEFAULT);
}

static void run_t_async(long nclients)
{
    uv_loop_t loop;
    rdl_client_t **clients = calloc((size_t)nclients, sizeof(*clients));
    chain *chains = calloc((size_t)acquirers, sizeof(*chains));
    int64_t start, end;
    long cycles = 0;

    if (clients == NULL || chains == NULL)
        die("out of memory");
    if (uv_loop_init(&loop) != 0)
        die("uv_loop_init");
    for (long i = 0; i < nclients; i++)
        clients[i] = client_open(&loop);
    for (long i = 0; i < acquirers; i++) {
        chain *ch = &chains[i];
        ch->loop = &loop;
        ch->client = clients[i % nclients];
        ch->lock = lock_open(ch->client, i);
        ch->owner = (rdl_owner_t)(i + 1);
        ch->acq.data = ch->rel.data = ch;
    }
    run_chains(&loop, chains, WARMUP_T, 0);
    say_ready("async");
    if (!expect("go"))
        die("no go");
    start = now_ns();
    run_chains(&loop, chains, -1, start + (int64_t)(seconds * 1e9));
    end = now_ns();
    for (long i = 0; i < acquirers; i++)
        cycles += chains[i].cycles;
    say_result(cycles, end - start);
    expect("bye");
    for (long i = 0; i < acquirers; i++)
        rdl_lock_free(chains[i].lock);
    for (long i = 0; i < nclients; i++) {
        check(rdl_client_close(clients[i]), clients[i], "close");
        rdl_client_free(clients[i]);
    }
    uv_run(&loop, UV_RUN_DEFAULT); /* lets the clients' handles close */
    if (uv_loop_close(&loop) != 0)
        die("the loop still has handles");
    free(chains);
    free(clients);
}

/* ---- T, threads: blocking calls ---------------------------------------- */

typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long warm;        /* threads done with their warm-up */
    int64_t deadline; /* 0 until "go" */
} gate;

typedef struct worker {
    pthread_t tid;
    gate *g;
    rdl_client_t *client;
    rdl_lock_t *lock;
    long cycles;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    gate *g = w->g;
    int64_t deadline;

    for (int i = 0; i < WARMUP_T; i++)
        cycle(w->lock, w->client);
    pthread_mutex_lock(&g->mu);
    g->warm++;
    pthread_cond_broadcast(&g->cv);
    while (g->deadline == 0)
        pthread_cond_wait(&g->cv, &g->mu);
    deadline = g->deadline;
    pthread_mutex_unlock(&g->mu);
    do {
        cycle(w->lock, w->client);
        w->cycles++;
    } while (now_ns() < deadline);
    return NULL;
}

static void run_t_threads(long nclients)
{
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    rdl_client_t **clients = calloc((size_t)nclients, sizeof(*clients));
    worker *workers = calloc((size_t)acquirers, sizeof(*workers));
    int64_t start, end;
    long cycles = 0;

    if (clients == NULL || workers == NULL)
        die("out of memory");
    for (long i = 0; i < nclients; i++)
        clients[i] = client_open(NULL);
    for (long i = 0; i < acquirers; i++) {
        worker *w = &workers[i];
        w->g = &g;
        w->client = clients[i % nclients];
        w->lock = lock_open(w->client, i);
        if (pthread_create(&w->tid, NULL, worker_main, w) != 0)
            die("pthread_create");
    }
    pthread_mutex_lock(&g.mu);
    while (g.warm < acquirers)
        pthread_cond_wait(&g.cv, &g.mu);
    pthread_mutex_unlock(&g.mu);
    say_ready("threads");
    if (!expect("go"))
        die("no go");
    start = now_ns();
    pthread_mutex_lock(&g.mu);
    g.deadline = start + (int64_t)(seconds * 1e9);
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    for (long i = 0; i < acquirers; i++) {
        pthread_join(workers[i].tid, NULL);
        cycles += workers[i].cycles;
    }
    end = now_ns();
    say_result(cycles, end - start);
    expect("bye");
    for (long i = 0; i < acquirers; i++)
        rdl_lock_free(workers[i].lock);
    for (long i = 0; i < nclients; i++)
        rdl_client_free(clients[i]);
    free(workers);
    free(clients);
}

/* ---- H: one of the processes that hand one lock to each other ---------- */

/* What the stdin reader thread learned from compare.py. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t other; /* latest acquisition by another process ("N") */
    int stop, bye;
} news = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};

static void *reader_main(void *arg)
{
    char line[128];
    (void)arg;
    while (fgets(line, sizeof(line), stdin) != NULL) {
        pthread_mutex_lock(&news.mu);
        if (line[0] == 'N' && line[1] == ' ') {
            int64_t t = strtoll(line + 2, NULL, 10);
            if (t > news.other)
                news.other = t;
        } else if (strncmp(line, "stop", 4) == 0) {
            news.stop = 1;
        } else if (strncmp(line, "bye", 3) == 0) {
            news.stop = news.bye = 1;
        }
        pthread_cond_broadcast(&news.cv);
        pthread_mutex_unlock(&news.mu);
    }
    pthread_mutex_lock(&news.mu); /* EOF: compare.py is gone */
    news.stop = news.bye = 1;
    pthread_cond_broadcast(&news.cv);
    pthread_mutex_unlock(&news.mu);
    return NULL;
}

static int stopped(void)
{
    int s;
    pthread_mutex_lock(&news.mu);
    s = news.stop;
    pthread_mutex_unlock(&news.mu);
    return s;
}

typedef struct hrec {
    int64_t acquired, released, release_done;
} hrec;

static void run_h(void)
{
    rdl_client_t *c = client_open(NULL);
    rdl_lock_t *lock = lock_open(c, -1);
    rdl_client_stats_t s0, s1;
    pthread_t reader;
    hrec *recs = NULL;
    size_t n = 0, cap = 0;
    long failures = 0;
    int rc;

    /* Warm-up: scripts loaded, and (if it had to wait) the subscription. */
    cycle(lock, c);
    say_ready("blocking");
    if (!expect("go"))
        die("no go");
    if (pthread_create(&reader, NULL, reader_main, NULL) != 0)
        die("pthread_create");
    check(rdl_client_stats(c, &s0), c, "stats");
    while (!stopped()) {
        int64_t acquired, released, release_done;
        if ((rc = rdl_lock_acquire(lock, WAIT_MS, LEASE_MS)) != 0) {
            fprintf(stderr, "rdl-peer H: acquire: %s\n", rdl_err_name(rc));
            failures++;
            continue;
        }
        acquired = now_ns();
        say("A %lld", (long long)acquired);
        sleep_ns((int64_t)(hold_ms * 1e6));
        released = now_ns();
        check(rdl_lock_release(lock), c, "release");
        release_done = now_ns();
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            if ((recs = realloc(recs, cap * sizeof(*recs))) == NULL)
                die("out of memory");
        }
        recs[n++] = (hrec){acquired, released, release_done};
        /* Sit out until another process has taken the lock. */
        pthread_mutex_lock(&news.mu);
        while (news.other <= acquired && !news.stop)
            pthread_cond_wait(&news.cv, &news.mu);
        pthread_mutex_unlock(&news.mu);
    }
    check(rdl_client_stats(c, &s1), c, "stats");
    printf("result {\"requests\":%llu,\"failures\":%ld,\"records\":[",
           (unsigned long long)(s1.commands - s0.commands), failures);
    for (size_t i = 0; i < n; i++)
        printf("%s[%lld,%lld,%lld]", i ? "," : "", (long long)recs[i].acquired,
               (long long)recs[i].released, (long long)recs[i].release_done);
    say("]}");
    pthread_mutex_lock(&news.mu);
    while (!news.bye)
        pthread_cond_wait(&news.cv, &news.mu);
    pthread_mutex_unlock(&news.mu);
    pthread_join(reader, NULL);
    free(recs);
    rdl_lock_free(lock);
    rdl_client_free(c);
}

/* ---- main -------------------------------------------------------------- */

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: rdl-peer U|T1|T1-threads|T50|T50-threads|H "
                        "HOST PORT KEY SECONDS HOLD_MS ACQUIRERS\n"
                        "(run by bench/peers/compare.py)\n");
        return 2;
    }
    workload = argv[1];
    snprintf(url, sizeof(url), "redis://%s:%s", argv[2], argv[3]);
    key = argv[4];
    seconds = strtod(argv[5], NULL);
    hold_ms = strtod(argv[6], NULL);
    acquirers = strtol(argv[7], NULL, 10);
    if (seconds <= 0 || hold_ms < 0 || acquirers < 1)
        die("bad SECONDS, HOLD_MS or ACQUIRERS");
    signal(SIGPIPE, SIG_IGN); /* T1/T50 run clients on this thread's loop */

    if (strcmp(workload, "U") == 0)
        run_u();
    else if (strcmp(workload, "T1") == 0)
        run_t_async(1);
    else if (strcmp(workload, "T50") == 0)
        run_t_async(acquirers);
    else if (strcmp(workload, "T1-threads") == 0)
        run_t_threads(1);
    else if (strcmp(workload, "T50-threads") == 0)
        run_t_threads(acquirers);
    else if (strcmp(workload, "H") == 0)
        run_h();
    else
        die("unknown workload");
    return 0;
}
