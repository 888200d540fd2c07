/* sync.c: the blocking facade (DESIGN §5). rdl__sync_call() is made on
 * any thread but the loop's and blocks it; the rdl__sync lives on that
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
    rdl_client_t *client;
    void (*start)(struct rdl__sync *s); /* on the loop thread */
} rdl__sync;

/* Runs s->start on the loop thread and blocks until rdl__sync_done().
 * Returns RDL_EDEADLK on the loop thread, RDL_ECLOSED if the client is not
 * running, else the status given to rdl__sync_done(). */
int rdl__sync_call(rdl_client_t *c, rdl__sync *s);
/* Completes a blocking call (loop thread). */
void rdl__sync_done(rdl__sync *s, int status);

#endif
