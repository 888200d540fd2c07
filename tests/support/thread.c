/* Joinable threads whose join is on the cleanup stack, so a failing test
 * never frees a client or lock under a thread that still uses it. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rdlt.h"

struct rdlt_thread {
    pthread_t tid;
    void *ret;
};

/* Cleanup-stack entry. A thread still blocked after 30 s (a hung lock call)
 * cannot be joined, and the objects it uses cannot be freed under it: the
 * test has failed already, so the process stops here. The servers die with
 * it (PR_SET_PDEATHSIG). */
static void destroy(void *p)
{
    rdlt_thread *t = p;
    struct timespec ts;
    int rc;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 30;
    rc = pthread_timedjoin_np(t->tid, NULL, &ts);
    if (rc != 0) {
        fprintf(stderr,
                "rdlt: a test thread did not finish within 30 s "
                "(%s); exiting\n",
                strerror(rc));
        fflush(NULL);
        _exit(3);
    }
    free(t);
}

rdlt_thread *rdlt_thread_start(void *(*fn)(void *), void *arg)
{
    rdlt_thread *t = calloc(1, sizeof(*t));
    int rc;
    assert_non_null(t);
    rc = pthread_create(&t->tid, NULL, fn, arg);
    if (rc != 0) {
        free(t);
        fail_msg("rdlt: pthread_create: %s", strerror(rc));
    }
    rdlt_defer(destroy, t);
    return t;
}

void *rdlt_thread_join(rdlt_thread *t)
{
    void *ret = NULL;
    struct timespec ts;
    int rc;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 60;
    rc = pthread_timedjoin_np(t->tid, &ret, &ts);
    if (rc != 0) /* left on the stack: the teardown tries once more */
        fail_msg("rdlt: test thread not finished after 60 s: %s", strerror(rc));
    rdlt_forget(t);
    free(t);
    return ret;
}
