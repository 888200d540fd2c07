/* MultiLock and RedLock: rdl_lock_t objects made of other rdl_lock_t
 * objects, used only through the public lock calls. The public functions
 * in src/lock/ hand a composite lock to these (lock->multi != NULL). */
#ifndef RDL_MULTI_H
#define RDL_MULTI_H

#include "lock/lock_int.h"

/* At most this many parts (a part's membership is a bit of a mask). */
#define RDL__MULTI_MAX 64

/* A composite with a fixed lease is granted only while every part has at
 * least this much of it left (see multi.c, "The grant rule"). */
#define RDL__MULTI_KEEP(lease_ms) ((lease_ms) / 2)

int rdl__multi_acquire(rdl_lock_t *ml, rdl_owner_t owner, int64_t wait_ms,
                       int64_t lease_ms);
int rdl__multi_release(rdl_lock_t *ml, rdl_owner_t owner);
int rdl__multi_force_release(rdl_lock_t *ml);
int rdl__multi_info(rdl_lock_t *ml, rdl_owner_t owner, rdl_lock_info_t *out);
uint64_t rdl__multi_token(const rdl_lock_t *ml, rdl_owner_t owner);
int64_t rdl__multi_valid_ms(const rdl_lock_t *ml, rdl_owner_t owner);
/* Frees the composite's own state (not its parts). */
void rdl__multi_free(rdl_lock_t *ml);

#endif
