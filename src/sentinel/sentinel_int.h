/* Sentinel support (docs/design.md#sentinel): finding the master through the
 * sentinels and following it (discover.c), and commands sent to it, held back
 * while no master is confirmed (router.c). Nothing here calls into the client
 * or the hub: the first connect is reported through the router's settled event,
 * and a switch moves the master's connections themselves (rdl__conn_retarget),
 * whose drop and reconnect the hub already handles (it subscribes again and
 * wakes its waiters for a fresh try). Loop thread only. */
#ifndef RDL_SENTINEL_INT_H
#define RDL_SENTINEL_INT_H

#include "core/alloc.h"
#include "core/clock.h"
#include "core/conn.h"
#include "core/durable.h"
#include "core/errmsg.h"
#include "core/queue.h"
#include "core/reply.h"
#include "core/router.h"

typedef struct rdl__sentinel {
    rdl__router base; /* first: the router is the sentinel deployment */
    rdl__net *net;
    const char *master; /* the master's name (the client's URL owns it) */

    /* The master: its address as last reported, and whether ROLE on it
     * confirmed it (commands wait in `parked` until then). The command
     * connection exists from the start (its address is set once known);
     * the subscriber connection is opened by the hub. */
    char *host; /* NULL until a sentinel named the master */
    int port;
    int confirmed;
    int switching; /* moving the connections: their drops are expected */
    rdl__conn *cmd;
    rdl__conn *dur; /* the durable line, opened on first use */
    rdl__conn *sub;

    /* The sentinels: one command connection each, opened when first
     * asked, and one subscriber connection each for their events, opened
     * once one of them named the master. */
    size_t nsentinels;
    rdl__conn **sconn;
    rdl__conn **watch;
    size_t good; /* the sentinel that answered last: asked first */

    /* A discovery round asks the sentinels one at a time until one names
     * the master. */
    int asking;
    int again;      /* another round was asked for during this one */
    size_t next;    /* the next sentinel to ask in this round */
    size_t tried;   /* sentinels asked in this round */
    size_t unknown; /* of which answered that they do not know the master */
    size_t refused; /* of which refused the credentials (RDL_EAUTH) */
    char why[600];  /* what each failed sentinel said, for the message */
    unsigned failed_rounds; /* rounds in a row that found no master */

    /* Stale answers: a sentinel that has not yet learnt of a failover
     * names the old master, which, restarted, says it is one until
     * Sentinel demotes it. Each failover raises the master's config
     * epoch; an answer below epoch_min is ignored. */
    long long epoch;        /* the highest config epoch seen */
    long long epoch_min;    /* epoch + 1 after an event named a new master */
    uint64_t event_at;      /* when that event came */
    size_t behind;          /* sentinels in this round whose answer was stale */
    long long answer_epoch; /* the epoch the sentinel asked gave; -1: none */

    /* RDL_REPLICAS_ALL: how many replicas of the current master the
     * sentinels see up (discover.c, "the master's replicas"). An answer
     * counts only if it is about the master the client uses now: the
     * question carries the number of moves when it was asked. */
    long long replicas_up; /* -1: no answer yet for this master */
    uint64_t replicas_at;  /* when it was given; 0: never */
    uint64_t switched_at;  /* when the client last moved to a new master */
    unsigned switches;     /* moves so far */
    uint64_t rep_asked_at; /* when the last question was asked */
    unsigned rep_switches; /* moves when the question in flight was asked */
    int rep_asking;        /* a question is in flight (one at a time) */
    int rep_named;         /* its sentinel named the client's master */

    int started; /* the first connect was reported (settled) */
    int closing;
    unsigned handles;       /* open timers; the last closed frees the router */
    uv_timer_t check_timer; /* the next round: periodic, or a retry */
    uv_timer_t park_timer;  /* the deadline of the oldest parked command */
    rdl__queue parked;
} rdl__sentinel;

/* discover.c */
/* Starts a discovery round now, or after the current one. */
void rdl__sentinel_discover(rdl__sentinel *s);
/* Schedules the next round after ms (replacing a later one). */
void rdl__sentinel_check_in(rdl__sentinel *s, uint64_t ms);
void rdl__sentinel_check_timer(uv_timer_t *t);
/* Events of the master's command connection and of its durable line: a
 * drop of either may be a failover. */
extern const rdl__conn_events rdl__sentinel_master_events;
/* Shutdown of the sentinel side: closes the sentinels' connections (the
 * arrays are freed with the router). */
void rdl__sentinel_close_watchers(rdl__sentinel *s);

/* router.c */
/* The master was confirmed: parked commands go to it. */
void rdl__sentinel_flush(rdl__sentinel *s);
/* Fails every parked command with status (shutdown). */
void rdl__sentinel_fail_parked(rdl__sentinel *s, int status);
void rdl__sentinel_park_timer(uv_timer_t *t);
int rdl__sentinel_send(rdl__sentinel *s, rdl__line line, const char *cmd,
                       size_t len, rdl__reply_fn fn, void *data);
/* The master's connection of `line` (the durable one opened on first use,
 * at the master's address); NULL when out of memory or closing. */
rdl__conn *rdl__sentinel_line(rdl__sentinel *s, rdl__line line);

#endif
