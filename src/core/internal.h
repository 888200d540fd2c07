/* The internal interfaces of src/core, for the layers above it (watchdog,
 * lock kinds): one header per module, each stating its thread and
 * ownership rules at the top. Files in src/core include the module
 * headers they use, not this one. Nothing here is installed. */
#ifndef RDL_CORE_INTERNAL_H
#define RDL_CORE_INTERNAL_H

#include "alloc.h"
#include "batch.h"
#include "client.h"
#include "conn.h"
#include "durable.h"
#include "errmsg.h"
#include "hub.h"
#include "keys.h"
#include "queue.h"
#include "reply.h"
#include "script.h"
#include "slot.h"
#include "sync.h"
#include "url.h"
#include "wait.h"

#endif
