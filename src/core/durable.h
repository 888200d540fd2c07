/* durable.c: durability, a policy above the transport. A grant or a
 * renewal written on a master's durable line (router.h) is confirmed by
 * its replicas before it counts: WAIT (received), or at the FSYNCED
 * levels WAITAOF (fsynced to their append-only files, and at
 * FSYNCED_MASTER to the master's own: rdl_client_set_durable_level),
 * sent on the connection the writes went out on, for the number of
 * replicas the client's setting asks for (rdl_client_set_durability), or
 * for RDL_REPLICAS_ALL every replica the master has lately had
 * (docs/design.md "Durability").
 *
 * Loop thread only. The state of a connection is attached to it
 * (rdl__conn_attach) on first use and freed with it. */
#ifndef RDL_CORE_DURABLE_H
#define RDL_CORE_DURABLE_H

#include "conn.h"

/* What one confirmation found. */
typedef struct rdl__confirmed {
    int status;       /* 0: the server answered; < 0: see below */
    int met;          /* status 0, and the setting is met */
    int aof;          /* 1: WAITAOF (files), 0: WAIT (received) */
    long long acked;  /* replicas that confirmed */
    long long wanted; /* replicas asked for */
    int local;        /* WAITAOF: 1 if the master's own file has it */
    int local_wanted; /* WAITAOF 1 N: 1 */
    const char *why;  /* the server's error reply, or NULL */
} rdl__confirmed;

/* Confirmation that the client's durability setting is met: that many
 * replicas (RDL_REPLICAS_ALL: every replica the server has lately had,
 * see rdl__durable_note_replicas) received every write sent on cn before
 * this call (the FSYNCED levels: have it in their append-only files, and
 * the master in its own): fn(data, cf) once, never from inside this call,
 * cf valid during the call. cf->status 0 with cf->met: confirmed; 0
 * without: not within the client's durable timeout (rdl__durable_describe
 * says what was); RDL_ENOTSUP: the server refused WAITAOF (cf->why says
 * why, e.g. the master's appendonly is off); RDL_EPROTO: an answer of
 * another shape; another status < 0: the connection failed (outcome
 * unknown). WAIT and WAITAOF block the connection they are sent on, so
 * only one is in flight per connection: requests made while one is
 * pending share the next. The timeout is shorter than the command
 * timeout. Returns 0, RDL_ENOMEM or RDL_ECLOSED. */
typedef void (*rdl__confirm_fn)(void *data, const rdl__confirmed *cf);
int rdl__durable_confirm(rdl__conn *cn, rdl__confirm_fn fn, void *data);

/* What a confirmation that was not met had, for messages: "1 of 2
 * replicas confirmed", "1 of 2 replicas' append-only files confirmed",
 * "2 of 2 replicas' append-only files, and not the master's own,
 * confirmed". */
void rdl__durable_describe(const rdl__confirmed *cf, char *buf, size_t len);

/* The server at cn has (had) n replicas, as ROLE or the router's view of
 * the deployment says. RDL_REPLICAS_ALL waits for the most replicas noted
 * within RDL__REPLICA_FORGET_MS: a replica that went away is waited for
 * (and grants refused) that long, since while it is away it misses
 * grants, and it might yet be promoted. */
#define RDL__REPLICA_FORGET_MS 60000
void rdl__durable_note_replicas(rdl__conn *cn, long long n);

/* cn was moved to a promoted replica (rdl__conn_retarget after a switch):
 * the new master was one of the old one's replicas, and the others are
 * expected to follow it. The old master is not counted: it is a replica
 * again only once it is back, when ROLE or the router's view lists it. */
void rdl__durable_moved(rdl__conn *cn);

#endif
