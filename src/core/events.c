/* The client's event callback (include/rdl/events.h): set from any
 * thread, called on the loop thread. Once the client runs, the callback
 * and its data are the loop thread's: a new pair is installed there,
 * between two calls, so the setter can tell its caller that the old one is
 * no longer running. */
#include "client.h"
#include "sync.h"

typedef struct set_call {
    rdl__sync sync;
    rdl_event_cb cb;
    void *data;
} set_call;

static void install(rdl__sync *s)
{
    set_call *k = RDL_CONTAINER_OF(s, set_call, sync);
    s->client->event_cb = k->cb;
    s->client->event_data = k->data;
    rdl__sync_done(s, 0);
}

int rdl_client_set_event_cb(rdl_client_t *c, rdl_event_cb cb, void *data)
{
    set_call k;
    int state;
    if (c == NULL)
        return RDL_EINVAL;
    uv_mutex_lock(&c->mu);
    state = c->state;
    uv_mutex_unlock(&c->mu);
    if (state == RDL__CLIENT_NEW || rdl__client_on_loop(c)) {
        c->event_cb = cb;
        c->event_data = data;
        return 0;
    }
    k.cb = cb;
    k.data = data;
    k.sync.start = install;
    return rdl__sync_call(c, &k.sync);
}

void rdl__client_event(rdl_client_t *c, const rdl_event_t *ev)
{
    if (c->event_cb != NULL)
        c->event_cb(ev, c->event_data);
}
