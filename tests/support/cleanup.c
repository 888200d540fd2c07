/* The cleanup stack, time helpers, the common main() of test programs, and
 * reading a script file. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rdlt.h"

typedef struct entry {
    void (*fn)(void *);
    void *p;
} entry;

/* Fixed size: a test that needs more than this is doing something wrong,
 * and a static array cannot fail to allocate in the middle of a cleanup. */
#define MAX_ENTRIES 256
static entry stack[MAX_ENTRIES];
static int depth;
static pid_t owner_pid;

static void at_exit(void)
{
    /* A forked child that returns through exit() must not stop the
     * parent's servers. */
    if (getpid() == owner_pid)
        rdlt_cleanup();
}

void rdlt_init(int argc, char **argv)
{
    owner_pid = getpid();
    atexit(at_exit);
    if (argc > 1 && argv[1][0] != '\0')
        cmocka_set_test_filter(argv[1]);
}

void rdlt_defer(void (*fn)(void *), void *p)
{
    if (depth == MAX_ENTRIES)
        fail_msg("rdlt: cleanup stack full");
    stack[depth].fn = fn;
    stack[depth].p = p;
    depth++;
}

static int find(void *p)
{
    int i;
    for (i = depth - 1; i >= 0; i--)
        if (stack[i].p == p)
            return i;
    return -1;
}

static void remove_at(int i)
{
    memmove(&stack[i], &stack[i + 1], (size_t)(depth - i - 1) * sizeof(entry));
    depth--;
}

int rdlt_release(void *p)
{
    int i = find(p);
    entry e;
    if (i < 0)
        return 0;
    e = stack[i];
    remove_at(i);
    e.fn(e.p);
    return 1;
}

void rdlt_forget(void *p)
{
    int i = find(p);
    if (i >= 0)
        remove_at(i);
}

void rdlt_cleanup(void)
{
    /* Pop before calling, so a cleanup that fails (or calls us again)
     * never runs twice. */
    while (depth > 0) {
        entry e = stack[--depth];
        e.fn(e.p);
    }
}

int rdlt_teardown(void **state)
{
    (void)state;
    rdlt_cleanup();
    return 0;
}

int64_t rdlt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void rdlt_sleep_ms(int64_t ms)
{
    struct timespec ts;
    if (ms <= 0)
        return;
    ts.tv_sec = (time_t)(ms / 1000);
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int rdlt_wait_flag(const int *flag, int64_t timeout_ms)
{
    int64_t deadline = rdlt_now_ms() + timeout_ms;
    int v;
    while ((v = __atomic_load_n(flag, __ATOMIC_ACQUIRE)) == 0 &&
           rdlt_now_ms() < deadline)
        rdlt_sleep_ms(2);
    return v;
}

char *rdlt_read_script(const char *dir, const char *name)
{
    char path[1024];
    FILE *f;
    long n;
    char *buf;
    snprintf(path, sizeof(path), "%s/%s.lua", dir, name);
    f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("cannot read %s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}
