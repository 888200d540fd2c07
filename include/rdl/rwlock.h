/** @file
 * rdl: the read-write lock. One name, two views: many owners may hold the
 * read side at once; the write side excludes everyone else. Each view is an
 * ordinary rdl_lock_t, used with every rdl_lock_* call (blocking, _as,
 * async, info, fencing token, valid_ms, lost callback), reentrant per owner,
 * with leases and the watchdog on both sides and a fencing token on every
 * acquisition.
 *
 * What an owner may do while holding one side:
 * @code{.unparsed}
 * | holds        | asks for read                | asks for write              |
 * |--------------|------------------------------|-----------------------------|
 * | nothing      | waits for the writer (and,   | waits for readers and the   |
 * |              | writers first, for waiting   | writer                      |
 * |              | writers)                     |                             |
 * | read         | re-enters at once            | RDL_EDEADLK at once (an     |
 * |              |                              | upgrade would wait on       |
 * |              |                              | itself): release read first |
 * | write        | takes it at once (downgrade: | re-enters at once           |
 * |              | then release write)          |                             |
 * @endcode
 *
 * Writers first (the default): once a writer waits, new readers wait behind
 * it, so a steady stream of readers cannot starve writers; readers that
 * already hold may re-enter. A waiting writer's record expires within a few
 * seconds if its process dies (the watchdog keeps it alive while it
 * waits), so a dead writer cannot keep readers out. RDL_RW_READERS_FIRST
 * turns this off.
 *
 * Every holder has its own expiry: a crashed reader's share ends with its
 * own lease, not with the longest reader's. The last reader's release, and
 * the writer's, wake every waiter. Keys: "<prefix>:rw:{name}" (readers and
 * writer), "<prefix>:rw.fence:{name}" and "<prefix>:rw.ww:{name}" (waiting
 * writers); see `docs/design.md#key-layout`. */
#ifndef RDL_RWLOCK_H
#define RDL_RWLOCK_H

#include "lock.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A read-write lock (opaque): made by rdl_rwlock_new(), freed by
 * rdl_rwlock_free(); used through its two views. */
typedef struct rdl_rwlock_s rdl_rwlock_t;

/** rdl_rwlock_new_ex() flag: new readers do not wait for waiting writers
 * (readers may then starve writers). */
#define RDL_RW_READERS_FIRST 1u

/**
 * Creates a read-write lock named `name` (writers first). Talks to no
 * server.
 * @return as rdl_lock_new().
 *
 * Thread safety: safe from any thread.
 */
RDL_API RDL_NODISCARD int rdl_rwlock_new(rdl_client_t *c, const char *name,
                                         rdl_rwlock_t **out);

/**
 * As rdl_rwlock_new(), with flags (0 or RDL_RW_READERS_FIRST).
 * @return as rdl_lock_new(); RDL_EINVAL for unknown flags.
 */
RDL_API RDL_NODISCARD int rdl_rwlock_new_ex(rdl_client_t *c, const char *name,
                                            unsigned flags, rdl_rwlock_t **out);

///@{
/**
 * The read and the write view; owned by rw (do not rdl_lock_free() them),
 * valid until rdl_rwlock_free(). NULL for a NULL rw.
 * On the write view, rdl_lock_acquire() returns RDL_EDEADLK at once if the
 * owner holds the read side; rdl_lock_info() reports that side's count for
 * the owner, the number of holders (readers, plus the writer) and of
 * waiting writers.
 * Thread safety: safe from any thread.
 */
RDL_API rdl_lock_t *rdl_rwlock_read(rdl_rwlock_t *rw);
RDL_API rdl_lock_t *rdl_rwlock_write(rdl_rwlock_t *rw);
///@}

/**
 * Frees rw and its views (holds expire by lease, as for rdl_lock_free()).
 * NULL is fine.
 */
RDL_API void rdl_rwlock_free(rdl_rwlock_t *rw);

#ifdef __cplusplus
}
#endif

#endif
