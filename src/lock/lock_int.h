/* The common lock interface: what a lock kind that runs scripts is (a
 * table of data: rdl__lock_kind, its scripts, keys and own arguments) and
 * the machinery the kinds share (every script call built from that table,
 * waiting, retries, local holds, the blocking facade). Loop thread unless
 * noted.
 *
 * The script contract, the same for every kind (docs/design-notes.md
 * "Script arguments"): KEYS are the kind's keys (rdl__kind_keys), and
 * each operation sends the same ARGV to every kind's script, then the
 * kind's own, so a kind names its scripts and sends nothing itself.
 *   acquire   owner, lease (ms), request id, wait ("" for a one-shot try;
 *             else how long the caller's place in the wait lives, in ms:
 *             rdl__wait_life_ms), publish command, channel, retention
 *             (ms); then rdl__lock_kind.args: the semaphore's total, the
 *             read-write lock's side and writers-first flag (scripted.c)
 *   release   owner, request id, publish command, channel, retention,
 *             applied-set window (ms), "" or the acquisition undone; then
 *             the side, if the kind has one (release.c)
 *   force     publish command, channel, request id, applied-set window
 *             (scripted.c)
 *   info      owner; then the side, if any (scripted.c)
 *   leave     owner, publish command, channel (waitq.c)
 * Replies (replies.c): a try {1, token, count} / {0, sleep, position} /
 * {-1} (it would wait on itself); a release {1, count} / {0}; a force
 * release 1 / 0; info {locked, count, pttl, token, holders, waiters,
 * position, held, permits}. The watchdog's renewals (renew, and a queue's
 * touch) take a batch of holds: src/watchdog/. */
#ifndef RDL_LOCK_INT_H
#define RDL_LOCK_INT_H

#include "core/internal.h"
#include "core/retry.h"
#include "lock_ext.h"
#include "watchdog/watchdog.h"

/* How long the fence key of a name outlives its last hold. Tokens stay
 * strictly increasing through any server clock step back that is shorter
 * than this (see scripts/lock_acquire.lua). */
#define RDL__FENCE_RETENTION_MS 86400000

/* The most levels a grant may count beyond those the client believes the
 * owner holds, plus the one asked for (acquire.c trim): releases lost in
 * a failover leave at most the owner's nesting depth, far below this; a
 * grant that counts more is a reply no script sent (RDL_EPROTO), not
 * levels to give back (trim() sends one release per level, all at once,
 * so 2^31 of them would exhaust memory). */
#define RDL__STALE_MAX 1024

/* One try's result. */
typedef struct rdl__try {
    int acquired;
    uint64_t token;    /* acquired */
    uint32_t count;    /* acquired: the owner's hold count */
    int64_t pttl_ms;   /* busy: how long the caller may sleep at most (the
                          holder's remaining lease), -1 if unknown */
    uint32_t position; /* busy: place in the wait queue (1: next), 0 if
                          the kind has none or the caller is not queued */
} rdl__try;

typedef struct rdl__acquire rdl__acquire;
typedef struct rdl__release rdl__release;

/* The lock's keys, by role. Every script of a kind (but the watchdog's
 * batched renewals) takes the same keys: the hold key, then the kind's
 * others (rdl__lock_kind.keys), all of one hash tag. */
enum rdl__key_role {
    RDL__KEY_HOLD,  /* lock->key_hold */
    RDL__KEY_FENCE, /* lock->key_fence */
    RDL__KEY_AUX0,  /* lock->key_aux[0] */
    RDL__KEY_AUX1   /* lock->key_aux[1] */
};
/* A kind's own arguments of a try, after the acquire contract's. */
enum rdl__arg_role {
    RDL__ARG_NONE,
    RDL__ARG_SIDE,         /* the kind's side: "r" or "w" */
    RDL__ARG_PERMITS,      /* lock->permits, the object's total */
    RDL__ARG_WRITERS_FIRST /* "1", or "0" with RDL_RW_READERS_FIRST */
};
#define RDL__KIND_KEYS_MAX 3 /* the hold key and two more */
#define RDL__KIND_ARGS_MAX 2

/* The scripts of a kind: scripts/<kind>_<op>.lua, named by the kind's
 * RDL__SCRIPT_ prefix (LOCK, FAIR, RWLOCK, SEMAPHORE): RDL__KIND_SCRIPTS(FAIR).
 */
