/* The server's per-command counters (INFO commandstats) around measured
 * operations: what each script call cost the server, and which commands
 * it ran. Redis counts the commands a script runs (redis.call) under
 * their own names as well as the EVALSHA, so on a quiet server the
 * difference of two readings splits into the script calls (FCALL,
 * EVALSHA and EVAL: calls and their time, the commands they ran
 * included), the
 * commands the scripts ran, and the few that clients send themselves
 * (SUBSCRIBE, PING, ...: no rdl script runs those). The INFO commands
 * that take the readings are left out by name. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Script calls: their calls and time are the figure's subject. */
static const char *const script_cmds[] = {"fcall", "fcall_ro",   "evalsha",
                                          "eval",  "evalsha_ro", "eval_ro"};
/* Sent by clients, never by rdl's scripts (Redis refuses most of them in
 * a script); "info" is the readings' own. Subcommands ("client|setname")
 * go by the part before the '|'. */
static const char *const client_cmds[] = {
    "info",       "subscribe",    "unsubscribe", "ssubscribe", "sunsubscribe",
    "psubscribe", "punsubscribe", "ping",        "hello",      "auth",
    "select",     "client",       "script",      "wait",       "waitaof",
    "command",    "cluster",      "readonly",    "config",     "quit",
    "reset",      "function"};

static int in(const char *name, const char *const *list, size_t n)
{
    size_t i, len = strcspn(name, "|");
    for (i = 0; i < n; i++)
        if (strlen(list[i]) == len && strncmp(name, list[i], len) == 0)
            return 1;
    return 0;
}

#define IN(name, list) in(name, list, sizeof(list) / sizeof(list[0]))

/* The entry of `name`, added if absent; NULL if the table is full. */
static struct bench_cmdstat *slot(bench_cmdstats *s, const char *name)
{
    int i;
    for (i = 0; i < s->n; i++)
        if (strcmp(s->c[i].name, name) == 0)
            return &s->c[i];
    if (s->n == BENCH_CMDSTATS_MAX)
        return NULL;
    snprintf(s->c[s->n].name, sizeof(s->c[s->n].name), "%s", name);
    s->c[s->n].calls = s->c[s->n].usec = 0;
    return &s->c[s->n++];
}

/* Fills out from the cmdstat_ lines of an INFO reply's text. */
static void parse_cmdstats(const char *text, bench_cmdstats *out)
{
    const char *p;
    out->n = 0;
    /* cmdstat_<name>:calls=<n>,usec=<n>,usec_per_call=<x>,... */
    for (p = strstr(text, "cmdstat_"); p != NULL; p = strstr(p, "\ncmdstat_")) {
        char name[sizeof(out->c[0].name)];
        const char *colon, *calls, *usec;
        struct bench_cmdstat *e;
        p = strchr(p, '_') + 1;
        colon = strchr(p, ':');
        if (colon == NULL || (size_t)(colon - p) >= sizeof(name))
            continue;
        snprintf(name, sizeof(name), "%.*s", (int)(colon - p), p);
        calls = strstr(colon, "calls=");
        usec = strstr(colon, "usec=");
        if (calls == NULL || usec == NULL || (e = slot(out, name)) == NULL)
            continue;
        e->calls = strtod(calls + 6, NULL);
        e->usec = strtod(usec + 5, NULL);
    }
}

/* INFO `section` on r, as a string reply, or NULL (printed why, or a
 * cluster: the raw client sees one master of several). */
static redisReply *info(bench_raw *r, const char *section)
{
    redisReply *rep;
    if (r->tag[0] != '\0')
        return NULL;
    if ((rep = bench_raw_command(r, "INFO %s", section)) == NULL)
        return NULL;
    if (rep->type != REDIS_REPLY_STRING) {
        freeReplyObject(rep);
        return NULL;
    }
    return rep;
}

