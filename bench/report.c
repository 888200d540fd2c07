/* The table and the JSON lines. A row is kept until it ends, because the
 * JSON object of a row is printed as one line. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

#define MAX_METRICS 24

typedef struct metric {
    char key[48];
    char value[128]; /* as printed in the table */
    char json[160];  /* as printed in JSON */
    char unit[16];
    char target[24];
} metric;

static struct {
    bench_ctx *ctx;
    char figure[32];
    char what[96];
    metric m[MAX_METRICS];
    int n;
} row;

void bench_table_header(bench_ctx *ctx)
{
    fprintf(ctx->table, "%-12s %-34s %-22s %12s %-6s %s\n", "figure", "case",
            "metric", "value", "unit", "target");
    fprintf(ctx->table, "%-12s %-34s %-22s %12s %-6s %s\n", "------", "----",
            "------", "-----", "----", "------");
}

void bench_row_begin(bench_ctx *ctx, const char *figure, const char *fmt, ...)
{
    va_list ap;
    row.ctx = ctx;
    row.n = 0;
    snprintf(row.figure, sizeof(row.figure), "%s%s%s", ctx->scope,
             ctx->scope[0] ? "/" : "", figure);
    va_start(ap, fmt);
    vsnprintf(row.what, sizeof(row.what), fmt, ap);
    va_end(ap);
}

static metric *add(const char *key, const char *unit, const char *target)
{
    metric *m;
    if (row.n == MAX_METRICS)
        return NULL;
    m = &row.m[row.n++];
    snprintf(m->key, sizeof(m->key), "%s", key);
    snprintf(m->unit, sizeof(m->unit), "%s", unit ? unit : "");
    snprintf(m->target, sizeof(m->target), "%s", target ? target : "");
    return m;
}

void bench_row_target(const char *key, double v, const char *unit, int decimals,
                      const char *target)
{
    metric *m = add(key, unit, target);
    if (m == NULL)
        return;
    snprintf(m->value, sizeof(m->value), "%.*f", decimals, v);
    snprintf(m->json, sizeof(m->json), "%.*f", decimals, v);
}

void bench_row_num(const char *key, double v, const char *unit, int decimals)
{
    bench_row_target(key, v, unit, decimals, NULL);
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

void bench_row_text(const char *key, const char *text)
{
    metric *m = add(key, NULL, NULL);
    FILE *mem;
    if (m == NULL)
        return;
    snprintf(m->value, sizeof(m->value), "%s", text);
    mem = fmemopen(m->json, sizeof(m->json), "w");
    if (mem != NULL) {
        json_string(mem, text);
        fclose(mem);
    }
}

void bench_row_end(void)
{
    bench_ctx *ctx = row.ctx;
    FILE *t = ctx->table;
    int i;

    for (i = 0; i < row.n; i++) {
        const metric *m = &row.m[i];
        if (strlen(m->value) > 12 && m->unit[0] == '\0')
            fprintf(t, "%-12s %-34s %-22s %s\n", i == 0 ? row.figure : "",
                    i == 0 ? row.what : "", m->key, m->value);
        else
            fprintf(t, "%-12s %-34s %-22s %12s %-6s %s\n",
                    i == 0 ? row.figure : "", i == 0 ? row.what : "", m->key,
                    m->value, m->unit, m->target);
    }
    fflush(t);
    if (!ctx->json)
        return;
    printf("{\"figure\":");
    json_string(stdout, row.figure);
    printf(",\"case\":");
    json_string(stdout, row.what);
    for (i = 0; i < row.n; i++) {
        const metric *m = &row.m[i];
        if (m->unit[0])
            printf(",\"%s_%s\":%s", m->key, m->unit, m->json);
        else
            printf(",\"%s\":%s", m->key, m->json);
        if (m->target[0]) {
            printf(",\"%s_target\":", m->key);
            json_string(stdout, m->target);
        }
    }
    printf("}\n");
    fflush(stdout);
}