typedef struct rdl__kind_scripts {
    int acquire, release, force, info, renew, leave;
} rdl__kind_scripts;
#define RDL__KIND_SCRIPTS(K)                                                   \
    {                                                                          \
        RDL__SCRIPT_##K##_ACQUIRE, RDL__SCRIPT_##K##_RELEASE,                  \
            RDL__SCRIPT_##K##_FORCE_RELEASE, RDL__SCRIPT_##K##_INFO,           \
            RDL__SCRIPT_##K##_RENEW, RDL__SCRIPT_##K##_LEAVE                   \
    }

/* The wait queue of a kind whose waiters wait in Redis. A try that cannot
 * have the lock puts its owner there (unless it is a one-shot try), and a
 * waiter that gives up takes itself out (the kind's leave script). */
typedef struct rdl__kind_queue {
    int renewed;      /* entries expire unless the watchdog renews them
                         (the fair lock's queue, waiting writers: waitq.c);
                         else (a registry) a registration lasts
                         rdl__waiter_life_ms() from the try */
    int renew_script; /* keeps entries alive (fair_touch, rwlock_touch) */
    int entry_key;    /* enum rdl__key_role: the key that holds an entry,
                         the one the renewal script takes */
    int targeted;     /* hand-offs name the waiter they are for */
    /* Every message for a waiter names it, so each client hears those for
     * its own waiters on its own channel (rdl_lock_s.wake_channel), and no
     * other client wakes for them. */
    int own_channel;
} rdl__kind_queue;

/* waitq.c: the waiter registry of the plain lock and the semaphore
 * (scripts/lib/waiters.lua): registrations lapse unless their waiter
 * tries again; a hand-off names its waiter on that waiter's client's own
 * channel. */
extern const rdl__kind_queue rdl__registry;

/* What a lock kind that runs scripts is: data only. The shared code
 * builds every call from it (ARGV: the top of this file). */
typedef struct rdl__lock_kind {
    const char *name;  /* key segment, e.g. "lock" */
    const char *label; /* rdl_event_t.lock_kind: "lock", "rwlock:read", ... */
    rdl__kind_scripts scripts;
    /* The keys every script takes after the hold key, ended by
     * RDL__KEY_HOLD (none: the hold key alone). */
    unsigned char keys[RDL__KIND_KEYS_MAX - 1];
    /* A try's own arguments (enum rdl__arg_role), ended by RDL__ARG_NONE. */
    unsigned char args[RDL__KIND_ARGS_MAX];
    /* The read-write lock's "r" or "w": appended to the release's and the
     * info's arguments, and before the owner in the watchdog's member
     * ("r:<owner>"). NULL for the other kinds. */
    const char *side;
    /* rdl__parse_try for every kind (acquire.c calls it through here). */
    int (*parse_try)(const redisReply *r, rdl__try *out);
    int renew_aux0; /* the renewal script takes key_aux[0] after each hold
                       key (the watchdog's key2) */
    const char *aux_suffix[2]; /* extra keys of a lock: key_aux[i], or NULL */
    const rdl__kind_queue *queue; /* NULL: waiters do not wait in Redis */
} rdl__lock_kind;

/* The lock's key of a role (enum rdl__key_role). */
const char *rdl__lock_key(const rdl_lock_t *lock, int role);
/* Fills keys[RDL__KIND_KEYS_MAX] with the keys of the lock's scripts;
 * returns how many. */
int rdl__kind_keys(const rdl_lock_t *lock, const char **keys);

typedef struct rdl__auto rdl__auto;

/* What this client knows of one owner's hold. */
typedef struct rdl__hold {
    rdl_owner_t owner;
    uint64_t token;
    uint32_t count;
    int lost;          /* the watchdog reported it lost */
    uint64_t deadline; /* fixed lease: known valid until (monotonic ms) */
    uint64_t since;    /* when its first level was granted (monotonic ms) */
    rdl__auto *wd;     /* RDL_LEASE_AUTO: its watchdog entry */
} rdl__hold;

struct rdl_lock_s {
    const rdl__lock_ops *ops;   /* what the lock does (lock_ext.h) */
    const rdl__lock_kind *kind; /* script kinds: their scripts; else NULL */
    void *impl;                 /* other kinds: their state */
    rdl_client_t *c;
    char *name;
    char *key_hold;
    char *key_fence;
    char *channel;
    /* Where this client's waiters listen: `channel`, or for own_channel
     * kinds rdl__client_channel(channel, client id), the channel the
     * scripts give messages for them (lib/waiters.lua waiter_say). */
    char *wake_channel;
    char *key_aux[2]; /* kind-specific keys (rdl__lock_kind.aux_suffix) */
    unsigned flags;   /* kind-specific (read-write lock: writers first) */
    uint32_t permits; /* the total this object offers (1; a semaphore's
                         own: stored in Redis if the name has none) */
    int refs;         /* atomic; see rdl__lock_ref() */
    int freed;        /* atomic; rdl_lock_free() was called */
    uv_mutex_t mu;    /* guards holds and the lost callback */
    rdl_lost_cb lost_cb;
    void *lost_data;
    int lost_busy;       /* calls of lost_cb in progress (under mu) */
    uv_cond_t lost_idle; /* signalled when lost_busy drops to 0 */
    rdl__hold *holds;
    size_t nholds;
    size_t cap;
};

