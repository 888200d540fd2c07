/* batch.c: running scripts; calls made in one loop iteration sent as one.
 *
 * rdl__script_run() is how every layer above runs a script, and where it
 * is decided whether a call leaves now or waits to leave with others.
 * A call of a script marked "--@batch" (cmake/EmbedScripts.cmake) on the
 * main line is not sent at once: it waits, with the other such calls of
 * the same loop iteration and cluster slot, for the loop's idle phase,
 * which comes just before the connections flush their writes. Then
 * a lone call goes as its own EVALSHA, byte for byte as unbatched, and
 * several go as one EVALSHA of the generated script "batch", which runs
 * them one after the other and replies with each one's reply. Each call's
 * callback gets its own reply (or error) as if it had been sent alone;
 * a failure of the whole command (a lost connection, a timeout) reaches
 * every call in it, each of which then knows what it knows for a lone
 * call whose reply was lost.
 *
 * Why: with many acquisitions in flight on one connection, the server's
 * fixed cost per command (reading and dispatching it, setting up a
 * script run, writing the reply) is paid once per batch instead of once
 * per call (docs/benchmarks.md). Nothing waits longer than it would
 * unbatched: the calls leave in the same write they would have.
 *
 * Order: a call that is not batched first sends the batch waiting before
 * it, so calls of one client still reach a node in the order they were
 * made. Loop thread only. */
#ifndef RDL_CORE_BATCH_H
#define RDL_CORE_BATCH_H

#include "client.h"
#include "conn.h"
#include "script.h"

/* Queues a call of batched script `id` (keys and args copied) on the main
 * line. 0, RDL_ENOMEM or RDL_ECLOSED (then fn is never called). */
int rdl__batch_add(rdl_client_t *c, int id, int nkeys, const char **keys,
                   int nargs, const char **args, rdl__reply_fn fn, void *data);
/* Sends the waiting calls now (the order rule above). Safe when nothing
 * waits. The first batched call makes the client's batch, which ends in
 * the client's shutdown before the router closes (RDL__STAGE_UNSENT): the
 * waiting calls fail with RDL_ECLOSED, and later ones are refused. */
void rdl__batch_flush(rdl_client_t *c);

/* Runs script `id` with keys and args (NUL-terminated strings) on the node
 * that serves keys[0]: batched as above where it can be, else sent now
 * with rdl__script_send() (script.h) after the calls waiting before it.
 * fn as rdl__reply_fn; 0, RDL_EINVAL, RDL_ENOMEM or RDL_ECLOSED (then fn
 * is never called; a batched call whose command cannot be built learns
 * it later, with RDL_ENOMEM). */
int rdl__script_run(rdl_client_t *c, int id, int nkeys, const char **keys,
                    int nargs, const char **args, rdl__reply_fn fn, void *data);
/* The same on a line (rdl__line, router.h): RDL__LINE_DURABLE for writes
 * that are then confirmed (durable.h); only the main line batches. */
int rdl__script_run_line(rdl_client_t *c, int line, int id, int nkeys,
                         const char **keys, int nargs, const char **args,
                         rdl__reply_fn fn, void *data);

/* The reply of the script "batch" for ncalls calls: 0 with *have, the
 * calls (from the first) that an element of r answers, each element being
 * what that call's script replied; RDL_EPROTO if r is not such a reply.
 * (A Lua array ends at its first nil, so r may be shorter than ncalls:
 * the calls past its end fail.) */
int rdl__batch_reply(const redisReply *r, unsigned ncalls, size_t *have);

#endif
