/* Owners of blocking calls: one value per thread, never reused. */

#include "rdl.h"

/* The top bit marks thread owners, so applications that number their own
 * owners from 0 never collide with them. */
#define THREAD_OWNER_BIT ((rdl_owner_t)1 << 63)

static rdl_owner_t next_owner;
static _Thread_local rdl_owner_t self;

rdl_owner_t rdl_owner_self(void)
{
    if (self == 0)
        self = THREAD_OWNER_BIT |
               (__atomic_add_fetch(&next_owner, 1, __ATOMIC_RELAXED));
    return self;
}