/* The private part of an rdl_req_t: req->internal points at this header,
 * the first member of every request operation. */
typedef struct rdl__op {
    int (*cancel)(struct rdl__op *op);
} rdl__op;

/* An acquisition in progress (acquire.c). */
struct rdl__acquire {
    rdl__op op;
    rdl__active active;
    rdl__task task; /* deferred completion after a cancel */
    rdl_req_t *req;
    rdl_req_cb cb;
    rdl_lock_t *lock;
    rdl_owner_t owner;
    char owner_str[RDL__OWNER_STR_SIZE];
    uint64_t reqseq;  /* its request id (rdl__acquire_reqid): kept as a
                         number, as waiters are many */
    int64_t lease_ms; /* the lease sent (the watchdog's if auto) */
    uint64_t sent_at; /* when the try that may have been applied was sent */
    uint64_t started; /* when the acquisition began (monotonic ms) */
    /* Its client (wait.c: outlives the lock object, as the timer closes
     * late), deadline, timer, hub waiter, unknown outcomes in a row. */
    rdl__wait wait;
    struct rdl__qentry *qentry; /* the queue entry's heartbeat (fair) */
    /* One per waiting acquisition: kept within the memory figure's 512
     * bytes per waiter (flags as bits, no holes). */
    int unknown_status;     /* the last of them, reported if no answer
                               follows */
    uint32_t granted_count; /* while the replicas confirm the grant */
    int refs;       /* the timer's, and one per command in flight (acquire.c) */
    int end_status; /* the outcome, told once the follow-ups are answered */
    int followups;  /* follow-ups of complete() not answered yet */
    int trimming;   /* stale levels being given back (acquire.c trim) */
    uint32_t known; /* levels the client believed the owner held (valid)
                       when the call began: rdl__hold_believed() */
    unsigned canceled : 1, done : 1, ending : 1, give_back : 1, trimmed : 1;
    unsigned auto_lease : 1; /* RDL_LEASE_AUTO */
    unsigned one_try : 1;    /* wait_ms was 0 */
    unsigned queued : 1;     /* a try put the owner in the queue */
};

/* A release in progress (release.c). */
struct rdl__release {
    rdl__op op;
    rdl_req_t *req; /* NULL for the release of a cancelled acquisition */
    rdl_req_cb cb;
    rdl_lock_t *lock;
    rdl_owner_t owner;
    char owner_str[RDL__OWNER_STR_SIZE];
    char reqid[64];
    char undo_of[64]; /* "": a release; else the acquisition it undoes */
    int stale;        /* a level the client does not know of (below) */
    void (*done)(void *data, int status); /* instead of cb, if set */
    void *done_data;
    uint64_t first_sent;
    int unknown;
    int unknown_status; /* as in rdl__acquire */
};

/* acquire.c: the request id of an acquisition (the same for all its tries),
 * into out. */
void rdl__acquire_reqid(const rdl__acquire *op, char out[64]);

/* acquire.c / release.c: start an operation (arguments checked). */
int rdl__acquire_start(rdl_req_t *req, rdl_lock_t *lock, rdl_owner_t owner,
                       int64_t wait_ms, int64_t lease_ms, rdl_req_cb cb);
int rdl__release_start(rdl_req_t *req, rdl_lock_t *lock, rdl_owner_t owner,
                       rdl_req_cb cb);
/* Releases the level taken by acquisition `reqid`, if it was taken and is
 * the hold's last request, on the tries' line; done(data, status) follows
 * once. The client's record does not change. */
int rdl__release_undo(rdl_lock_t *lock, rdl_owner_t owner, const char *reqid,
                      void (*done)(void *data, int status), void *data);
/* Releases one level of owner's hold that the client does not know of (a
 * grant counted more levels than the client believes the owner holds: a
 * release lost in a failover brought the hold back), on the tries' line;
 * done(data, status) follows once. The client's record does not change. */
