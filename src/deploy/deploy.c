/* Wiring: the one place that names every deployment implementation, and
 * picks the one that serves the client's URL. Core calls down into it
 * (rdl__router_open, router.h) and never names an implementation itself.
 * A new shape of deployment is one more entry here. */
#include "cluster/cluster.h"
#include "sentinel/sentinel.h"
#include "standalone/standalone.h"

/* Asked in order; the first that accepts the URL serves it. */
static const rdl__router_impl *const impls[] = {
    &rdl__cluster_router,
    &rdl__sentinel_router,
    &rdl__standalone_router,
};

rdl__router *rdl__router_open(rdl__net *net, const rdl__router_events *ev,
                              void *data)
{
    size_t i;
    for (i = 0; i < sizeof(impls) / sizeof(impls[0]); i++)
        if (impls[i]->accepts(&net->url))
            return impls[i]->open(net, ev, data);
    return NULL;
}
