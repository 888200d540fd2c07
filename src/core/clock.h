/* clock.h: monotonic time and wait budgets, the one place that turns a
 * caller's wait_ms into a deadline and back. Any thread; no state. */
#ifndef RDL_CORE_CLOCK_H
#define RDL_CORE_CLOCK_H

#include <stdint.h>

#include <uv.h>

#include "rdl.h"

/* Monotonic milliseconds. */
static inline uint64_t rdl__now_ms(void)
{
    return uv_hrtime() / 1000000u;
}

/* The deadline of a wait budget that starts at `now`: UINT64_MAX for
 * RDL_WAIT_FOREVER (or a budget too large to add), else now + wait_ms.
 * wait_ms is RDL_WAIT_FOREVER or >= 0. */
static inline uint64_t rdl__deadline_of(int64_t wait_ms, uint64_t now)
{
    if (wait_ms == RDL_WAIT_FOREVER || (uint64_t)wait_ms > UINT64_MAX - now)
        return UINT64_MAX;
    return now + (uint64_t)wait_ms;
}

/* What is left of a budget at `now`: RDL_WAIT_FOREVER for no deadline,
 * else the milliseconds to the deadline, 0 once it passed. */
static inline int64_t rdl__left_of(uint64_t deadline, uint64_t now)
{
    if (deadline == UINT64_MAX)
        return RDL_WAIT_FOREVER;
    return deadline > now ? (int64_t)(deadline - now) : 0;
}

#endif