int rdl__release_stale(rdl_lock_t *lock, rdl_owner_t owner,
                       void (*done)(void *data, int status), void *data);

/* hold.c: what this client knows of its holds, and their watchdog entries.
 * Loop thread unless noted. */

/* An acquisition by `owner` was granted (token, count levels) by a try
 * sent at sent_at with lease_ms, or with the watchdog lease if auto: the
 * hold is recorded, an auto hold is registered with the watchdog (before
 * the caller hears of it) and a re-entry extends its deadline. 0 or
 * RDL_ENOMEM (nothing recorded: the caller must give the level back). */
int rdl__hold_granted(rdl_lock_t *lock, rdl_owner_t owner, uint64_t token,
                      uint32_t count, uint64_t sent_at, int64_t lease_ms,
                      int auto_lease);
/* The server granted owner a new hold (count 1) although this client
 * holds one it believes valid (not known lost, lease not run out): the
 * earlier hold ended unnoticed. Marks it lost (the lost callback runs for
 * an auto hold; later releases report RDL_ELOST) and returns 1; else 0. */
int rdl__hold_lost_unnoticed(rdl_lock_t *lock, rdl_owner_t owner);
/* A release of one level of owner's hold is about to be sent: if it may
 * end the hold, renewals stop until rdl__hold_released(). */
void rdl__hold_releasing(rdl_lock_t *lock, rdl_owner_t owner);
/* The release ended: remaining levels >= 0 if the server answered, or -1
 * if the hold is over anyway (not held, outcome unknown), or -2 if the
 * release was not applied (renewals resume). Returns 1 if the owner's
 * hold had been reported lost (or was known here and is gone). */
int rdl__hold_released(rdl_lock_t *lock, rdl_owner_t owner, int remaining);
/* Forgets every hold (force release); their renewals stop. */
void rdl__hold_clear(rdl_lock_t *lock);
/* Any thread: rdl_lock_free(); renewals stop, holds expire by lease. */
void rdl__hold_abandon_all(rdl_lock_t *lock);
/* Any thread: the owner's token and known validity (the script kinds'
 * rdl_lock_fencing_token() and rdl_lock_valid_ms()). */
uint64_t rdl__hold_token(const rdl_lock_t *lock, rdl_owner_t owner);
int64_t rdl__hold_valid_ms(const rdl_lock_t *lock, rdl_owner_t owner);

/* hold.c: the levels of owner's hold that the client believes valid (not
 * reported lost, lease not run out); 0 if none. Any thread. */
uint32_t rdl__hold_believed(const rdl_lock_t *lock, rdl_owner_t owner);

/* hold.c: when the owner's hold was granted (monotonic ms; 0 if none is
 * known). Any thread. */
uint64_t rdl__hold_since(const rdl_lock_t *lock, rdl_owner_t owner);

/* events.c: reports an event of this lock to the client's event callback
 * (include/rdl/events.h), if one is set. Loop thread. Callers that must
 * work to compute the arguments test rdl__lock_events_on() first. */
void rdl__lock_event(rdl_lock_t *lock, rdl_event_kind_t kind, rdl_owner_t owner,
                     int64_t wait_ms, int64_t held_ms, uint64_t token);
static inline int rdl__lock_events_on(const rdl_lock_t *lock)
{
    return lock->c->event_cb != NULL && lock->kind != NULL;
}

/* scripted.c: the operations of the script kinds. */
extern const rdl__lock_ops rdl__scripted_ops;

/* scripted.c: blocking, runs `script` (the kind's keys) to change the lock
 * once for one request id: ARGV = publish command, channel, request id,
 * applied-set window (the force release's contract), then extra[0..
 * nextra) (at most RDL__CHANGE_ARGS_MAX). Sent again with the same id
 * while its outcome is unknown, within the window; then done(lock, r,
 * data) reads the answer on the loop thread (0 or a negative code: the
 * call's result). A force release, and a semaphore's total. */
#define RDL__CHANGE_ARGS_MAX 2
int rdl__lock_change(
    rdl_lock_t *lock, int script, int nextra, const char *const *extra,
    int (*done)(rdl_lock_t *lock, const redisReply *r, void *data), void *data);

/* scripted.c: sends one try of acquisition op: the kind's acquire script
 * with the acquire contract's arguments (the top of this file) on the
 * tries' line; fn(op, ...) gets the reply. 0 or a negative code (then fn
 * is not called). */
int rdl__kind_send_try(rdl__acquire *op, rdl__reply_fn fn);

