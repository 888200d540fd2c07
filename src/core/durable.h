/* durable.c: durability, a policy above the transport. A grant or a
 * renewal written on a master's durable line (router.h) is confirmed as
 * received by its replicas before it counts: WAIT, sent on the connection
 * the writes went out on, for the number of replicas the client's setting
 * asks for (rdl_client_set_durability), or for RDL_REPLICAS_ALL every
 * replica the master has lately had (docs/design.md "Durability").
 *
 * Loop thread only. The state of a connection is attached to it
 * (rdl__conn_attach) on first use and freed with it. */
#ifndef RDL_CORE_DURABLE_H
#define RDL_CORE_DURABLE_H

#include "conn.h"

/* Confirmation that the client's durability setting is met: that many
 * replicas (RDL_REPLICAS_ALL: every replica the server has lately had,
 * see rdl__durable_note_replicas) received every write sent on cn before
 * this call: fn(data, status, acked, wanted) once, never from inside this
 * call. status 0 with acked >= wanted: confirmed; status 0 with acked <
 * wanted: not within the client's durable timeout; status < 0: the
 * connection failed (outcome unknown). WAIT blocks the connection it is
 * sent on, so only one is in flight per connection: requests made while
 * one is pending share the next. The timeout is shorter than the command
 * timeout. Returns 0, RDL_ENOMEM or RDL_ECLOSED. */
typedef void (*rdl__confirm_fn)(void *data, int status, long long acked,
                                long long wanted);
int rdl__durable_confirm(rdl__conn *cn, rdl__confirm_fn fn, void *data);

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
