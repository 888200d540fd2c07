/** @file
 * rdl: Redis distributed locks for C. Umbrella header: include this one. */
#ifndef RDL_H
#define RDL_H

#include "rdl/version.h"
#include "rdl/common.h"
#include "rdl/error.h"
#include "rdl/client.h"
#include "rdl/lock.h"
#include "rdl/multilock.h"
#include "rdl/rwlock.h"
#include "rdl/semaphore.h"
#include "rdl/latch.h"
#include "rdl/events.h"

#endif