/* waitq.c: wait queue entries (kinds with send_leave). A try reported
 * the owner queued: keep its entry alive while it waits. */
void rdl__waitq_queued(rdl__acquire *op);
/* The acquisition is ending: its entry's heartbeat stops. */
void rdl__waitq_stop(rdl__acquire *op);
/* The acquisition ended without a grant: if a try queued the owner, takes
 * it out of the queue (on the tries' line, an unknown outcome sent again)
 * and returns 1; done(data, status) follows once, when the leave was answered
 * or given up. 0: nothing to take out, or it could not be sent (the entry then
 * expires by its queue lease); done is not called. */
int rdl__waitq_leave(rdl__acquire *op, void (*done)(void *data, int status),
                     void *data);

/* How long the registration of a plain lock's waiter lasts after its try
 * (scripts/lib/waiters.lua); the waiter tries again before that. */
static inline int64_t rdl__waiter_life_ms(const rdl_client_t *c)
{
    return c->watchdog_ms;
}

/* How long a waiter's queue entry lives without renewal: short, so a dead
 * waiter stops blocking the queue within seconds. */
#define RDL__QUEUE_LEASE_MS 3000
static inline int64_t rdl__queue_lease_ms(const rdl_client_t *c)
{
    return c->watchdog_ms < RDL__QUEUE_LEASE_MS ? c->watchdog_ms
                                                : RDL__QUEUE_LEASE_MS;
}

/* A waiting try's ARGV[4] (the acquire contract): how long the caller's
 * place in the wait lives, a registration (until it tries again) or a
 * queue entry (until it is renewed). The read side of a read-write lock
 * has neither: its value only says the caller waits. */
static inline int64_t rdl__wait_life_ms(const rdl_lock_t *lock)
{
    const rdl__kind_queue *q = lock->kind->queue;
    return q != NULL && !q->renewed ? rdl__waiter_life_ms(lock->c)
                                    : rdl__queue_lease_ms(lock->c);
}

/* lock.c: references to a lock object. The user's handle is one; an
 * internal operation that may outlive rdl_lock_free() (the release of a
 * cancelled acquisition) takes another. Any thread. */
void rdl__lock_ref(rdl_lock_t *lock);
void rdl__lock_unref(rdl_lock_t *lock);

/* lock.c: the mutex and condition variable of a new lock object; 0 or
 * RDL_ENOMEM. Destroyed with the object. */
int rdl__lock_sync_init(rdl_lock_t *lock);

/* lost.c: the lost callback (rdl__lock_report_lost() is in lock_ext.h).
 * Any thread: waits until no call of it is running (unless the caller is
 * inside one). */
void rdl__lock_lost_quiesce(rdl_lock_t *lock);

/* lock.c: creates a lock of the given kind (used by every constructor). */
int rdl__lock_create(rdl_client_t *c, const char *name,
                     const rdl__lock_kind *kind, rdl_lock_t **out);

extern const rdl__lock_kind rdl__reentrant_kind;

/* replies.c: the replies of every kind's scripts (the top of this file). */
int rdl__int_at(const redisReply *r, size_t i, long long *out);
/* {1, token, count} -> acquired; {0, pttl[, position]} -> busy (position
 * 0 when absent or not positive); {-1} -> RDL_EDEADLK (a read-write
 * lock's reader asked for the write side: it would wait on itself). */
int rdl__parse_try(const redisReply *r, rdl__try *out);
/* {1, count} -> 0 and *remaining; {0} -> RDL_ENOTHELD. */
int rdl__parse_release(const redisReply *r, uint32_t *remaining);
/* 1 -> 0; 0 -> RDL_ENOTHELD. */
int rdl__parse_force(const redisReply *r);
/* {locked, count, pttl, token, holders, waiters, position, held, permits}
 * -> out (permits 0: none stored). */
int rdl__parse_info(const redisReply *r, rdl_lock_info_t *out);
/* lock_acquire_multi.lua's reply for n locks (set.c): {1, token1,
 * count1, ..., tokenN, countN} -> 0, the holds then read with
 * rdl__try_set_hold(); {0, pttl, i} -> RDL_EBUSY with *busy = i, the
 * lock (1..n) held elsewhere; anything else RDL_EPROTO. */
int rdl__parse_try_set(const redisReply *r, size_t n, size_t *busy);
/* The token and count of lock i (0-based) of a reply that
 * rdl__parse_try_set() took. */
void rdl__try_set_hold(const redisReply *r, size_t i, uint64_t *token,
                       uint32_t *count);

#endif
