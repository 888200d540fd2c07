/* The "scripts" figure's cases with a waiter (fig_scripts.c says what the
 * figure measures): the plain lock's waiter registry and the fair lock's
 * queue. Two clients share one name: the holder H, on a loop thread of its
 * own, driven by blocking calls from this thread, and the waiter W, on
 * this thread's loop (rdl_client_set_loop), driven by async calls. W runs
 * only while this thread runs the loop, so while H's release is measured
 * W is paused: the wake-up waits in W's socket, and the try it sets off
 * runs after the reading, in a bracket of its own or in none.
 *
 * A cycle, plain lock:
 *   H acquires (not measured)
 *   [W's try finds the lock held and registers]: an async acquire with no
 *       wait limit; the bracket ends once the server has run one script
 *       call (INFO polled while the loop runs), W then sleeps
 *   [H's release frees the lock and wakes W]
 *   W's try takes the free lock, W releases (not measured)
 * or, in the second series, instead of H's release:
 *   [W gives up: rdl_req_cancel, whose leave script takes it out]
 *   H releases (not measured)
 * Fair lock: H acquires; [W's try joins the queue]; [H's release hands the
 * lock to W, the head]; [W's try confirms the hand-off]; W releases.
 *
 * A few cycles first, not measured, load the scripts and subscribe W to
 * its channel; the subscription then stays (the cycles follow each other
 * far faster than the client lets an unused one go). */
#include <stdio.h>
#include <string.h>

#include <uv.h>

#include "bench.h"

#define FIG "scripts"
#define WARM_UP 3

typedef struct duo {
    rdl_client_t *h, *w; /* the holder, the waiter */
    rdl_lock_t *hl, *wl; /* the name, through each */
    uv_loop_t loop;      /* W's */
    rdl_req_t req;       /* W's one request */
    long done;           /* its completions */
    int status;          /* the last one's status */
} duo;

static void on_done(rdl_req_t *req, int status)
{
    duo *d = req->data;
    d->done++;
    d->status = status;
}

static void duo_close(duo *d)
{
    rdl_lock_free(d->hl);
    rdl_client_free(d->h);
    rdl_lock_free(d->wl);
    bench_loop_client_free(d->w, &d->loop);
    uv_loop_close(&d->loop);
}

static int duo_open(const bench_ctx *ctx, duo *d, int fair)
{
    const char *name = fair ? "bench:scr:fair:wait" : "bench:scr:lock:wait";
    int rc;
    memset(d, 0, sizeof(*d));
    if (uv_loop_init(&d->loop) != 0)
        return -1;
    d->req.data = d;
    if ((d->h = bench_client(ctx)) == NULL ||
        (d->w = bench_loop_client(ctx, &d->loop, 0)) == NULL) {
        duo_close(d);
        return -1;
    }
    rc = fair ? rdl_fairlock_new(d->h, name, &d->hl)
              : rdl_lock_new(d->h, name, &d->hl);
    if (rc == 0)
        rc = fair ? rdl_fairlock_new(d->w, name, &d->wl)
                  : rdl_lock_new(d->w, name, &d->wl);
    if (rc != 0) {
        bench_fail(d->h, "scripts: new lock", rc);
        duo_close(d);
        return -1;
    }
    return 0;
}

/* Runs W's loop until its request completed; the status. */
static int w_finish(duo *d)
{
    long want = d->done + 1;
    bench_loop_until(&d->loop, &d->done, want);
    return d->status;
}

/* Runs W's loop until the server has run a script call since the
 * meter's bracket began; 0 or -1 (printed). */
static int w_tried(duo *d, bench_meter *m)
{
    int64_t give_up = bench_now_ns() + 5000000000LL;
    for (;;) {
        double calls;
        uv_run(&d->loop, UV_RUN_NOWAIT);
        if ((calls = bench_meter_poll(m)) < 0)
            return -1;
        if (calls >= 1)
            return 0;
        if (bench_now_ns() > give_up) {
            fprintf(stderr, "rdl-bench: scripts: the waiter's try never "
                            "reached the server\n");
            return -1;
        }
    }
}

