/* rdl-bench: options, the table of figures, and the run.
 *
 *   rdl-bench [--url URL] [--quick] [--json] [--only FIGURE[,FIGURE...]]
 *
 * Without --url it starts its own redis-server on a free loopback port and
 * stops it at the end. Exit status: 0, 1 if a figure failed, 64 for a bad
 * command line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define EXIT_USAGE 64

/* A figure is one entry here: its name for --only, what it shows, the
 * function that measures and reports it. */
static const bench_figure figures[] = {
    {"floor", "raw EVALSHA: round trip (sleeping, busy-poll), server limit",
     bench_fig_floor},
    {"uncontended", "blocking acquire+release, 1 thread, vs 2 raw RTT",
     bench_fig_uncontended},
    {"throughput", "many acquirers on distinct names, one client",
     bench_fig_throughput},
    {"handoff", "8 threads, 2/8/32 processes contending on one name",
     bench_fig_handoff},
    {"watchdog", "1,000 to 100,000 auto-leased holds: renewal cost",
     bench_fig_watchdog},
    {"fairqueue", "fair-lock hand-off with 10 and 10,000 queued waiters",
     bench_fig_fairqueue},
    {"memory", "client memory per lock object, hold and waiter",
     bench_fig_memory},
    {"durable", "durability 1 vs off, with a replica; a slow WAIT",
     bench_fig_durable},
    {"scripts", "server us and redis.calls per script call, per operation",
     bench_fig_scripts},
    {"cluster", "the figures against a 6-node cluster", bench_fig_cluster},
};
#define NFIGURES (sizeof(figures) / sizeof(figures[0]))

static void usage(FILE *f)
{
    size_t i;
    fprintf(f, "usage: rdl-bench [--url URL] [--quick] [--json] "
               "[--only FIGURE[,FIGURE...]]\n"
               "  --url URL   use this server (redis://[user[:pass]@]host"
               "[:port][/db])\n"
               "              instead of a throwaway redis-server\n"
               "  --quick     small sizes (a smoke test; well under a minute)\n"
               "  --json      JSON lines on stdout, one object per row; the "
               "table goes\n"
               "              to stderr\n"
               "  --only F    run only these figures:\n");
    for (i = 0; i < NFIGURES; i++)
        fprintf(f, "                %-12s %s\n", figures[i].name,
                figures[i].what);
}

/* Enough of redis://[user[:pass]@]host[:port][/db] for the raw client;
 * rdl parses the URL itself. */
static int parse_url(bench_ctx *ctx, const char *url)
{
    const char *p = url, *at, *slash, *colon;
    size_t hl;
    if (strncmp(p, "redis://", 8) != 0)
        return -1;
    p += 8;
    slash = strchr(p, '/');
    at = strchr(p, '@');
    if (at != NULL && (slash == NULL || at < slash)) {
        const char *pc = memchr(p, ':', (size_t)(at - p));
        const char *pw = pc != NULL ? pc + 1 : p;
        snprintf(ctx->password, sizeof(ctx->password), "%.*s", (int)(at - pw),
                 pw);
        if (pc != NULL && pc > p)
            snprintf(ctx->user, sizeof(ctx->user), "%.*s", (int)(pc - p), p);
        p = at + 1;
    }
    hl = slash != NULL ? (size_t)(slash - p) : strlen(p);
    colon = memchr(p, ':', hl);
    ctx->port = 6379;
    if (colon != NULL) {
        ctx->port = atoi(colon + 1);
        hl = (size_t)(colon - p);
    }
    if (hl == 0 || hl >= sizeof(ctx->host) || ctx->port <= 0)
        return -1;
    snprintf(ctx->host, sizeof(ctx->host), "%.*s", (int)hl, p);
    ctx->db = slash != NULL ? atoi(slash + 1) : 0;
    snprintf(ctx->url, sizeof(ctx->url), "%s", url);
    return 0;
}

static const bench_figure *find(const char *name, size_t len)
{
    size_t i;
    for (i = 0; i < NFIGURES; i++)
        if (strlen(figures[i].name) == len &&
            strncmp(figures[i].name, name, len) == 0)
            return &figures[i];
    return NULL;
}

/* Marks the figures named in a comma list; -1 on an unknown name. */
static int select_figures(const char *list, int *on)
{
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        const bench_figure *f = find(p, len);
        if (f == NULL) {
            fprintf(stderr, "rdl-bench: unknown figure \"%.*s\"\n", (int)len,
                    p);
            return -1;
        }
        on[f - figures] = 1;
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    bench_ctx ctx;
    int on[NFIGURES] = {0}, only = 0, failed = 0, i;
    const char *url = NULL;
    int64_t t0 = bench_now_ns();

    memset(&ctx, 0, sizeof(ctx));
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--quick") == 0) {
            ctx.quick = 1;
        } else if (strcmp(a, "--json") == 0) {
            ctx.json = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if ((strcmp(a, "--url") == 0 || strcmp(a, "--only") == 0) &&
                   i + 1 < argc) {
            if (a[2] == 'u') {
                url = argv[++i];
            } else {
                only = 1;
                if (select_figures(argv[++i], on) != 0) {
                    usage(stderr);
                    return EXIT_USAGE;
                }
            }
        } else {
            fprintf(stderr, "rdl-bench: bad argument \"%s\"\n", a);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (url != NULL && parse_url(&ctx, url) != 0) {
        fprintf(stderr, "rdl-bench: --url: expected redis://host[:port]\n");
        usage(stderr);
        return EXIT_USAGE;
    }
    ctx.table = ctx.json ? stderr : stdout;
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    if (url == NULL && bench_server_start(&ctx) != 0)
        return 1;

    fprintf(ctx.table, "rdl-bench: rdl %s, server %s%s, %ld CPUs\n\n",
            rdl_version_string(), ctx.url, url ? "" : " (throwaway)",
            sysconf(_SC_NPROCESSORS_ONLN));
    bench_table_header(&ctx);
    for (i = 0; i < (int)NFIGURES; i++) {
        if (only && !on[i])
            continue;
        if (figures[i].run(&ctx) != 0) {
            fprintf(stderr, "rdl-bench: figure %s failed\n", figures[i].name);
            failed = 1;
        }
    }
    fprintf(ctx.table, "\nrdl-bench: done in %.1f s\n",
            (double)(bench_now_ns() - t0) / 1e9);
    bench_server_stop();
    return failed;
}
