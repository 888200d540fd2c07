/* Figure "handoff": K workers contend on one name, each holding it ~1 ms,
 * as 8 threads sharing one client, then as K = 2, 8 and 32 processes with a
 * client each (2 and 8 with --quick), for the plain lock, the fair lock
 * (whose release hands the lock to the next waiter) and a semaphore of
 * one permit (whose release wakes one registered waiter per permit). The
 * processes show how the hand-off scales with the number of waiting clients:
 * each release wakes one waiter, not all, so the work per acquisition, the
 * client's and the server's, should not grow with K.
 *
 * Every acquisition is recorded (when the acquire returned, when the release
 * was called); sorted by acquisition time, the gap between one release call and
 * the next acquire returning is the hand-off: the release script, its pub/sub
 * message, the woken waiter's try, and the thread hops of both sides. Two round
 * trips is the floor of that path. Targets (docs/benchmarks.md "Against the
 * targets"): p50 gap <= 2 round trips, <= 4 requests per acquisition.
 *
 * Per case: the gap's p50 and p99 in microseconds and in raw round trips;
 * the client's requests per acquisition; the server's commands per
 * acquisition (total_commands_processed from INFO on a raw connection
 * before and after, so it counts the commands the scripts run, and the
 * watchdog's touches of fair-queue entries); and each worker's turns, min
 * and max, with the spread (max - min) / mean: 0 when every worker had its
 * share.
 *
 * The records also check mutual exclusion: a hold that starts before the
 * previous one was released fails the figure. Times are CLOCK_MONOTONIC,
 * which processes share. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define MAX_WORKERS 32
#define MAX_RECORDS 200000
#define HOLD_NS 1000000LL

enum { KIND_LOCK, KIND_FAIR, KIND_SEM };
static const char *const kind_names[] = {"lock", "fair", "semaphore(1)"};

typedef struct record {
    int64_t acquired; /* the acquire returned */
    int64_t released; /* the release was called */
    int worker;
} record;

/* Shared by the workers; in MAP_SHARED memory for processes. */
typedef struct board {
    int kind; /* KIND_LOCK, KIND_FAIR or KIND_SEM */
    int64_t start, end;
    int ready;  /* workers connected (atomic) */
    int failed; /* a worker's rdl error code, else 0 */
    long next;  /* next free record (atomic) */
    long count[MAX_WORKERS];
    uint64_t commands, acquires; /* stats, summed over processes */
    record rec[MAX_RECORDS];
} board;

typedef struct worker {
    board *b;
    rdl_client_t *c; /* shared client (threads) or NULL (own client) */
    const bench_ctx *ctx;
    int index;
    pthread_t tid;
} worker;

/* One worker's life: connect (processes), wait for the start, then cycle
 * acquire / hold / release until the end. */
static void work(worker *w)
{
    board *b = w->b;
    rdl_client_t *own = NULL, *c = w->c;
    rdl_lock_t *lock = NULL;
    rdl_client_stats_t s0, s1;
    int rc;

    if (c == NULL && (c = own = bench_client(w->ctx)) == NULL) {
        __atomic_store_n(&b->failed, RDL_ECONNREFUSED, __ATOMIC_RELAXED);
        __atomic_add_fetch(&b->ready, 1, __ATOMIC_RELEASE);
        return;
    }
    rc = b->kind == KIND_FAIR  ? rdl_fairlock_new(c, "bench:handoff", &lock)
         : b->kind == KIND_SEM ? rdl_semaphore_new(c, "bench:handoff", 1, &lock)
                               : rdl_lock_new(c, "bench:handoff", &lock);
    /* The subscription is made by the first wait; a short warm-up try
     * keeps connection set-up out of the measurement. */
    if (rc == 0 && (rc = rdl_lock_acquire(lock, 0, 10000)) == 0)
        rc = rdl_lock_release(lock);
    if (rc == RDL_EBUSY)
        rc = 0;
    rdl_client_stats(c, &s0);
    __atomic_add_fetch(&b->ready, 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&b->start, __ATOMIC_ACQUIRE) == 0)
        bench_sleep_ns(100000);
    while (rc == 0 && bench_now_ns() < b->end &&
           !__atomic_load_n(&b->failed, __ATOMIC_RELAXED)) {
        long i;
        int64_t got;
        if ((rc = rdl_lock_acquire(lock, RDL_WAIT_FOREVER, 10000)) != 0)
            break;
        got = bench_now_ns();
        bench_sleep_ns(HOLD_NS);
        i = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED);
        if (i < MAX_RECORDS) {
            b->rec[i].acquired = got;
            b->rec[i].worker = w->index;
            b->rec[i].released = bench_now_ns();
        }
        b->count[w->index]++;
        rc = rdl_lock_release(lock);
    }
    if (rc != 0) {
        bench_fail(c, "hand-off worker", rc);
        __atomic_store_n(&b->failed, rc, __ATOMIC_RELAXED);
    }
    if (own != NULL) {
        rdl_client_stats(own, &s1);
        __atomic_add_fetch(&b->commands, s1.commands - s0.commands,
                           __ATOMIC_RELAXED);
        __atomic_add_fetch(&b->acquires, s1.acquires - s0.acquires,
                           __ATOMIC_RELAXED);
    }
    rdl_lock_free(lock);
    rdl_client_free(own);
}

