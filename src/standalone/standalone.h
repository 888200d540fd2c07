/* One Redis server (redis://), behind core's router interface
 * (core/router.h). src/deploy picks it for a URL. */
#ifndef RDL_STANDALONE_H
#define RDL_STANDALONE_H

#include "core/router.h"

extern const rdl__router_impl rdl__standalone_router;

#endif
