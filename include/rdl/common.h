/** @file
 * rdl: definitions shared by every public header. */
#ifndef RDL_COMMON_H
#define RDL_COMMON_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Marks the library's public functions: default visibility with GCC and
 * Clang (the library is built with hidden visibility, so only these are
 * exported); empty where RDL_STATIC is defined, and with other compilers. */
#if defined(RDL_STATIC)
#define RDL_API
#elif defined(__GNUC__)
#define RDL_API __attribute__((visibility("default")))
#else
#define RDL_API
#endif

/** Marks calls whose result must be checked: acquire, release, constructors.
 * Ignoring the result of an acquire is how two holders happen. */
#if defined(__GNUC__)
#define RDL_NODISCARD __attribute__((warn_unused_result))
#else
#define RDL_NODISCARD
#endif

/** Wait without limit (for a `wait_ms` argument). */
#define RDL_WAIT_FOREVER ((int64_t)-1)
/** Let the watchdog keep the hold alive until it is released (for a
 * `lease_ms` argument). See rdl_client_set_watchdog_ms(). */
#define RDL_LEASE_AUTO ((int64_t)-1)
/** The longest fixed lease, 100 years in milliseconds. A larger `lease_ms`
 * is RDL_EINVAL: Redis cannot hold an expiry much further out, and a lease
 * that long is "forever" for every practical purpose. */
#define RDL_LEASE_MAX_MS ((int64_t)3153600000000)

/**
 * An owner: who holds a hold. Blocking calls act as rdl_owner_self(), the
 * calling thread's owner, so a thread that acquires a lock it already holds
 * re-enters it (Redisson semantics). Every call also has an explicit-owner
 * form, so a hold may be handed between threads and async callbacks: any
 * code that passes the same owner value acts as the same owner. Owner values
 * are local to one client; in Redis a hold is recorded as
 * "<client-id>:<owner>".
 */
typedef uint64_t rdl_owner_t;

/**
 * The calling thread's owner: a value unique to this thread for the life of
 * the process (never reused by a later thread). Values returned by this
 * function have the top bit set, so owners an application numbers itself
 * from 0 upwards never collide with them.
 *
 * Thread safety: safe from any thread.
 */
RDL_API rdl_owner_t rdl_owner_self(void);

/** The version of the library, as RDL_VERSION_HEX: 0x00MMmmpp.
 * Thread safety: safe from any thread. */
RDL_API unsigned rdl_version(void);

/** The version of the library as "major.minor.patch" (static storage).
 * Thread safety: safe from any thread. */
RDL_API const char *rdl_version_string(void);

#ifdef __cplusplus
}
#endif

#endif
