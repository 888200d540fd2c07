/* retry.h: the one rule for retrying a request whose outcome is unknown
 * (the connection dropped or the command timed out after it was written),
 * shared by the locks and the latch: the same request id is sent again,
 * at most RDL__UNKNOWN_RETRIES times, and only while the retry reaches
 * the server within the window in which the scripts' applied sets
 * remember a request (docs/design-notes.md "Request ids"), so a retry
 * always finds the record of its request if that request was applied. */
#ifndef RDL_CORE_RETRY_H
#define RDL_CORE_RETRY_H

#include "client.h"

/* Unknown-outcome failures retried after the wait budget is spent. */
#define RDL__UNKNOWN_RETRIES 3

/* 1 for failures after which the command may or may not have run. */
static inline int rdl__outcome_unknown(int status)
{
    return status == RDL_ECONNLOST || status == RDL_ECMDTIMEOUT;
}

/* How long an applied set remembers a request that ended something (a
 * final release, a force release, a count down). */
static inline int64_t rdl__done_window_ms(const rdl_client_t *c)
{
    return c->net.command_ms * (RDL__UNKNOWN_RETRIES + 2) + 1000;
}

/* 1 if a retry of a request first sent at first_sent (monotonic ms) may
 * still be sent: it will be answered or time out within the window. */
static inline int rdl__retry_in_window(const rdl_client_t *c,
                                       uint64_t first_sent)
{
    return rdl__now_ms() - first_sent + (uint64_t)c->net.command_ms <
           (uint64_t)rdl__done_window_ms(c);
}

#endif
