/* A read-write lock: readers share, a writer excludes, writers first.
 *
 *   RDL_URL=redis://127.0.0.1:6379 ./rwlock
 *
 * Four reader threads read a "catalogue" over and over; a writer thread
 * updates it three times. Readers overlap each other; the writer never
 * overlaps anyone, and is not starved: once it waits, new readers wait
 * behind it. The writer then downgrades: it takes the read side before it
 * lets go of the write side, so no other writer can slip in between. */
#include <stdio.h>
#include <stdlib.h>

#include <rdl.h>

#include "example_server.h"
#include <uv.h>

static rdl_rwlock_t *rw;
static int version, stop;

static void reader(void *arg)
{
    rdl_lock_t *r = rdl_rwlock_read(rw);
    int reads = 0;
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        if (rdl_lock_acquire(r, 5000, 10000) != 0)
            continue;
        (void)__atomic_load_n(&version, __ATOMIC_ACQUIRE); /* the read */
        uv_sleep(5);
        reads++;
        if (rdl_lock_release(r) != 0)
            fprintf(stderr, "reader: release failed\n");
    }
    printf("a reader read %d times\n", reads);
}

static void writer(void *arg)
{
    rdl_lock_t *w = rdl_rwlock_write(rw), *r = rdl_rwlock_read(rw);
    rdl_owner_t me = rdl_owner_self();
    int i, rc;
    (void)arg;
    for (i = 1; i <= 3; i++) {
        uint64_t t0 = uv_hrtime();
        if ((rc = rdl_lock_acquire(w, 5000, 10000)) != 0) {
            fprintf(stderr, "writer: %s\n", rdl_strerror(rc));
            return;
        }
        __atomic_store_n(&version, i, __ATOMIC_RELEASE); /* the write */
        printf("writer: version %d written after waiting %.1f ms (token "
               "%llu)\n",
               i, (double)(uv_hrtime() - t0) / 1e6,
               (unsigned long long)rdl_lock_fencing_token(w, me));
        fflush(stdout);
        /* Downgrade: read what was written, with no writer in between. */
        if (rdl_lock_acquire(r, 0, 10000) == 0) {
            if (rdl_lock_release(w) != 0)
                fprintf(stderr, "writer: release of write failed\n");
            uv_sleep(10);
            if (rdl_lock_release(r) != 0)
                fprintf(stderr, "writer: release of read failed\n");
        }
        uv_sleep(50);
    }
}

int main(void)
{
    const char *url = getenv("RDL_URL");
    rdl_client_t *client;
    uv_thread_t readers[4], w;
    int i, rc;

    if ((rc = rdl_client_new(&client)) != 0)
        return 1;
    if ((url != NULL && (rc = example_set_server(client, url)) != 0) ||
        (rc = rdl_client_connect(client)) != 0 ||
        (rc = rdl_rwlock_new(client, "example:catalogue", &rw)) != 0) {
        fprintf(stderr, "set-up: %s (%s)\n", rdl_strerror(rc),
                rdl_client_errmsg(client));
        rdl_client_free(client);
        return 1;
    }
    for (i = 0; i < 4; i++)
        uv_thread_create(&readers[i], reader, NULL);
    uv_thread_create(&w, writer, NULL);
    uv_thread_join(&w);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (i = 0; i < 4; i++)
        uv_thread_join(&readers[i]);
    rdl_rwlock_free(rw);
    rdl_client_free(client);
    return 0;
}
