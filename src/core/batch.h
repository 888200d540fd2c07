/* batch.c: script calls made in one loop iteration, sent as one.
 *
 * A call of a script marked "--@batch" (cmake/EmbedScripts.cmake) on the
 * main line is not sent at once: it waits, with the other such calls of
 * the same loop iteration and cluster slot, until the connection that
 * will carry them flushes its writes (just before the loop polls). Then
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

/* Queues a call of batched script `id` (keys and args copied) on the main
 * line. 0, RDL_ENOMEM or RDL_ECLOSED (then fn is never called). */
int rdl__batch_add(rdl_client_t *c, int id, int nkeys, const char **keys,
                   int nargs, const char **args, rdl__reply_fn fn, void *data);
/* Sends the waiting calls now (the order rule above; the connections'
 * flush). Safe when nothing waits. */
void rdl__batch_flush(rdl_client_t *c);
/* Shutdown: fails the waiting calls with RDL_ECLOSED and frees the batch;
 * later rdl__batch_add() calls return RDL_ECLOSED. */
void rdl__batch_close(rdl_client_t *c);

#endif
