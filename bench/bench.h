/* rdl-bench: the benchmark of docs/benchmarks.md. One program runs rdl and a
 * raw hiredis blocking client side by side against the same server in the same
 * run, and reports every figure as a ratio against that raw floor, so the
 * ratios hold on a noisy machine.
 *
 * A figure is one function in the table of main.c. It measures, then reports
 * rows through report.c (a row: figure, case, metrics), and returns 0, or -1
 * after printing why it could not measure. Figures that need the floor call
 * bench_floor(), which measures it once per run. */
#ifndef RDL_BENCH_H
#define RDL_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <hiredis/hiredis.h>

#include "rdl.h"

/* ---- the run ---------------------------------------------------------- */

typedef struct bench_floor_t {
    double rtt_p50_us; /* one raw EVALSHA round trip */
    double rtt_p99_us;
    double cycles_per_s; /* raw acquire+release, one client, serial */
    /* The same with a busy-polling raw client, which never sleeps while it
     * waits for a reply: the honest floor for rdl's blocking calls, which
     * spin briefly before they sleep. */
    double spin_rtt_p50_us;
    double spin_rtt_p99_us;
    double spin_cycles_per_s;
    double pipelined_per_s; /* raw acquire+release pipelined: server limit */
} bench_floor_t;

typedef struct bench_ctx {
    char url[512];  /* for rdl_client_set_url */
    char host[256]; /* for the raw client */
    int port;
    char user[128];     /* "" if none: the default user */
    char password[128]; /* "" if none */
    int db;
    int quick;
    int json;     /* JSON lines on stdout, the table on stderr */
    FILE *table;  /* where the table goes */
    int floor_ok; /* floor measured */
    bench_floor_t floor;
    char scope[16];   /* "" or "cluster": prefixes the figure names */
    char raw_tag[16]; /* "": the raw client's keys as rdl's; else all in
                         the slot of this hash tag (a cluster) */
} bench_ctx;

typedef struct bench_figure {
    const char *name;
    const char *what;
    int (*run)(bench_ctx *ctx);
} bench_figure;

/* The figures (fig_*.c). */
int bench_fig_floor(bench_ctx *ctx);
int bench_fig_uncontended(bench_ctx *ctx);
int bench_fig_throughput(bench_ctx *ctx);
int bench_fig_handoff(bench_ctx *ctx);
int bench_fig_watchdog(bench_ctx *ctx);
int bench_fig_fairqueue(bench_ctx *ctx);
int bench_fig_memory(bench_ctx *ctx);
int bench_fig_durable(bench_ctx *ctx);
int bench_fig_cluster(bench_ctx *ctx);
int bench_fig_scripts(bench_ctx *ctx);
/* The scripts figure's cases with a waiter (fig_scripts_wait.c): the plain
 * lock's registry (fair 0) or the fair lock's queue. */
int bench_scripts_waiting(bench_ctx *ctx, int fair);

/* The floor of this run, measured on first use (fig_floor.c). NULL if it
 * could not be measured. */
const bench_floor_t *bench_floor(bench_ctx *ctx);

/* The server's limit measured now: raw pipelined cycles/s for
 * duration_ns; 0 on failure (printed). Figures measure it next to each of
 * their cases, so a busy neighbour weighs on both sides of the ratio. */
double bench_raw_limit(bench_ctx *ctx, int64_t duration_ns);

/* The p50 of a raw EVALSHA round trip measured now over `cycles`
 * acquire+release cycles; 0 on failure (printed). */
double bench_raw_rtt_us(bench_ctx *ctx, int cycles);

/* quick ? q : full. */
#define BENCH_SIZE(ctx, q, full) ((ctx)->quick ? (q) : (full))

/* ---- time and samples (sample.c) ----------------------------------------- */

/* Monotonic nanoseconds, comparable between processes (CLOCK_MONOTONIC). */
int64_t bench_now_ns(void);
void bench_sleep_ns(int64_t ns);

/* Latencies in nanoseconds. */
typedef struct bench_samples {
    int64_t *v;
    size_t n, cap;
    int sorted;
} bench_samples;

int bench_samples_add(bench_samples *s, int64_t ns); /* 0 or -1 (ENOMEM) */
/* The p-th percentile (0..100) in microseconds; 0 if empty. Sorts. */
double bench_samples_pct_us(bench_samples *s, double p);
void bench_samples_free(bench_samples *s);

/* ---- report (report.c) ----------------------------------------------------- */

/* Rows are written one at a time: bench_row_begin, metrics, bench_row_end.
 * The table shows one metric a line; JSON gives one object a row with keys
 * "<key>_<unit>" ("<key>" without a unit), and "<key>_target" for a
 * metric with a target. */
