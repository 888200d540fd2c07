/* Time and latency samples. Percentiles are exact (the samples are sorted),
 * which a benchmark of at most a few hundred thousand events affords. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"

int64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void bench_sleep_ns(int64_t ns)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(ns / 1000000000);
    ts.tv_nsec = (long)(ns % 1000000000);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int bench_samples_add(bench_samples *s, int64_t ns)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        int64_t *v = realloc(s->v, cap * sizeof(*v));
        if (v == NULL)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = ns;
    s->sorted = 0;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

double bench_samples_pct_us(bench_samples *s, double p)
{
    size_t i;
    if (s->n == 0)
        return 0;
    if (!s->sorted) {
        qsort(s->v, s->n, sizeof(*s->v), cmp_i64);
        s->sorted = 1;
    }
    /* Nearest rank: the smallest sample with at least p% at or below it. */
    i = (size_t)(p / 100.0 * (double)s->n + 0.999999);
    i = i == 0 ? 0 : i - 1;
    if (i >= s->n)
        i = s->n - 1;
    return (double)s->v[i] / 1000.0;
}

void bench_samples_free(bench_samples *s)
{
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}
