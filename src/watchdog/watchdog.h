/* The watchdog (docs/design.md#watchdog): one timer per client renews every
 * hold taken with RDL_LEASE_AUTO, many holds per script call, and reports a
 * hold it could not keep. It knows nothing of lock objects: a lock kind
 * registers an rdl__wd_hold (which script renews it, its key and owner string)
 * and hears back through two callbacks. Loop thread unless noted. */
#ifndef RDL_WATCHDOG_H
#define RDL_WATCHDOG_H

#include "core/internal.h"

/* Holds renewed by one script call at most. */
#define RDL__WD_BATCH 200

typedef struct rdl__wd_hold rdl__wd_hold;

struct rdl__wd_hold {
    /* Set by the lock kind before rdl__wd_add(); constant afterwards. The
     * script takes KEYS = the holds' keys, ARGV[1] = the lease in ms,
     * ARGV[1 + i] = the member of KEYS[i], and replies with one integer
     * per key: 1 renewed, 0 not held by that member (nothing changed). */
    int script;
    int64_t lease_ms;   /* the lease each renewal sets; 0: the client's
                           watchdog lease */
    const char *key;    /* routes the hold; must outlive the entry */
    const char *key2;   /* NULL, or a second key of the same slot sent
                           after `key` (then every hold renewed by this
                           script has one: KEYS come in pairs); idem */
    const char *member; /* the owner string the script checks; idem */
    /* The hold is lost: reason RDL_ELOST (Redis says it is gone or held by
     * someone else), RDL_ETIMEDOUT (its local deadline passed, e.g. the
     * process was paused), or the error that kept renewals from working
     * until the deadline passed. The entry is already out of the
     * watchdog; `done` follows. */
    void (*lost)(rdl__wd_hold *h, int reason);
    /* The watchdog no longer references h (removed, lost, abandoned or
     * closed): the owner may free it. */
    void (*done)(rdl__wd_hold *h);

    /* The watchdog's. */
    rdl__queue node;
    uint64_t deadline; /* monotonic ms; atomic: read by rdl__wd_valid_ms */
    uint64_t due;      /* next renewal at (monotonic ms) */
    int last_error;    /* of the last failed renewal, 0 after a success */
    int refs;          /* batches in flight that hold h */
    int abandoned;     /* atomic; set by rdl__wd_abandon() from any thread */
    unsigned listed : 1, paused : 1;
};

/* Starts renewing h; the hold was granted by a request sent at `sent_at`
 * (monotonic ms) with h's lease, so it is known valid until sent_at +
 * lease - drift. 0 or RDL_ENOMEM (then h was not added and
 * no callback will come). */
int rdl__wd_add(rdl_client_t *c, rdl__wd_hold *h, uint64_t sent_at);
/* A request sent at `sent_at` made sure the lease has at least lease_ms
 * left (a re-entry, which may carry a fixed lease shorter than h's: the
 * script then leaves a longer TTL alone): the deadline moves to what that
 * guarantees, if that is later. Never past what the server granted. */
void rdl__wd_extend(rdl__wd_hold *h, uint64_t sent_at, int64_t lease_ms);
/* Stops renewing h (its hold ended); `done` follows, at once or when the
 * renewal in flight returns. No-op if h is already out. */
void rdl__wd_remove(rdl__wd_hold *h);
/* Suspends and resumes renewals around a release that may end the hold: a
 * renewal is never sent after the release. While paused, the deadline is
 * not checked either (the release decides). */
void rdl__wd_pause(rdl__wd_hold *h);
void rdl__wd_resume(rdl_client_t *c, rdl__wd_hold *h);
/* Any thread: the owner gave up the hold object (rdl_lock_free); the next
 * tick drops it without a lost callback, and the hold expires by lease. */
void rdl__wd_abandon(rdl__wd_hold *h);
/* Any thread: milliseconds the hold is known valid from now (0 if none). */
int64_t rdl__wd_valid_ms(const rdl__wd_hold *h);
/* The deadline of a hold granted at sent_at with lease_ms: sent_at +
 * lease_ms minus an allowance for clock drift between client and server. */
uint64_t rdl__wd_deadline(uint64_t sent_at, int64_t lease_ms);
/* A renewal script's reply for n holds (the contract above): 0 with
 * renewed[i] 1 if hold i was renewed, 0 if not (anything but the integer
 * 1: the hold is gone); RDL_EPROTO if it is not an array of n. */
int rdl__wd_parse_renewed(const redisReply *r, int n, unsigned char *renewed);

#endif
