/* Allocation wrappers: every allocation of the library goes through here,
 * so tests can make the n-th one fail and check that nothing crashes or
 * leaks. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

/* Counts down to the allocation that must fail; 0 = off. Tests set it from
 * one thread while no client runs, so a plain atomic counter suffices. */
static long fail_countdown;

void rdl__alloc_fail_at(long n)
{
    __atomic_store_n(&fail_countdown, n > 0 ? n : 0, __ATOMIC_RELAXED);
}

static int should_fail(void)
{
    long n = __atomic_load_n(&fail_countdown, __ATOMIC_RELAXED);
    if (n <= 0)
        return 0;
    return __atomic_sub_fetch(&fail_countdown, 1, __ATOMIC_RELAXED) == 0;
}

void *rdl__malloc(size_t n)
{
    return should_fail() ? NULL : malloc(n ? n : 1);
}

void *rdl__calloc(size_t n, size_t size)
{
    return should_fail() ? NULL : calloc(n ? n : 1, size ? size : 1);
}

void *rdl__realloc(void *p, size_t n)
{
    return should_fail() ? NULL : realloc(p, n ? n : 1);
}

void rdl__free(void *p)
{
    free(p);
}

char *rdl__strndup(const char *s, size_t n)
{
    char *d = rdl__malloc(n + 1);
    if (d != NULL) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

char *rdl__strdup(const char *s)
{
    return rdl__strndup(s, strlen(s));
}