static void *thread_main(void *arg)
{
    work(arg);
    return NULL;
}

static int cmp_rec(const void *a, const void *b)
{
    const record *x = a, *y = b;
    return (x->acquired > y->acquired) - (x->acquired < y->acquired);
}

static void wait_ready(board *b, int k)
{
    while (__atomic_load_n(&b->ready, __ATOMIC_ACQUIRE) < k)
        bench_sleep_ns(1000000);
}

static void start(board *b, int64_t duration_ns)
{
    b->end = bench_now_ns() + duration_ns;
    __atomic_store_n(&b->start, bench_now_ns(), __ATOMIC_RELEASE);
}

/* The server's side of a case, read on a raw connection of its own. */
typedef struct probe {
    bench_raw raw;
    bench_srv at, diff;
    int ok; /* diff holds the case's share */
} probe;

static void srv_begin(const bench_ctx *ctx, probe *p)
{
    p->ok = bench_raw_open(&p->raw, ctx) == 0 &&
            bench_srv_read(&p->raw, &p->at) == 0;
}

static void srv_end(probe *p)
{
    bench_srv now;
    p->ok = p->ok && bench_srv_read(&p->raw, &now) == 0;
    if (p->ok)
        p->diff = bench_srv_diff(&p->at, &now);
    bench_raw_close(&p->raw);
}

static int report(bench_ctx *ctx, board *b, int k, const char *how,
                  double rtt_us, const probe *srv)
{
    bench_samples gaps = {0};
    long n = b->next < MAX_RECORDS ? b->next : MAX_RECORDS, i;
    long lo = -1, hi = 0, total = 0;
    double secs = (double)(b->end - b->start) / 1e9, p50, p99;

    qsort(b->rec, (size_t)n, sizeof(record), cmp_rec);
    for (i = 1; i < n; i++) {
        int64_t gap = b->rec[i].acquired - b->rec[i - 1].released;
        if (gap < 0) {
            fprintf(stderr,
                    "rdl-bench: hand-off: worker %d held the lock %lld ns "
                    "before worker %d released it\n",
                    b->rec[i].worker, (long long)-gap, b->rec[i - 1].worker);
            bench_samples_free(&gaps);
            return -1;
        }
        (void)bench_samples_add(&gaps, gap);
    }
    for (i = 0; i < k; i++) {
        lo = lo < 0 || b->count[i] < lo ? b->count[i] : lo;
        hi = b->count[i] > hi ? b->count[i] : hi;
        total += b->count[i];
    }
    p50 = bench_samples_pct_us(&gaps, 50);
    p99 = bench_samples_pct_us(&gaps, 99);
    bench_row_begin(ctx, "handoff", "%s, %d %s", kind_names[b->kind], k, how);
    bench_row_num("gap_p50", p50, "us", 1);
    bench_row_num("gap_p99", p99, "us", 1);
    bench_row_num("raw_rtt_p50", rtt_us, "us", 1);
    bench_row_target("gap_p50", p50 / rtt_us, "rtt", 2, "<= 2");
    bench_row_num("gap_p99", p99 / rtt_us, "rtt", 2);
    bench_row_num("acquisitions", (double)total / secs, "per_s", 0);
    bench_row_target("requests_per_acquire",
                     b->acquires ? (double)b->commands / (double)b->acquires
                                 : 0,
                     NULL, 2, "<= 4");
    if (srv->ok && b->acquires)
        bench_row_num("server_cmds_per_acq",
                      (double)srv->diff.commands / (double)b->acquires, NULL,
                      2);
    bench_row_num("worker_min", (double)lo, NULL, 0);
    bench_row_num("worker_max", (double)hi, NULL, 0);
    bench_row_num("spread", total ? (double)(hi - lo) * k / (double)total : 0,
                  NULL, 2);
    bench_row_end();
    bench_samples_free(&gaps);
    return 0;
}

