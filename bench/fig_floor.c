/* Figure "floor": what the server and the network allow, measured with the
 * raw client running rdl's own acquire and release scripts.
 *
 * - serial: one client, acquire then release on one name, one call at a
 *   time; each call's round trip is a sample. 2 x p50 is the floor of an
 *   uncontended lock cycle. Measured twice, in alternating rounds: with
 *   hiredis's blocking read, which sleeps in the kernel until the reply
 *   comes, and with a busy-polling client, which spins on poll() and never
 *   sleeps. rdl's blocking calls spin briefly before they sleep, so the
 *   sleeping client alone would flatter rdl; the busy-polling one is the
 *   least a client can pay.
 * - pipelined: batches of acquires on distinct names followed by their
 *   releases, all in flight at once; cycles/s is the server's own limit
 *   for these scripts, the ceiling of any client's throughput. */
#include <stdio.h>

#include "bench.h"

#define BATCH 1024

#define ROUND 1000 /* cycles of one client before the other's turn */

/* `cycles` serial cycles; each call's round trip is a sample (none if rtt
 * is NULL). Adds the time taken to *busy_ns. */
static int serial_round(bench_raw *r, int cycles, bench_samples *rtt,
                        int64_t *busy_ns)
{
    int64_t t0 = bench_now_ns(), a, b, c;
    int i;
    for (i = 0; i < cycles; i++) {
        a = bench_now_ns();
        if (bench_raw_acquire(r, "raw:floor") != 1)
            return -1;
        b = bench_now_ns();
        if (bench_raw_release(r, "raw:floor") != 1)
            return -1;
        c = bench_now_ns();
        if (rtt != NULL && (bench_samples_add(rtt, b - a) != 0 ||
                            bench_samples_add(rtt, c - b) != 0))
            return -1;
    }
    *busy_ns += bench_now_ns() - t0;
    return 0;
}

/* Serial cycles with a warm-up of a tenth; cycles/s from the measured
 * part. */
static int serial(bench_raw *r, int cycles, bench_samples *rtt,
                  double *cycles_per_s)
{
    int64_t busy = 0;
    if (serial_round(r, cycles / 10, NULL, &busy) != 0)
        return -1;
    busy = 0;
    if (serial_round(r, cycles, rtt, &busy) != 0)
        return -1;
    *cycles_per_s = cycles / ((double)busy / 1e9);
    return 0;
}

/* The sleeping client (r) and the busy-polling one (s) in alternating
 * rounds, so a noisy neighbour weighs on both alike. */
static int serial_both(bench_raw *r, bench_raw *s, int cycles,
                       bench_samples *rtt, bench_samples *spin_rtt,
                       bench_floor_t *f)
{
    int64_t busy = 0, spin_busy = 0;
    int done;
    if (serial_round(r, cycles / 10, NULL, &busy) != 0 ||
        serial_round(s, cycles / 10, NULL, &spin_busy) != 0)
        return -1;
    busy = spin_busy = 0;
    for (done = 0; done < cycles; done += ROUND)
        if (serial_round(r, ROUND, rtt, &busy) != 0 ||
            serial_round(s, ROUND, spin_rtt, &spin_busy) != 0)
            return -1;
    f->cycles_per_s = done / ((double)busy / 1e9);
    f->spin_cycles_per_s = done / ((double)spin_busy / 1e9);
    return 0;
}

static int pipelined(bench_raw *r, int64_t duration_ns, double *per_s)
{
    char names[BATCH][32];
    int64_t t0 = 0, end = 0;
    long cycles = 0;
    int i, round;

    for (i = 0; i < BATCH; i++)
        snprintf(names[i], sizeof(names[i]), "raw:pipe:%d", i);
    for (round = 0;; round++) {
        if (round == 2) /* two warm-up batches */
            t0 = bench_now_ns();
        for (i = 0; i < BATCH; i++)
            if (bench_raw_append_acquire(r, names[i]) != 0)
                return -1;
        for (i = 0; i < BATCH; i++)
            if (bench_raw_append_release(r, names[i]) != 0)
                return -1;
        for (i = 0; i < 2 * BATCH; i++)
            if (bench_raw_read(r) != 1)
                return -1;
        if (round < 2)
            continue;
        cycles += BATCH;
        if (round == 2)
            end = t0 + duration_ns;
        if (bench_now_ns() >= end)
            break;
    }
    *per_s = cycles / ((double)(bench_now_ns() - t0) / 1e9);
    return 0;
}

