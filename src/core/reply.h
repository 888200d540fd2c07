/* reply.c: the one place that reads server reply strings
 * (docs/design.md#errors). Pure functions of a reply: any thread. Nothing here
 * owns memory; the strings it hands out point into the reply. */
#ifndef RDL_CORE_REPLY_H
#define RDL_CORE_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "rdl.h"

/* Codes the mapping gives for replies the library handles itself; they never
 * reach a caller. */
#define RDL__ERRNO_INTERNAL_MAP(XX)                                            \
    XX(ENOSCRIPT, -1001, "script not in the server's cache")                   \
    XX(EMOVED, -1002, "slot moved to another node")                            \
    XX(EASK, -1003, "slot is migrating; ask another node")                     \
    XX(ETRYAGAIN, -1004, "slot is migrating; try again")                       \
    XX(ELOADING, -1005, "server is loading its dataset")

enum {
#define RDL__ERRNO_ENUM_(name, value, msg) RDL__##name = value,
    RDL__ERRNO_INTERNAL_MAP(RDL__ERRNO_ENUM_)
#undef RDL__ERRNO_ENUM_
};

/* Positive results of rdl__reply_code(): a pub/sub message push, and a
 * "sunsubscribe" confirmation, which a cluster node also sends unasked
 * when the slot of a sharded channel leaves it. */
#define RDL__REPLY_MESSAGE 1
#define RDL__REPLY_SUNSUBSCRIBE 2

/* The one function that reads the strings of server replies. Maps a reply
 * to 0 (an ordinary reply), RDL__REPLY_MESSAGE (a "message" or "smessage"
 * push), RDL__REPLY_SUNSUBSCRIBE, or the RDL_E* / RDL__E* code of an error
 * reply. */
int rdl__reply_code(const redisReply *r);

/* The code a caller gets for rdl__reply_code()'s result when nothing
 * handles the reply itself: an internal code (a redirect, a migration or a
 * load from a server the client does not follow as a cluster node, a
 * NOSCRIPT not retried) becomes the public code of its family; any other
 * code is returned as it is. */
int rdl__reply_public(int code);

/* What r is, in a few words, into buf ("an integer (5)", "an array of 4
 * elements", "a 1048576-byte string"): for the message of a reply that
 * no script returns. Returns buf. */
const char *rdl__reply_shape(const redisReply *r, char *buf, size_t len);

/* If r is a MOVED or ASK error ("MOVED 3999 127.0.0.1:6381"), stores the
 * slot and the address (host "" if the node did not know its own, port) and
 * returns 1; else returns 0. */
int rdl__reply_redirect(const redisReply *r, unsigned *slot, char *host,
                        size_t hostlen, int *port);

/* If rdl__reply_code(r) says `r` is a message push, stores its channel and
 * payload and returns 1; else returns 0. */
int rdl__reply_message(const redisReply *r, const char **chan, size_t *chanlen,
                       const char **msg, size_t *msglen);
/* If r is a "sunsubscribe" reply or push, stores its channel and returns 1;
 * else returns 0. */
int rdl__reply_sunsubscribe(const redisReply *r, const char **chan,
                            size_t *chanlen);

/* Sentinel replies. SENTINEL get-master-addr-by-name: 1 with the address
 * stored, 0 for nil (the sentinel does not know the master), -1 for
 * anything else. */
int rdl__reply_master_addr(const redisReply *r, char *host, size_t hostlen,
                           int *port);
/* TIME: the server's clock in microseconds since the epoch; -1 for
 * another reply. */
int64_t rdl__reply_time_us(const redisReply *r);
/* SENTINEL MASTER: the master's config epoch; -1 for another reply. */
long long rdl__reply_sentinel_epoch(const redisReply *r);
/* SENTINEL REPLICAS: how many replicas the sentinel thinks are up (not
 * flagged s_down, o_down or disconnected); -1 for another reply. */
long long rdl__reply_sentinel_replicas_up(const redisReply *r);
/* SENTINEL REPLICAS: 1 if it lists a replica at host:port (up or not),
 * else 0. A sentinel that lists the client's master among the replicas
 * answered for another master (its view is behind or ahead of the
 * client's). */
int rdl__reply_sentinel_lists(const redisReply *r, const char *host, int port);
/* ROLE: 1 if the server says it is a master, 0 if another role, -1 if the
 * reply is not a ROLE reply. */
int rdl__reply_role_master(const redisReply *r);
/* ROLE of a master: how many replicas it lists; -1 for another role or a
 * reply that is not ROLE's. */
long long rdl__reply_role_replicas(const redisReply *r);
/* A sentinel's event message on channel ch: 1 with the address stored if
 * it names a new master for `name` ("+switch-master", or "+promoted-slave",
 * which the failover's leader sends as soon as the replica it chose is a
 * master, seconds before "+switch-master"), else 0. */
int rdl__reply_sentinel_event(const char *ch, size_t chl, const char *msg,
                              size_t len, const char *name, char *host,
                              size_t hostlen, int *port);

#endif
