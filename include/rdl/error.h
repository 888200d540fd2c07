/** @file
 * rdl: error codes.
 *
 * Every call that can fail returns 0 or one negative RDL_E* code. The codes
 * fall in four families that never mix:
 * - outcomes:         RDL_EBUSY RDL_ETIMEDOUT RDL_ECANCELED
 * - caller errors:    RDL_EINVAL RDL_ENOTHELD RDL_EDEADLK RDL_ECLOSED
 *                     RDL_ENOTCONN RDL_ENOTSUP
 * - lost or unknown:  RDL_ELOST RDL_ECONNLOST RDL_ECMDTIMEOUT
 * - infrastructure:   everything else
 *
 * RDL_ENOTCONN is a call that needs the server on a client that was never
 * connected (or whose rdl_client_connect() failed); RDL_ECLOSED one after
 * rdl_client_close(). Lock calls never connect on first use.
 * "Unknown" means the command may or may not have run on the server: the
 * library already retried it as far as the caller's budget allowed, so the
 * caller should treat the hold as doubtful (it will expire by its lease).
 * Human detail (the server's text, the node's address) is available from
 * rdl_client_errmsg(). */
#ifndef RDL_ERROR_H
#define RDL_ERROR_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The one list of error codes: XX(name, value, message). Values are part of
 * the ABI and never change. Expand it with a macro of your own to generate
 * code per error code (rdl_errno_t and rdl::category() are made so). */
#define RDL_ERRNO_MAP(XX)                                                      \
    XX(EINVAL, -1, "invalid argument")                                         \
    XX(ENOMEM, -2, "out of memory")                                            \
    XX(EBUSY, -3, "lock is held by another owner")                             \
    XX(ETIMEDOUT, -4, "wait budget spent before the lock was acquired")        \
    XX(ECANCELED, -5, "request was cancelled")                                 \
    XX(ENOTHELD, -6, "lock is not held by this owner")                         \
    XX(EDEADLK, -7, "call would deadlock")                                     \
    XX(ECLOSED, -8, "client is closed")                                        \
    XX(ELOST, -9, "hold was lost: its lease ended or another owner took it")   \
    XX(ECONNREFUSED, -10, "cannot connect to the server")                      \
    XX(ECONNLOST, -11, "connection lost; the outcome is unknown")              \
    XX(ECMDTIMEOUT, -12, "command timed out; the outcome is unknown")          \
    XX(EAUTH, -13, "authentication failed")                                    \
    XX(EPROTO, -14, "protocol error or unexpected reply")                      \
    XX(ESCRIPT, -15, "lock script failed on the server")                       \
    XX(EREADONLY, -16, "server is a read-only replica")                        \
    XX(ECLUSTERDOWN, -17, "cluster is down")                                   \
    XX(EREDIRECT, -18, "cluster redirect budget spent")                        \
    XX(ENOQUORUM, -19, "no quorum of independent servers granted the lock")    \
    XX(ENOTSUP, -20, "operation not supported")                                \
    XX(EOOM, -21, "server is out of memory")                                   \
    XX(ESERVER, -22, "server replied with an error")                           \
    XX(ECROSSSLOT, -23, "keys of one call span several cluster slots")         \
    XX(ETLS, -24, "TLS handshake or certificate verification failed")          \
    XX(ENOMASTER, -25, "no sentinel knows the master")                         \
    XX(ENOREPLICAS, -26, "replicas did not confirm in time; nothing held")     \
    XX(ENOTCONN, -27, "client is not connected")

/** The error codes (RDL_ERRNO_MAP), each described by its rdl_strerror()
 * text. */
typedef enum {
#define RDL_ERRNO_ENUM_(name, value, msg) RDL_##name = value,
    RDL_ERRNO_MAP(RDL_ERRNO_ENUM_)
#undef RDL_ERRNO_ENUM_
} rdl_errno_t;

/**
 * A sentence describing an error code, such as "lock is held by another owner"
 * for RDL_EBUSY; "success" for 0; "unknown error" for any other value.
 * Returns static storage; never NULL.
 *
 * Thread safety: safe from any thread.
 */
RDL_API const char *rdl_strerror(int err);

/**
 * The name of an error code, such as "RDL_EBUSY"; "OK" for 0; "RDL_EUNKNOWN"
 * for any other value. Returns static storage; never NULL.
 *
 * Thread safety: safe from any thread.
 */
RDL_API const char *rdl_err_name(int err);

#ifdef __cplusplus
}
#endif

#endif