int bench_cmdstats_read(bench_raw *r, bench_cmdstats *out)
{
    redisReply *rep = info(r, "commandstats");
    out->n = 0;
    if (rep == NULL)
        return -1;
    parse_cmdstats(rep->str, out);
    freeReplyObject(rep);
    return 0;
}

/* The number after "<field>:" in an INFO text, or after "<field>=" in a
 * line of fields; 0 if absent. */
static double info_field(const char *text, const char *field)
{
    const char *p = strstr(text, field);
    return p != NULL ? strtod(p + strlen(field), NULL) : 0;
}

int bench_srv_read(bench_raw *r, bench_srv *out)
{
    /* "all" rather than a list of sections: servers before 7.0 take one
     * section only. */
    redisReply *rep = info(r, "all");
    bench_cmdstats cs;
    bench_cmd_split split;

    memset(out, 0, sizeof(*out));
    if (rep == NULL)
        return -1;
    out->cpu_us = (info_field(rep->str, "\nused_cpu_sys:") +
                   info_field(rep->str, "\nused_cpu_user:")) *
                  1e6;
    out->commands =
        (uint64_t)info_field(rep->str, "\ntotal_commands_processed:");
    parse_cmdstats(rep->str, &cs);
    split = bench_cmdstats_split(&cs);
    out->scripts = (uint64_t)split.scripts;
    out->script_us = (uint64_t)split.script_us;
    freeReplyObject(rep);
    return 0;
}

bench_srv bench_srv_diff(const bench_srv *a, const bench_srv *b)
{
    bench_srv d;
    d.cpu_us = b->cpu_us - a->cpu_us;
    d.commands = b->commands - a->commands - 1;
    d.scripts = b->scripts - a->scripts;
    d.script_us = b->script_us - a->script_us;
    return d;
}

void bench_cmdstats_add_diff(bench_cmdstats *sum, const bench_cmdstats *a,
                             const bench_cmdstats *b)
{
    int i, j;
    for (i = 0; i < b->n; i++) {
        double calls = b->c[i].calls, usec = b->c[i].usec;
        struct bench_cmdstat *e;
        for (j = 0; j < a->n; j++)
            if (strcmp(a->c[j].name, b->c[i].name) == 0) {
                calls -= a->c[j].calls;
                usec -= a->c[j].usec;
                break;
            }
        if (calls == 0 || (e = slot(sum, b->c[i].name)) == NULL)
            continue;
        e->calls += calls;
        e->usec += usec;
    }
}

bench_cmd_split bench_cmdstats_split(const bench_cmdstats *s)
{
    bench_cmd_split d = {0};
    int i;
    for (i = 0; i < s->n; i++) {
        const struct bench_cmdstat *e = &s->c[i];
        if (IN(e->name, script_cmds)) {
            d.scripts += e->calls;
            d.script_us += e->usec;
        } else if (IN(e->name, client_cmds)) {
            if (strcmp(e->name, "info") != 0)
                d.client += e->calls;
        } else {
            d.rcalls += e->calls;
        }
    }
    return d;
}

/* " NAME" (once a call) or " NAME x<v>" appended to out. */
static void append_cmd(char *out, size_t len, const char *name, double v)
{
    char upper[sizeof(((bench_cmdstats *)0)->c[0].name)];
    size_t used = strlen(out), i;
    double r = (double)(long)(v + 0.5);
    for (i = 0; name[i] && i + 1 < sizeof(upper); i++)
        upper[i] = (char)toupper((unsigned char)name[i]);
    upper[i] = '\0';
    if (used >= len)
        return;
    if (r >= 1 && v > r - 0.005 && v < r + 0.005)
        snprintf(out + used, len - used, r == 1 ? "%s%s" : "%s%s x%.0f",
                 used ? " " : "", upper, r);
    else /* a command some calls ran: 3 digits, 0.0005 as well as 1.01 */
        snprintf(out + used, len - used, "%s%s x%.3g", used ? " " : "", upper,
                 v);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct bench_cmdstat *)a)->name,
                  ((const struct bench_cmdstat *)b)->name);
}

