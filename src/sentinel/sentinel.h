/* A master watched by Redis Sentinel (redis+sentinel://), behind core's
 * router interface (core/router.h). src/deploy picks it for a URL. */
#ifndef RDL_SENTINEL_H
#define RDL_SENTINEL_H

#include "core/router.h"

extern const rdl__router_impl rdl__sentinel_router;

#endif
