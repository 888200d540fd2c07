/* The shared history (stress.h). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sys/mman.h>

#include "rdl.h"
#include "stress.h"

int stress_hist_init(stress_hist *h, size_t cap)
{
    size_t bytes = cap * sizeof(stress_ev) + 64;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    h->next = p;
    h->ev = (stress_ev *)((char *)p + 64);
    h->cap = cap;
    return 0;
}

void stress_hist_free(stress_hist *h)
{
    if (h->next != NULL)
        munmap(h->next, h->cap * sizeof(stress_ev) + 64);
    memset(h, 0, sizeof(*h));
}

stress_ev *stress_hist_add(stress_hist *h)
{
    size_t i = __atomic_fetch_add(h->next, 1, __ATOMIC_SEQ_CST);
    return i < h->cap ? &h->ev[i] : NULL;
}

void stress_hist_done(stress_ev *e, int state)
{
    if (e != NULL)
        __atomic_store_n(&e->done, state, __ATOMIC_RELEASE);
}

size_t stress_hist_len(const stress_hist *h)
{
    size_t n = __atomic_load_n(h->next, __ATOMIC_SEQ_CST);
    return n < h->cap ? n : h->cap;
}

int64_t stress_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static const char *kind_name(int type, int kind)
{
    static const char *const locks[] = {"?",     "plain",   "fair", "read",
                                        "write", "redlock", "sem"};
    static const char *const faults[] = {
        "?",         "killconn", "sigstop",       "sigkill",     "restart",
        "failover",  "external", "drop-reply",    "drop-req",    "delay-sub",
        "delay-cmd", "reset",    "replica-pause", "master-kill", "close"};
    if (type == SE_FAULT)
        return kind >= 0 && kind <= SF_LAST ? faults[kind] : "?";
    return kind >= 0 && kind <= SK_LAST ? locks[kind] : "?";
}

const char *stress_kind_name(int type, int kind)
{
    return kind_name(type, kind);
}

void stress_ev_format(const stress_ev *e, int64_t base_us, char *buf,
                      size_t len)
{
    static const char *const types[] = {"?", "acquire", "release", "lost",
                                        "FAULT"};
    char lease[24], wait[24], permits[24] = "";
    if (e->lease_ms < 0)
        snprintf(lease, sizeof(lease), "auto");
    else
        snprintf(lease, sizeof(lease), "%lld", (long long)e->lease_ms);
    if (e->wait_ms < 0)
        snprintf(wait, sizeof(wait), "forever");
    else
        snprintf(wait, sizeof(wait), "%lld", (long long)e->wait_ms);
    if (e->type != SE_FAULT && e->kind == SK_SEM)
        snprintf(permits, sizeof(permits), "/%d", e->permits);
    snprintf(buf, len,
             "+%lld.%03lld..%s%lld.%03lld ms %s %s %.*s%s%s owner=%d hold=%lld "
             "lvl=%d wait=%s lease=%s token=%llu rc=%s lost=%d%s",
             (long long)((e->t0_us - base_us) / 1000),
             (long long)((e->t0_us - base_us) % 1000 + 1000) % 1000,
             e->done == 2 ? "+" : "(unfinished)",
             (long long)((e->t1_us - base_us) / 1000),
             (long long)((e->t1_us - base_us) % 1000 + 1000) % 1000,
             e->type >= 1 && e->type <= SE_FAULT ? types[e->type] : "?",
             kind_name(e->type, e->kind), (int)sizeof(e->name), e->name,
             permits, e->multi > 0 ? " (multi part)" : "", e->owner,
             (long long)e->hold, e->level, wait, lease,
             (unsigned long long)e->token, rdl_err_name(e->rc), e->lost,
             e->proc > 0 ? " (child)" : "");
}