void bench_row_begin(bench_ctx *ctx, const char *figure, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void bench_row_num(const char *key, double v, const char *unit, int decimals);
/* A ratio or figure judged against its target (docs/benchmarks.md), e.g.
 * "<= 1.3". */
void bench_row_target(const char *key, double v, const char *unit, int decimals,
                      const char *target);
void bench_row_text(const char *key, const char *text);
void bench_row_end(void);
/* The table's header line. */
void bench_table_header(bench_ctx *ctx);

/* ---- the throwaway server (server.c) ---------------------------------------- */

/* Starts redis-server ($RDL_BENCH_REDIS_SERVER, else on PATH) on a free
 * loopback port in a temporary directory and fills ctx's address. It is
 * stopped by bench_server_stop(), at exit, and on SIGINT/SIGTERM/SIGHUP.
 * Returns 0 or -1 (said why on stderr). */
int bench_server_start(bench_ctx *ctx);
void bench_server_stop(void);
/* The server's pid (0 with --url), for its CPU time. */
int bench_server_pid(void);
/* Starts ONE replica of the throwaway server (--replicaof it, a free port,
 * a temporary directory of its own) and waits until the master's INFO
 * replication lists it online; only the durable figure does. It is stopped
 * by bench_replica_stop(), by bench_server_stop(), and on every way out
 * the server is. Returns 0 or -1 (said why on stderr); -1 with --url. */
int bench_replica_start(const bench_ctx *ctx);
void bench_replica_stop(void);
/* SIGSTOP (paused != 0; returns once the replica has stopped) or SIGCONT
 * to the replica; 0 or -1. bench_replica_stop() resumes it first. */
int bench_replica_pause(int paused);

/* ---- the raw client (raw.c) -------------------------------------------------- */

/* A hiredis blocking client that runs rdl's own lock scripts (the bytes
 * and SHA1 that rdl embeds) with the same keys and arguments as rdl. */
typedef struct bench_raw {
    redisContext *rc;
    char tag[16]; /* bench_ctx.raw_tag */
    char owner[64];
    char id[33];
    uint64_t seq;
    int spin; /* busy-poll for replies (poll() with a zero timeout in a
                 loop) instead of sleeping in read(); set it after open */
} bench_raw;

int bench_raw_open(bench_raw *r, const bench_ctx *ctx); /* 0 or -1 */
void bench_raw_close(bench_raw *r);
/* One blocking EVALSHA: 1 acquired / released, 0 busy / not held, -1 on
 * an error (printed). */
int bench_raw_acquire(bench_raw *r, const char *name);
int bench_raw_release(bench_raw *r, const char *name);
/* Pipelining: queue, then read one reply per queued call. */
int bench_raw_append_acquire(bench_raw *r, const char *name);
int bench_raw_append_release(bench_raw *r, const char *name);
int bench_raw_read(bench_raw *r); /* as bench_raw_acquire */
/* A plain command on the raw connection, e.g. ZCARD; the reply or NULL
 * (printed why). Free it with freeReplyObject. */
redisReply *bench_raw_command(bench_raw *r, const char *fmt, ...);

/* What the server did, read with one INFO on the raw connection
 * (cmdstats.c, which parses its cmdstat_ lines): the server side of a
 * figure, as differences between two readings. */
typedef struct bench_srv {
    double cpu_us;      /* used_cpu_sys + used_cpu_user */
    uint64_t commands;  /* total_commands_processed: every command, those
                           that scripts run included */
    uint64_t scripts;   /* script calls: FCALL, EVALSHA and EVAL */
    uint64_t script_us; /* their time, the commands they ran included */
} bench_srv;

/* 0, or -1 if INFO failed (printed) or the raw client sees only part of
 * the servers (a cluster: it talks to one master); then figures leave the
 * server's metrics out. */
int bench_srv_read(bench_raw *r, bench_srv *out);
/* b - a, less the INFO that read a (counted in b's total). */
bench_srv bench_srv_diff(const bench_srv *a, const bench_srv *b);

/* ---- the server's per-command counters (cmdstats.c) ------------------------- */

/* One reading of INFO commandstats: calls and time per command name
 * ("hmget", "client|setname"), or a sum of differences of readings. */
#define BENCH_CMDSTATS_MAX 96
typedef struct bench_cmdstats {
    int n;
    struct bench_cmdstat {
        char name[40];
        double calls, usec;
    } c[BENCH_CMDSTATS_MAX];
} bench_cmdstats;

/* 0, or -1 if INFO failed (printed) or the raw client sees one master of
 * a cluster. */
int bench_cmdstats_read(bench_raw *r, bench_cmdstats *out);
/* sum += b - a, name by name. */
void bench_cmdstats_add_diff(bench_cmdstats *sum, const bench_cmdstats *a,
                             const bench_cmdstats *b);

/* A sum split by who ran the commands. INFO (the readings) is left out. */
typedef struct bench_cmd_split {
    double scripts;   /* script calls: FCALL, EVALSHA and EVAL */
    double script_us; /* their time, the commands they ran included */
    double rcalls;    /* commands the scripts ran (redis.call) */
    double client;    /* commands clients sent that no script runs
                         (SUBSCRIBE, PING, ...) */
} bench_cmd_split;
bench_cmd_split bench_cmdstats_split(const bench_cmdstats *s);
/* "HMGET HSET x2 TIME": the commands the scripts ran (client 0) or the
 * clients' own (client 1), by name, each with its calls per `per`. */
void bench_cmdstats_describe(const bench_cmdstats *s, int client, double per,
                             char *out, size_t len);

/* Readings around measured operations, on a raw connection of its own:
 * bench_meter_begin, the operations, bench_meter_end(ops); the brackets
 * add up until bench_meter_reset. Between brackets the server may do
 * anything (set-up steps): only what runs inside a bracket counts. */
typedef struct bench_meter {
    bench_raw raw;
    bench_cmdstats at, now, sum;
    long ops;
    int ok; /* 0: the server could not be read; the rows say n/a */
} bench_meter;
int bench_meter_open(bench_meter *m, const bench_ctx *ctx); /* 0 or -1 */
void bench_meter_close(bench_meter *m);
void bench_meter_reset(bench_meter *m);
int bench_meter_begin(bench_meter *m); /* 0 or -1 (then ok is 0) */
/* Reads the server within a bracket: the script calls since its begin
 * (-1 on failure). bench_meter_end_polled ends the bracket at that
 * reading. */
double bench_meter_poll(bench_meter *m);
int bench_meter_end_polled(bench_meter *m, long ops);
int bench_meter_end(bench_meter *m, long ops); /* poll, then end */
/* The row's metrics: ops, EVALSHA per op, server us and redis.calls per
 * script call, which commands the scripts ran; with per > 0, the server
 * us and redis.calls per `per_name` too (per of them in a script call);
 * the clients' own commands per op, if any. */
void bench_meter_report(const bench_meter *m, const char *per_name, double per);
/* A row "<figure> <what>" of bench_meter_report's metrics (and a note, if
 * not NULL); then resets the meter. */
void bench_meter_row(bench_ctx *ctx, bench_meter *m, const char *figure,
                     const char *what, const char *note);

/* ---- rdl helpers (rdl_util.c) ------------------------------------------------- */

/* A client connected to ctx's server on its own loop thread, or NULL
 * (printed why). */
rdl_client_t *bench_client(const bench_ctx *ctx);
/* As bench_client, with this watchdog lease (rdl_client_set_watchdog_ms). */
rdl_client_t *bench_watchdog_client(const bench_ctx *ctx, int64_t watchdog_ms);
/* A client on the caller's loop (rdl_client_set_loop), connected, with
 * this watchdog lease (0: the default), or NULL (printed why). */
rdl_client_t *bench_loop_client(const bench_ctx *ctx, struct uv_loop_s *loop,
                                int64_t watchdog_ms);
/* As bench_client (loop NULL) or bench_loop_client, with durability
 * (rdl_client_set_durability; replicas 0: off). */
rdl_client_t *bench_durable_client(const bench_ctx *ctx, struct uv_loop_s *loop,
                                   int replicas, int64_t timeout_ms);
/* Counts completions of async requests whose data points at it; a
 * cancelled request is not a failure. */
typedef struct bench_tally {
    long done;
    long failed;
    int last_error;
} bench_tally;
void bench_tally_done(rdl_req_t *req, int status);
/* Runs the loop until *count >= want. */
void bench_loop_until(struct uv_loop_s *loop, const long *count, long want);
/* Runs the loop for ns nanoseconds (a timer ends the run, so the loop
 * sleeps while it has nothing to do). */
void bench_loop_for(struct uv_loop_s *loop, int64_t ns);
/* Closes a client made by bench_loop_client and runs the loop until its
 * handles have closed. NULL is fine. */
void bench_loop_client_free(rdl_client_t *c, struct uv_loop_s *loop);
/* The same for n clients on one loop (NULLs are fine): all are closed
 * before the loop runs, which returns only once no client is left open. */
void bench_loop_clients_free(rdl_client_t **c, int n, struct uv_loop_s *loop);
/* Async acquire+release chains on the caller's loop, one lock each
 * ("<prefix>:<i>", distinct names), each starting its next acquire from
 * the callback of its release (fig_throughput.c, fig_durable.c). */
typedef struct bench_chains bench_chains;
/* m chains on c, whose loop is `loop`; NULL (printed why). */
bench_chains *bench_chains_new(rdl_client_t *c, struct uv_loop_s *loop, int m,
                               const char *prefix);
/* Runs every chain until the cycle that ends after `end` (bench_now_ns),
 * then the loop until all have stopped: the cycles completed, or an rdl
 * error code (< 0) if a step failed. */
long bench_chains_run(bench_chains *k, int64_t end);
/* bench_chains_run in two steps, for several sets of chains on one loop
 * (several clients): start each, then finish each. */
void bench_chains_start(bench_chains *k, int64_t end);
long bench_chains_finish(bench_chains *k);
void bench_chains_free(bench_chains *k);
/* n blocking acquire+release cycles of lock (one try, a 30 s lease), each
 * timed into s; 0 or -1 (printed). */
int bench_rdl_cycles(rdl_lock_t *lock, int n, bench_samples *s);
/* Requests per acquisition between two stats snapshots. */
double bench_requests_per_acquire(const rdl_client_stats_t *a,
                                  const rdl_client_stats_t *b);
/* Prints "rdl-bench: <what>: <rdl error>" and returns -1. */
int bench_fail(const rdl_client_t *c, const char *what, int rc);

#endif
