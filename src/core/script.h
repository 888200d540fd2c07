/* The Lua scripts (generated from scripts/<kind>_<op>.lua at build time,
 * cmake/EmbedScripts.cmake) and script.c, which runs them: EVALSHA with
 * NOSCRIPT recovery. The table is constant (any thread); running a script
 * is a loop-thread call whose arguments are copied. */
#ifndef RDL_CORE_SCRIPT_H
#define RDL_CORE_SCRIPT_H

#include <stddef.h>

#include "conn.h"
#include "rdl.h"

typedef struct rdl__script {
    const char *name; /* file name without .lua */
    const char *sha;  /* 40 hex chars */
    const char *body;
    size_t len;
    int batch; /* index in the batch script's table, or -1 (not batched:
                  cmake/EmbedScripts.cmake, batch.c) */
} rdl__script;

#include "rdl_scripts.h" /* enum RDL__SCRIPT_*, rdl__scripts[] */

/* Runs script `id` with keys and args (NUL-terminated strings) on the node
 * that serves keys[0]: EVALSHA; on NOSCRIPT, SCRIPT LOAD on that node and
 * one retry. fn as rdl__reply_fn (a second NOSCRIPT is RDL_ESCRIPT). */
int rdl__script_run(rdl_client_t *c, int id, int nkeys, const char **keys,
                    int nargs, const char **args, rdl__reply_fn fn, void *data);
/* The same on a line (rdl__line, router.h): RDL__LINE_DURABLE for writes
 * that are then confirmed with rdl__conn_confirm(). A script marked
 * "--@batch" on the main line may wait until the end of the loop
 * iteration and leave with others in one command (batch.h); fn is then
 * called later with RDL_ENOMEM if the command cannot be built. */
int rdl__script_run_line(rdl_client_t *c, int line, int id, int nkeys,
                         const char **keys, int nargs, const char **args,
                         rdl__reply_fn fn, void *data);
/* Sends one call now, never batched (batch.c's way out). */
int rdl__script_send(rdl_client_t *c, int line, int id, int nkeys,
                     const char **keys, int nargs, const char **args,
                     rdl__reply_fn fn, void *data);

#endif
