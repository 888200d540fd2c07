/* The deployment implementations src/deploy/deploy.c chooses from (one
 * per shape of deployment; core reaches them only through router.h). */
#ifndef RDL_DEPLOY_H
#define RDL_DEPLOY_H

#include "core/router.h"

/* src/standalone: one server (redis://). */
extern const rdl__router_impl rdl__standalone_router;
/* src/cluster: Redis Cluster (redis+cluster://). */
extern const rdl__router_impl rdl__cluster_router;

#endif