static int measure(bench_ctx *ctx)
{
    bench_samples rtt = {0}, spin_rtt = {0};
    bench_raw r, s;
    int rc;
    if (bench_raw_open(&r, ctx) != 0)
        return -1;
    if (bench_raw_open(&s, ctx) != 0) {
        bench_raw_close(&r);
        return -1;
    }
    s.spin = 1;
    rc = serial_both(&r, &s, BENCH_SIZE(ctx, 2000, 20000), &rtt, &spin_rtt,
                     &ctx->floor);
    if (rc == 0)
        rc = pipelined(&r, BENCH_SIZE(ctx, 300, 3000) * 1000000LL,
                       &ctx->floor.pipelined_per_s);
    bench_raw_close(&r);
    bench_raw_close(&s);
    if (rc == 0) {
        ctx->floor.rtt_p50_us = bench_samples_pct_us(&rtt, 50);
        ctx->floor.rtt_p99_us = bench_samples_pct_us(&rtt, 99);
        ctx->floor.spin_rtt_p50_us = bench_samples_pct_us(&spin_rtt, 50);
        ctx->floor.spin_rtt_p99_us = bench_samples_pct_us(&spin_rtt, 99);
        ctx->floor_ok = 1;
    }
    bench_samples_free(&rtt);
    bench_samples_free(&spin_rtt);
    return rc;
}

double bench_raw_limit(bench_ctx *ctx, int64_t duration_ns)
{
    bench_raw r;
    double per_s = 0;
    if (bench_raw_open(&r, ctx) != 0)
        return 0;
    if (pipelined(&r, duration_ns, &per_s) != 0)
        per_s = 0;
    bench_raw_close(&r);
    return per_s;
}

double bench_raw_rtt_us(bench_ctx *ctx, int cycles)
{
    bench_samples rtt = {0};
    bench_raw r;
    double cps, p50 = 0;
    if (bench_raw_open(&r, ctx) != 0)
        return 0;
    if (serial(&r, cycles, &rtt, &cps) == 0)
        p50 = bench_samples_pct_us(&rtt, 50);
    bench_raw_close(&r);
    bench_samples_free(&rtt);
    return p50;
}

const bench_floor_t *bench_floor(bench_ctx *ctx)
{
    if (!ctx->floor_ok)
        (void)measure(ctx);
    return ctx->floor_ok ? &ctx->floor : NULL;
}

int bench_fig_floor(bench_ctx *ctx)
{
    if (measure(ctx) != 0)
        return -1;
    bench_row_begin(ctx, "floor", "raw EVALSHA, 1 client, serial");
    bench_row_num("rtt_p50", ctx->floor.rtt_p50_us, "us", 1);
    bench_row_num("rtt_p99", ctx->floor.rtt_p99_us, "us", 1);
    bench_row_num("cycles", ctx->floor.cycles_per_s, "per_s", 0);
    bench_row_end();
    bench_row_begin(ctx, "floor", "raw EVALSHA, serial, busy-poll");
    bench_row_num("rtt_p50", ctx->floor.spin_rtt_p50_us, "us", 1);
    bench_row_num("rtt_p99", ctx->floor.spin_rtt_p99_us, "us", 1);
    bench_row_num("cycles", ctx->floor.spin_cycles_per_s, "per_s", 0);
    bench_row_num("sleeping_over_busy",
                  ctx->floor.spin_rtt_p50_us > 0
                      ? ctx->floor.rtt_p50_us / ctx->floor.spin_rtt_p50_us
                      : 0,
                  "x", 2);
    bench_row_end();
    bench_row_begin(ctx, "floor", "raw EVALSHA, pipelined x%d", BATCH);
    bench_row_num("cycles", ctx->floor.pipelined_per_s, "per_s", 0);
    bench_row_text("note", "the server's limit");
    bench_row_end();
    return 0;
}