/* One cycle (see above); m[0]: W's try that waits, m[1]: H's release
 * (plain lock, fair lock), m[2]: W's leave (plain lock, leave 1) or W's
 * confirm (fair lock). 0 or -1 (printed). */
static int cycle(duo *d, bench_meter *m, int fair, int leave)
{
    int rc;
    if ((rc = rdl_lock_acquire(d->hl, 0, 60000)) != 0)
        return bench_fail(d->h, "scripts: holder's acquire", rc);
    bench_meter_begin(&m[0]);
    if ((rc = rdl_lock_acquire_async(&d->req, d->wl, 1, RDL_WAIT_FOREVER, 30000,
                                     on_done)) != 0)
        return bench_fail(d->w, "scripts: waiter's acquire", rc);
    if (w_tried(d, &m[0]) != 0)
        return -1;
    bench_meter_end_polled(&m[0], 1);
    if (leave) {
        bench_meter_begin(&m[2]);
        rdl_req_cancel(&d->req);
        if ((rc = w_finish(d)) != RDL_ECANCELED)
            return bench_fail(d->w, "scripts: waiter's cancel", rc);
        bench_meter_end(&m[2], 1);
        if ((rc = rdl_lock_release(d->hl)) != 0)
            return bench_fail(d->h, "scripts: holder's release", rc);
        return 0;
    }
    bench_meter_begin(&m[1]);
    if ((rc = rdl_lock_release(d->hl)) != 0)
        return bench_fail(d->h, "scripts: holder's release", rc);
    bench_meter_end(&m[1], 1);
    if (fair)
        bench_meter_begin(&m[2]);
    if ((rc = w_finish(d)) != 0)
        return bench_fail(d->w, "scripts: waiter's grant", rc);
    if (fair)
        bench_meter_end(&m[2], 1);
    if ((rc = rdl_lock_release_async(&d->req, d->wl, 1, on_done)) != 0 ||
        (rc = w_finish(d)) != 0)
        return bench_fail(d->w, "scripts: waiter's release", rc);
    return 0;
}

/* n cycles; 0 or -1. */
static int series(duo *d, bench_meter *m, int fair, int leave, int n)
{
    int i;
    for (i = 0; i < n; i++)
        if (cycle(d, m, fair, leave) != 0)
            return -1;
    return 0;
}

/* The cycles of the kind: the plain lock's two series, or the fair
 * lock's one. */
static int cycles(duo *d, bench_meter *m, int fair, int n)
{
    return series(d, m, fair, 0, n) != 0 ||
                   (!fair && series(d, m, fair, 1, n) != 0)
               ? -1
               : 0;
}

int bench_scripts_waiting(bench_ctx *ctx, int fair)
{
    const int n = BENCH_SIZE(ctx, 200, 2000);
    bench_meter m[3];
    duo d;
    int i, rc = -1, opened = 0;

    for (; opened < 3; opened++)
        if (bench_meter_open(&m[opened], ctx) != 0)
            goto out;
    if (duo_open(ctx, &d, fair) != 0)
        goto out;
    if (cycles(&d, m, fair, WARM_UP) != 0)
        goto close;
    for (i = 0; i < 3; i++)
        bench_meter_reset(&m[i]);
    if (cycles(&d, m, fair, n) != 0)
        goto close;
    if (!fair) {
        bench_meter_row(ctx, &m[0], FIG, "lock: try, held: registers, waits",
                        NULL);
        bench_meter_row(ctx, &m[1], FIG, "lock: release that wakes a waiter",
                        NULL);
        bench_meter_row(ctx, &m[2], FIG, "lock: waiter leaves (cancel)", NULL);
    } else {
        bench_meter_row(ctx, &m[0], FIG, "fair: try, held: joins the queue",
                        NULL);
        bench_meter_row(ctx, &m[1], FIG, "fair: release, hands off to head",
                        NULL);
        bench_meter_row(ctx, &m[2], FIG, "fair: the head confirms", NULL);
    }
    rc = 0;
close:
    duo_close(&d);
out:
    for (i = 0; i < opened; i++)
        bench_meter_close(&m[i]);
    return rc;
}
