/* FIFO hand-off between processes with a fair lock.
 *
 *   RDL_URL=redis://127.0.0.1:6379 ./fair
 *
 * Four processes ask for the same fair lock 50 ms apart; the first gets it
 * and holds it for half a second while the others queue. Each release
 * hands the lock to the head of the queue, and only that process is woken,
 * so they run in the order in which they reached Redis: 0, 1, 2, 3. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdl.h>

#include "example_server.h"
#include <uv.h>

#define WORKERS 4

static int worker(int id)
{
    const char *url = getenv("RDL_URL");
    rdl_client_t *client = NULL;
    rdl_lock_t *lock = NULL;
    rdl_lock_info_t info;
    int rc;

    uv_sleep(50 * (unsigned)id); /* arrive in order: 0, 1, 2, 3 */
    if ((rc = rdl_client_new(&client)) != 0 ||
        (url != NULL && (rc = example_set_server(client, url)) != 0) ||
        (rc = rdl_client_connect(client)) != 0 ||
        (rc = rdl_fairlock_new(client, "example:fair", &lock)) != 0) {
        fprintf(stderr, "worker %d: %s (%s)\n", id, rdl_strerror(rc),
                client != NULL ? rdl_client_errmsg(client) : "");
        rdl_client_free(client);
        return 1;
    }
    rc = rdl_lock_acquire(lock, 10000, 5000);
    if (rc == 0) {
        rdl_lock_info(lock, rdl_owner_self(), &info);
        printf(
            "worker %d holds the lock (token %llu, %u waiting)\n", id,
            (unsigned long long)rdl_lock_fencing_token(lock, rdl_owner_self()),
            info.waiters);
        fflush(stdout);
        uv_sleep(id == 0 ? 500 : 100); /* the first holds while all queue */
        rc = rdl_lock_release(lock);
    }
    if (rc != 0)
        fprintf(stderr, "worker %d: %s\n", id, rdl_strerror(rc));
    rdl_lock_free(lock);
    rdl_client_free(client);
    return rc == 0 ? 0 : 1;
}

int main(void)
{
    pid_t pids[WORKERS];
    int i, status, failed = 0;

    fflush(stdout);
    for (i = 0; i < WORKERS; i++) {
        pids[i] = fork();
        if (pids[i] < 0) {
            perror("fork");
            return 1;
        }
        if (pids[i] == 0)
            _exit(worker(i));
    }
    for (i = 0; i < WORKERS; i++)
        if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            failed = 1;
    return failed;
}
