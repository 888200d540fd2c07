/* The blocking facade (DESIGN §5): a blocking call posts its work to the
 * loop thread and sleeps on a semaphore until the work completes. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static void run(rdl__task *t, int status)
{
    rdl__sync *s = RDL_CONTAINER_OF(t, rdl__sync, task);
    if (status != 0) {
        rdl__sync_done(s, status);
        return;
    }
    s->start(s);
}

int rdl__sync_call(rdl_client_t *c, rdl__sync *s)
{
    int rc;
    if (c->state != RDL__CLIENT_RUNNING) {
        rdl__errmsg_set(c, "the client is %s",
                        c->state == RDL__CLIENT_NEW ? "not connected"
                                                    : "closed");
        return RDL_ECLOSED;
    }
    if (rdl__client_on_loop(c)) {
        rdl__errmsg_set(c, "blocking call on the client's loop thread");
        return RDL_EDEADLK;
    }
    if (uv_sem_init(&s->sem, 0) != 0)
        return RDL_ENOMEM;
    s->client = c;
    s->status = 0;
    s->msg[0] = '\0';
    s->task.run = run;
    rc = rdl__client_post(c, &s->task);
    if (rc != 0) {
        uv_sem_destroy(&s->sem);
        rdl__errmsg_set(c, "the client is closed");
        return rc;
    }
    uv_sem_wait(&s->sem);
    uv_sem_destroy(&s->sem);
    if (s->status != 0)
        rdl__errmsg_set(c, "%s", s->msg[0] ? s->msg : rdl_strerror(s->status));
    return s->status;
}

void rdl__sync_done(rdl__sync *s, int status)
{
    s->status = status;
    if (status != 0)
        snprintf(s->msg, sizeof(s->msg), "%s", rdl__errmsg_get(s->client));
    uv_sem_post(&s->sem);
}
