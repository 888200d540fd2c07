/* A long job under a lock kept alive by the watchdog.
 *
 *   RDL_URL=redis://127.0.0.1:6379 ./watchdog
 *
 * The job takes longer than the lease, so it acquires with RDL_LEASE_AUTO:
 * the client's watchdog renews the lease every lease/3 while the lock is
 * held. Should the watchdog lose the hold (Redis unreachable until the
 * lease ran out, this process paused past it, an operator force-releasing
 * the lock), the lost callback says so and the job stops. Before each step
 * the job checks that the hold is known valid for longer than the step,
 * and it hands its fencing token to the storage it writes, which refuses
 * tokens older than the newest it has seen: the only defence against a
 * pause that strikes in the middle of a step. */
#include <stdio.h>
#include <stdlib.h>

#include <rdl.h>

#include "example_server.h"
#include <uv.h>

#define LEASE_MS 1500 /* short, so the demo shows renewals within seconds */
#define STEPS 8
#define STEP_MS 500

static int lost; /* set on the client's loop thread, read by the job */

static void on_lost(rdl_lock_t *lock, rdl_owner_t owner, int reason, void *data)
{
    (void)owner;
    (void)data;
    /* The loop thread: no blocking calls here; tell the job and return. */
    fprintf(stderr, "lost the hold of \"%s\": %s\n", rdl_lock_name(lock),
            rdl_strerror(reason));
    __atomic_store_n(&lost, 1, __ATOMIC_RELEASE);
}

/* Stands for a write to storage that checks fencing tokens. */
static void write_step(int step, uint64_t token)
{
    printf("step %d written with fencing token %llu\n", step,
           (unsigned long long)token);
    fflush(stdout);
}

static int run_job(rdl_client_t *client, rdl_lock_t *lock)
{
    rdl_owner_t me = rdl_owner_self();
    rdl_client_stats_t st;
    int step, rc;

    rc = rdl_lock_acquire(lock, 10000, RDL_LEASE_AUTO);
    if (rc != 0) {
        fprintf(stderr, "acquire: %s (%s)\n", rdl_strerror(rc),
                rdl_client_errmsg(client));
        return 1;
    }
    for (step = 1; step <= STEPS; step++) {
        if (__atomic_load_n(&lost, __ATOMIC_ACQUIRE) ||
            rdl_lock_valid_ms(lock, me) < STEP_MS) {
            fprintf(stderr, "the hold is not safe for another step; "
                            "stopping\n");
            break;
        }
        uv_sleep(STEP_MS); /* the work of one step */
        write_step(step, rdl_lock_fencing_token(lock, me));
    }
    rc = rdl_lock_release(lock);
    if (rc != 0)
        fprintf(stderr, "release: %s\n", rdl_strerror(rc));
    rdl_client_stats(client, &st);
    printf("job done in %d steps of %d ms under a %d ms lease: %llu "
           "renewals in %llu round trips, %llu holds lost\n",
           step - 1, STEP_MS, LEASE_MS, (unsigned long long)st.renewals,
           (unsigned long long)st.renewal_calls,
           (unsigned long long)st.holds_lost);
    return rc == 0 && step > STEPS ? 0 : 1;
}

int main(void)
{
    const char *url = getenv("RDL_URL");
    rdl_client_t *client;
    rdl_lock_t *lock = NULL;
    int rc;

    if ((rc = rdl_client_new(&client)) != 0) {
        fprintf(stderr, "rdl_client_new: %s\n", rdl_strerror(rc));
        return 1;
    }
    if ((url != NULL && example_set_server(client, url) != 0) ||
        rdl_client_set_watchdog_ms(client, LEASE_MS) != 0) {
        fprintf(stderr, "configuration: %s\n", rdl_client_errmsg(client));
        rdl_client_free(client);
        return 1;
    }
    if ((rc = rdl_client_connect(client)) != 0 ||
        (rc = rdl_lock_new(client, "example:watchdog", &lock)) != 0 ||
        (rc = rdl_lock_set_lost_cb(lock, on_lost, NULL)) != 0) {
        fprintf(stderr, "set-up: %s (%s)\n", rdl_strerror(rc),
                rdl_client_errmsg(client));
        rdl_lock_free(lock);
        rdl_client_free(client);
        return 1;
    }
    rc = run_job(client, lock);
    rdl_lock_free(lock);
    rdl_client_free(client);
    return rc;
}
