/* Redis Cluster (redis+cluster://), behind core's router interface
 * (core/router.h). src/deploy picks it for a URL. */
#ifndef RDL_CLUSTER_H
#define RDL_CLUSTER_H

#include "core/router.h"

extern const rdl__router_impl rdl__cluster_router;

#endif