void bench_cmdstats_describe(const bench_cmdstats *s, int client, double per,
                             char *out, size_t len)
{
    bench_cmdstats sorted = *s;
    int i;
    out[0] = '\0';
    qsort(sorted.c, (size_t)sorted.n, sizeof(sorted.c[0]), by_name);
    for (i = 0; i < sorted.n; i++) {
        const struct bench_cmdstat *e = &sorted.c[i];
        if (IN(e->name, script_cmds) || strcmp(e->name, "info") == 0 ||
            IN(e->name, client_cmds) != client || per <= 0)
            continue;
        append_cmd(out, len, e->name, e->calls / per);
    }
}

/* ---- the meter --------------------------------------------------------------- */

int bench_meter_open(bench_meter *m, const bench_ctx *ctx)
{
    memset(m, 0, sizeof(*m));
    if (bench_raw_open(&m->raw, ctx) != 0)
        return -1;
    m->ok = bench_cmdstats_read(&m->raw, &m->at) == 0;
    return 0;
}

void bench_meter_close(bench_meter *m)
{
    bench_raw_close(&m->raw);
}

void bench_meter_reset(bench_meter *m)
{
    m->sum.n = 0;
    m->ops = 0;
}

int bench_meter_begin(bench_meter *m)
{
    if (m->ok && bench_cmdstats_read(&m->raw, &m->at) != 0)
        m->ok = 0;
    return m->ok ? 0 : -1;
}

double bench_meter_poll(bench_meter *m)
{
    bench_cmdstats d = {0};
    if (!m->ok || bench_cmdstats_read(&m->raw, &m->now) != 0) {
        m->ok = 0;
        return -1;
    }
    bench_cmdstats_add_diff(&d, &m->at, &m->now);
    return bench_cmdstats_split(&d).scripts;
}

int bench_meter_end_polled(bench_meter *m, long ops)
{
    if (!m->ok)
        return -1;
    bench_cmdstats_add_diff(&m->sum, &m->at, &m->now);
    m->ops += ops;
    return 0;
}

int bench_meter_end(bench_meter *m, long ops)
{
    if (bench_meter_poll(m) < 0)
        return -1;
    return bench_meter_end_polled(m, ops);
}

void bench_meter_report(const bench_meter *m, const char *per_name, double per)
{
    bench_cmd_split d = bench_cmdstats_split(&m->sum);
    char text[160];
    if (!m->ok || m->ops <= 0 || d.scripts <= 0) {
        bench_row_text("server", "n/a: no script call seen");
        return;
    }
    bench_row_num("ops", (double)m->ops, NULL, 0);
    bench_row_num("script_calls_per_op", d.scripts / (double)m->ops, NULL, 2);
    bench_row_num("server_per_call", d.script_us / d.scripts, "us", 2);
    bench_row_num("redis_calls_per_call", d.rcalls / d.scripts, NULL, 2);
    bench_cmdstats_describe(&m->sum, 0, d.scripts, text, sizeof(text));
    bench_row_text("redis_calls", text[0] ? text : "none");
    if (per > 0 && per_name != NULL) {
        char key[48];
        snprintf(key, sizeof(key), "server_per_%s", per_name);
        bench_row_num(key, d.script_us / d.scripts / per, "us", 3);
        snprintf(key, sizeof(key), "redis_calls_per_%s", per_name);
        bench_row_num(key, d.rcalls / d.scripts / per, NULL, 3);
    }
    if (d.client > 0) {
        bench_cmdstats_describe(&m->sum, 1, (double)m->ops, text, sizeof(text));
        bench_row_text("client_cmds_per_op", text);
    }
}

void bench_meter_row(bench_ctx *ctx, bench_meter *m, const char *figure,
                     const char *what, const char *note)
{
    bench_row_begin(ctx, figure, "%s", what);
    bench_meter_report(m, NULL, 0);
    if (note != NULL)
        bench_row_text("note", note);
    bench_row_end();
    bench_meter_reset(m);
}
