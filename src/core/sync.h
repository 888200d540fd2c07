/* sync.c: the blocking facade (docs/design.md#threads). rdl__sync_call() is
 * made on any thread but the loop's and blocks it; the rdl__sync lives on that
 * caller's stack, and the loop thread does not touch it after
 * rdl__sync_done(). */
#ifndef RDL_CORE_SYNC_H
#define RDL_CORE_SYNC_H

#include <uv.h>

#include "client.h"

typedef struct rdl__sync {
    rdl__task task;
    uv_sem_t sem;
    int state; /* sync.c: waiting, sleeping or done (atomic) */
    int status;
    char msg[256];
    uint64_t done_ns; /* when rdl__sync_done() ran (uv_hrtime) */
    rdl_client_t *client;
    void (*start)(struct rdl__sync *s); /* on the loop thread */
} rdl__sync;

/* Runs s->start on the loop thread and blocks until rdl__sync_done().
 * Returns RDL_EDEADLK on the loop thread, RDL_ECLOSED if the client is not
 * running, else the status given to rdl__sync_done(). */
int rdl__sync_call(rdl_client_t *c, rdl__sync *s);
/* Completes a blocking call (loop thread). */
void rdl__sync_done(rdl__sync *s, int status);

/* The spin's arithmetic (sync.c), for its tests: the typical call time
 * after one more call that took `took` ns; and how long a caller spins
 * (ns, 0: not at all) when calls typically take `typical` ns, the last
 * `missed` spins in a row missed the result, and `call` counts the calls
 * made while they did (every PROBE_EVERY-th of those spins). */
uint64_t rdl__spin_learn(uint64_t typical, uint64_t took);
uint64_t rdl__spin_budget(uint64_t typical, unsigned missed, unsigned call);

#endif
