/* What the layers above ask of the deployment, through the client's
 * router (router.h): which connection serves a key, sending a command for
 * a key or a slot, the masters, the publish command. */
#include <string.h>

#include "client.h"
#include "errmsg.h"
#include "router.h"

rdl__conn *rdl__client_route(rdl_client_t *c, const char *key)
{
    return rdl__client_route_line(c, key, RDL__LINE_MAIN);
}

rdl__conn *rdl__client_route_line(rdl_client_t *c, const char *key, int line)
{
    rdl__router *r = c->router;
    return rdl__router_conn(r, rdl__router_slot(r, key, strlen(key)),
                            (rdl__line)line);
}

unsigned rdl__client_slot(const rdl_client_t *c, const char *key)
{
    return rdl__router_slot(c->router, key, strlen(key));
}

int rdl__client_send(rdl_client_t *c, const char *key, const char *cmd,
                     size_t len, rdl__reply_fn fn, void *data)
{
    return rdl__client_send_line(c, key, RDL__LINE_MAIN, cmd, len, fn, data);
}

int rdl__client_send_line(rdl_client_t *c, const char *key, int line,
                          const char *cmd, size_t len, rdl__reply_fn fn,
                          void *data)
{
    rdl__router *r = c->router;
    return rdl__router_send(r, rdl__router_slot(r, key, strlen(key)),
                            (rdl__line)line, cmd, len, fn, data);
}

int rdl__client_send_slot(rdl_client_t *c, unsigned slot, const char *cmd,
                          size_t len, rdl__reply_fn fn, void *data)
{
    return rdl__router_send(c->router, slot, RDL__LINE_MAIN, cmd, len, fn,
                            data);
}

int rdl__client_masters(rdl_client_t *c, unsigned *slots, size_t cap, size_t *n)
{
    int rc = rdl__router_masters(c->router, slots, cap, n);
    if (rc == RDL_ECLOSED)
        rdl__errmsg_set(c, "the client is closed");
    return rc;
}

int rdl__client_acquire_line(const rdl_client_t *c)
{
    return c->net.durable_replicas != 0 ? RDL__LINE_DURABLE : RDL__LINE_MAIN;
}

const char *rdl__client_publish_cmd(const rdl_client_t *c)
{
    return rdl__router_sharded(c->router) ? "spublish" : "publish";
}