static board *board_new(void)
{
    board *b = mmap(NULL, sizeof(board), PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return b == MAP_FAILED ? NULL : b;
}

static int threads(bench_ctx *ctx, int kind, int k, int64_t duration_ns,
                   double rtt)
{
    board *b = board_new();
    worker w[MAX_WORKERS];
    rdl_client_t *c;
    rdl_client_stats_t s0, s1;
    probe srv;
    int i, rc;

    if (b == NULL || (c = bench_client(ctx)) == NULL) {
        if (b != NULL)
            munmap(b, sizeof(*b));
        return -1;
    }
    b->kind = kind;
    for (i = 0; i < k; i++) {
        w[i] = (worker){b, c, ctx, i, 0};
        if (pthread_create(&w[i].tid, NULL, thread_main, &w[i]) != 0) {
            fprintf(stderr, "rdl-bench: pthread_create failed\n");
            abort();
        }
    }
    wait_ready(b, k);
    rdl_client_stats(c, &s0);
    srv_begin(ctx, &srv);
    start(b, duration_ns);
    for (i = 0; i < k; i++)
        pthread_join(w[i].tid, NULL);
    srv_end(&srv);
    rdl_client_stats(c, &s1);
    b->commands = s1.commands - s0.commands;
    b->acquires = s1.acquires - s0.acquires;
    rdl_client_free(c);
    rc = b->failed ? -1 : report(ctx, b, k, "threads, 1 client", rtt, &srv);
    munmap(b, sizeof(*b));
    return rc;
}

static int processes(bench_ctx *ctx, int kind, int k, int64_t duration_ns,
                     double rtt)
{
    board *b = board_new();
    pid_t pid[MAX_WORKERS];
    probe srv;
    int i, rc = 0, st;

    if (b == NULL)
        return -1;
    b->kind = kind;
    fflush(NULL);
    for (i = 0; i < k; i++) {
        pid[i] = fork();
        if (pid[i] == 0) {
            worker w = {b, NULL, ctx, i, 0};
            work(&w);
            _exit(0);
        }
        if (pid[i] < 0) {
            fprintf(stderr, "rdl-bench: fork failed\n");
            b->failed = 1;
            b->ready += k - i; /* nobody else will come */
            k = i;
            break;
        }
    }
    wait_ready(b, k);
    srv_begin(ctx, &srv);
    start(b, duration_ns);
    for (i = 0; i < k; i++)
        if (waitpid(pid[i], &st, 0) != pid[i] || !WIFEXITED(st) ||
            WEXITSTATUS(st) != 0)
            rc = -1;
    srv_end(&srv);
    if (rc == 0 && !b->failed)
        rc = report(ctx, b, k, "processes (a client each)", rtt, &srv);
    else
        rc = -1;
    munmap(b, sizeof(*b));
    return rc;
}

/* The raw round trip is measured again before each case, so the gap is
 * judged against the network of the moment. */
int bench_fig_handoff(bench_ctx *ctx)
{
    static const int procs[] = {2, 8, 32};
    int64_t d = BENCH_SIZE(ctx, 1000, 4000) * 1000000LL;
    int n = BENCH_SIZE(ctx, 2, 3), i, kind, rc = 0;
    double rtt;
    for (kind = KIND_LOCK; kind <= KIND_SEM; kind++) {
        if ((rtt = bench_raw_rtt_us(ctx, 500)) <= 0)
            return -1;
        rc |= threads(ctx, kind, 8, d, rtt);
        for (i = 0; i < n; i++) {
            if ((rtt = bench_raw_rtt_us(ctx, 500)) <= 0)
                return -1;
            rc |= processes(ctx, kind, procs[i], d, rtt);
        }
    }
    return rc ? -1 : 0;
}
